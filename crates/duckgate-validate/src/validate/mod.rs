//! The validator: a pure function from agent-written SQL to "one read-only query over this
//! database" or a refusal. No I/O, no DuckDB. See docs/ARCHITECTURE.md, "The layers".
//!
//! [`validate_sql`] runs, in order:
//! 1. caps and characters: SQL length (before anything else), control characters;
//! 2. tokens ([`lexical`]): sqlparser's tokens must cut the text exactly where DuckDB's lexer
//!    would (strings, quoted identifiers, comments), identifiers under the length cap, no
//!    parameters or exotic literals;
//! 3. statement count, on tokens: a `;` followed by anything but comments is refused;
//! 4. parse exactly one statement with the nesting cap (sqlparser's recursion limit), and demand
//!    that it ends where the text ends (sqlparser alone would silently stop at, e.g., `END`);
//! 5. statement kind ([`statements`]) and the full walk ([`walk`]): relations resolve to the
//!    catalog or to CTEs, table functions are allowlisted, dangerous functions are refused
//!    ([`functions`]) wherever they appear.
//!
//! `SUMMARIZE`, which sqlparser does not parse, is handled by a strict pre-parser: `SUMMARIZE`
//! followed by a table name, or by a query that itself goes through steps 4–5.
//!
//! The worker checks every query again with DuckDB's own syntax tree ([`tree`]) and plan, and
//! that check is the authority; this one is a fast pre-filter with precise messages, so it
//! refuses only on positive evidence. SQL that sqlparser cannot parse (its DuckDB dialect lags
//! DuckDB's grammar) is therefore not refused for that: after steps 1–3 and a scan of its tokens
//! for what is refused without a parse ([`unparsed`]), it is passed on as
//! [`StatementKind::Unparsed`]. Exceeding the nesting cap is still refused.

use serde::{Deserialize, Serialize};
use sqlparser::ast::{Ident, ObjectName, ObjectNamePart};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Span, Token, TokenWithSpan, Tokenizer};

use crate::error::{ErrorKind, messages};

pub(crate) mod function_class;
pub(crate) mod function_policy;
pub mod functions;
mod lexical;
pub mod refusals;
pub mod sql_prefix;
mod statements;
pub mod tree;
mod unparsed;
mod walk;

// The tests that need only the validator. Those over the test kit's case tables and grammar
// are integration tests (tests/validator/), which link the one copy of this crate the kit links.
#[cfg(test)]
mod privacy_tests;
#[cfg(test)]
mod unresolved_tests;

/// The relations the validator resolves names against, as read from the databases by a worker.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Catalog {
    /// Tables and views of the attached databases (hidden tables already left out).
    pub relations: Vec<CatalogRelation>,
    /// Some privacy rule is set: catalog functions, `information_schema`, `SHOW`,
    /// which would list hidden names, are refused.
    #[serde(default)]
    pub restricted: bool,
    /// The catalog name the default database is attached under in the worker (the `db` of
    /// `db.main.t`; see duckgate's `protocol::databases`). Empty: no catalog-qualified name
    /// resolves.
    #[serde(default)]
    pub database: String,
    /// The other databases' catalog names, which SQL names their relations by (`pump.main.t`,
    /// `pump.t`). Empty for a server of one database.
    #[serde(default)]
    pub other_databases: Vec<String>,
    /// The table macros stored in the database, as DuckDB's binder would find them (lower
    /// case); `None` when the catalog does not say (a validator given names only). A table
    /// function that is neither built in nor one of these does not exist, so the walk refuses
    /// it on its own (`write_csv(…)`) rather than leaving it to DuckDB's binder.
    #[serde(default)]
    pub table_macros: Option<Vec<String>>,
    /// The names of the operator's declared folders (`--files NAME=DIR`): a file named
    /// `NAME/…` is a relation, and the file readers are allowed. Empty: no file is.
    #[serde(default)]
    pub folders: Vec<String>,
}

impl Catalog {
    /// Whether `name` names a file in a declared folder (`exports/…`).
    pub fn in_declared_folder(&self, name: &str) -> bool {
        refusals::in_declared_folder(&self.folders, name)
    }

    /// The relation `schema.name` (case-insensitive) of `database` (`None`: the default) as
    /// `schema.name`, or `database.schema.name` for another database's; without a schema, the
    /// relation in `main` (DuckDB's default schema), as DuckDB would resolve it.
    fn find(&self, database: Option<&str>, schema: Option<&str>, name: &str) -> Option<String> {
        let other = database.filter(|d| !d.eq_ignore_ascii_case(&self.database));
        self.relations
            .iter()
            .find(|r| {
                let own = if r.schema.is_empty() {
                    "main"
                } else {
                    &r.schema
                };
                let database_matches = match other {
                    None => {
                        r.database.is_empty() || r.database.eq_ignore_ascii_case(&self.database)
                    }
                    Some(other) => r.database.eq_ignore_ascii_case(other),
                };
                let schema_matches = own.eq_ignore_ascii_case(schema.unwrap_or("main"));
                database_matches && schema_matches && r.name.eq_ignore_ascii_case(name)
            })
            .map(|r| {
                let schema = if r.schema.is_empty() {
                    "main"
                } else {
                    &r.schema
                };
                match other {
                    None => format!("{schema}.{}", r.name),
                    Some(_) => format!("{}.{schema}.{}", r.database, r.name),
                }
            })
    }

    /// Whether `name` is the catalog name of one of the attached databases (ASCII
    /// case-insensitively, as DuckDB compares catalog names).
    fn is_database(&self, name: &str) -> bool {
        (!self.database.is_empty() && name.eq_ignore_ascii_case(&self.database))
            || self
                .other_databases
                .iter()
                .any(|other| name.eq_ignore_ascii_case(other))
    }
}

/// One table or view.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogRelation {
    /// Its database's catalog name; empty (or [`Catalog::database`]) for the default database.
    #[serde(default)]
    pub database: String,
    /// Schema name, usually `main`.
    pub schema: String,
    /// Table or view name.
    pub name: String,
    /// Column names, in order (hidden columns left out).
    pub columns: Vec<String>,
}

/// Limits and switches the operator controls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest SQL accepted, in bytes.
    pub max_sql_bytes: usize,
    /// Deepest expression/query nesting accepted by the parser (sqlparser's recursion limit).
    pub max_depth: usize,
    /// Longest identifier accepted, in bytes.
    pub max_identifier_bytes: usize,
    /// Deepest nesting the walk follows. Long operator chains (`a + b + …`, `x OR y OR …`) nest
    /// without parser recursion, so they get their own cap (DuckDB's `max_expression_depth`
    /// defaults to 1000 as well).
    pub max_expression_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_sql_bytes: 100 * 1024,
            max_depth: 50,
            max_identifier_bytes: 255,
            max_expression_depth: 1000,
        }
    }
}

/// The shape of an accepted statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatementKind {
    /// SELECT / WITH / VALUES / set operation / FROM-first.
    Query,
    /// DESCRIBE of a relation or query.
    Describe,
    /// SHOW TABLES and friends.
    Show,
    /// SUMMARIZE of a relation or query.
    Summarize,
    /// EXPLAIN of an allowed query.
    Explain,
    /// `CALL` of a table function, which DuckDB binds as `SELECT * FROM` that call.
    Call,
    /// sqlparser could not parse it, and its tokens hold no evidence against it: its kind is
    /// unknown here, and the worker's check of DuckDB's own syntax tree decides.
    Unparsed,
}

/// What an accepted statement touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accepted {
    /// Its kind.
    pub kind: StatementKind,
    /// Catalog relations it reads, as `schema.name`. Empty for [`StatementKind::Unparsed`],
    /// whose relations only the worker resolves.
    pub relations: Vec<String>,
    /// Functions it calls (lower-case names). Empty for [`StatementKind::Unparsed`].
    pub functions: Vec<String>,
}

/// Why the SQL was refused, and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// Registry kind: `policy_blocked`, `multiple_statements`, `syntax_error`, `unknown_name`, `invalid_argument`.
    pub kind: ErrorKind,
    /// A sentence for the agent.
    pub message: String,
    /// The offending construct, e.g. `read_csv` or `INSERT`.
    pub construct: String,
    /// What to do instead.
    pub suggestion: String,
    /// For `unknown_name`: the name that is not in the catalog, and what kind of name it is, so
    /// the layers above suggest the right listing without reading the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<crate::error::MissingName>,
}

impl From<Refusal> for crate::error::Failure {
    fn from(refusal: crate::validate::Refusal) -> Self {
        crate::error::Failure {
            kind: refusal.kind,
            message: refusal.message,
            construct: (!refusal.construct.is_empty()).then_some(refusal.construct),
            suggestion: (!refusal.suggestion.is_empty()).then_some(refusal.suggestion),
            missing: refusal.missing,
            refusal: None,
            origin: crate::error::MessageOrigin::Duckgate,
        }
    }
}

/// The refusal for a column that does not exist (a hidden column does not exist for the agent:
/// one message for every such name.
pub fn unknown_column(name: &str) -> Refusal {
    walk::unknown_column(name)
}

/// The seed refusal for any write or other non-query statement.
pub(crate) fn write_refused(construct: &str) -> Refusal {
    Refusal {
        kind: ErrorKind::PolicyBlocked,
        message: messages::WRITE_REFUSED.into(),
        construct: construct.into(),
        suggestion: "Send a single read-only query (SELECT, WITH, VALUES, DESCRIBE, SHOW TABLES, SUMMARIZE, EXPLAIN).".into(),
        missing: None,
    }
}

fn multiple_statements() -> Refusal {
    Refusal {
        kind: ErrorKind::MultipleStatements,
        message: messages::MULTIPLE_STATEMENTS.into(),
        construct: ";".into(),
        suggestion: "Send one statement per call.".into(),
        missing: None,
    }
}

fn syntax_error(error: &ParserError, limits: &Limits) -> Refusal {
    match error {
        ParserError::RecursionLimitExceeded => too_deep(limits),
        ParserError::TokenizerError(_) | ParserError::ParserError(_) => Refusal {
            kind: ErrorKind::SyntaxError,
            message: error.to_string(),
            construct: String::new(),
            suggestion: "Fix the syntax (DuckDB SQL) and try again.".into(),
            missing: None,
        },
    }
}

/// Nesting over the parser's recursion cap (`policy.max_depth`).
fn too_deep(limits: &Limits) -> Refusal {
    Refusal {
        kind: ErrorKind::InvalidArgument,
        message: format!("The query nests deeper than {} levels.", limits.max_depth),
        construct: "nesting".into(),
        suggestion: "Flatten it, for example with CTEs (WITH ...).".into(),
        missing: None,
    }
}

/// Keywords that start a DuckDB statement other than a query. A statement that starts with one
/// is refused with the seed message even when sqlparser cannot parse it (e.g. `CHECKPOINT`,
/// `EXPORT DATABASE`, `SET VARIABLE`; see [`unparsed`]).
const NON_QUERY_KEYWORDS: &[&str] = &[
    "INSERT",
    "UPDATE",
    "DELETE",
    "MERGE",
    "UPSERT",
    "REPLACE",
    "CREATE",
    "DROP",
    "ALTER",
    "TRUNCATE",
    "COPY",
    "EXPORT",
    "IMPORT",
    "ATTACH",
    "DETACH",
    "INSTALL",
    "LOAD",
    "FORCE",
    "SET",
    "RESET",
    "PRAGMA",
    "CALL",
    "BEGIN",
    "START",
    "COMMIT",
    "ROLLBACK",
    "ABORT",
    "END",
    "PREPARE",
    "EXECUTE",
    "DEALLOCATE",
    "CHECKPOINT",
    "VACUUM",
    "ANALYZE",
    "USE",
    "COMMENT",
    "GRANT",
    "REVOKE",
    "SAVEPOINT",
    "RELEASE",
    "LOCK",
    "UNLOCK",
    "KILL",
    "CACHE",
    "UNCACHE",
    "DECLARE",
    "FETCH",
    "CLOSE",
    "OPEN",
    "LISTEN",
    "NOTIFY",
    "UNLISTEN",
    "DISCARD",
    "MSCK",
    "FLUSH",
    "UNLOAD",
    "OPTIMIZE",
];

/// Decide whether `sql` is one read-only query over `catalog`.
pub fn validate_sql(sql: &str, catalog: &Catalog, limits: &Limits) -> Result<Accepted, Refusal> {
    if sql.len() > limits.max_sql_bytes {
        return Err(Refusal {
            kind: ErrorKind::InvalidArgument,
            message: format!(
                "The SQL is {} bytes long; the limit is {} bytes.",
                sql.len(),
                limits.max_sql_bytes
            ),
            construct: "SQL length".into(),
            suggestion: "Send a shorter query.".into(),
            missing: None,
        });
    }
    // The decision, and the drop of the syntax tree, need stack in proportion to the nesting, and
    // a left-deep chain such as `1+1+…` nests without parser recursion yet is dropped recursively
    // (50 000 levels overflow a 2 MiB tokio thread). The nesting is at most one level per byte
    // or two of SQL, so: run here when the stack left covers the worst case for this length,
    // else on a fresh stack of our own (mapped lazily, but costing ~30 µs to set up).
    let worst_case = STACK_BASE_BYTES + sql.len() * STACK_BYTES_PER_SQL_BYTE;
    stacker::maybe_grow(worst_case, VALIDATOR_STACK_BYTES, || {
        check_unbounded_stack(sql, catalog, limits)
    })
}

/// The most table names [`validate_sql_without_catalog`] takes on trust.
const MAX_UNRESOLVED_NAMES: usize = 256;

/// [`validate_sql`] without the database's catalog (`duckgate check` without `--db`), where a name
/// missing from the catalog is no evidence that the table does not exist: a relation that is
/// not a CTE, a system view or a file is taken to be one of the database's tables. Every other
/// rule applies exactly as in [`validate_sql`].
///
/// Returns the accepted statement and the names taken on trust, as written; only the database's
/// catalog can confirm them.
pub fn validate_sql_without_catalog(
    sql: &str,
    limits: &Limits,
) -> Result<(Accepted, Vec<String>), Refusal> {
    let mut catalog = Catalog::default();
    let mut assumed: Vec<String> = Vec::new();
    loop {
        let refusal = match validate_sql(sql, &catalog, limits) {
            Ok(accepted) => return Ok((accepted, assumed)),
            Err(refusal) => refusal,
        };
        if refusal.kind != ErrorKind::UnknownName
            || assumed.len() >= MAX_UNRESOLVED_NAMES
            || !assume_relation(&mut catalog, &refusal.construct)
        {
            return Err(refusal);
        }
        assumed.push(refusal.construct);
    }
}

/// Add the relation `written` (`t`, `schema.t` or `database.schema.t`, as an unknown-relation
/// refusal names it) to `catalog`. False when it cannot be one of the database's tables, or
/// when nothing changes (the refusal was not about this name).
fn assume_relation(catalog: &mut Catalog, written: &str) -> bool {
    let dialect = DuckDbDialect {};
    let Ok(mut parser) = Parser::new(&dialect).try_with_sql(written) else {
        return false;
    };
    let Ok(name) = parser.parse_object_name(false) else {
        return false;
    };
    if parser.peek_token().token != Token::EOF {
        return false;
    }
    let mut parts = Vec::with_capacity(name.0.len());
    for part in &name.0 {
        match part {
            ObjectNamePart::Identifier(ident) => parts.push(ident.value.clone()),
            ObjectNamePart::Function(_) => return false,
        }
    }
    let mut changed = false;
    let (schema, table) = match parts.as_slice() {
        [table] => ("main", table),
        [schema, table] => (schema.as_str(), table),
        [database, schema, table] => {
            // DuckDB's own catalogs hold its views and the session's state, never a
            // database's tables. Without the server's list of databases, the first catalog
            // named is taken as the one database: a second is no evidence of a table
            // (`duckgate check --db … --db NAME=…` resolves several).
            let builtin = ["memory", "system", "temp", "main"]
                .iter()
                .any(|b| database.eq_ignore_ascii_case(b));
            if builtin
                || !(catalog.database.is_empty() || catalog.database.eq_ignore_ascii_case(database))
            {
                return false;
            }
            if catalog.database.is_empty() {
                catalog.database = database.clone();
                changed = true;
            }
            (schema.as_str(), table)
        }
        _ => return false,
    };
    if catalog.find(None, Some(schema), table).is_none() {
        catalog.relations.push(CatalogRelation {
            database: String::new(),
            schema: schema.to_string(),
            name: table.clone(),
            columns: Vec::new(),
        });
        changed = true;
    }
    changed
}

/// Stack a validation needs regardless of the input.
const STACK_BASE_BYTES: usize = 128 << 10;
/// Upper bound of the stack a validation needs per byte of SQL (walk and drop frames).
const STACK_BYTES_PER_SQL_BYTE: usize = 512;
/// The stack a validation gets when the caller's is too short: a 100 KB operator chain
/// needs a few MiB to drop.
const VALIDATOR_STACK_BYTES: usize = 64 << 20;

fn check_unbounded_stack(
    sql: &str,
    catalog: &Catalog,
    limits: &Limits,
) -> Result<Accepted, Refusal> {
    lexical::check_characters(sql)?;
    let dialect = DuckDbDialect {};
    // One token per ~4 bytes of SQL: reserving up front spares the buffer's regrowth copies.
    let mut tokens = Vec::with_capacity(sql.len() / 4 + 8);
    // Text sqlparser cannot cut into tokens, or cuts differently from DuckDB's lexer, is no
    // evidence against the query: it goes on to the worker, whose checks read DuckDB's own
    // parse tree and bound plan (`lexical::LexicalStop::Unreadable`).
    if Tokenizer::new(&dialect, sql)
        .tokenize_with_location_into_buf(&mut tokens)
        .is_err()
    {
        return Ok(left_to_the_worker());
    }
    match lexical::check_tokens(sql, &tokens, limits) {
        Ok(()) => {}
        Err(lexical::LexicalStop::Refused(refusal)) => return Err(refusal),
        Err(lexical::LexicalStop::Unreadable(_)) => return Ok(left_to_the_worker()),
    }
    if lexical::has_several_statements(&tokens) {
        return Err(multiple_statements());
    }
    let first = match lexical::first_significant(&tokens) {
        Some(Token::SemiColon) | None => return Err(refusals::empty_sql()),
        Some(token) => token.clone(),
    };
    let mut walker = walk::Walker::new(catalog, limits);
    let parsed = match &first {
        Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("summarize") => {
            summarize(tokens, &mut walker, limits)?
        }
        _ => {
            let show = show_subject(&tokens);
            match parse_one(tokens, limits) {
                Ok(statement) => {
                    statements::decide_statement(&statement, show.as_ref(), &mut walker)?
                }
                Err(error) => unparseable(error, limits)?,
            }
        }
    };
    match parsed {
        Parsed::Walked(kind) => Ok(Accepted {
            kind,
            relations: walker.relations,
            functions: walker.functions,
        }),
        Parsed::Unparsed => {
            // The tokens went into the parser; cutting the text again is cheap, and happens
            // only on this path.
            let mut tokens = Vec::with_capacity(sql.len() / 4 + 8);
            Tokenizer::new(&dialect, sql)
                .tokenize_with_location_into_buf(&mut tokens)
                .map_err(|e| syntax_error(&ParserError::TokenizerError(e.to_string()), limits))?;
            unparsed::refuse_on_evidence(&tokens, catalog, limits)?;
            Ok(Accepted {
                kind: StatementKind::Unparsed,
                relations: Vec::new(),
                functions: Vec::new(),
            })
        }
    }
}

/// A statement the parent cannot read: accepted as [`StatementKind::Unparsed`] with nothing
/// resolved, for the worker's checks to decide.
fn left_to_the_worker() -> Accepted {
    Accepted {
        kind: StatementKind::Unparsed,
        relations: Vec::new(),
        functions: Vec::new(),
    }
}

/// How far the parent got with a statement.
enum Parsed {
    /// sqlparser read it, and the walk accepted it as this kind.
    Walked(StatementKind),
    /// sqlparser could not read it: the tokens are all the parent has to go on.
    Unparsed,
}

/// What a parse error means: over the nesting cap is a refusal (evidence, not a gap in
/// sqlparser's grammar); anything else leaves the statement to the token scan.
fn unparseable(error: ParserError, limits: &Limits) -> Result<Parsed, Refusal> {
    match error {
        ParserError::RecursionLimitExceeded => Err(too_deep(limits)),
        ParserError::TokenizerError(_) | ParserError::ParserError(_) => Ok(Parsed::Unparsed),
    }
}

/// The name in `SHOW name` (one to three parts), when that is the whole statement.
fn show_subject(tokens: &[TokenWithSpan]) -> Option<ObjectName> {
    let mut significant = tokens
        .iter()
        .map(|t| &t.token)
        .filter(|t| !matches!(t, Token::Whitespace(_) | Token::EOF | Token::SemiColon));
    let show = matches!(
        significant.next(),
        Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("show")
    );
    if !show {
        return None;
    }
    let mut parts = Vec::new();
    loop {
        match significant.next() {
            Some(Token::Word(w)) => parts.push(Ident {
                value: w.value.clone(),
                quote_style: w.quote_style,
                span: Span::empty(),
            }),
            _ => return None,
        }
        match significant.next() {
            None if parts.len() <= 3 => return Some(ObjectName::from(parts)),
            Some(Token::Period) => {}
            _ => return None,
        }
    }
}

/// Parse exactly one statement from `tokens`, allowing only trailing `;` after it.
fn parse_one(
    tokens: Vec<TokenWithSpan>,
    limits: &Limits,
) -> Result<sqlparser::ast::Statement, ParserError> {
    let dialect = DuckDbDialect {};
    let mut parser = Parser::new(&dialect)
        .with_recursion_limit(limits.max_depth)
        .with_tokens_with_locations(tokens);
    let statement = parser.parse_statement()?;
    while parser.consume_token(&Token::SemiColon) {}
    let next = parser.peek_token();
    if next.token != Token::EOF {
        return Err(ParserError::ParserError(format!(
            "Expected: end of statement, found: {}{}",
            next.token, next.span.start
        )));
    }
    Ok(statement)
}

/// `SUMMARIZE name` or `SUMMARIZE <query>` (DuckDB syntax sqlparser does not parse).
fn summarize(
    tokens: Vec<TokenWithSpan>,
    walker: &mut walk::Walker<'_>,
    limits: &Limits,
) -> Result<Parsed, Refusal> {
    let keyword_at = tokens
        .iter()
        .position(
            |t| matches!(&t.token, Token::Word(w) if w.value.eq_ignore_ascii_case("summarize")),
        )
        .unwrap_or(0);
    let rest: Vec<TokenWithSpan> = tokens.iter().skip(keyword_at + 1).cloned().collect();
    let significant: Vec<&Token> = rest
        .iter()
        .map(|t| &t.token)
        .filter(|t| !matches!(t, Token::Whitespace(_) | Token::EOF | Token::SemiColon))
        .collect();
    // The name form: `t`, `schema.t` or `db.schema.t`, identifiers only (a string here would be
    // a file).
    let name_part = |t: &Token| match t {
        Token::Word(w) => Some(Ident {
            value: w.value.clone(),
            quote_style: w.quote_style,
            span: Span::empty(),
        }),
        _ => None,
    };
    let name = match significant.as_slice() {
        [table] => name_part(table).map(|t| vec![t]),
        [schema, Token::Period, table] => name_part(schema)
            .zip(name_part(table))
            .map(|(s, t)| vec![s, t]),
        [database, Token::Period, schema, Token::Period, table] => name_part(database)
            .zip(name_part(schema))
            .zip(name_part(table))
            .map(|((d, s), t)| vec![d, s, t]),
        _ => None,
    };
    if let Some(parts) = name {
        walker.relation(&ObjectName::from(parts))?;
        return Ok(Parsed::Walked(StatementKind::Summarize));
    }
    if let [Token::SingleQuotedString(file)] = significant.as_slice() {
        if walker.catalog.in_declared_folder(file) {
            return Ok(Parsed::Walked(StatementKind::Summarize));
        }
        return Err(refusals::file_relation(file));
    }
    let statement = match parse_one(rest, limits) {
        Ok(statement) => statement,
        Err(error) => return unparseable(error, limits),
    };
    match &statement {
        sqlparser::ast::Statement::Query(query) => walker.query(query)?,
        other => return Err(write_refused(statements::name(other))),
    }
    Ok(Parsed::Walked(StatementKind::Summarize))
}
