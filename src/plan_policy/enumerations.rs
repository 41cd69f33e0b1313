//! What a plan may hold of DuckDB's enumerations: every operator type, expression class and type
//! of DuckDB 2.0, each decided once, with its reason. The matches are exhaustive, and the plan
//! reader's tests check the enumerations (`crates/plan-facts`) against the linked DuckDB value
//! for value: a DuckDB upgrade that adds an operator, a class or a type cannot compile here until
//! someone decides it.
//!
//! Functions are decided by `validate::function_policy`, the one table every layer reads.

use duckgate_plan_facts::{ExpressionClass, LogicalOperatorType, LogicalTypeId};

/// How the plan check treats an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OperatorUse {
    /// Shapes its children's rows, or produces rows the query or the binder wrote.
    Rows,
    /// A table scan or a table function: the scan's own checks decide.
    Scan,
    /// DuckDB's own wrapper of the statement: allowed as a plan's root only.
    RootWrapper,
    /// Refused, and why.
    Refused(&'static str),
}

const WRITES: &str = "it changes the database or the session";
const NOT_A_QUERY: &str = "it is a statement, not a query";
const INTERNAL: &str = "DuckDB never plans it for a query";

/// The plan check's decision for each logical operator type.
pub(super) fn operator_use(operator: LogicalOperatorType) -> OperatorUse {
    use LogicalOperatorType as Op;
    match operator {
        Op::Projection
        | Op::Filter
        | Op::AggregateAndGroupBy
        | Op::Window
        | Op::Unnest
        | Op::Limit
        | Op::OrderBy
        | Op::TopN
        | Op::Distinct
        | Op::Sample
        | Op::Pivot
        | Op::SecureView
        | Op::ChunkGet
        | Op::DelimGet
        | Op::ExpressionGet
        | Op::DummyScan
        | Op::EmptyResult
        | Op::CteRef
        | Op::DelimJoin
        | Op::ComparisonJoin
        | Op::AnyJoin
        | Op::CrossProduct
        | Op::PositionalJoin
        | Op::AsofJoin
        | Op::DependentJoin
        | Op::Union
        | Op::Except
        | Op::Intersect
        | Op::RecursiveCte
        | Op::MaterializedCte
        // EXPLAIN's own operator; the plan it explains is its child, judged like any other.
        | Op::Explain => OperatorUse::Rows,
        Op::Get => OperatorUse::Scan,
        Op::CopyToFile
        | Op::CopyDatabase
        | Op::Insert
        | Op::Delete
        | Op::Update
        | Op::MergeInto
        | Op::Trigger
        | Op::Alter
        | Op::CreateTable
        | Op::CreateIndex
        | Op::CreateSequence
        | Op::CreateView
        | Op::CreateSchema
        | Op::CreateMacro
        | Op::Drop
        | Op::CreateType
        | Op::Attach
        | Op::Detach
        | Op::CreateTrigger
        | Op::Export
        | Op::Vacuum
        | Op::Set
        | Op::Load
        | Op::Reset
        | Op::UpdateExtensions
        | Op::CreateSecret => OperatorUse::Refused(WRITES),
        // DuckDB's C API prepares each statement as `PREPARE <generated name> AS <statement>`,
        // and runs it as `EXECUTE <that name>`: at the root these are DuckDB's own, their
        // statement judged as the child, or when prepared and whenever bound again. Anywhere
        // else the query wrote them.
        Op::Prepare | Op::Execute => OperatorUse::RootWrapper,
        Op::Pragma
        | Op::Transaction
        | Op::Connect
        | Op::Disconnect
        | Op::ExternalResource
        | Op::ExtensionOperator => OperatorUse::Refused(NOT_A_QUERY),
        // `LOGICAL_JOIN` is the abstract base of the joins above; DuckDB plans only those.
        Op::Invalid | Op::Join => OperatorUse::Refused(INTERNAL),
    }
}

/// Whether an expression class may appear in a plan; `Err` says why not.
pub(super) fn expression_allowed(class: ExpressionClass) -> Result<(), &'static str> {
    use ExpressionClass as E;
    match class {
        E::BoundAggregate
        | E::BoundCase
        | E::BoundColumnRef
        | E::BoundConjunction
        | E::BoundConstant
        | E::BoundDefault
        | E::BoundFunction
        | E::BoundOperator
        | E::BoundParameter
        | E::BoundRef
        | E::BoundWindow
        | E::BoundUnnest
        | E::BoundLambda
        | E::BoundLambdaRef => Ok(()),
        // Parsed classes exist only before binding; a subquery is planned into joins; the
        // legacy classes are DuckDB 1.x's; an expansion is the binder's. A plan holding one is
        // one this check has never seen.
        E::Invalid
        | E::Aggregate
        | E::Case
        | E::Cast
        | E::ColumnRef
        | E::Comparison
        | E::Conjunction
        | E::Constant
        | E::Default
        | E::Function
        | E::Operator
        | E::Star
        | E::Subquery
        | E::Window
        | E::Parameter
        | E::Collate
        | E::Lambda
        | E::PositionalReference
        | E::Between
        | E::LambdaRef
        | E::Type
        | E::LegacyBoundCast
        | E::LegacyBoundComparison
        | E::LegacyBoundBetween
        | E::BoundSubquery
        | E::BoundExpanded => Err("DuckDB does not plan it for a bound query"),
    }
}

/// Whether a type may appear in a plan; `Err` says why not.
///
/// Data types are allowed whatever they hold, aggregate states included: `EXPORT_STATE` and
/// `finalize`/`combine` carry an aggregate's state as a value, which is data computed from the
/// query's own rows. A `TYPE` value is a type built from text at run time, which would reach
/// the catalog and the binder outside any plan: refused. Types that exist only while binding
/// (`UNBOUND`, `TEMPLATE`) or are internal to execution cannot be in a bound plan's values; one
/// that is has a shape this check has never seen.
pub(super) fn type_allowed(id: LogicalTypeId) -> Result<(), &'static str> {
    use LogicalTypeId as T;
    match id {
        T::Boolean
        | T::TinyInt
        | T::SmallInt
        | T::Integer
        | T::BigInt
        | T::Date
        | T::Time
        | T::TimestampSec
        | T::TimestampMs
        | T::Timestamp
        | T::TimestampNs
        | T::Decimal
        | T::Float
        | T::Double
        | T::Char
        | T::Varchar
        | T::Blob
        | T::Interval
        | T::UTinyInt
        | T::USmallInt
        | T::UInteger
        | T::UBigInt
        | T::TimestampTz
        | T::TimestampTzNs
        | T::TimeTz
        | T::TimeNs
        | T::Bit
        | T::BigNum
        | T::UHugeInt
        | T::HugeInt
        | T::Uuid
        | T::Geometry
        | T::Struct
        | T::List
        | T::Map
        | T::Enum
        | T::Union
        | T::Array
        | T::Variant
        | T::Tuple => Ok(()),
        // The type of a bare NULL, of a parameter not yet typed, of "any argument", of a lambda
        // and of literals while binding: DuckDB's binder leaves them in plans it accepts.
        T::SqlNull
        | T::Unknown
        | T::Any
        | T::Lambda
        | T::StringLiteral
        | T::IntegerLiteral
        | T::Invalid => Ok(()),
        // DuckDB 1.x's aggregate state (2.0 marks a state by an alias on a data type instead),
        // and the internal values some aggregates' states and bindings carry: data of the query's
        // own rows, never a route to anything else.
        T::LegacyAggregateState | T::Pointer | T::Validity => Ok(()),
        // A subquery's rows handed to a table-in-out function (`summary((SELECT …))`): the
        // subquery is planned as the function's child and judged like any other plan.
        T::Table => Ok(()),
        T::Type => Err("it is a type built from text at run time"),
        T::Unbound | T::Template => Err("it exists only while DuckDB binds"),
    }
}
