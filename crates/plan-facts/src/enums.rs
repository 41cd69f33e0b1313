//! DuckDB 2.0's enumerations that plan facts carry, value for value. DuckDB's C++ headers are
//! the source (`logical_operator_type.hpp`, `expression_type.hpp`, `types.hpp`,
//! `exception.hpp`); the plan reader's tests (`crates/plan-reader/src/enum_tests.rs`) ask the
//! DuckDB it links for the name of every value 0 to 255 and require exactly these.

/// Which of DuckDB's enumerations a code belongs to (the C side's numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enumeration {
    /// `LogicalOperatorType`.
    LogicalOperatorType = 1,
    /// `ExpressionClass`.
    ExpressionClass = 2,
    /// `ExpressionType`.
    ExpressionType = 3,
    /// `LogicalTypeId`.
    LogicalTypeId = 4,
    /// `ExceptionType` (the type of an error, the plan reader's `DuckdbError`).
    ExceptionType = 5,
}

macro_rules! duckdb_enum {
    (
        $(#[$meta:meta])*
        $name:ident in $enumeration:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $code:literal => $duckdb:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$vmeta])* $variant = $code, )*
        }

        impl $name {
            /// Every value, in DuckDB's order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The enumeration DuckDB's C side names it by.
            pub const ENUMERATION: Enumeration = Enumeration::$enumeration;

            /// The value with DuckDB's numeric `code`, if DuckDB 2.0 has one.
            pub fn from_code(code: u32) -> Option<Self> {
                match code {
                    $( $code => Some($name::$variant), )*
                    _ => None,
                }
            }

            /// DuckDB's numeric code.
            pub fn code(self) -> u32 {
                self as u32
            }

            /// DuckDB's own name for it (`EnumUtil::ToString`).
            pub fn duckdb_name(self) -> &'static str {
                match self {
                    $( $name::$variant => $duckdb, )*
                }
            }
        }
    };
}

duckdb_enum! {
    /// A logical operator's type (`LogicalOperatorType`).
    LogicalOperatorType in LogicalOperatorType {
        /// Not an operator.
        Invalid = 0 => "LOGICAL_INVALID",
        /// Computes expressions over its child's rows.
        Projection = 1 => "LOGICAL_PROJECTION",
        /// Keeps the rows that pass.
        Filter = 2 => "LOGICAL_FILTER",
        /// GROUP BY and aggregates.
        AggregateAndGroupBy = 3 => "LOGICAL_AGGREGATE_AND_GROUP_BY",
        /// Window functions.
        Window = 4 => "LOGICAL_WINDOW",
        /// UNNEST.
        Unnest = 5 => "LOGICAL_UNNEST",
        /// LIMIT / OFFSET.
        Limit = 6 => "LOGICAL_LIMIT",
        /// ORDER BY.
        OrderBy = 7 => "LOGICAL_ORDER_BY",
        /// ORDER BY with LIMIT.
        TopN = 8 => "LOGICAL_TOP_N",
        /// COPY … TO.
        CopyToFile = 10 => "LOGICAL_COPY_TO_FILE",
        /// DISTINCT.
        Distinct = 11 => "LOGICAL_DISTINCT",
        /// USING SAMPLE / TABLESAMPLE.
        Sample = 12 => "LOGICAL_SAMPLE",
        /// PIVOT.
        Pivot = 14 => "LOGICAL_PIVOT",
        /// COPY FROM DATABASE.
        CopyDatabase = 15 => "LOGICAL_COPY_DATABASE",
        /// The boundary of a secure view.
        SecureView = 16 => "LOGICAL_SECURE_VIEW",
        /// A table scan or a table function.
        Get = 25 => "LOGICAL_GET",
        /// Rows the binder computed (VALUES, DESCRIBE's answer).
        ChunkGet = 26 => "LOGICAL_CHUNK_GET",
        /// The rows of a duplicate-eliminated join's left side.
        DelimGet = 27 => "LOGICAL_DELIM_GET",
        /// VALUES with expressions.
        ExpressionGet = 28 => "LOGICAL_EXPRESSION_GET",
        /// One empty row (SELECT without FROM).
        DummyScan = 29 => "LOGICAL_DUMMY_SCAN",
        /// No rows.
        EmptyResult = 30 => "LOGICAL_EMPTY_RESULT",
        /// A reference to a CTE's rows.
        CteRef = 31 => "LOGICAL_CTE_REF",
        /// A join (abstract).
        Join = 50 => "LOGICAL_JOIN",
        /// A duplicate-eliminated join (correlated subqueries).
        DelimJoin = 51 => "LOGICAL_DELIM_JOIN",
        /// A join on comparisons.
        ComparisonJoin = 52 => "LOGICAL_COMPARISON_JOIN",
        /// A join on any condition.
        AnyJoin = 53 => "LOGICAL_ANY_JOIN",
        /// CROSS JOIN.
        CrossProduct = 54 => "LOGICAL_CROSS_PRODUCT",
        /// POSITIONAL JOIN.
        PositionalJoin = 55 => "LOGICAL_POSITIONAL_JOIN",
        /// ASOF JOIN.
        AsofJoin = 56 => "LOGICAL_ASOF_JOIN",
        /// A correlated join before flattening.
        DependentJoin = 57 => "LOGICAL_DEPENDENT_JOIN",
        /// UNION.
        Union = 75 => "LOGICAL_UNION",
        /// EXCEPT.
        Except = 76 => "LOGICAL_EXCEPT",
        /// INTERSECT.
        Intersect = 77 => "LOGICAL_INTERSECT",
        /// WITH RECURSIVE.
        RecursiveCte = 78 => "LOGICAL_RECURSIVE_CTE",
        /// A materialized CTE.
        MaterializedCte = 79 => "LOGICAL_MATERIALIZED_CTE",
        /// INSERT.
        Insert = 100 => "LOGICAL_INSERT",
        /// DELETE.
        Delete = 101 => "LOGICAL_DELETE",
        /// UPDATE.
        Update = 102 => "LOGICAL_UPDATE",
        /// MERGE INTO.
        MergeInto = 103 => "LOGICAL_MERGE_INTO",
        /// A trigger's action.
        Trigger = 104 => "LOGICAL_TRIGGER",
        /// ALTER.
        Alter = 125 => "LOGICAL_ALTER",
        /// CREATE TABLE.
        CreateTable = 126 => "LOGICAL_CREATE_TABLE",
        /// CREATE INDEX.
        CreateIndex = 127 => "LOGICAL_CREATE_INDEX",
        /// CREATE SEQUENCE.
        CreateSequence = 128 => "LOGICAL_CREATE_SEQUENCE",
        /// CREATE VIEW.
        CreateView = 129 => "LOGICAL_CREATE_VIEW",
        /// CREATE SCHEMA.
        CreateSchema = 130 => "LOGICAL_CREATE_SCHEMA",
        /// CREATE MACRO.
        CreateMacro = 131 => "LOGICAL_CREATE_MACRO",
        /// DROP.
        Drop = 132 => "LOGICAL_DROP",
        /// PRAGMA.
        Pragma = 133 => "LOGICAL_PRAGMA",
        /// BEGIN / COMMIT / ROLLBACK.
        Transaction = 134 => "LOGICAL_TRANSACTION",
        /// CREATE TYPE.
        CreateType = 135 => "LOGICAL_CREATE_TYPE",
        /// ATTACH.
        Attach = 136 => "LOGICAL_ATTACH",
        /// DETACH.
        Detach = 137 => "LOGICAL_DETACH",
        /// CREATE TRIGGER.
        CreateTrigger = 138 => "LOGICAL_CREATE_TRIGGER",
        /// EXPLAIN.
        Explain = 150 => "LOGICAL_EXPLAIN",
        /// PREPARE.
        Prepare = 175 => "LOGICAL_PREPARE",
        /// EXECUTE.
        Execute = 176 => "LOGICAL_EXECUTE",
        /// EXPORT DATABASE.
        Export = 177 => "LOGICAL_EXPORT",
        /// VACUUM.
        Vacuum = 178 => "LOGICAL_VACUUM",
        /// SET.
        Set = 179 => "LOGICAL_SET",
        /// LOAD / INSTALL.
        Load = 180 => "LOGICAL_LOAD",
        /// RESET.
        Reset = 181 => "LOGICAL_RESET",
        /// UPDATE EXTENSIONS.
        UpdateExtensions = 182 => "LOGICAL_UPDATE_EXTENSIONS",
        /// CONNECT.
        Connect = 183 => "LOGICAL_CONNECT",
        /// DISCONNECT.
        Disconnect = 184 => "LOGICAL_DISCONNECT",
        /// An external resource.
        ExternalResource = 185 => "LOGICAL_EXTERNAL_RESOURCE",
        /// CREATE SECRET.
        CreateSecret = 190 => "LOGICAL_CREATE_SECRET",
        /// An extension's own operator.
        ExtensionOperator = 255 => "LOGICAL_EXTENSION_OPERATOR",
    }
}

duckdb_enum! {
    /// A bound (or parsed) expression's class (`ExpressionClass`).
    ExpressionClass in ExpressionClass {
        /// Not an expression.
        Invalid = 0 => "INVALID",
        /// Parsed: an aggregate.
        Aggregate = 1 => "AGGREGATE",
        /// Parsed: CASE.
        Case = 2 => "CASE",
        /// Parsed: a cast.
        Cast = 3 => "CAST",
        /// Parsed: a column reference.
        ColumnRef = 4 => "COLUMN_REF",
        /// Parsed: a comparison.
        Comparison = 5 => "COMPARISON",
        /// Parsed: AND / OR.
        Conjunction = 6 => "CONJUNCTION",
        /// Parsed: a constant.
        Constant = 7 => "CONSTANT",
        /// Parsed: DEFAULT.
        Default = 8 => "DEFAULT",
        /// Parsed: a function call.
        Function = 9 => "FUNCTION",
        /// Parsed: an operator.
        Operator = 10 => "OPERATOR",
        /// Parsed: `*`.
        Star = 11 => "STAR",
        /// Parsed: a subquery.
        Subquery = 13 => "SUBQUERY",
        /// Parsed: a window function.
        Window = 14 => "WINDOW",
        /// Parsed: a parameter.
        Parameter = 15 => "PARAMETER",
        /// Parsed: COLLATE.
        Collate = 16 => "COLLATE",
        /// Parsed: a lambda.
        Lambda = 17 => "LAMBDA",
        /// Parsed: `#1`.
        PositionalReference = 18 => "POSITIONAL_REFERENCE",
        /// Parsed: BETWEEN.
        Between = 19 => "BETWEEN",
        /// Parsed: a lambda parameter.
        LambdaRef = 20 => "LAMBDA_REF",
        /// Parsed: a type.
        Type = 21 => "TYPE",
        /// A bound aggregate.
        BoundAggregate = 25 => "BOUND_AGGREGATE",
        /// A bound CASE.
        BoundCase = 26 => "BOUND_CASE",
        /// A cast of DuckDB before 2.0.
        LegacyBoundCast = 27 => "LEGACY_BOUND_CAST",
        /// A bound column reference.
        BoundColumnRef = 28 => "BOUND_COLUMN_REF",
        /// A comparison of DuckDB before 2.0.
        LegacyBoundComparison = 29 => "LEGACY_BOUND_COMPARISON",
        /// A bound AND / OR.
        BoundConjunction = 30 => "BOUND_CONJUNCTION",
        /// A bound constant.
        BoundConstant = 31 => "BOUND_CONSTANT",
        /// A bound DEFAULT.
        BoundDefault = 32 => "BOUND_DEFAULT",
        /// A bound function call: scalar functions, operators, casts, comparisons.
        BoundFunction = 33 => "BOUND_FUNCTION",
        /// A bound operator (IS NULL, IN, NOT, …).
        BoundOperator = 34 => "BOUND_OPERATOR",
        /// A bound parameter.
        BoundParameter = 35 => "BOUND_PARAMETER",
        /// A reference by position into the input.
        BoundRef = 36 => "BOUND_REF",
        /// A bound subquery (planned away into joins).
        BoundSubquery = 37 => "BOUND_SUBQUERY",
        /// A bound window function.
        BoundWindow = 38 => "BOUND_WINDOW",
        /// A BETWEEN of DuckDB before 2.0.
        LegacyBoundBetween = 39 => "LEGACY_BOUND_BETWEEN",
        /// A bound UNNEST.
        BoundUnnest = 40 => "BOUND_UNNEST",
        /// A bound lambda.
        BoundLambda = 41 => "BOUND_LAMBDA",
        /// A bound lambda parameter.
        BoundLambdaRef = 42 => "BOUND_LAMBDA_REF",
        /// A binder-only expansion.
        BoundExpanded = 51 => "BOUND_EXPANDED",
    }
}

duckdb_enum! {
    /// A type's id (`LogicalTypeId`).
    LogicalTypeId in LogicalTypeId {
        /// Not a type.
        Invalid = 0 => "INVALID",
        /// The type of a bare NULL.
        SqlNull = 1 => "NULL",
        /// A parameter's type before binding.
        Unknown = 2 => "UNKNOWN",
        /// Any type (function signatures).
        Any = 3 => "ANY",
        /// A type name not yet bound.
        Unbound = 4 => "UNBOUND",
        /// A function signature's type variable.
        Template = 5 => "TEMPLATE",
        /// A type as a value, resolved at run time.
        Type = 6 => "TYPE",
        /// BOOLEAN.
        Boolean = 10 => "BOOLEAN",
        /// TINYINT.
        TinyInt = 11 => "TINYINT",
        /// SMALLINT.
        SmallInt = 12 => "SMALLINT",
        /// INTEGER.
        Integer = 13 => "INTEGER",
        /// BIGINT.
        BigInt = 14 => "BIGINT",
        /// DATE.
        Date = 15 => "DATE",
        /// TIME.
        Time = 16 => "TIME",
        /// TIMESTAMP_S.
        TimestampSec = 17 => "TIMESTAMP_S",
        /// TIMESTAMP_MS.
        TimestampMs = 18 => "TIMESTAMP_MS",
        /// TIMESTAMP.
        Timestamp = 19 => "TIMESTAMP",
        /// TIMESTAMP_NS.
        TimestampNs = 20 => "TIMESTAMP_NS",
        /// DECIMAL.
        Decimal = 21 => "DECIMAL",
        /// FLOAT.
        Float = 22 => "FLOAT",
        /// DOUBLE.
        Double = 23 => "DOUBLE",
        /// CHAR.
        Char = 24 => "CHAR",
        /// VARCHAR.
        Varchar = 25 => "VARCHAR",
        /// BLOB.
        Blob = 26 => "BLOB",
        /// INTERVAL.
        Interval = 27 => "INTERVAL",
        /// UTINYINT.
        UTinyInt = 28 => "UTINYINT",
        /// USMALLINT.
        USmallInt = 29 => "USMALLINT",
        /// UINTEGER.
        UInteger = 30 => "UINTEGER",
        /// UBIGINT.
        UBigInt = 31 => "UBIGINT",
        /// TIMESTAMP WITH TIME ZONE.
        TimestampTz = 32 => "TIMESTAMP WITH TIME ZONE",
        /// TIMESTAMPTZ_NS.
        TimestampTzNs = 33 => "TIMESTAMPTZ_NS",
        /// TIME WITH TIME ZONE.
        TimeTz = 34 => "TIME WITH TIME ZONE",
        /// TIME_NS.
        TimeNs = 35 => "TIME_NS",
        /// BIT.
        Bit = 36 => "BIT",
        /// A string literal while binding.
        StringLiteral = 37 => "STRING_LITERAL",
        /// An integer literal while binding.
        IntegerLiteral = 38 => "INTEGER_LITERAL",
        /// BIGNUM.
        BigNum = 39 => "BIGNUM",
        /// UHUGEINT.
        UHugeInt = 49 => "UHUGEINT",
        /// HUGEINT.
        HugeInt = 50 => "HUGEINT",
        /// An internal pointer.
        Pointer = 51 => "POINTER",
        /// An internal validity mask.
        Validity = 53 => "VALIDITY",
        /// UUID.
        Uuid = 54 => "UUID",
        /// GEOMETRY.
        Geometry = 60 => "GEOMETRY",
        /// STRUCT.
        Struct = 100 => "STRUCT",
        /// LIST.
        List = 101 => "LIST",
        /// MAP.
        Map = 102 => "MAP",
        /// A table as a value (table-in functions).
        Table = 103 => "TABLE",
        /// ENUM.
        Enum = 104 => "ENUM",
        /// An aggregate state of DuckDB before 2.0.
        LegacyAggregateState = 105 => "LEGACY_AGGREGATE_STATE",
        /// A lambda's type while binding.
        Lambda = 106 => "LAMBDA",
        /// UNION.
        Union = 107 => "UNION",
        /// ARRAY.
        Array = 108 => "ARRAY",
        /// VARIANT.
        Variant = 109 => "VARIANT",
        /// An unnamed STRUCT.
        Tuple = 110 => "TUPLE",
    }
}

duckdb_enum! {
    /// The type of a DuckDB error (`ExceptionType`, `exception.hpp`).
    ExceptionType in ExceptionType {
        /// No type: an error DuckDB built from a plain message (or a C++ exception of its own).
        Invalid = 0 => "INVALID",
        /// A value out of range.
        OutOfRange = 1 => "OUT_OF_RANGE",
        /// A cast or conversion failed.
        Conversion = 2 => "CONVERSION",
        /// An unknown type.
        UnknownType = 3 => "UNKNOWN_TYPE",
        /// A DECIMAL's width or scale.
        Decimal = 4 => "DECIMAL",
        /// Types that do not match.
        MismatchType = 5 => "MISMATCH_TYPE",
        /// Division by zero.
        DivideByZero = 6 => "DIVIDE_BY_ZERO",
        /// An object too large.
        ObjectSize = 7 => "OBJECT_SIZE",
        /// A type not valid for the operation.
        InvalidType = 8 => "INVALID_TYPE",
        /// Serialising or deserialising.
        Serialization = 9 => "SERIALIZATION",
        /// Transaction management.
        Transaction = 10 => "TRANSACTION",
        /// Something DuckDB does not implement.
        NotImplemented = 11 => "NOT_IMPLEMENTED",
        /// An expression.
        Expression = 12 => "EXPRESSION",
        /// The catalog: an entry missing or already there.
        Catalog = 13 => "CATALOG",
        /// The parser.
        Parser = 14 => "PARSER",
        /// The planner.
        Planner = 15 => "PLANNER",
        /// The scheduler.
        Scheduler = 16 => "SCHEDULER",
        /// Execution.
        Executor = 17 => "EXECUTOR",
        /// A constraint.
        Constraint = 18 => "CONSTRAINT",
        /// An index.
        Index = 19 => "INDEX",
        /// Statistics.
        Stat = 20 => "STAT",
        /// A connection.
        Connection = 21 => "CONNECTION",
        /// Syntax.
        Syntax = 22 => "SYNTAX",
        /// A setting.
        Settings = 23 => "SETTINGS",
        /// The binder: names, types and functions of a statement.
        Binder = 24 => "BINDER",
        /// The network.
        Network = 25 => "NETWORK",
        /// The optimizer.
        Optimizer = 26 => "OPTIMIZER",
        /// A null pointer.
        NullPointer = 27 => "NULL_POINTER",
        /// A file or other input/output operation.
        Io = 28 => "IO",
        /// The query was interrupted.
        Interrupt = 29 => "INTERRUPT",
        /// The database can no longer be used.
        Fatal = 30 => "FATAL",
        /// A bug in DuckDB.
        Internal = 31 => "INTERNAL",
        /// Input or arguments.
        InvalidInput = 32 => "INVALID_INPUT",
        /// Memory (or temporary disk space) ran out.
        OutOfMemory = 33 => "OUT_OF_MEMORY",
        /// Refused by DuckDB's configuration (external access, a locked setting, a disabled file system).
        Permission = 34 => "PERMISSION",
        /// A parameter's type could not be resolved.
        ParameterNotResolved = 35 => "PARAMETER_NOT_RESOLVED",
        /// A parameter where none is allowed.
        ParameterNotAllowed = 36 => "PARAMETER_NOT_ALLOWED",
        /// A dependency between catalog entries.
        Dependency = 37 => "DEPENDENCY",
        /// HTTP.
        Http = 38 => "HTTP",
        /// An extension that is not loaded.
        MissingExtension = 39 => "MISSING_EXTENSION",
        /// Autoloading an extension.
        Autoload = 40 => "AUTOLOAD",
        /// A sequence.
        Sequence = 41 => "SEQUENCE",
        /// An invalid configuration.
        InvalidConfiguration = 42 => "INVALID_CONFIGURATION",
        /// Corrupt data in storage.
        DataCorruption = 43 => "DATA_CORRUPTION",
        /// A resource already in use.
        ResourceInUse = 44 => "RESOURCE_IN_USE",
    }
}
