//! What the reader found in one plan, as owned Rust values.

use crate::enums::{ExpressionClass, LogicalOperatorType, LogicalTypeId};

/// A value of one of DuckDB's enumerations: one this crate knows, or a code it does not (which a
/// judge must refuse), with DuckDB's label for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Code<T> {
    /// A value of DuckDB 2.0's enumeration.
    Known(T),
    /// A code this crate has no value for, and DuckDB's label for it.
    Unrecognised {
        /// DuckDB's numeric code.
        code: u32,
        /// DuckDB's label, for messages only.
        label: String,
    },
}

/// What kind of function a [`FunctionFact`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionKind {
    /// A scalar function, operator or comparison.
    Scalar,
    /// A cast (DuckDB binds casts as scalar functions).
    Cast,
    /// An aggregate, in an aggregate or a window; `exports_state` when DuckDB returns its state
    /// (`EXPORT_STATE`) rather than its result.
    Aggregate {
        /// The aggregate's state is exported, not finalized.
        exports_state: bool,
    },
    /// A window function.
    Window,
    /// The function of a LOGICAL_GET: `seq_scan` for a stored table, or a table function.
    Table,
}

/// A function DuckDB bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionFact {
    /// What kind.
    pub kind: FunctionKind,
    /// Its qualified name as DuckDB bound it, outermost first: `[catalog, schema, name]` for a
    /// catalog function, `[name]` for an operator or cast. Empty when DuckDB bound a window
    /// function by its expression type alone (then `name` is that type).
    pub path: Vec<String>,
    /// Its name.
    pub name: String,
}

/// What kind of column a scan binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// A column of the table or function.
    Own,
    /// The row id (`count(*)` reads it): no column's data.
    RowId,
    /// Another virtual column (`filename`, `file_row_number`, …).
    Virtual,
}

/// A column a scan binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanColumn {
    /// What kind.
    pub kind: ColumnKind,
    /// DuckDB's column index (the table's own column order for [`ColumnKind::Own`]).
    pub index: u64,
    /// Its name, as the table or function names it.
    pub name: String,
}

/// One LOGICAL_GET.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanFacts {
    /// The function it calls (qualified name): `seq_scan` for a stored table.
    pub function: Vec<String>,
    /// The stored table it scans, when it scans one: catalog, schema path, table.
    pub table: Option<Vec<String>>,
    /// The columns it binds.
    pub columns: Vec<ScanColumn>,
    /// The files it bound, as DuckDB expanded and names them, when the reader could read its list
    /// (a multi-file reader, a Parquet metadata function, `glob`); `None` otherwise.
    pub files: Option<Vec<String>>,
    /// The names of the named parameters it was called with (`hive_partitioning`, …).
    pub named_parameters: Vec<String>,
}

/// One fact, in the order the walk met it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// An operator.
    Operator(Code<LogicalOperatorType>),
    /// An expression.
    Expression(Code<ExpressionClass>),
    /// A bound function.
    Function(FunctionFact),
    /// A type (every type nested in another comes too). `aggregate_state`: DuckDB's alias for an
    /// aggregate's state.
    Type {
        /// Its id.
        id: Code<LogicalTypeId>,
        /// It is an aggregate's state.
        aggregate_state: bool,
    },
    /// Something the walk could not read; the judge must refuse.
    Unknown(String),
}

/// Everything the reader found in one plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanFacts {
    /// Operators, expressions, functions, types and what the walk could not read.
    pub facts: Vec<Fact>,
    /// Each LOGICAL_GET, with its table, columns and files.
    pub scans: Vec<ScanFacts>,
    /// Only for an optimized plan: DuckDB's name of each result column's type, in order
    /// (`ENUM('a', 'b')`), for naming types in a reply; empty when DuckDB had not resolved them.
    pub result_types: Vec<String>,
}
