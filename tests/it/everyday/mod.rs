//! The everyday-analytics corpus (`corpus.sql`) and the database it runs on (`schema.sql`),
//! shared by tests/it/everyday_corpus.rs and tests/it/walk_differential.rs (which also declare
//! `mod support`, where the file format is read).
#![allow(dead_code, unreachable_pub)]

/// DuckDB SQL that builds the test database (data relative to the time it is built).
pub const SCHEMA: &str = include_str!("schema.sql");
/// The corpus text.
pub const CORPUS: &str = include_str!("corpus.sql");

pub use crate::support::corpus_file::{Entry, parse_corpus};

/// The corpus, parsed (panics on a malformed corpus).
pub fn entries() -> Vec<Entry> {
    parse_corpus(CORPUS).unwrap_or_else(|e| panic!("tests/it/everyday/corpus.sql: {e}"))
}
