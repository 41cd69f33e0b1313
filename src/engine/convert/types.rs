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
    /// An unnamed STRUCT (`(1, 'a')`, `row(…)`), which DuckDB names `TUPLE(INTEGER, VARCHAR)`
    /// and hands to clients positionally.
    Tuple(Vec<ColumnType>),
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
    Variant,
    TimestampTzNs,
    /// Types with no value of their own (`ANY`, literals) and ids this crate version does not
    /// know: DuckDB renders them as text.
    Unsupported(&'static str),
    /// Only in a [`ColumnType::decodable`] twin: a value DuckDB renders in the worker, because
    /// the client library cannot decode its type or its Arrow export loses part of it.
    Rendered(Rendering),
}

/// How DuckDB renders a value the client library cannot decode, and how it is read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rendering {
    /// VARIANT, cast to JSON by DuckDB and returned as that JSON value.
    VariantAsJson,
    /// INTERVAL, as DuckDB's text (`2562047788:00:00`), read back exactly into ISO 8601: the
    /// Arrow export counts nanoseconds in 64 bits and wraps beyond about 292 years.
    Interval,
    /// TIMESTAMPTZ_NS, as DuckDB's text in the session's zone, read back into ISO 8601 with the
    /// offset.
    ZonedTimestamp,
    /// TIME WITH TIME ZONE (the Arrow export drops the offset), TIME_NS, and types with no
    /// decoder: DuckDB's own text, as it prints it.
    Text,
}

impl ColumnType {
    /// Read a column's logical type; `arrow` is the same column's Arrow type, used only for the
    /// ARRAY size that the crate's logical-type handle does not expose.
    pub(crate) fn from_duckdb(handle: &LogicalTypeHandle, arrow: Option<&DataType>) -> ColumnType {
        let alias = handle.get_alias();
        let kind = match handle.try_id() {
            Ok(id) => kind_of(id, handle, arrow),
            Err(raw) => Kind::Scalar(scalar_of_raw_id(raw)),
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
            Kind::Tuple(members) => format!(
                "TUPLE({})",
                members
                    .iter()
                    .map(ColumnType::type_name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The type DuckDB is asked to cast this column to when the client library cannot decode
    /// part of it faithfully (see [`Rendering`]), or `None` when it can. The twin has the same
    /// shape, with each such part replaced by its rendering, untyped NULLs inside containers
    /// by INTEGER (all their values are NULL), and ENUMs by VARCHAR (their text); its
    /// [`ColumnType::cast_target`] is the SQL type to cast to.
    pub(crate) fn decodable(&self) -> Option<ColumnType> {
        let (twin, changed) = self.twin(false);
        changed.then_some(twin)
    }

    fn twin(&self, nested: bool) -> (ColumnType, bool) {
        let rendered = |rendering| {
            (
                ColumnType {
                    kind: Kind::Scalar(Scalar::Rendered(rendering)),
                    alias: None,
                },
                true,
            )
        };
        let plain = |kind| (ColumnType { kind, alias: None }, false);
        match &self.kind {
            Kind::Scalar(scalar) => match scalar {
                Scalar::Variant => rendered(Rendering::VariantAsJson),
                Scalar::Interval => rendered(Rendering::Interval),
                Scalar::TimestampTzNs => rendered(Rendering::ZonedTimestamp),
                Scalar::TimeTz | Scalar::TimeNs | Scalar::Unsupported(_) => {
                    rendered(Rendering::Text)
                }
                Scalar::Rendered(rendering) => rendered(*rendering),
                Scalar::SqlNull if nested => (
                    ColumnType {
                        kind: Kind::Scalar(Scalar::Integer),
                        alias: None,
                    },
                    true,
                ),
                Scalar::Enum => plain(Kind::Scalar(Scalar::Varchar)),
                // JSON keeps its alias: it is rendered as JSON text.
                _ => (self.clone(), false),
            },
            Kind::Decimal { .. } => (self.clone(), false),
            Kind::List(child) => {
                let (child, changed) = child.twin(true);
                (
                    ColumnType {
                        kind: Kind::List(Box::new(child)),
                        alias: None,
                    },
                    changed,
                )
            }
            // Cast to a LIST: the array's size is not known before the query runs, and a list
            // renders as the same JSON array.
            Kind::Array { child, .. } => {
                let (child, changed) = child.twin(true);
                (
                    ColumnType {
                        kind: Kind::List(Box::new(child)),
                        alias: None,
                    },
                    changed,
                )
            }
            Kind::Map { key, value } => {
                let (key, key_changed) = key.twin(true);
                let (value, value_changed) = value.twin(true);
                (
                    ColumnType {
                        kind: Kind::Map {
                            key: Box::new(key),
                            value: Box::new(value),
                        },
                        alias: None,
                    },
                    key_changed || value_changed,
                )
            }
            Kind::Struct(members) => {
                let (members, changed) = twin_members(members);
                (
                    ColumnType {
                        kind: Kind::Struct(members),
                        alias: None,
                    },
                    changed,
                )
            }
            Kind::Union(members) => {
                let (members, changed) = twin_members(members);
                (
                    ColumnType {
                        kind: Kind::Union(members),
                        alias: None,
                    },
                    changed,
                )
            }
            Kind::Tuple(members) => {
                let mut changed = false;
                let members = members
                    .iter()
                    .map(|member| {
                        let (twin, member_changed) = member.twin(true);
                        changed |= member_changed;
                        twin
                    })
                    .collect();
                (
                    ColumnType {
                        kind: Kind::Tuple(members),
                        alias: None,
                    },
                    changed,
                )
            }
        }
    }

    /// The SQL type a [`ColumnType::decodable`] twin is cast to, in DuckDB's spelling.
    pub(crate) fn cast_target(&self) -> String {
        match &self.kind {
            Kind::Scalar(Scalar::Varchar) if self.is_json() => "JSON".into(),
            Kind::Scalar(Scalar::Rendered(Rendering::VariantAsJson)) => "JSON".into(),
            Kind::Scalar(Scalar::Rendered(_)) => "VARCHAR".into(),
            Kind::Scalar(scalar) => scalar_name(*scalar).to_string(),
            Kind::Decimal { width, scale } => format!("DECIMAL({width},{scale})"),
            Kind::List(child) | Kind::Array { child, .. } => format!("{}[]", child.cast_target()),
            Kind::Map { key, value } => {
                format!("MAP({}, {})", key.cast_target(), value.cast_target())
            }
            Kind::Struct(members) => format!("STRUCT({})", cast_members(members)),
            Kind::Union(members) => format!("UNION({})", cast_members(members)),
            // A tuple casts to a STRUCT positionally; it is still rendered as a tuple.
            Kind::Tuple(members) => format!(
                "STRUCT({})",
                members
                    .iter()
                    .enumerate()
                    .map(|(i, t)| format!("\"{}\" {}", i + 1, t.cast_target()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// Whether any part of this type is a STRUCT or UNION with named members.
    pub(crate) fn has_named_members(&self) -> bool {
        match &self.kind {
            Kind::Struct(members) | Kind::Union(members) => !members.is_empty(),
            Kind::List(child) | Kind::Array { child, .. } => child.has_named_members(),
            Kind::Map { key, value } => key.has_named_members() || value.has_named_members(),
            Kind::Tuple(members) => members.iter().any(ColumnType::has_named_members),
            Kind::Scalar(_) | Kind::Decimal { .. } => false,
        }
    }

    /// Whether the type itself holds names or labels that could be data: an ENUM (its labels),
    /// a STRUCT or UNION with named members, a type's alias (a user type's name), anywhere in it.
    /// Such a type shows what it was built from even where no value is read.
    pub(crate) fn carries_names(&self) -> bool {
        if self.alias.is_some() {
            return true;
        }
        match &self.kind {
            Kind::Scalar(Scalar::Enum) => true,
            Kind::Scalar(_) | Kind::Decimal { .. } => false,
            Kind::Struct(members) | Kind::Union(members) => !members.is_empty(),
            Kind::List(child) | Kind::Array { child, .. } => child.carries_names(),
            Kind::Map { key, value } => key.carries_names() || value.carries_names(),
            Kind::Tuple(members) => members.iter().any(ColumnType::carries_names),
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
            | Kind::Union(_)
            | Kind::Tuple(_) => None,
        }
    }
}

fn twin_members(members: &[(String, ColumnType)]) -> (Vec<(String, ColumnType)>, bool) {
    let mut changed = false;
    let twins = members
        .iter()
        .map(|(name, member)| {
            let (twin, member_changed) = member.twin(true);
            changed |= member_changed;
            (name.clone(), twin)
        })
        .collect();
    (twins, changed)
}

fn cast_members(members: &[(String, ColumnType)]) -> String {
    members
        .iter()
        .map(|(name, t)| {
            format!(
                "{} {}",
                crate::sql_text::quote_identifier(name),
                t.cast_target()
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A type id the `duckdb` crate's enum does not name, by the C API's number.
fn scalar_of_raw_id(raw: u32) -> Scalar {
    if raw == duckdb::ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_TZ_NS {
        Scalar::TimestampTzNs
    } else {
        Scalar::Unsupported("UNKNOWN")
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
        // DuckDB gives an unnamed struct's members empty names.
        LogicalTypeId::Struct => {
            let members = members();
            if !members.is_empty() && members.iter().all(|(name, _)| name.is_empty()) {
                Kind::Tuple(members.into_iter().map(|(_, t)| t).collect())
            } else {
                Kind::Struct(members)
            }
        }
        LogicalTypeId::Union => Kind::Union(members()),
        LogicalTypeId::Variant => Kind::Scalar(Scalar::Variant),
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
        Scalar::Variant => "VARIANT",
        Scalar::TimestampTzNs => "TIMESTAMPTZ_NS",
        Scalar::Unsupported(name) => name,
        Scalar::Rendered(Rendering::VariantAsJson) => "JSON",
        Scalar::Rendered(Rendering::Interval | Rendering::ZonedTimestamp | Rendering::Text) => {
            "VARCHAR"
        }
    }
}
