//! A result column's DuckDB logical type ([`ColumnType`]), and DuckDB's names for types.

use duckdb::arrow::datatypes::DataType;
use duckdb::core::{LogicalTypeHandle, LogicalTypeId};

/// A result column's DuckDB logical type, read once from DuckDB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ColumnType {
    pub(super) kind: Kind,
    /// The type's alias, e.g. `JSON` or a user-defined ENUM's name.
    alias: Option<String>,
}

/// The parts of a logical type that matter for rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    /// A type without children, by DuckDB name; `decimal` and friends carry extras.
    Scalar(Scalar),
    Decimal {
        width: u8,
        scale: u8,
    },
    List(Box<ColumnType>),
    Array {
        child: Box<ColumnType>,
        size: Option<i32>,
    },
    Struct(Vec<(String, ColumnType)>),
    Map {
        key: Box<ColumnType>,
        value: Box<ColumnType>,
    },
    Union(Vec<(String, ColumnType)>),
}

/// Childless types that need distinct rendering or conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scalar {
    Boolean,
    TinyInt,
    SmallInt,
    Integer,
    BigInt,
    HugeInt,
    UTinyInt,
    USmallInt,
    UInteger,
    UBigInt,
    UHugeInt,
    Float,
    Double,
    Varchar,
    Blob,
    Bit,
    Bignum,
    Uuid,
    Enum,
    Date,
    Time,
    TimeNs,
    TimeTz,
    Timestamp,
    TimestampS,
    TimestampMs,
    TimestampNs,
    TimestampTz,
    Interval,
    Geometry,
    SqlNull,
    /// Types the gateway cannot decode (VARIANT, and ids this crate version does not know).
    Unsupported(&'static str),
}

impl ColumnType {
    /// Read a column's logical type; `arrow` is the same column's Arrow type, used only for the
    /// ARRAY size that the crate's logical-type handle does not expose.
    pub(crate) fn from_duckdb(handle: &LogicalTypeHandle, arrow: Option<&DataType>) -> ColumnType {
        let alias = handle.get_alias();
        let kind = match handle.try_id() {
            Ok(id) => kind_of(id, handle, arrow),
            Err(_raw) => Kind::Scalar(Scalar::Unsupported("UNKNOWN")),
        };
        ColumnType { kind, alias }
    }

    /// DuckDB's own spelling of the type, e.g. `DECIMAL(10,2)`, `STRUCT(a INTEGER)`, `INTEGER[3]`.
    pub(crate) fn type_name(&self) -> String {
        if let Some(alias) = &self.alias {
            return alias.clone();
        }
        match &self.kind {
            Kind::Scalar(s) => scalar_name(*s).to_string(),
            Kind::Decimal { width, scale } => format!("DECIMAL({width},{scale})"),
            Kind::List(child) => format!("{}[]", child.type_name()),
            Kind::Array {
                child,
                size: Some(n),
            } => format!("{}[{n}]", child.type_name()),
            Kind::Array { child, size: None } => format!("{}[?]", child.type_name()),
            Kind::Struct(fields) => format!("STRUCT({})", member_list(fields)),
            Kind::Union(members) => format!("UNION({})", member_list(members)),
            Kind::Map { key, value } => format!("MAP({}, {})", key.type_name(), value.type_name()),
        }
    }

    /// Why this type cannot be returned faithfully, if it cannot (checked before the query runs).
    pub(crate) fn unsupported_reason(&self) -> Option<&'static str> {
        self.unsupported_within(false)
    }

    fn unsupported_within(&self, nested: bool) -> Option<&'static str> {
        match &self.kind {
            Kind::Scalar(Scalar::Unsupported(_)) => {
                Some("the duckdb client library cannot decode this type")
            }
            Kind::Scalar(Scalar::TimeTz) => Some(
                "DuckDB's Arrow export drops the time-zone offset, so the value would be wrong",
            ),
            Kind::Scalar(Scalar::TimeNs) => Some("the duckdb client library cannot decode TIME_NS"),
            Kind::Scalar(Scalar::SqlNull) if nested => {
                Some("an untyped NULL inside a LIST, STRUCT, MAP or UNION cannot be decoded")
            }
            Kind::Scalar(_) | Kind::Decimal { .. } => None,
            Kind::List(child) | Kind::Array { child, .. } => child.unsupported_within(true),
            Kind::Map { key, value } => key
                .unsupported_within(true)
                .or_else(|| value.unsupported_within(true)),
            Kind::Struct(members) | Kind::Union(members) => {
                members.iter().find_map(|(_, t)| t.unsupported_within(true))
            }
        }
    }

    /// The type of a bare `NULL` (every value is NULL).
    pub(crate) fn is_null_type(&self) -> bool {
        matches!(self.kind, Kind::Scalar(Scalar::SqlNull))
    }

    pub(super) fn is_json(&self) -> bool {
        self.alias
            .as_deref()
            .is_some_and(|a| a.eq_ignore_ascii_case("JSON"))
            && matches!(self.kind, Kind::Scalar(Scalar::Varchar))
    }

    pub(super) fn scalar(&self) -> Option<Scalar> {
        match &self.kind {
            Kind::Scalar(s) => Some(*s),
            Kind::Decimal { .. }
            | Kind::List(_)
            | Kind::Array { .. }
            | Kind::Struct(_)
            | Kind::Map { .. }
            | Kind::Union(_) => None,
        }
    }
}

fn member_list(members: &[(String, ColumnType)]) -> String {
    members
        .iter()
        .map(|(name, t)| format!("{} {}", quote_identifier_if_needed(name), t.type_name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// DuckDB prints struct field names bare when they are simple lower-case identifiers.
fn quote_identifier_if_needed(name: &str) -> String {
    let simple = !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if simple {
        name.to_string()
    } else {
        crate::sql_text::quote_identifier(name)
    }
}

fn arrow_children(arrow: Option<&DataType>) -> Vec<&DataType> {
    match arrow {
        Some(DataType::Struct(fields)) => fields.iter().map(|f| f.data_type()).collect(),
        Some(DataType::Union(fields, _)) => fields.iter().map(|(_, f)| f.data_type()).collect(),
        Some(DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _)) => {
            vec![f.data_type()]
        }
        Some(DataType::Map(entries, _)) => match entries.data_type() {
            DataType::Struct(kv) => kv.iter().map(|f| f.data_type()).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn kind_of(id: LogicalTypeId, handle: &LogicalTypeHandle, arrow: Option<&DataType>) -> Kind {
    let arrow_kids = arrow_children(arrow);
    let child = |i: usize| ColumnType::from_duckdb(&handle.child(i), arrow_kids.get(i).copied());
    let members = || {
        (0..handle.num_children())
            .map(|i| (handle.child_name(i), child(i)))
            .collect::<Vec<_>>()
    };
    // `LogicalTypeId` is `#[non_exhaustive]`, so a wildcard arm is forced on us by the compiler;
    // it maps ids this crate version adds later to "unsupported", which refuses the column.
    match id {
        LogicalTypeId::Boolean => Kind::Scalar(Scalar::Boolean),
        LogicalTypeId::Tinyint => Kind::Scalar(Scalar::TinyInt),
        LogicalTypeId::Smallint => Kind::Scalar(Scalar::SmallInt),
        LogicalTypeId::Integer => Kind::Scalar(Scalar::Integer),
        LogicalTypeId::Bigint => Kind::Scalar(Scalar::BigInt),
        LogicalTypeId::UTinyint => Kind::Scalar(Scalar::UTinyInt),
        LogicalTypeId::USmallint => Kind::Scalar(Scalar::USmallInt),
        LogicalTypeId::UInteger => Kind::Scalar(Scalar::UInteger),
        LogicalTypeId::UBigint => Kind::Scalar(Scalar::UBigInt),
        LogicalTypeId::Hugeint => Kind::Scalar(Scalar::HugeInt),
        LogicalTypeId::UHugeint => Kind::Scalar(Scalar::UHugeInt),
        LogicalTypeId::Float => Kind::Scalar(Scalar::Float),
        LogicalTypeId::Double => Kind::Scalar(Scalar::Double),
        LogicalTypeId::Varchar => Kind::Scalar(Scalar::Varchar),
        LogicalTypeId::Blob => Kind::Scalar(Scalar::Blob),
        LogicalTypeId::Bit => Kind::Scalar(Scalar::Bit),
        LogicalTypeId::Bignum => Kind::Scalar(Scalar::Bignum),
        LogicalTypeId::Uuid => Kind::Scalar(Scalar::Uuid),
        LogicalTypeId::Enum => Kind::Scalar(Scalar::Enum),
        LogicalTypeId::Date => Kind::Scalar(Scalar::Date),
        LogicalTypeId::Time => Kind::Scalar(Scalar::Time),
        LogicalTypeId::TimeNs => Kind::Scalar(Scalar::TimeNs),
        LogicalTypeId::TimeTZ => Kind::Scalar(Scalar::TimeTz),
        LogicalTypeId::Timestamp => Kind::Scalar(Scalar::Timestamp),
        LogicalTypeId::TimestampS => Kind::Scalar(Scalar::TimestampS),
        LogicalTypeId::TimestampMs => Kind::Scalar(Scalar::TimestampMs),
        LogicalTypeId::TimestampNs => Kind::Scalar(Scalar::TimestampNs),
        LogicalTypeId::TimestampTZ => Kind::Scalar(Scalar::TimestampTz),
        LogicalTypeId::Interval => Kind::Scalar(Scalar::Interval),
        LogicalTypeId::Geometry => Kind::Scalar(Scalar::Geometry),
        LogicalTypeId::SqlNull => Kind::Scalar(Scalar::SqlNull),
        LogicalTypeId::Decimal => Kind::Decimal {
            width: handle.decimal_width(),
            scale: handle.decimal_scale(),
        },
        LogicalTypeId::List => Kind::List(Box::new(child(0))),
        LogicalTypeId::Array => {
            let size = match arrow {
                Some(DataType::FixedSizeList(_, n)) => Some(*n),
                _ => None,
            };
            Kind::Array {
                child: Box::new(child(0)),
                size,
            }
        }
        LogicalTypeId::Map => Kind::Map {
            key: Box::new(child(0)),
            value: Box::new(child(1)),
        },
        LogicalTypeId::Struct => Kind::Struct(members()),
        LogicalTypeId::Union => Kind::Union(members()),
        LogicalTypeId::Variant => Kind::Scalar(Scalar::Unsupported("VARIANT")),
        LogicalTypeId::Any => Kind::Scalar(Scalar::Unsupported("ANY")),
        LogicalTypeId::StringLiteral => Kind::Scalar(Scalar::Unsupported("STRING_LITERAL")),
        LogicalTypeId::IntegerLiteral => Kind::Scalar(Scalar::Unsupported("INTEGER_LITERAL")),
        LogicalTypeId::Invalid => Kind::Scalar(Scalar::Unsupported("INVALID")),
        LogicalTypeId::Unsupported => Kind::Scalar(Scalar::Unsupported("UNKNOWN")),
        _ => Kind::Scalar(Scalar::Unsupported("UNKNOWN")),
    }
}

fn scalar_name(s: Scalar) -> &'static str {
    match s {
        Scalar::Boolean => "BOOLEAN",
        Scalar::TinyInt => "TINYINT",
        Scalar::SmallInt => "SMALLINT",
        Scalar::Integer => "INTEGER",
        Scalar::BigInt => "BIGINT",
        Scalar::HugeInt => "HUGEINT",
        Scalar::UTinyInt => "UTINYINT",
        Scalar::USmallInt => "USMALLINT",
        Scalar::UInteger => "UINTEGER",
        Scalar::UBigInt => "UBIGINT",
        Scalar::UHugeInt => "UHUGEINT",
        Scalar::Float => "FLOAT",
        Scalar::Double => "DOUBLE",
        Scalar::Varchar => "VARCHAR",
        Scalar::Blob => "BLOB",
        Scalar::Bit => "BIT",
        Scalar::Bignum => "BIGNUM",
        Scalar::Uuid => "UUID",
        Scalar::Enum => "ENUM",
        Scalar::Date => "DATE",
        Scalar::Time => "TIME",
        Scalar::TimeNs => "TIME_NS",
        Scalar::TimeTz => "TIME WITH TIME ZONE",
        Scalar::Timestamp => "TIMESTAMP",
        Scalar::TimestampS => "TIMESTAMP_S",
        Scalar::TimestampMs => "TIMESTAMP_MS",
        Scalar::TimestampNs => "TIMESTAMP_NS",
        Scalar::TimestampTz => "TIMESTAMP WITH TIME ZONE",
        Scalar::Interval => "INTERVAL",
        Scalar::Geometry => "GEOMETRY",
        Scalar::SqlNull => "\"NULL\"",
        Scalar::Unsupported(name) => name,
    }
}
