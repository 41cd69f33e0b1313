//! Lexical checks: make sure sqlparser and DuckDB cut the text into the same pieces.
//!
//! A validator is only as good as its agreement with the engine about where strings, quoted
//! identifiers and comments begin and end: if sqlparser thinks a `;` is inside a comment and DuckDB
//! thinks it is code, a second statement rides along unseen. Known differences between sqlparser's
//! DuckDB dialect and DuckDB's own (PostgreSQL-derived) lexer include nested block comments
//! (`/* /* */ … */`), `--` comments ending at a bare `\r`, escape strings (`E'\''`) and backtick
//! identifiers. Instead of patching each one, [`independent_regions`] re-scans the text with
//! DuckDB's rules, and [`check`] demands that every string, quoted identifier and comment starts and
//! ends at exactly the same bytes in both views. Anything else is refused.

use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Whitespace};

use super::{Limits, Refusal};
use crate::error::ErrorKind;

/// A stretch of text in which `;` and keywords are not code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RegionKind {
    LineComment,
    BlockComment,
    String,
    QuotedIdentifier,
    DollarString,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Region {
    kind: RegionKind,
    start: usize,
    end: usize,
}

/// What DuckDB's lexer would see, as far as it matters here.
#[derive(Debug, Default)]
struct IndependentScan {
    regions: Vec<Region>,
    /// A block comment nested inside another one (DuckDB nests, sqlparser does not).
    nested_comment_at: Option<usize>,
    /// A string that DuckDB may read as an escape string `E'…'` (backslash escapes).
    escape_string_at: Option<usize>,
    /// A non-ASCII whitespace character outside strings and comments.
    unusual_whitespace_at: Option<usize>,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident_continue(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit() || b == b'$'
}

/// Scan `sql` with PostgreSQL/DuckDB lexical rules for strings, quoted identifiers, dollar
/// quotes and comments (nested block comments; `--` comments end at `\n` or `\r`).
fn independent_regions(sql: &str) -> IndependentScan {
    let b = sql.as_bytes();
    let n = b.len();
    let mut scan = IndependentScan::default();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let next = b.get(i + 1).copied();
        if c == b'-' && next == Some(b'-') {
            let end = b
                .iter()
                .skip(i)
                .position(|&x| x == b'\n' || x == b'\r')
                .map_or(n, |p| i + p);
            scan.regions.push(Region {
                kind: RegionKind::LineComment,
                start: i,
                end,
            });
            i = end;
        } else if c == b'/' && next == Some(b'*') {
            let mut depth = 1usize;
            let mut j = i + 2;
            while depth > 0
                && let Some(&at) = b.get(j)
            {
                if at == b'/' && b.get(j + 1) == Some(&b'*') {
                    depth += 1;
                    scan.nested_comment_at.get_or_insert(j);
                    j += 2;
                } else if at == b'*' && b.get(j + 1) == Some(&b'/') {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            let end = j.min(n);
            scan.regions.push(Region {
                kind: RegionKind::BlockComment,
                start: i,
                end,
            });
            i = end;
        } else if c == b'\'' || c == b'"' {
            // `e'…'` is an escape string when the `e` starts a token; be conservative about
            // what "starts a token" means (after a digit, DuckDB's number rules may split it).
            let back = |k: usize| i.checked_sub(k).and_then(|at| b.get(at)).copied();
            if c == b'\''
                && matches!(back(1), Some(b'e' | b'E'))
                && !back(2).is_some_and(|x| is_ident_start(x) || x == b'$')
            {
                scan.escape_string_at.get_or_insert(i - 1);
            }
            let mut j = i + 1;
            loop {
                match b.get(j) {
                    None => break,
                    Some(&q) if q == c => {
                        if b.get(j + 1) == Some(&c) {
                            j += 2;
                        } else {
                            j += 1;
                            break;
                        }
                    }
                    Some(_) => j += 1,
                }
            }
            let kind = if c == b'\'' {
                RegionKind::String
            } else {
                RegionKind::QuotedIdentifier
            };
            scan.regions.push(Region {
                kind,
                start: i,
                end: j,
            });
            i = j;
        } else if c == b'$' {
            let mut j = i + 1;
            if b.get(j).is_some_and(|x| x.is_ascii_digit()) {
                // `$1`: a parameter.
                while b.get(j).is_some_and(|x| x.is_ascii_digit()) {
                    j += 1;
                }
                i = j;
                continue;
            }
            if b.get(j).is_some_and(|&x| is_ident_start(x)) {
                while b
                    .get(j)
                    .is_some_and(|&x| is_ident_start(x) || x.is_ascii_digit())
                {
                    j += 1;
                }
            }
            if b.get(j) == Some(&b'$')
                && let Some(opener) = b.get(i..=j)
            {
                let body = j + 1;
                let end = b
                    .get(body..)
                    .unwrap_or_default()
                    .windows(opener.len())
                    .position(|w| w == opener)
                    .map_or(n, |p| body + p + opener.len());
                scan.regions.push(Region {
                    kind: RegionKind::DollarString,
                    start: i,
                    end,
                });
                i = end;
            } else {
                i += 1;
            }
        } else if is_ident_start(c) {
            let mut j = i;
            while let Some(&at) = b.get(j)
                && is_ident_continue(at)
            {
                if at >= 0x80 {
                    // `j` is at a character boundary: identifiers are consumed from one.
                    let ch = sql[j..].chars().next().unwrap_or(' ');
                    if ch.is_whitespace() {
                        scan.unusual_whitespace_at.get_or_insert(j);
                    }
                    j += ch.len_utf8().max(1);
                } else {
                    j += 1;
                }
            }
            i = j;
        } else if c.is_ascii_digit() {
            let mut j = i;
            while b
                .get(j)
                .is_some_and(|&x| x.is_ascii_alphanumeric() || x == b'_' || x == b'.')
            {
                j += 1;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    scan
}

/// Maps sqlparser's (line, column) locations to byte offsets.
struct Offsets {
    ascii: bool,
    /// Byte offset of every character (only when the text is not ASCII), plus the end.
    char_bytes: Vec<usize>,
    /// Character index at which each line starts.
    line_starts: Vec<usize>,
    len: usize,
}

impl Offsets {
    fn new(sql: &str) -> Offsets {
        let ascii = sql.is_ascii();
        let mut line_starts = vec![0];
        let mut char_bytes = Vec::new();
        for (index, (byte, ch)) in sql.char_indices().enumerate() {
            if !ascii {
                char_bytes.push(byte);
            }
            if ch == '\n' {
                line_starts.push(index + 1);
            }
        }
        if !ascii {
            char_bytes.push(sql.len());
        }
        Offsets {
            ascii,
            char_bytes,
            line_starts,
            len: sql.len(),
        }
    }

    fn byte(&self, at: Location) -> Option<usize> {
        let line = usize::try_from(at.line).ok()?.checked_sub(1)?;
        let column = usize::try_from(at.column).ok()?.checked_sub(1)?;
        let char_index = self.line_starts.get(line)? + column;
        if self.ascii {
            (char_index <= self.len).then_some(char_index)
        } else {
            self.char_bytes.get(char_index).copied()
        }
    }
}

fn refuse(kind: ErrorKind, construct: &str, message: String, suggestion: &str) -> Refusal {
    Refusal {
        kind,
        message,
        construct: construct.into(),
        suggestion: suggestion.into(),
        missing: None,
    }
}

/// Why the lexical check stops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LexicalStop {
    /// A refusal on evidence: a cap.
    Refused(Refusal),
    /// sqlparser would cut the text differently from DuckDB's lexer, or does not read this
    /// literal as DuckDB does (`E'…'`, `X'…'`, a nested comment, a slice step read as a
    /// parameter): the parent cannot read the query, which is no evidence against it. It goes
    /// on to the worker, where DuckDB's own parser and the plan check decide. The construct.
    Unreadable(String),
}

impl From<Refusal> for LexicalStop {
    fn from(refusal: Refusal) -> Self {
        LexicalStop::Refused(refusal)
    }
}

fn ambiguous(construct: &str, _what: &str) -> LexicalStop {
    LexicalStop::Unreadable(construct.to_owned())
}

/// Refuse control characters that have no business in a query (NUL truncates C strings).
pub(crate) fn check_characters(sql: &str) -> Result<(), Refusal> {
    match sql
        .bytes()
        .enumerate()
        .find(|&(_, b)| (b < 0x20 && b != b'\t' && b != b'\n' && b != b'\r') || b == 0x7f)
    {
        None => Ok(()),
        Some((at, byte)) => Err(refuse(
            ErrorKind::InvalidArgument,
            "control character",
            format!("The SQL contains a control character (byte {byte:#04x} at offset {at})."),
            "Remove control characters; only tabs and newlines may appear.",
        )),
    }
}

/// The sqlparser view of one token, as far as the region comparison is concerned.
enum TokenClass {
    Code,
    Region(RegionKind),
}

/// Classify a token, refusing the kinds DuckDB does not lex the same way. Exhaustive on purpose:
/// a new token kind in sqlparser must be looked at before it is let through.
fn classify(token: &Token, limits: &Limits) -> Result<TokenClass, LexicalStop> {
    let unsupported_literal = |what: &str| Err(LexicalStop::Unreadable(what.to_owned()));
    Ok(match token {
        Token::Word(word) => {
            if word.value.len() > limits.max_identifier_bytes {
                return Err(LexicalStop::Refused(refuse(
                    ErrorKind::InvalidArgument,
                    "identifier",
                    format!(
                        "An identifier is {} bytes long; the limit is {} bytes.",
                        word.value.len(),
                        limits.max_identifier_bytes
                    ),
                    "Use shorter names and aliases.",
                )));
            }
            match word.quote_style {
                None => TokenClass::Code,
                Some('"') => TokenClass::Region(RegionKind::QuotedIdentifier),
                Some(other) => {
                    return Err(ambiguous(
                        &format!("{other}quoted identifier{other}"),
                        &format!("An identifier quoted with {other}"),
                    ));
                }
            }
        }
        Token::SingleQuotedString(_) => TokenClass::Region(RegionKind::String),
        Token::DollarQuotedString(_) => TokenClass::Region(RegionKind::DollarString),
        Token::Whitespace(Whitespace::SingleLineComment { prefix, .. }) => {
            if prefix != "--" {
                return Err(ambiguous(
                    prefix,
                    &format!("A comment starting with {prefix}"),
                ));
            }
            TokenClass::Region(RegionKind::LineComment)
        }
        Token::Whitespace(Whitespace::MultiLineComment(_)) => {
            TokenClass::Region(RegionKind::BlockComment)
        }
        Token::Whitespace(Whitespace::Space | Whitespace::Newline | Whitespace::Tab) => {
            TokenClass::Code
        }
        Token::DoubleQuotedString(_) => return unsupported_literal("Double-quoted string"),
        Token::TripleSingleQuotedString(_)
        | Token::TripleDoubleQuotedString(_)
        | Token::TripleSingleQuotedByteStringLiteral(_)
        | Token::TripleDoubleQuotedByteStringLiteral(_)
        | Token::TripleSingleQuotedRawStringLiteral(_)
        | Token::TripleDoubleQuotedRawStringLiteral(_) => {
            return unsupported_literal("Triple-quoted string");
        }
        Token::SingleQuotedByteStringLiteral(_) | Token::DoubleQuotedByteStringLiteral(_) => {
            return unsupported_literal("Byte string (b'...')");
        }
        Token::SingleQuotedRawStringLiteral(_) | Token::DoubleQuotedRawStringLiteral(_) => {
            return unsupported_literal("Raw string (r'...')");
        }
        Token::NationalStringLiteral(_) | Token::NationalQuoteDelimitedStringLiteral(_) => {
            return unsupported_literal("National string (N'...')");
        }
        Token::QuoteDelimitedStringLiteral(_) => {
            return unsupported_literal("Quote-delimited string");
        }
        Token::EscapedStringLiteral(_) => return unsupported_literal("Escape string (E'...')"),
        Token::UnicodeStringLiteral(_) => return unsupported_literal("Unicode string (U&'...')"),
        Token::HexStringLiteral(_) => return unsupported_literal("Hex string (X'...')"),
        // `$1` and `?` bind nothing here; `:2` may be DuckDB's slice step (`a[:-:2]`), which
        // sqlparser reads as a parameter. DuckDB's parser tells them apart.
        Token::Placeholder(p) => return Err(LexicalStop::Unreadable(format!("the parameter {p}"))),
        Token::EOF
        | Token::Number(..)
        | Token::Char(_)
        | Token::Comma
        | Token::DoubleEq
        | Token::Eq
        | Token::Neq
        | Token::Lt
        | Token::Gt
        | Token::LtEq
        | Token::GtEq
        | Token::Spaceship
        | Token::Plus
        | Token::Minus
        | Token::Mul
        | Token::Div
        | Token::DuckIntDiv
        | Token::Mod
        | Token::StringConcat
        | Token::LParen
        | Token::RParen
        | Token::Period
        | Token::Colon
        | Token::DoubleColon
        | Token::Assignment
        | Token::SemiColon
        | Token::Backslash
        | Token::LBracket
        | Token::RBracket
        | Token::Ampersand
        | Token::Pipe
        | Token::Caret
        | Token::LBrace
        | Token::RBrace
        | Token::RArrow
        | Token::Sharp
        | Token::DoubleSharp
        | Token::Tilde
        | Token::TildeAsterisk
        | Token::ExclamationMarkTilde
        | Token::ExclamationMarkTildeAsterisk
        | Token::DoubleTilde
        | Token::DoubleTildeAsterisk
        | Token::ExclamationMarkDoubleTilde
        | Token::ExclamationMarkDoubleTildeAsterisk
        | Token::ShiftLeft
        | Token::ShiftRight
        | Token::Overlap
        | Token::ExclamationMark
        | Token::DoubleExclamationMark
        | Token::AtSign
        | Token::CaretAt
        | Token::PGSquareRoot
        | Token::PGCubeRoot
        | Token::Arrow
        | Token::LongArrow
        | Token::HashArrow
        | Token::AtDashAt
        | Token::QuestionMarkDash
        | Token::AmpersandLeftAngleBracket
        | Token::AmpersandRightAngleBracket
        | Token::AmpersandLeftAngleBracketVerticalBar
        | Token::VerticalBarAmpersandRightAngleBracket
        | Token::TwoWayArrow
        | Token::LeftAngleBracketCaret
        | Token::RightAngleBracketCaret
        | Token::QuestionMarkSharp
        | Token::QuestionMarkDashVerticalBar
        | Token::QuestionMarkDoubleVerticalBar
        | Token::TildeEqual
        | Token::ShiftLeftVerticalBar
        | Token::VerticalBarShiftRight
        | Token::VerticalBarRightAngleBracket
        | Token::HashLongArrow
        | Token::AtArrow
        | Token::ArrowAt
        | Token::HashMinus
        | Token::AtQuestion
        | Token::AtAt
        | Token::Question
        | Token::QuestionAnd
        | Token::QuestionPipe
        | Token::CustomBinaryOperator(_) => TokenClass::Code,
    })
}

/// Check that sqlparser's tokens agree with DuckDB's lexical rules (see the module docs), and
/// that no identifier is over the length cap.
pub(crate) fn check_tokens(
    sql: &str,
    tokens: &[TokenWithSpan],
    limits: &Limits,
) -> Result<(), LexicalStop> {
    let scan = independent_regions(sql);
    if let Some(at) = scan.nested_comment_at {
        return Err(ambiguous(
            "/* nested comment */",
            &format!("A nested block comment (at byte {at})"),
        ));
    }
    if let Some(at) = scan.escape_string_at {
        return Err(ambiguous(
            "E'...'",
            &format!("An escape string literal E'...' (at byte {at})"),
        ));
    }
    if let Some(at) = scan.unusual_whitespace_at {
        return Err(ambiguous(
            "whitespace",
            &format!("A non-ASCII whitespace character (at byte {at})"),
        ));
    }
    let offsets = Offsets::new(sql);
    let mut expected = scan.regions.iter();
    for token in tokens {
        let kind = match classify(&token.token, limits)? {
            TokenClass::Code => continue,
            TokenClass::Region(kind) => kind,
        };
        let start = offsets.byte(token.span.start);
        let end = offsets.byte(token.span.end);
        let agrees = match (expected.next(), start, end) {
            (Some(region), Some(start), Some(end)) => {
                region.kind == kind
                    && region.start == start
                    && (region.end == end
                        // sqlparser keeps a trailing `\r` in a `--` comment; DuckDB ends there.
                        || (kind == RegionKind::LineComment
                            && end > region.end
                            && sql
                                .as_bytes()
                                .get(region.end..end)
                                .is_some_and(|tail| tail.iter().all(|&b| b == b'\r'))))
            }
            _ => false,
        };
        if !agrees {
            return Err(ambiguous(
                "quoting or comment",
                &format!(
                    "The quoting or commenting at line {}, column {}",
                    token.span.start.line, token.span.start.column
                ),
            ));
        }
    }
    if let Some(region) = expected.next() {
        return Err(ambiguous(
            "quoting or comment",
            &format!("The quoting or commenting at byte {}", region.start),
        ));
    }
    Ok(())
}

fn is_trivia(token: &Token) -> bool {
    matches!(token, Token::Whitespace(_) | Token::EOF)
}

/// Several statements: a `;` followed by anything but whitespace, comments and more `;`.
/// Decided on tokens (which [`check_tokens`] has matched to DuckDB's lexer), not on sqlparser's
/// grammar.
pub(crate) fn has_several_statements(tokens: &[TokenWithSpan]) -> bool {
    tokens
        .iter()
        .skip_while(|t| t.token != Token::SemiColon)
        .any(|t| !is_trivia(&t.token) && t.token != Token::SemiColon)
}

/// The first token that is not whitespace or a comment.
pub(crate) fn first_significant(tokens: &[TokenWithSpan]) -> Option<&Token> {
    tokens.iter().map(|t| &t.token).find(|t| !is_trivia(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regions(sql: &str) -> Vec<(RegionKind, &str)> {
        independent_regions(sql)
            .regions
            .iter()
            .map(|r| (r.kind, &sql[r.start..r.end]))
            .collect()
    }

    #[test]
    fn independent_scan_follows_duckdb_rules() {
        use RegionKind::*;
        assert_eq!(
            regions("SELECT 'a''b' -- c\r; x"),
            vec![(String, "'a''b'"), (LineComment, "-- c")]
        );
        assert_eq!(
            regions("/* a /* b */ c */ 1"),
            vec![(BlockComment, "/* a /* b */ c */")]
        );
        assert_eq!(
            regions("SELECT \"a\"\"b\", $$x;$$, $t$y$t$, a$$b"),
            vec![
                (QuotedIdentifier, "\"a\"\"b\""),
                (DollarString, "$$x;$$"),
                (DollarString, "$t$y$t$"),
            ]
        );
        assert_eq!(regions("1 <--x\n2"), vec![(LineComment, "--x")]);
        assert!(
            independent_regions("SELECT e'x'")
                .escape_string_at
                .is_some()
        );
        assert!(
            independent_regions("SELECT 1e'x'")
                .escape_string_at
                .is_some()
        );
        assert!(
            independent_regions("SELECT abce'x'")
                .escape_string_at
                .is_none()
        );
        assert!(
            independent_regions("SELECT a\u{a0}b")
                .unusual_whitespace_at
                .is_some()
        );
    }

    #[test]
    fn several_statements_are_found_on_tokens() {
        let tokens = |sql: &str| {
            sqlparser::tokenizer::Tokenizer::new(&sqlparser::dialect::DuckDbDialect {}, sql)
                .tokenize_with_location()
                .unwrap()
        };
        assert!(!has_several_statements(&tokens("SELECT 1;")));
        assert!(!has_several_statements(&tokens(
            "SELECT 1; -- done\n ; /* x */"
        )));
        assert!(!has_several_statements(&tokens("SELECT ';' AS \"a;b\"")));
        assert!(has_several_statements(&tokens("SELECT 1; SELECT 2")));
        assert!(has_several_statements(&tokens("SELECT 1;x")));
    }
}
