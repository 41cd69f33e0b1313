#![no_main]
//! The worker's only readings of the agent's text without DuckDB's parser
//! (`duckgate_validate::validate::sql_prefix`): never a panic, an `EXPLAIN`'s rest is a strict
//! suffix of the text, and a keyword's letters are never missed.
use duckgate_validate::validate::sql_prefix::{may_hold_keyword, strip_explain};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(sql) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(rest) = strip_explain(sql) {
        assert!(rest.len() < sql.len(), "{sql:?}");
        assert!(sql.ends_with(rest), "{sql:?} -> {rest:?}");
        assert!(
            sql.trim_start()
                .get(..7)
                .is_some_and(|head| head.eq_ignore_ascii_case("explain")),
            "{sql:?}"
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
