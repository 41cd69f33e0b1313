//! What the parent still refuses when sqlparser cannot parse the SQL.
//!
//! sqlparser's DuckDB dialect lags DuckDB's grammar (`FILTER (cond)`, `ASOF JOIN … ON`, `USING
//! SAMPLE`, `PIVOT … ON … IN`, `SELECT x: 42`, `#n`, …). Refusing whatever it cannot parse
//! refused valid queries, so such SQL goes on to the worker, whose check of DuckDB's own syntax
//! tree and plan is the authority ([`super::tree`]). The parent refuses it only on positive
//! evidence in the tokens, which the lexical checks have already matched to DuckDB's lexer (and
//! the statement count is decided on them too):
//! - it is not a query: it starts with a word that does not begin one, with a write or other
//!   non-query keyword (but `CALL`, which DuckDB binds as `SELECT * FROM` its table function),
//!   or has one as the statement under `EXPLAIN`/`DESCRIBE`/… or after a `WITH` list;
//! - brackets nest deeper than the parser's recursion cap allows;
//! - a denied function is called anywhere (`name(`), or a table function off the allowlist is
//!   called in `FROM` or by `CALL`;
//! - a relation in `FROM`/`JOIN` (or the subject of `PIVOT`, `DESCRIBE`, …) is a string, which
//!   DuckDB's replacement scans read as a file or URL, or a quoted name shaped like a path, or
//!   one of DuckDB's settings views;
//! - under privacy rules: a catalog listing (`information_schema`, `duckdb_…()`, …).
//!
//! Where a pattern could be read two ways, it is left to the worker rather than refused.

use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

use super::functions::{self, RowSource, SystemView};
use super::refusals::{
    denied, file_relation, looks_like_path, no_declared_folders, table_function_not_allowed,
};
use super::walk::Walker;
use super::{Catalog, Limits, NON_QUERY_KEYWORDS, Refusal, too_deep, write_refused};
use crate::error::ErrorKind;

/// Words a query may start with (besides `(`).
const QUERY_STARTS: &[&str] = &[
    "SELECT",
    "FROM",
    "WITH",
    "VALUES",
    "TABLE",
    "PIVOT",
    "PIVOT_WIDER",
    "UNPIVOT",
    "PIVOT_LONGER",
    "SUMMARIZE",
    "DESCRIBE",
    "DESC",
    "SHOW",
    "EXPLAIN",
];

/// Words whose subject, at the start of a statement, is a relation (`PIVOT t`, `DESCRIBE t`).
/// All of them are also in [`QUERY_STARTS`]; the two lists answer different questions, so each
/// is written out whole.
const SUBJECT_WORDS: &[&str] = &[
    "PIVOT",
    "PIVOT_WIDER",
    "UNPIVOT",
    "PIVOT_LONGER",
    "SUMMARIZE",
    "DESCRIBE",
    "DESC",
    "SHOW",
    "TABLE",
];

/// Words that end a `FROM` clause: after them a comma no longer separates relations.
const FROM_CLAUSE_ENDS: &[&str] = &[
    "WHERE",
    "GROUP",
    "HAVING",
    "QUALIFY",
    "WINDOW",
    "ORDER",
    "LIMIT",
    "OFFSET",
    "UNION",
    "INTERSECT",
    "EXCEPT",
    "SELECT",
    "RETURNING",
];

/// Refuse `tokens` (a statement sqlparser cannot parse) on positive evidence only.
pub(crate) fn refuse_on_evidence(
    tokens: &[TokenWithSpan],
    catalog: &Catalog,
    limits: &Limits,
) -> Result<(), Refusal> {
    let scan = Scan::new(tokens);
    scan.statement_start()?;
    if scan.depth > limits.max_depth {
        return Err(too_deep(limits));
    }
    let walker = Walker::new(catalog, limits);
    scan.calls_and_relations(catalog, &walker)?;
    scan.information_schema(&walker)
}

/// A statement that does not start the way a query does.
fn not_a_query(start: &str) -> Refusal {
    Refusal {
        kind: ErrorKind::SyntaxError,
        message: format!("The SQL starts with {start}, which does not begin a query."),
        construct: start.into(),
        suggestion: "Start with SELECT, FROM, WITH, VALUES, DESCRIBE, SHOW, SUMMARIZE or EXPLAIN (DuckDB SQL).".into(),
        missing: None,
    }
}

fn is_open(token: &Token) -> bool {
    matches!(token, Token::LParen | Token::LBracket | Token::LBrace)
}

fn is_close(token: &Token) -> bool {
    matches!(token, Token::RParen | Token::RBracket | Token::RBrace)
}

/// An unquoted word, ASCII case-insensitively one of `words` (all upper case).
fn is_word_in(token: Option<&Token>, words: &[&str]) -> bool {
    match token {
        Some(Token::Word(w)) if w.quote_style.is_none() => {
            words.iter().any(|k| w.value.eq_ignore_ascii_case(k))
        }
        _ => false,
    }
}

/// The significant tokens of one statement, with its brackets matched.
struct Scan<'t> {
    /// No whitespace, comments, end marker or trailing `;` (the statement count is checked).
    tokens: Vec<&'t Token>,
    /// For each opening bracket, the index of the bracket that closes it.
    closing: Vec<Option<usize>>,
    /// The deepest bracket nesting.
    depth: usize,
    /// Where the `WITH` lists of the statement name their CTEs (token indices).
    cte_definitions: Vec<usize>,
    /// Those names, ASCII lower case.
    cte_names: Vec<String>,
}

impl<'t> Scan<'t> {
    fn new(tokens: &'t [TokenWithSpan]) -> Scan<'t> {
        let mut significant: Vec<&Token> = tokens
            .iter()
            .map(|t| &t.token)
            .filter(|t| !matches!(t, Token::Whitespace(_) | Token::EOF))
            .collect();
        while significant.last() == Some(&&Token::SemiColon) {
            significant.pop();
        }
        let mut closing = vec![None; significant.len()];
        let mut open = Vec::new();
        let mut depth = 0;
        for (i, token) in significant.iter().enumerate() {
            if is_open(token) {
                open.push(i);
                depth = depth.max(open.len());
            } else if is_close(token)
                && let Some(slot) = open.pop().and_then(|opened| closing.get_mut(opened))
            {
                *slot = Some(i);
            }
        }
        let mut scan = Scan {
            tokens: significant,
            closing,
            depth,
            cte_definitions: Vec::new(),
            cte_names: Vec::new(),
        };
        scan.cte_definitions = (0..scan.tokens.len())
            .filter(|&i| scan.is(i, "WITH"))
            .filter_map(|i| scan.with_list(i))
            .flat_map(|(names, _)| names)
            .collect();
        scan.cte_names = scan
            .cte_definitions
            .iter()
            .filter_map(|&i| scan.word(i).map(|w| w.value.to_ascii_lowercase()))
            .collect();
        scan
    }

    fn token(&self, i: usize) -> Option<&'t Token> {
        self.tokens.get(i).copied()
    }

    fn word(&self, i: usize) -> Option<&'t Word> {
        match self.token(i) {
            Some(Token::Word(w)) => Some(w),
            _ => None,
        }
    }

    fn is(&self, i: usize, word: &str) -> bool {
        is_word_in(self.token(i), &[word])
    }

    fn is_in(&self, i: usize, words: &[&str]) -> bool {
        is_word_in(self.token(i), words)
    }

    /// The index after the bracket group opening at `i`.
    fn after_group(&self, i: usize) -> Option<usize> {
        self.closing.get(i).copied().flatten().map(|c| c + 1)
    }

    /// The name chain `a.b.c` starting at `i`, and the index after it.
    fn name_chain(&self, i: usize) -> (Vec<&'t Word>, usize) {
        let mut parts = Vec::new();
        let mut next = i;
        while let Some(word) = self.word(next) {
            parts.push(word);
            next += 1;
            if self.token(next) == Some(&Token::Period) && self.word(next + 1).is_some() {
                next += 1;
            } else {
                break;
            }
        }
        (parts, next)
    }

    /// Whether the word at `i` names a CTE in a `WITH` list.
    fn defines_cte(&self, i: usize) -> bool {
        self.cte_definitions.contains(&i)
    }

    /// The `WITH` list that starts at `i`, if it has the shape of one (`name [(columns)] [USING
    /// KEY (…)] AS [NOT] [MATERIALIZED] (…)`, comma-separated): where it names its CTEs, and
    /// the index of the statement after it.
    fn with_list(&self, i: usize) -> Option<(Vec<usize>, usize)> {
        let mut names = Vec::new();
        let mut next = i + 1;
        if self.is(next, "RECURSIVE") {
            next += 1;
        }
        loop {
            self.word(next)?;
            names.push(next);
            next += 1;
            if self.token(next) == Some(&Token::LParen) {
                next = self.after_group(next)?;
            }
            if self.is(next, "USING") && self.is(next + 1, "KEY") {
                next = self.after_group(next + 2)?;
            }
            if !self.is(next, "AS") {
                return None;
            }
            next += 1;
            if self.is(next, "NOT") {
                next += 1;
            }
            if self.is(next, "MATERIALIZED") {
                next += 1;
            }
            if self.token(next) != Some(&Token::LParen) {
                return None;
            }
            next = self.after_group(next)?;
            if self.token(next) == Some(&Token::Comma) {
                next += 1;
            } else {
                return Some((names, next));
            }
        }
    }

    /// The statement must start like a query, and the statement under `EXPLAIN`, `DESCRIBE`,
    /// `SHOW`, `SUMMARIZE` or after a `WITH` list must not be a write.
    fn statement_start(&self) -> Result<(), Refusal> {
        match self.token(0) {
            None | Some(Token::LParen) => {}
            // `CALL f(…)` is `SELECT * FROM f(…)` to DuckDB: its table function is checked as
            // one in `FROM` (`calls_and_relations`).
            Some(Token::Word(w))
                if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("CALL") =>
            {
                return Ok(());
            }
            Some(Token::Word(w)) if w.quote_style.is_none() => {
                let upper = w.value.to_ascii_uppercase();
                if NON_QUERY_KEYWORDS.contains(&upper.as_str()) {
                    return Err(write_refused(&upper));
                }
                if !QUERY_STARTS.contains(&upper.as_str()) {
                    return Err(not_a_query(&w.value));
                }
            }
            Some(other) => return Err(not_a_query(&other.to_string())),
        }
        let mut at = 0;
        // After DESCRIBE, SHOW and SUMMARIZE a bare name is a relation, whatever it spells.
        let mut may_be_a_name = false;
        loop {
            if self.is(at, "EXPLAIN") {
                at += 1;
                if self.is_in(at, &["ANALYZE", "ANALYSE"]) {
                    at += 1;
                }
                if self.token(at) == Some(&Token::LParen) {
                    let Some(after) = self.after_group(at) else {
                        return Ok(());
                    };
                    at = after;
                }
                may_be_a_name = false;
            } else if self.is_in(at, &["DESCRIBE", "DESC", "SHOW", "SUMMARIZE"]) {
                at += 1;
                may_be_a_name = true;
            } else if self.is(at, "WITH") {
                match self.with_list(at) {
                    Some((_, after)) => at = after,
                    None => return Ok(()),
                }
                may_be_a_name = false;
                break;
            } else {
                break;
            }
        }
        if let Some(Token::Word(w)) = self.token(at)
            && w.quote_style.is_none()
        {
            let upper = w.value.to_ascii_uppercase();
            let bare_name =
                may_be_a_name && matches!(self.token(at + 1), None | Some(Token::Period));
            if NON_QUERY_KEYWORDS.contains(&upper.as_str()) && !bare_name {
                return Err(write_refused(&upper));
            }
        }
        Ok(())
    }

    /// Function calls anywhere, and the relations of `FROM` clauses and statement subjects.
    fn calls_and_relations(&self, catalog: &Catalog, walker: &Walker<'_>) -> Result<(), Refusal> {
        /// One bracket level: whether it holds a query, and whether it is inside its `FROM`.
        struct Level {
            query: bool,
            in_from: bool,
        }
        let mut levels = vec![Level {
            query: true,
            in_from: false,
        }];
        for (i, &token) in self.tokens.iter().enumerate() {
            if is_open(token) {
                levels.push(Level {
                    query: token == &Token::LParen && self.is_in(i + 1, QUERY_STARTS),
                    in_from: false,
                });
                continue;
            }
            if is_close(token) {
                if levels.len() > 1 {
                    levels.pop();
                }
                continue;
            }
            if matches!(token, Token::Word(_)) && self.token(i + 1) == Some(&Token::LParen) {
                self.call(i, walker)?;
            }
            let Some(level) = levels.last_mut() else {
                continue;
            };
            let introduces_relation = if self.is(i, "FROM") {
                // Not `a IS [NOT] DISTINCT FROM b`, nor `extract(year FROM d)`, `trim(x FROM
                // s)`, … (a bracket that holds no query).
                let clause = level.query && !(i > 0 && self.is(i - 1, "DISTINCT"));
                level.in_from |= clause;
                clause
            } else if self.is(i, "JOIN") {
                level.in_from = true;
                true
            } else if i == 0 && self.is(i, "CALL") {
                // `CALL f(…)`: DuckDB's `SELECT * FROM f(…)`.
                true
            } else if token == &Token::Comma {
                level.in_from
            } else if self.is_in(i, FROM_CLAUSE_ENDS)
                || (self.is(i, "USING") && self.is(i + 1, "SAMPLE"))
            {
                level.in_from = false;
                false
            } else {
                // At the start of a statement: the text's, a bracket's, or the one after
                // `EXPLAIN` or after a `WITH` list.
                let starts_statement = match i.checked_sub(1).and_then(|at| self.token(at)) {
                    None | Some(Token::LParen | Token::RParen) => true,
                    before => is_word_in(before, &["EXPLAIN", "ANALYZE", "ANALYSE"]),
                };
                self.is_in(i, SUBJECT_WORDS) && starts_statement
            };
            if introduces_relation {
                self.relation(i + 1, catalog, walker)?;
            }
        }
        Ok(())
    }

    /// `name(` at `i`: a denied function is refused wherever it is called.
    fn call(&self, i: usize, walker: &Walker<'_>) -> Result<(), Refusal> {
        let Some(word) = self.word(i) else {
            return Ok(());
        };
        // `AS a(x, y)` names columns; `WITH name(x) AS (…)` defines a CTE.
        if (i > 0 && self.is(i - 1, "AS")) || self.defines_cte(i) {
            return Ok(());
        }
        let name = word.value.to_ascii_lowercase();
        // `x GLOB (pattern)` is the operator, not the function.
        if name == "glob" && word.quote_style.is_none() && self.operand_ends_before(i) {
            return Ok(());
        }
        if let Some(denial) = functions::denial(&name) {
            return Err(denied(&name, denial));
        }
        // A file reader binds by reading its files, wherever it is written: without a declared
        // folder there is nothing it may read.
        if functions::allowed_table_function(&name) == Some(RowSource::DeclaredFolders)
            && walker.catalog.folders.is_empty()
        {
            return Err(no_declared_folders(&name));
        }
        let lists_catalog = functions::expression_use(&name)
            == functions::ExpressionUse::CatalogListing
            || functions::allowed_table_function(&name) == Some(RowSource::Catalog);
        if lists_catalog {
            walker.check_catalog_listing(&format!("{name}()"))?;
        }
        if functions::expression_use(&name) == functions::ExpressionUse::CountsStatements {
            walker.check_statement_counter(&format!("{name}()"))?;
        }
        Ok(())
    }

    /// Whether an operand ends just before `i` (skipping a `NOT`), so that a word at `i` is an
    /// infix operator.
    fn operand_ends_before(&self, i: usize) -> bool {
        let mut before = i.checked_sub(1);
        if let Some(at) = before
            && self.is(at, "NOT")
        {
            before = at.checked_sub(1);
        }
        let Some(token) = before.and_then(|at| self.token(at)) else {
            return false;
        };
        match token {
            Token::Word(w) if w.quote_style.is_some() => true,
            Token::Word(_) => !is_word_in(
                Some(token),
                &[
                    "SELECT",
                    "WHERE",
                    "AND",
                    "OR",
                    "NOT",
                    "ON",
                    "WHEN",
                    "THEN",
                    "ELSE",
                    "BY",
                    "HAVING",
                    "QUALIFY",
                    "FROM",
                    "JOIN",
                    "LATERAL",
                    "DISTINCT",
                    "ALL",
                    "IN",
                    "IS",
                    "LIKE",
                    "ILIKE",
                    "BETWEEN",
                    "CASE",
                    "AS",
                    "USING",
                    "WITH",
                    "VALUES",
                    "LIMIT",
                    "OFFSET",
                    "RETURNING",
                    "EXCLUDE",
                    "REPLACE",
                ],
            ),
            Token::Number(..)
            | Token::SingleQuotedString(_)
            | Token::DollarQuotedString(_)
            | Token::RParen
            | Token::RBracket
            | Token::RBrace => true,
            _ => false,
        }
    }

    /// The relation that starts at `at` (after `FROM`, `JOIN`, a comma in `FROM`, or a
    /// statement's subject word).
    fn relation(&self, at: usize, catalog: &Catalog, walker: &Walker<'_>) -> Result<(), Refusal> {
        let at = if self.is(at, "LATERAL") { at + 1 } else { at };
        match self.token(at) {
            Some(Token::SingleQuotedString(name)) if catalog.in_declared_folder(name) => Ok(()),
            Some(Token::SingleQuotedString(name)) => Err(file_relation(name)),
            Some(Token::DollarQuotedString(name)) if catalog.in_declared_folder(&name.value) => {
                Ok(())
            }
            Some(Token::DollarQuotedString(name)) => Err(file_relation(&name.value)),
            Some(Token::Word(w)) if w.quote_style.is_some() || !self.is_in(at, QUERY_STARTS) => {
                let (parts, next) = self.name_chain(at);
                match (self.token(next), parts.last()) {
                    (Some(Token::LParen), Some(function)) => self.table_function(function, walker),
                    _ => self.named_relation(&parts, catalog, walker),
                }
            }
            _ => Ok(()),
        }
    }

    /// A table function called in `FROM`: the allowlist decides.
    fn table_function(&self, function: &Word, walker: &Walker<'_>) -> Result<(), Refusal> {
        let called = function.value.to_ascii_lowercase();
        match functions::table_use(&called) {
            functions::TableUse::Refused(denial) => Err(denied(&called, denial)),
            functions::TableUse::PlanOnly => Err(table_function_not_allowed(&called)),
            functions::TableUse::NotBuiltIn => Ok(()),
            functions::TableUse::Allowed(RowSource::Catalog) => {
                walker.check_catalog_listing(&format!("{called}()"))
            }
            functions::TableUse::Allowed(RowSource::DeclaredFolders) => {
                if walker.catalog.folders.is_empty() {
                    return Err(no_declared_folders(&called));
                }
                Ok(())
            }
            functions::TableUse::Allowed(RowSource::Arguments | RowSource::Constant) => Ok(()),
        }
    }

    /// A relation named `a`, `a.b` or `a.b.c`.
    fn named_relation(
        &self,
        parts: &[&Word],
        catalog: &Catalog,
        walker: &Walker<'_>,
    ) -> Result<(), Refusal> {
        let written = parts
            .iter()
            .map(|w| w.value.as_str())
            .collect::<Vec<_>>()
            .join(".");
        // A CTE of this name may shadow whatever else it means: the worker decides.
        if let [one] = parts
            && self.cte_names.contains(&one.value.to_ascii_lowercase())
        {
            return Ok(());
        }
        let names: Vec<&str> = parts.iter().map(|w| w.value.as_str()).collect();
        let found = match names.as_slice() {
            [table] => catalog.find(None, None, table),
            [schema, table] => catalog.find(None, Some(schema), table).or_else(|| {
                catalog
                    .is_database(schema)
                    .then(|| catalog.find(Some(schema), None, table))
                    .flatten()
            }),
            [database, schema, table] if catalog.is_database(database) => {
                catalog.find(Some(database), Some(schema), table)
            }
            _ => None,
        };
        if found.is_some() {
            return Ok(());
        }
        // Not the database's own (a table may be named `"a.b"`): shaped like a path, it is a
        // file for DuckDB's replacement scans.
        if parts
            .iter()
            .any(|w| w.quote_style.is_some() && looks_like_path(&w.value))
        {
            return Err(file_relation(&written));
        }
        let view = match names.as_slice() {
            [table] => functions::system_view(None, table),
            [schema, table] => functions::system_view(Some(schema), table),
            _ => None,
        };
        match view {
            Some(SystemView::Denied(denial)) => Err(denied(&written, denial)),
            Some(SystemView::Catalog) => walker.check_catalog_listing(&written),
            Some(SystemView::Constant) | None => Ok(()),
        }
    }

    /// Under privacy rules, `information_schema` named anywhere: a catalog listing (the other
    /// listings are refused where they are called or read, see [`Scan::calls_and_relations`]).
    fn information_schema(&self, walker: &Walker<'_>) -> Result<(), Refusal> {
        for &token in &self.tokens {
            if let Token::Word(w) = token
                && w.value.eq_ignore_ascii_case("information_schema")
            {
                walker.check_catalog_listing("information_schema")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::DuckDbDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn tokens(sql: &str) -> Vec<TokenWithSpan> {
        Tokenizer::new(&DuckDbDialect {}, sql)
            .tokenize_with_location()
            .unwrap()
    }

    #[test]
    fn brackets_are_matched_and_their_depth_measured() {
        let tokens = tokens("SELECT ((1), [2, {'a': (3)}]) ;");
        let scan = Scan::new(&tokens);
        assert_eq!(scan.depth, 4);
        assert_eq!(scan.token(scan.tokens.len() - 1), Some(&Token::RParen));
        assert_eq!(scan.after_group(1), Some(scan.tokens.len()));
    }

    #[test]
    fn cte_names_are_read_from_with_lists_only() {
        let tokens = tokens(
            "WITH a AS (SELECT 1), \"b.csv\"(x) AS MATERIALIZED (SELECT 2), c(y) USING KEY (y) AS (SELECT 3) \
             SELECT CAST(1 AS d) AS e FROM (WITH f AS (SELECT 4) SELECT 5) WINDOW \"w.csv\" AS (ORDER BY 1)",
        );
        assert_eq!(Scan::new(&tokens).cte_names, ["a", "b.csv", "c", "f"]);
    }

    #[test]
    fn the_statement_after_a_with_list_is_found() {
        let tokens = tokens(
            "WITH RECURSIVE a(x) AS (SELECT 1), b AS NOT MATERIALIZED (SELECT 2) DELETE FROM t",
        );
        let scan = Scan::new(&tokens);
        let (names, at) = scan.with_list(0).unwrap();
        assert_eq!(names, [2, 12]);
        assert!(scan.is(at, "DELETE"));
    }
}
