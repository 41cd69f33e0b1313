#![no_main]
//! The worker's only readings of the agent's text without DuckDB's parser
//! (`duckgate_validate::validate::sql_prefix`): never a panic, an `EXPLAIN`'s rest is a strict
//! suffix of the text after DuckDB's first word `EXPLAIN` (by DuckDB's spaces only), and a
//! keyword's letters are never missed.
use duckgate_validate::validate::sql_prefix::{is_duckdb_space, may_hold_keyword, strip_explain};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(sql) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(rest) = strip_explain(sql) {
        assert!(rest.len() < sql.len(), "{sql:?}");
        assert!(sql.ends_with(rest), "{sql:?} -> {rest:?}");
        // DuckDB's first word is `EXPLAIN`: only DuckDB's spaces before it, and one of them or
        // `(` right after it (any other character would continue DuckDB's word).
        let first = sql.trim_start_matches(is_duckdb_space);
        assert!(
            first
                .get(..7)
                .is_some_and(|head| head.eq_ignore_ascii_case("explain"))
                && first
                    .get(7..)
                    .and_then(|after| after.chars().next())
                    .is_some_and(|c| is_duckdb_space(c) || c == '('),
            "{sql:?}"
        );
        // What was cut is that word, `ANALYZE`, an option list of words and commas, and
        // DuckDB's spaces: no comment, quote or other character DuckDB reads otherwise.
        let cut = &sql[..sql.len() - rest.len()];
        assert!(
            cut.chars().all(|c| is_duckdb_space(c)
                || c.is_ascii_alphanumeric()
                || matches!(c, '_' | ',' | '(' | ')')),
            "{sql:?} cut {cut:?}"
        );
    }
    let lower = sql.to_ascii_lowercase();
    for keyword in ["pivot", "call"] {
        assert_eq!(
            may_hold_keyword(sql, keyword),
            lower.contains(keyword),
            "{sql:?} {keyword}"
        );
    }
});
