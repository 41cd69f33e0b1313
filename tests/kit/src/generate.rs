//! A grammar of read-only DuckDB queries over the [`corpus`](crate::corpus) catalog, for property
//! tests, the structured fuzz target and the differential test.
//!
//! [`QuerySpec`] derives `arbitrary::Arbitrary`, so any byte string becomes a query. Rendering
//! counts every expression slot and every `FROM` slot; [`QuerySpec::render_planted`] replaces one
//! of them with a forbidden construct ([`Plant`]) — the "plant anything anywhere" property.

use arbitrary::Arbitrary;

/// Deepest nesting rendered; deeper specs render leaves (keeps far below the parser's cap).
const MAX_NESTING: usize = 4;

/// A whole query.
#[derive(Debug, Clone, Arbitrary)]
pub struct QuerySpec {
    /// CTEs (at most three are rendered).
    pub ctes: Vec<SelectSpec>,
    /// Whether the WITH is RECURSIVE (every CTE may then name itself; none here does).
    pub recursive: bool,
    /// The main SELECT.
    pub body: SelectSpec,
    /// An optional set operation with a second SELECT.
    pub set_op: Option<(SetOp, SelectSpec)>,
    /// ORDER BY expression.
    pub order_by: Option<ExprSpec>,
    /// LIMIT.
    pub limit: Option<u16>,
    /// Wrap as DESCRIBE / SUMMARIZE / EXPLAIN.
    pub wrapper: Wrapper,
}

/// How the query is presented.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum Wrapper {
    /// As is.
    Plain,
    /// `EXPLAIN …`.
    Explain,
    /// `DESCRIBE …`.
    Describe,
    /// `SUMMARIZE …`.
    Summarize,
    /// `… ;` with a trailing comment.
    TrailingSemicolon,
}

/// Set operations.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum SetOp {
    /// UNION ALL.
    UnionAll,
    /// UNION.
    Union,
    /// UNION ALL BY NAME.
    UnionByName,
    /// INTERSECT.
    Intersect,
    /// EXCEPT.
    Except,
}

/// One SELECT.
#[derive(Debug, Clone, Arbitrary)]
pub struct SelectSpec {
    /// DISTINCT.
    pub distinct: bool,
    /// FROM-first form (`FROM t SELECT …`).
    pub from_first: bool,
    /// The select list (empty renders `*`).
    pub items: Vec<ItemSpec>,
    /// The first relation.
    pub from: FromSpec,
    /// Joined relations.
    pub joins: Vec<(JoinKind, FromSpec, ExprSpec)>,
    /// WHERE.
    pub filter: Option<ExprSpec>,
    /// GROUP BY ALL.
    pub group_by_all: bool,
    /// QUALIFY with a window function.
    pub qualify: bool,
}

/// Join kinds.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum JoinKind {
    /// JOIN.
    Inner,
    /// LEFT JOIN.
    Left,
    /// FULL OUTER JOIN.
    Full,
    /// SEMI JOIN.
    Semi,
    /// ANTI JOIN.
    Anti,
}

/// One select-list item.
#[derive(Debug, Clone, Arbitrary)]
pub enum ItemSpec {
    /// `*`.
    Star,
    /// `* EXCLUDE (col)`.
    StarExclude(u8),
    /// `* REPLACE (expr AS col)`.
    StarReplace(ExprSpec, u8),
    /// `COLUMNS('pattern')`.
    Columns,
    /// An expression with an alias.
    Expr(ExprSpec, u8),
    /// An aggregate.
    Aggregate(Aggregate, ExprSpec),
    /// A window function.
    Window(ExprSpec, Option<ExprSpec>),
}

/// Aggregates.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum Aggregate {
    /// count.
    Count,
    /// sum.
    Sum,
    /// avg.
    Avg,
    /// min.
    Min,
    /// max.
    Max,
    /// median.
    Median,
    /// list.
    List,
}

/// Things that can stand in FROM.
#[derive(Debug, Clone, Arbitrary)]
pub enum FromSpec {
    /// A catalog table or view (index into [`TABLES`]).
    Table(u8),
    /// A derived table.
    Subquery(Box<SelectSpec>),
    /// `range(n)`.
    Range(u8),
    /// `generate_series(a, b)`.
    Series(u8, u8),
    /// `unnest([…])`.
    Unnest(Vec<ExprSpec>),
    /// A CTE defined by the query (index).
    Cte(u8),
    /// DuckDB catalog function or information_schema view.
    Catalog(u8),
    /// `VALUES (…)`.
    Values(Vec<ExprSpec>),
}

/// Expressions.
#[derive(Debug, Clone, Arbitrary)]
pub enum ExprSpec {
    /// A column of the test catalog.
    Column(u8),
    /// An integer.
    Int(i16),
    /// A string (rendered safely quoted; may contain `;`, quotes, `--`).
    Str(String),
    /// Binary operator.
    Binary(Box<ExprSpec>, BinOp, Box<ExprSpec>),
    /// A harmless scalar function.
    Call(ScalarFn, Box<ExprSpec>),
    /// CASE WHEN.
    Case(Box<ExprSpec>, Box<ExprSpec>, Box<ExprSpec>),
    /// A lambda in list_transform.
    Lambda(Box<ExprSpec>),
    /// A list literal.
    List(Vec<ExprSpec>),
    /// A struct literal.
    Struct(Box<ExprSpec>),
    /// Scalar subquery.
    Subquery(Box<SelectSpec>),
    /// IN (subquery).
    InSubquery(Box<ExprSpec>, Box<SelectSpec>),
    /// EXISTS (subquery).
    Exists(Box<SelectSpec>),
    /// CAST.
    Cast(Box<ExprSpec>),
    /// IS NULL.
    IsNull(Box<ExprSpec>),
    /// JSON arrow.
    JsonArrow(u8),
    /// An interval arithmetic.
    Interval(u8),
    /// A comment inside the expression, with semicolons.
    Commented(Box<ExprSpec>, String),
}

/// Binary operators.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum BinOp {
    /// +.
    Plus,
    /// -.
    Minus,
    /// *.
    Times,
    /// =.
    Eq,
    /// <.
    Lt,
    /// AND.
    And,
    /// OR.
    Or,
    /// ||.
    Concat,
}

/// Harmless scalar functions.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum ScalarFn {
    /// abs.
    Abs,
    /// upper.
    Upper,
    /// length.
    Length,
    /// coalesce.
    Coalesce,
    /// round.
    Round,
    /// date_trunc.
    DateTrunc,
    /// to_json.
    ToJson,
    /// hash.
    Hash,
}

/// The test catalog's relations, as the grammar names them.
pub const TABLES: &[&str] = &[
    "readings",
    "pump_events",
    "devices",
    "notes",
    "daily_summary",
    "analytics.hourly",
    "main.readings",
    "\"Readings\"",
];
const COLUMNS: &[&str] = &[
    "ts",
    "glucose",
    "device_id",
    "trend",
    "raw",
    "units",
    "\"model\"",
    "body",
];
const CATALOG: &[&str] = &[
    "duckdb_tables()",
    "duckdb_columns()",
    "duckdb_views()",
    "information_schema.tables",
    "information_schema.columns",
    "duckdb_tables",
];

/// A forbidden construct to plant into an accepted query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Arbitrary)]
pub enum Plant {
    /// `read_csv('/etc/passwd')` as a table or scalar.
    ReadCsv,
    /// `getenv('HOME')`.
    Getenv,
    /// `nextval('s')`.
    Nextval,
    /// `query('…')`.
    Query,
    /// `glob('*')`.
    Glob,
    /// A replacement scan `'x.csv'`.
    FileString,
    /// A quoted path identifier `"/etc/passwd"`.
    FileIdentifier,
    /// `duckdb_secrets()`.
    Secrets,
    /// `current_setting('…')`.
    CurrentSetting,
}

impl Plant {
    /// Every plant.
    pub const ALL: [Plant; 9] = [
        Plant::ReadCsv,
        Plant::Getenv,
        Plant::Nextval,
        Plant::Query,
        Plant::Glob,
        Plant::FileString,
        Plant::FileIdentifier,
        Plant::Secrets,
        Plant::CurrentSetting,
    ];

    fn as_expr(self) -> &'static str {
        match self {
            Plant::ReadCsv => "(SELECT count(*) FROM read_csv('/etc/passwd'))",
            Plant::Getenv => "getenv('HOME')",
            Plant::Nextval => "nextval('s')",
            Plant::Query => "(SELECT 1 FROM query('SELECT 1'))",
            Plant::Glob => "(SELECT count(*) FROM glob('/*'))",
            Plant::FileString => "(SELECT count(*) FROM 'x.csv')",
            Plant::FileIdentifier => "(SELECT count(*) FROM \"/etc/passwd\")",
            Plant::Secrets => "(SELECT count(*) FROM duckdb_secrets())",
            Plant::CurrentSetting => "current_setting('memory_limit')",
        }
    }

    fn as_relation(self) -> &'static str {
        match self {
            Plant::ReadCsv => "read_csv('/etc/passwd')",
            Plant::Getenv => "(SELECT getenv('HOME'))",
            Plant::Nextval => "(SELECT nextval('s'))",
            Plant::Query => "query('SELECT 1')",
            Plant::Glob => "glob('/*')",
            Plant::FileString => "'x.csv'",
            Plant::FileIdentifier => "\"/etc/passwd\"",
            Plant::Secrets => "duckdb_secrets()",
            Plant::CurrentSetting => "(SELECT current_setting('memory_limit'))",
        }
    }
}

/// Where slots are counted and, at most once, filled with a plant.
struct Renderer {
    out: String,
    slots: usize,
    plant: Option<(usize, Plant)>,
    planted: bool,
    ctes: usize,
    /// Inside a window function's argument or definition, where DuckDB's parser refuses
    /// further window functions (even in subqueries).
    in_window: usize,
}

fn quote_string(text: &str) -> String {
    // Keep it printable and unambiguous: drop control characters and non-ASCII, double quotes.
    let cleaned: String = text
        .chars()
        .filter(|c| c.is_ascii() && !c.is_ascii_control())
        .take(24)
        .collect();
    format!("'{}'", cleaned.replace('\'', "''"))
}

fn comment_text(text: &str) -> String {
    // No `*` or `/` at all, so the comment can neither close early nor nest.
    text.chars()
        .filter(|c| c.is_ascii() && !c.is_ascii_control() && *c != '*' && *c != '/')
        .take(24)
        .collect()
}

impl Renderer {
    /// Count a slot; true when the plant goes here.
    fn slot(&mut self) -> Option<Plant> {
        let here = self.slots;
        self.slots += 1;
        match self.plant {
            Some((at, plant)) if at == here && !self.planted => {
                self.planted = true;
                Some(plant)
            }
            _ => None,
        }
    }

    fn push(&mut self, text: &str) {
        self.out.push_str(text);
    }

    fn query(&mut self, q: &QuerySpec) {
        match q.wrapper {
            Wrapper::Plain | Wrapper::TrailingSemicolon => {}
            Wrapper::Explain => self.push("EXPLAIN "),
            Wrapper::Describe => self.push("DESCRIBE "),
            Wrapper::Summarize => self.push("SUMMARIZE "),
        }
        let ctes: Vec<&SelectSpec> = q.ctes.iter().take(3).collect();
        self.ctes = ctes.len();
        if !ctes.is_empty() {
            self.push(if q.recursive {
                "WITH RECURSIVE "
            } else {
                "WITH "
            });
            for (i, cte) in ctes.iter().enumerate() {
                if i > 0 {
                    self.push(", ");
                }
                self.push(&format!("c{i} AS ("));
                // A CTE may name only the CTEs before it.
                let visible = self.ctes;
                self.ctes = i;
                self.select(cte, 1);
                self.ctes = visible;
                self.push(")");
            }
            self.push(" ");
        }
        self.select(&q.body, 0);
        if let Some((op, right)) = &q.set_op {
            self.push(match op {
                SetOp::UnionAll => " UNION ALL ",
                SetOp::Union => " UNION ",
                SetOp::UnionByName => " UNION ALL BY NAME ",
                SetOp::Intersect => " INTERSECT ",
                SetOp::Except => " EXCEPT ",
            });
            self.select(right, 0);
        }
        if let Some(order) = &q.order_by {
            self.push(" ORDER BY ");
            self.expr(order, 1);
        }
        if let Some(limit) = q.limit {
            self.push(&format!(" LIMIT {limit}"));
        }
        if let Wrapper::TrailingSemicolon = q.wrapper {
            self.push("; -- done; DROP TABLE readings");
        }
    }

    fn select(&mut self, s: &SelectSpec, depth: usize) {
        self.select_form(s, depth, s.from_first);
    }

    /// A subquery in an expression: sqlparser 0.63 does not parse FROM-first there.
    fn select_standard(&mut self, s: &SelectSpec, depth: usize) {
        self.select_form(s, depth, false);
    }

    fn select_form(&mut self, s: &SelectSpec, depth: usize, from_first: bool) {
        if from_first {
            self.push("FROM ");
            self.from(&s.from, depth);
            self.joins(s, depth);
            self.push(" SELECT ");
            self.items(s, depth);
        } else {
            self.push("SELECT ");
            self.items(s, depth);
            self.push(" FROM ");
            self.from(&s.from, depth);
            self.joins(s, depth);
        }
        if let Some(filter) = &s.filter {
            self.push(" WHERE ");
            self.expr(filter, depth + 1);
        }
        if s.group_by_all {
            self.push(" GROUP BY ALL");
        }
        // sqlparser 0.63 reads QUALIFY after a FROM-first select list as an alias.
        if s.qualify && !from_first && self.in_window == 0 {
            self.push(" QUALIFY row_number() OVER (ORDER BY 1) <= 5");
        }
    }

    fn items(&mut self, s: &SelectSpec, depth: usize) {
        if s.distinct {
            self.push("DISTINCT ");
        }
        if s.items.is_empty() {
            self.push("*");
            return;
        }
        for (i, item) in s.items.iter().take(6).enumerate() {
            if i > 0 {
                self.push(", ");
            }
            match item {
                ItemSpec::Star => self.push("*"),
                ItemSpec::StarExclude(c) => {
                    let column = COLUMNS[usize::from(*c) % COLUMNS.len()];
                    self.push(&format!("* EXCLUDE ({column})"));
                }
                ItemSpec::StarReplace(e, c) => {
                    let column = COLUMNS[usize::from(*c) % COLUMNS.len()];
                    self.push("* REPLACE (");
                    self.expr(e, depth + 1);
                    self.push(&format!(" AS {column})"));
                }
                ItemSpec::Columns => self.push("COLUMNS('g.*')"),
                ItemSpec::Expr(e, alias) => {
                    self.expr(e, depth + 1);
                    self.push(&format!(" AS a{alias}"));
                }
                ItemSpec::Aggregate(agg, e) => {
                    self.push(match agg {
                        Aggregate::Count => "count(",
                        Aggregate::Sum => "sum(",
                        Aggregate::Avg => "avg(",
                        Aggregate::Min => "min(",
                        Aggregate::Max => "max(",
                        Aggregate::Median => "median(",
                        Aggregate::List => "list(",
                    });
                    self.expr(e, depth + 1);
                    self.push(")");
                }
                ItemSpec::Window(e, _) if self.in_window > 0 => {
                    self.push("max(");
                    self.expr(e, depth + 1);
                    self.push(")");
                }
                ItemSpec::Window(e, partition) => {
                    self.in_window += 1;
                    self.push("sum(");
                    self.expr(e, depth + 1);
                    self.push(") OVER (");
                    if let Some(p) = partition {
                        self.push("PARTITION BY ");
                        self.expr(p, depth + 1);
                        self.push(" ");
                    }
                    self.push("ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)");
                    self.in_window -= 1;
                }
            }
        }
    }

    fn joins(&mut self, s: &SelectSpec, depth: usize) {
        for (kind, relation, on) in s.joins.iter().take(2) {
            self.push(match kind {
                JoinKind::Inner => " JOIN ",
                JoinKind::Left => " LEFT JOIN ",
                JoinKind::Full => " FULL OUTER JOIN ",
                JoinKind::Semi => " SEMI JOIN ",
                JoinKind::Anti => " ANTI JOIN ",
            });
            self.from(relation, depth);
            self.push(" ON ");
            self.expr(on, depth + 1);
        }
    }

    fn from(&mut self, f: &FromSpec, depth: usize) {
        if let Some(plant) = self.slot() {
            self.push(plant.as_relation());
            self.push(" AS p");
            return;
        }
        let deep = depth >= MAX_NESTING;
        match f {
            FromSpec::Table(i) => self.push(TABLES[usize::from(*i) % TABLES.len()]),
            FromSpec::Subquery(s) if !deep => {
                self.push("(");
                self.select(s, depth + 1);
                self.push(") AS sub");
            }
            FromSpec::Range(n) => self.push(&format!("range({n}) AS r(ts)")),
            FromSpec::Series(a, b) => self.push(&format!("generate_series({a}, {b}) AS g(ts)")),
            FromSpec::Unnest(items) if !deep => {
                self.push("unnest([");
                self.expr_list(items, depth + 1);
                self.push("]) AS u(ts)");
            }
            FromSpec::Cte(i) if self.ctes > 0 => {
                self.push(&format!("c{}", usize::from(*i) % self.ctes));
            }
            FromSpec::Catalog(i) => self.push(CATALOG[usize::from(*i) % CATALOG.len()]),
            FromSpec::Values(items) if !deep => {
                self.push("(VALUES (");
                self.expr_list(items, depth + 1);
                self.push(")) AS v");
            }
            FromSpec::Subquery(_)
            | FromSpec::Unnest(_)
            | FromSpec::Cte(_)
            | FromSpec::Values(_) => self.push("readings"),
        }
    }

    fn expr_list(&mut self, items: &[ExprSpec], depth: usize) {
        if items.is_empty() {
            self.push("1");
        }
        for (i, item) in items.iter().take(4).enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.expr(item, depth);
        }
    }

    fn expr(&mut self, e: &ExprSpec, depth: usize) {
        if let Some(plant) = self.slot() {
            self.push(plant.as_expr());
            return;
        }
        let deep = depth >= MAX_NESTING;
        match e {
            ExprSpec::Column(i) => self.push(COLUMNS[usize::from(*i) % COLUMNS.len()]),
            ExprSpec::Int(n) => self.push(&format!("({n})")),
            ExprSpec::Str(s) => self.push(&quote_string(s)),
            ExprSpec::JsonArrow(i) => self.push(if i % 2 == 0 {
                "(raw -> 'rate')"
            } else {
                "(raw ->> 'trend')"
            }),
            ExprSpec::Interval(n) => self.push(&format!("(ts + INTERVAL {n} MINUTE)")),
            _ if deep => self.push("glucose"),
            ExprSpec::Binary(a, op, b) => {
                self.push("(");
                self.expr(a, depth + 1);
                self.push(match op {
                    BinOp::Plus => " + ",
                    BinOp::Minus => " - ",
                    BinOp::Times => " * ",
                    BinOp::Eq => " = ",
                    BinOp::Lt => " < ",
                    BinOp::And => " AND ",
                    BinOp::Or => " OR ",
                    BinOp::Concat => " || ",
                });
                self.expr(b, depth + 1);
                self.push(")");
            }
            ExprSpec::Call(f, a) => {
                self.push(match f {
                    ScalarFn::Abs => "abs(",
                    ScalarFn::Upper => "upper(",
                    ScalarFn::Length => "length(",
                    ScalarFn::Coalesce => "coalesce(NULL, ",
                    ScalarFn::Round => "round(",
                    ScalarFn::DateTrunc => "date_trunc('day', ",
                    ScalarFn::ToJson => "to_json(",
                    ScalarFn::Hash => "hash(",
                });
                self.expr(a, depth + 1);
                self.push(")");
            }
            ExprSpec::Case(c, a, b) => {
                self.push("CASE WHEN ");
                self.expr(c, depth + 1);
                self.push(" THEN ");
                self.expr(a, depth + 1);
                self.push(" ELSE ");
                self.expr(b, depth + 1);
                self.push(" END");
            }
            ExprSpec::Lambda(body) => {
                self.push("list_transform([1, 2], x -> ");
                self.expr(body, depth + 1);
                self.push(")");
            }
            ExprSpec::List(items) => {
                self.push("[");
                self.expr_list(items, depth + 1);
                self.push("]");
            }
            ExprSpec::Struct(v) => {
                self.push("{'k': ");
                self.expr(v, depth + 1);
                self.push("}");
            }
            ExprSpec::Subquery(s) => {
                self.push("(");
                self.select_standard(s, depth + 1);
                self.push(" LIMIT 1)");
            }
            ExprSpec::InSubquery(a, s) => {
                self.push("(");
                self.expr(a, depth + 1);
                self.push(" IN (");
                self.select_standard(s, depth + 1);
                self.push("))");
            }
            ExprSpec::Exists(s) => {
                self.push("EXISTS (");
                self.select_standard(s, depth + 1);
                self.push(")");
            }
            ExprSpec::Cast(a) => {
                self.push("CAST(");
                self.expr(a, depth + 1);
                self.push(" AS VARCHAR)");
            }
            ExprSpec::IsNull(a) => {
                self.push("(");
                self.expr(a, depth + 1);
                self.push(" IS NULL)");
            }
            ExprSpec::Commented(a, text) => {
                self.push(&format!("/* {} */ ", comment_text(text)));
                self.expr(a, depth + 1);
            }
        }
    }
}

impl QuerySpec {
    /// The SQL text.
    pub fn render(&self) -> String {
        self.render_planted(None).0
    }

    /// How many expression and FROM slots the rendering has.
    pub fn slot_count(&self) -> usize {
        self.render_planted(None).1
    }

    /// The SQL text with `plant` placed at slot `at % slot_count`; returns the text and the
    /// number of slots.
    pub fn render_planted(&self, plant: Option<(usize, Plant)>) -> (String, usize) {
        let mut counting = Renderer {
            out: String::new(),
            slots: 0,
            plant: None,
            planted: false,
            ctes: 0,
            in_window: 0,
        };
        counting.query(self);
        let slots = counting.slots;
        let plant = match plant {
            Some((at, p)) if slots > 0 => Some((at % slots, p)),
            _ => return (counting.out, slots),
        };
        let mut renderer = Renderer {
            out: String::new(),
            slots: 0,
            plant,
            planted: false,
            ctes: 0,
            in_window: 0,
        };
        renderer.query(self);
        (renderer.out, slots)
    }
}

/// Build a query from raw bytes (for property tests and the differential test).
pub fn from_bytes(bytes: &[u8]) -> QuerySpec {
    let mut u = arbitrary::Unstructured::new(bytes);
    QuerySpec::arbitrary(&mut u).unwrap_or_else(|_| QuerySpec {
        ctes: Vec::new(),
        recursive: false,
        body: SelectSpec {
            distinct: false,
            from_first: false,
            items: Vec::new(),
            from: FromSpec::Table(0),
            joins: Vec::new(),
            filter: None,
            group_by_all: false,
            qualify: false,
        },
        set_op: None,
        order_by: None,
        limit: None,
        wrapper: Wrapper::Plain,
    })
}

/// The query of a fixed seed: the same query on every run, so a failure reproduces (the
/// differential tests draw their grammar inputs this way).
pub fn from_seed(seed: u64) -> QuerySpec {
    // xorshift64 over 600 bytes, enough for the grammar's deepest choices.
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let bytes: Vec<u8> = (0..600)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    from_bytes(&bytes)
}

/// Writes to append after an accepted query (`…; <write>`).
pub const WRITES: &[&str] = &[
    "DROP TABLE readings",
    "DELETE FROM readings",
    "INSERT INTO readings SELECT * FROM readings",
    "UPDATE readings SET glucose = 0",
    "CREATE TABLE x AS SELECT 1",
    "COPY readings TO '/tmp/x.csv'",
    "ATTACH '/tmp/x.db' AS x",
    "SET enable_external_access = true",
    "PRAGMA enable_profiling",
    "CHECKPOINT",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SELECT 1",
];
