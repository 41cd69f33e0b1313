//! SQL text duckgate writes itself: quoted identifiers and string literals.
//!
//! Every name or value duckgate splices into SQL goes through one of these two functions, so
//! there is one quoting rule to review. They are plain string functions (no DuckDB), shared by
//! the engine, the MCP layer and anything else that builds SQL.

/// `name` as a double-quoted SQL identifier, inner double quotes doubled: DuckDB reads it back as
/// exactly `name`, whatever it contains.
pub fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `text` as a single-quoted SQL string literal, inner single quotes doubled.
pub fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_and_literals_are_quoted_with_inner_quotes_doubled() {
        assert_eq!(quote_identifier("cgm_readings"), "\"cgm_readings\"");
        assert_eq!(quote_identifier("we\"ird; DROP"), "\"we\"\"ird; DROP\"");
        assert_eq!(quote_identifier("\""), "\"\"\"\"");
        assert_eq!(quote_identifier("it's"), "\"it's\"");
        assert_eq!(quote_identifier(""), "\"\"");

        assert_eq!(quote_literal("Europe/Paris"), "'Europe/Paris'");
        assert_eq!(quote_literal("it's'; DROP"), "'it''s''; DROP'");
        assert_eq!(quote_literal("say \"hi\""), "'say \"hi\"'");
        assert_eq!(quote_literal(""), "''");
    }
}
