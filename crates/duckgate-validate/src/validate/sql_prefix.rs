//! The only readings of the agent's SQL text the worker makes without DuckDB's parser, each
//! unable to let through what DuckDB's reading would refuse.
//!
//! - [`strip_explain`] cuts an `EXPLAIN [ANALYZE] [(options)]` prefix so the checks read the
//!   explained query. It is strict: only whitespace may come first (no comment), options are
//!   words and commas only; a space is one of DuckDB's ([`is_duckdb_space`]), so the prefix ends
//!   where DuckDB's tokenizer ends its words. Anything it does not recognise is left whole, and DuckDB's parser of
//!   the checks then refuses the `EXPLAIN` as a statement that is not a `SELECT`: a false
//!   refusal at worst, never a query checked as another.
//! - [`may_hold_keyword`] says whether a keyword (`PIVOT`, `CALL`) appears in the text at all,
//!   in any case, so that SQL without it skips a second parse by DuckDB. DuckDB reads a keyword
//!   only where its letters are written, so it has no false negatives; a false positive only
//!   costs that parse.
//!
//! Both are pure and fuzzed (`fuzz/fuzz_targets/sql_prefix.rs`).

/// If `sql` is `EXPLAIN [ANALYZE] [(options)] rest`, `rest` (a suffix of `sql`); otherwise
/// `None`. Only DuckDB's spaces ([`is_duckdb_space`]) may come before and after each keyword.
pub fn strip_explain(sql: &str) -> Option<&str> {
    let rest = trim_spaces(strip_keyword(trim_spaces(sql), "EXPLAIN")?);
    let rest = trim_spaces(strip_keyword(rest, "ANALYZE").unwrap_or(rest));
    if let Some(options) = rest.strip_prefix('(') {
        let (inside, after) = options.split_once(')')?;
        // Options are words and commas only (`FORMAT JSON`, `ANALYZE, FORMAT json`).
        if !inside
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ',' || c == ' ')
        {
            return None;
        }
        return Some(after);
    }
    Some(rest)
}

/// Whether DuckDB's tokenizer takes `c` as a space (DuckDB 2.0's `StringUtil::CharacterIsSpace`):
/// ASCII space, tab, newline, vertical tab, form feed and carriage return, nothing else. Any
/// other character (a no-break space, a line separator) is part of a word to DuckDB
/// (`Tokenizer::CharacterIsKeyword`), so `\u{a0}EXPLAIN` is no `EXPLAIN` to it, nor here.
pub fn is_duckdb_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r')
}

/// `text` without the spaces DuckDB's tokenizer skips at its start.
fn trim_spaces(text: &str) -> &str {
    text.trim_start_matches(is_duckdb_space)
}

/// `keyword` (any case) at the start of `text`, followed by one of DuckDB's spaces or `(`,
/// where DuckDB's tokenizer ends the word: the rest.
fn strip_keyword<'a>(text: &'a str, keyword: &str) -> Option<&'a str> {
    let head = text.get(..keyword.len())?;
    if !head.eq_ignore_ascii_case(keyword) {
        return None;
    }
    let rest = text.get(keyword.len()..)?;
    match rest.chars().next() {
        Some(c) if is_duckdb_space(c) || c == '(' => Some(rest),
        _ => None,
    }
}

/// Whether the letters of `keyword` (ASCII) appear anywhere in `sql`, in any case.
pub fn may_hold_keyword(sql: &str, keyword: &str) -> bool {
    let keyword = keyword.as_bytes();
    !keyword.is_empty()
        && sql
            .as_bytes()
            .windows(keyword.len())
            .any(|w| w.eq_ignore_ascii_case(keyword))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explain_prefix_is_recognised_only_at_the_start() {
        assert_eq!(strip_explain("EXPLAIN SELECT 1"), Some("SELECT 1"));
        assert_eq!(
            strip_explain("  explain analyze\nSELECT 1"),
            Some("SELECT 1")
        );
        assert_eq!(
            strip_explain("EXPLAIN (FORMAT JSON) SELECT 1"),
            Some(" SELECT 1")
        );
        assert_eq!(strip_explain("EXPLAINSELECT 1"), None);
        assert_eq!(strip_explain("/* x */ EXPLAIN SELECT 1"), None);
        assert_eq!(strip_explain("EXPLAIN (FORMAT 'x') SELECT 1"), None);
        assert_eq!(strip_explain("EXPLAIN (FORMAT JSON SELECT 1"), None);
        assert_eq!(strip_explain("SELECT 1"), None);
        assert_eq!(strip_explain("EXPLAIN"), None);
        assert_eq!(strip_explain("ÉXPLAIN SELECT 1"), None);
    }

    /// A character DuckDB's tokenizer reads as part of a word is no space here either: before
    /// the keyword it makes another word (`\u{a0}EXPLAIN`), after it a longer one; DuckDB's own
    /// spaces, vertical tab and form feed among them, are read as it reads them.
    #[test]
    fn only_duckdb_spaces_come_before_or_end_a_keyword() {
        assert_eq!(
            strip_explain("\u{b}\u{c}\tEXPLAIN\u{c}ANALYZE\rSELECT 1"),
            Some("SELECT 1")
        );
        for sql in [
            "\u{a0}EXPLAIN SELECT 1",
            "EXPLAIN\u{a0}SELECT 1",
            "\u{2028}EXPLAIN SELECT 1",
            "EXPLAIN\u{3000}SELECT 1",
            "\u{85}EXPLAIN SELECT 1",
        ] {
            assert_eq!(strip_explain(sql), None, "{sql:?}");
        }
        // After `ANALYZE`, a word that only starts with it is the explained statement's.
        assert_eq!(
            strip_explain("EXPLAIN ANALYZE\u{a0}SELECT 1"),
            Some("ANALYZE\u{a0}SELECT 1")
        );
        assert!(is_duckdb_space('\u{b}') && !is_duckdb_space('\u{a0}'));
    }

    #[test]
    fn a_keyword_is_found_in_any_case_anywhere() {
        assert!(may_hold_keyword("pivot t on a", "PIVOT"));
        assert!(may_hold_keyword("SELECT 1 FROM x.PiVoT_wider", "pivot"));
        assert!(may_hold_keyword("/**/call range(1)", "CALL"));
        assert!(!may_hold_keyword("SELECT 1", "CALL"));
        assert!(!may_hold_keyword("", "CALL"));
        assert!(!may_hold_keyword("cal", "CALL"));
        assert!(!may_hold_keyword("anything", ""));
        // A keyword is its letters as written: a string that only spells it once DuckDB runs
        // a concatenation is not one.
        assert!(!may_hold_keyword("SELECT 'piv' || 'ot'", "PIVOT"));
    }
}
