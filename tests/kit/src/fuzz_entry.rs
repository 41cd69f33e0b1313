//! Entry points for the fuzz targets (and the property tests), so each target is one line.
//!
//! Invariants checked, by panicking when they fail:
//! - `check` never panics, on any input;
//! - whatever `check` accepts re-parses (with sqlparser's plain statement splitter) to exactly
//!   one statement of the accepted kind (except [`StatementKind::Unparsed`], which sqlparser
//!   could not parse to begin with);
//! - queries built by the grammar ([`QuerySpec`]) are accepted; with a forbidden construct
//!   planted in any slot they are refused; with `; <write>` appended they are refused.

use arbitrary::Arbitrary;
use duckgate_validate::error::ErrorKind;
use duckgate_validate::validate::{Accepted, Limits, StatementKind, validate_sql};
use sqlparser::ast::Statement;
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Location, Token, Tokenizer};

use crate::corpus;
use crate::generate::{Plant, QuerySpec, WRITES};

/// Raw bytes: any UTF-8 string goes through `check`; an acceptance must re-parse cleanly.
pub fn bytes(data: &[u8]) {
    if let Ok(sql) = std::str::from_utf8(data) {
        check_and_verify(sql);
    }
}

/// A grammar-built query, optionally with a planted forbidden construct or an appended write.
#[derive(Debug, Clone, Arbitrary)]
pub struct StructuredInput {
    /// The query.
    pub query: QuerySpec,
    /// Where to plant what (slot index modulo the number of slots).
    pub plant: Option<(u16, Plant)>,
    /// Which write to append after `;`.
    pub append: Option<u8>,
}

/// Structured: generated queries are accepted, planted ones refused, appended writes refused.
pub fn structured(input: StructuredInput) {
    let catalog = corpus::catalog();
    let limits = Limits::default();
    let plain = input.query.render();
    let accepted = check_and_verify(&plain);
    assert!(
        accepted.is_some(),
        "a generated read-only query was refused: {plain}\n{:?}",
        validate_sql(&plain, &catalog, &limits)
    );
    if let Some((at, plant)) = input.plant {
        let (planted, _) = input.query.render_planted(Some((usize::from(at), plant)));
        assert!(
            check_and_verify(&planted).is_none(),
            "a planted {plant:?} was accepted: {planted}"
        );
    }
    if let Some(which) = input.append {
        let write = WRITES[usize::from(which) % WRITES.len()];
        // A newline first: the grammar may end the query with a `--` comment.
        let joined = format!("{plain}\n; {write}");
        let refusal = validate_sql(&joined, &catalog, &limits);
        assert!(
            matches!(&refusal, Err(r) if r.kind == ErrorKind::MultipleStatements),
            "an appended write was not refused as a second statement: {joined}\n{refusal:?}"
        );
    }
}

/// Run `check`; if it accepts, verify the acceptance independently and return it.
pub fn check_and_verify(sql: &str) -> Option<Accepted> {
    let accepted = validate_sql(sql, &corpus::catalog(), &Limits::default()).ok()?;
    verify_single_statement(sql, &accepted);
    Some(accepted)
}

/// The byte offset of a tokenizer location (1-based line and character column) in `sql`.
fn byte_offset(sql: &str, at: Location) -> usize {
    let (mut line, mut column) = (1, 1);
    for (offset, ch) in sql.char_indices() {
        if (line, column) == (at.line, at.column) {
            return offset;
        }
        if ch == '\n' {
            (line, column) = (line + 1, 1);
        } else {
            column += 1;
        }
    }
    sql.len()
}

/// An accepted text is one statement of the accepted kind, as sqlparser's own splitter sees it.
fn verify_single_statement(sql: &str, accepted: &Accepted) {
    let dialect = DuckDbDialect {};
    let text = match accepted.kind {
        StatementKind::Summarize => {
            // `SUMMARIZE` + a name or a query; the query part must stand alone. Cut on tokens:
            // comments may hold anything, the word `summarize` included.
            let tokens = Tokenizer::new(&dialect, sql)
                .tokenize_with_location()
                .expect("accepted SQL tokenizes");
            let mut significant = tokens.iter().filter(|t| {
                !matches!(
                    t.token,
                    Token::Whitespace(_) | Token::SemiColon | Token::EOF
                )
            });
            let keyword = significant.next().expect("SUMMARIZE was accepted");
            let name: Vec<&Token> = significant.map(|t| &t.token).collect();
            if matches!(
                name.as_slice(),
                [Token::Word(_)]
                    | [Token::Word(_), Token::Period, Token::Word(_)]
                    | [
                        Token::Word(_),
                        Token::Period,
                        Token::Word(_),
                        Token::Period,
                        Token::Word(_)
                    ]
            ) {
                return;
            }
            &sql[byte_offset(sql, keyword.span.end)..]
        }
        StatementKind::Query
        | StatementKind::Describe
        | StatementKind::Show
        | StatementKind::Explain
        | StatementKind::Call => sql,
        // sqlparser could not parse it, so it cannot re-parse it either: the statement count
        // was decided on tokens, and the worker's DuckDB decides the rest.
        StatementKind::Unparsed => return,
    };
    let statements = Parser::parse_sql(&dialect, text)
        .unwrap_or_else(|e| panic!("accepted SQL does not re-parse ({e}): {sql}"));
    assert_eq!(
        statements.len(),
        1,
        "accepted SQL re-parses to {} statements: {sql}",
        statements.len()
    );
    let kind_matches = matches!(
        (&statements[0], accepted.kind),
        (
            Statement::Query(_),
            StatementKind::Query | StatementKind::Summarize
        ) | (
            Statement::Explain { .. } | Statement::ExplainTable { .. },
            StatementKind::Describe | StatementKind::Explain
        ) | (
            Statement::ShowTables { .. }
                | Statement::ShowVariable { .. }
                | Statement::ExplainTable { .. },
            StatementKind::Show
        ) | (Statement::Call(_), StatementKind::Call)
    );
    assert!(
        kind_matches,
        "accepted as {:?} but re-parses as {}: {sql}",
        accepted.kind, statements[0]
    );
}
