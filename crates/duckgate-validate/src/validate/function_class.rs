//! The function policy's vocabulary: what kind of function DuckDB registers ([`FunctionKind`]),
//! what a function does ([`Class`]), why a class is refused ([`Denial`], each with its next
//! step) and where an allowed table function's rows come from ([`RowSource`]). The table
//! (`function_policy`) is written in these words and the lookups (`functions`) read it in them;
//! neither is needed to say what the words mean.

/// Why a function is refused, and what to do instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Denial {
    /// Completes "`name` …", e.g. "reads files outside the database".
    pub(crate) reason: &'static str,
    /// The next step for the agent.
    pub(crate) instead: &'static str,
}

pub(crate) const READS_FILES: Denial = Denial {
    reason: "reads files outside the database",
    instead: "query the database's tables instead (see list_tables)",
};
const RUNS_SQL_TEXT: Denial = Denial {
    reason: "runs, binds or parses SQL given as a string, which bypasses validation",
    instead: "write the query itself instead",
};
const WRITES: Denial = Denial {
    reason: "changes the database or the session, and duckgate is read-only",
    instead: "remove it; only read-only queries are allowed",
};
/// Why a function or statement that reads DuckDB's configuration is refused.
pub const READS_SETTINGS: Denial = Denial {
    reason: "reads DuckDB's configuration or secrets, not the database's data",
    instead: "use server_info for the server's settings, or query the database's tables",
};
const PRAGMA: Denial = Denial {
    reason: "is a PRAGMA, which can read settings or files",
    instead: "use list_tables / describe_table, or the duckdb_tables() / duckdb_columns() functions",
};
const BUILDS_TYPE_FROM_TEXT: Denial = Denial {
    reason: "builds a type from a value at bind time, which can name objects of the catalog",
    instead: "write the type itself, e.g. CAST(x AS INTEGER)",
};
const NAMES_A_TABLE_BY_TEXT: Denial = Denial {
    reason: "reads a table named by a string, which DuckDB resolves before any check",
    instead: "name the table in FROM instead",
};
pub(crate) const READS_ENVIRONMENT: Denial = Denial {
    reason: "reads the server's environment, not the database",
    instead: "query the database's tables instead (see list_tables)",
};

pub(crate) const EXTERNAL_DATABASE: Denial = Denial {
    reason: "reads another database or a remote service",
    instead: "query this database's tables instead (see list_tables)",
};

const ONLY_WAITS: Denial = Denial {
    reason: "only waits, holding a worker without answering anything",
    instead: "remove it",
};

/// Where a table function's rows come from, which decides where it may appear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowSource {
    /// Its arguments alone (`range`, `unnest`, `json_each`): allowed under every rule.
    Arguments,
    /// DuckDB's catalog: it lists table and column names, so it is refused whenever a privacy
    /// rule hides some of them.
    Catalog,
    /// Fixed data compiled into DuckDB (`duckdb_keywords`).
    Constant,
    /// Files in the operator's declared folders (`read_parquet('exports/*.parquet')`): allowed
    /// only when folders are declared, and then only files inside them (the plan check reads
    /// the files DuckDB bound; the worker's file system and landlock hold the same line).
    DeclaredFolders,
}

/// What kind of function DuckDB registers (`duckdb_functions().function_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionKind {
    /// A scalar function.
    Scalar,
    /// An aggregate function.
    Aggregate,
    /// A window function.
    Window,
    /// A scalar macro built into DuckDB (expanded at bind time).
    Macro,
    /// A table function.
    Table,
    /// A table macro built into DuckDB (expanded at bind time).
    TableMacro,
    /// A `PRAGMA` statement, never a function SQL may call.
    Pragma,
}

impl FunctionKind {
    /// `duckdb_functions().function_type` as DuckDB spells it.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn duckdb_name(self) -> &'static str {
        match self {
            FunctionKind::Scalar => "scalar",
            FunctionKind::Aggregate => "aggregate",
            FunctionKind::Window => "window",
            FunctionKind::Macro => "macro",
            FunctionKind::Table => "table",
            FunctionKind::TableMacro => "table_macro",
            FunctionKind::Pragma => "pragma",
        }
    }

    /// Called where an expression stands (`SELECT f(x)`), rather than in `FROM`.
    pub(crate) fn in_expressions(self) -> bool {
        match self {
            FunctionKind::Scalar
            | FunctionKind::Aggregate
            | FunctionKind::Window
            | FunctionKind::Macro => true,
            FunctionKind::Table | FunctionKind::TableMacro | FunctionKind::Pragma => false,
        }
    }
}

/// What a function does, which decides whether and where it may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Computes its result from its arguments alone.
    Computes,
    /// Inserted by DuckDB's optimizer (`__internal_*`); computes from its arguments alone.
    OptimizerInternal,
    /// Reads the clock (`now()`, `current_date`).
    ReadsClock,
    /// Draws random values; the worker reseeds DuckDB's generator for every request.
    DrawsRandom,
    /// A fixed property of the session: the database's public name, the schema, the user, the
    /// version, PostgreSQL compatibility constants.
    SessionConstant,
    /// Counts the statements or transactions DuckDB ran in this process (`current_query_id()`,
    /// `txid_current()`). Not a property of the session: the worker's own statements count too,
    /// and under privacy rules those include building the catalog the binder sees, whose work
    /// follows the hidden objects (a column with a default is one more statement). Allowed
    /// unless privacy rules hide something, where the count would be an oracle.
    CountsStatements,
    /// Lists or describes the catalog: allowed unless privacy rules hide names.
    ListsCatalog,
    /// Table rows compiled into DuckDB (`duckdb_keywords()`, `test_all_types()`).
    ConstantRows,
    /// Table rows made from its arguments alone (`range`, `unnest`, `json_each`).
    RowsFromArguments,
    /// Appears in DuckDB's plans for statements that are allowed (`seq_scan` for a table scan,
    /// `pragma_show` for `SHOW t`); SQL may not call it by name.
    PlanOnly,
    /// Runs, binds or parses SQL given as a string.
    RunsSqlText,
    /// Builds a type from text, which reaches the binder.
    BuildsTypeFromText,
    /// Changes the database or the session.
    Writes,
    /// Reads DuckDB's configuration or secrets.
    ReadsSettings,
    /// Names a table by a string, out of the walks' sight.
    NamesATableByText,
    /// Only waits (sleeps), holding a worker for nothing.
    OnlyWaits,
    /// Reads files or the network.
    ReadsFiles,
    /// Reads data files (Parquet, CSV, JSON) or lists them, in the operator's declared folders
    /// only ([`RowSource::DeclaredFolders`]); refused where no folder is declared.
    ReadsDeclaredFolders,
    /// A `PRAGMA` statement's function, never callable from SQL.
    PragmaStatement,
}

impl Class {
    /// Why it is refused, if it is.
    pub fn denial(self) -> Option<Denial> {
        match self {
            Class::Computes
            | Class::OptimizerInternal
            | Class::ReadsClock
            | Class::DrawsRandom
            | Class::SessionConstant
            | Class::CountsStatements
            | Class::ListsCatalog
            | Class::ConstantRows
            | Class::RowsFromArguments
            | Class::ReadsDeclaredFolders
            | Class::PlanOnly => None,
            Class::RunsSqlText => Some(RUNS_SQL_TEXT),
            Class::BuildsTypeFromText => Some(BUILDS_TYPE_FROM_TEXT),
            Class::Writes => Some(WRITES),
            Class::ReadsSettings => Some(READS_SETTINGS),
            Class::NamesATableByText => Some(NAMES_A_TABLE_BY_TEXT),
            Class::OnlyWaits => Some(ONLY_WAITS),
            Class::ReadsFiles => Some(READS_FILES),
            Class::PragmaStatement => Some(PRAGMA),
        }
    }

    /// Why it is allowed, or why refused: the reason each row of the policy carries.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Class::Computes => "computes its result from its arguments alone",
            Class::OptimizerInternal => {
                "inserted by DuckDB's optimizer; computes from its arguments alone"
            }
            Class::ReadsClock => "reads the clock",
            Class::DrawsRandom => "draws random values from a generator seeded for each request",
            Class::SessionConstant => "returns a fixed property of the session",
            Class::CountsStatements => {
                "counts statements the process ran, the worker's own included; refused under \
                 privacy rules"
            }
            Class::ListsCatalog => "lists the catalog; refused under privacy rules",
            Class::ConstantRows => "returns rows compiled into DuckDB",
            Class::RowsFromArguments => "returns rows made from its arguments alone",
            Class::PlanOnly => "appears in DuckDB's plans only, for statements that are allowed",
            Class::ReadsDeclaredFolders => {
                "reads data files in the operator's declared folders only; refused where none is \
                 declared"
            }
            Class::RunsSqlText
            | Class::BuildsTypeFromText
            | Class::Writes
            | Class::ReadsSettings
            | Class::NamesATableByText
            | Class::OnlyWaits
            | Class::ReadsFiles
            | Class::PragmaStatement => match self.denial() {
                Some(denial) => denial.reason,
                None => "",
            },
        }
    }

    /// Where the rows of an allowed table function come from.
    pub(crate) fn row_source(self) -> Option<RowSource> {
        match self {
            Class::ListsCatalog => Some(RowSource::Catalog),
            Class::ConstantRows => Some(RowSource::Constant),
            Class::RowsFromArguments => Some(RowSource::Arguments),
            Class::ReadsDeclaredFolders => Some(RowSource::DeclaredFolders),
            Class::Computes
            | Class::OptimizerInternal
            | Class::ReadsClock
            | Class::DrawsRandom
            | Class::SessionConstant
            | Class::CountsStatements
            | Class::PlanOnly
            | Class::RunsSqlText
            | Class::BuildsTypeFromText
            | Class::Writes
            | Class::ReadsSettings
            | Class::NamesATableByText
            | Class::OnlyWaits
            | Class::ReadsFiles
            | Class::PragmaStatement => None,
        }
    }
}
