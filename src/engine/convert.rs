//! DuckDB values to JSON, faithfully, and DuckDB type names.
//!
//! The `duckdb` crate hands result values over as Arrow-backed [`Value`]s, which lose some of
//! DuckDB's logical type (JSON is text, TIMESTAMPTZ is a bare timestamp, ARRAY has no size).
//! So each result column's DuckDB logical type is read once into a [`ColumnType`] tree and
//! walked alongside the value.
//!
//! JSON shapes (documented here because agents read them):
//! - integers: a JSON number when |v| ≤ 2^53 − 1, otherwise a string (JSON parsers lose
//!   precision beyond that); DECIMAL and BIGNUM always as strings (exact digits);
//! - FLOAT/DOUBLE: a number, or `"NaN"`, `"Infinity"`, `"-Infinity"`;
//! - BLOB and GEOMETRY (WKB): standard base64 with padding; BIT: the `0101…` text;
//! - DATE `2024-01-31`, TIME `13:45:00.5`, TIMESTAMP `2024-01-31T13:45:00.5`, TIMESTAMPTZ
//!   in UTC with `Z`, `infinity`/`-infinity` as DuckDB spells them; INTERVAL as an ISO 8601
//!   duration with a sign per component (`P1Y2M3DT4H5M6.5S`, `P-1M`, `PT0S`);
//! - UUID and ENUM: their text; JSON: the parsed JSON value (the text if it does not parse, or
//!   if it holds a number a double cannot hold exactly: an integer beyond ±(2^53 − 1), or more
//!   digits than a double keeps);
//! - LIST/ARRAY: arrays; STRUCT: objects in field order; UNION: the member's value, rendered
//!   by the member's type (untyped only if two members of one storage shape would differ);
//! - MAP: always an array of `{"key": …, "value": …}` objects, whatever the key type, so its
//!   shape does not depend on the data and non-text keys survive.

use std::fmt::Write as _;

use base64::Engine as _;
use duckdb::arrow::datatypes::DataType;
use duckdb::core::{LogicalTypeHandle, LogicalTypeId};
use duckdb::types::{TimeUnit, Value};
use serde_json::Value as Json;

/// Largest integer a JSON number holds exactly (2^53 − 1).
const MAX_SAFE_INTEGER: i128 = 9_007_199_254_740_991;

/// DuckDB's encodings of `infinity` and `-infinity` for DATE and TIMESTAMP.
const DATE_INFINITY: i32 = i32::MAX;
const DATE_NEG_INFINITY: i32 = -i32::MAX;
const TIMESTAMP_INFINITY: i64 = i64::MAX;
const TIMESTAMP_NEG_INFINITY: i64 = -i64::MAX;

/// A result column's DuckDB logical type, read once from DuckDB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ColumnType {
    kind: Kind,
    /// The type's alias, e.g. `JSON` or a user-defined ENUM's name.
    alias: Option<String>,
}

/// The parts of a logical type that matter for rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
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
enum Scalar {
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

    fn is_json(&self) -> bool {
        self.alias
            .as_deref()
            .is_some_and(|a| a.eq_ignore_ascii_case("JSON"))
            && matches!(self.kind, Kind::Scalar(Scalar::Varchar))
    }

    fn scalar(&self) -> Option<Scalar> {
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

/// Convert one value; `ty` is its DuckDB type when known (inside a UNION it is not).
pub(crate) fn to_json(value: &Value, ty: Option<&ColumnType>) -> Json {
    // `Value` is `#[non_exhaustive]`: the compiler forces a wildcard arm, which renders variants
    // added by a later crate version as their debug text rather than guessing a shape.
    match value {
        Value::Null => Json::Null,
        Value::Boolean(b) => Json::Bool(*b),
        Value::TinyInt(i) => Json::from(*i),
        Value::SmallInt(i) => Json::from(*i),
        Value::Int(i) => Json::from(*i),
        Value::UTinyInt(i) => Json::from(*i),
        Value::USmallInt(i) => Json::from(*i),
        Value::UInt(i) => Json::from(*i),
        Value::BigInt(i) => integer(i128::from(*i)),
        Value::UBigInt(i) => integer(i128::from(*i)),
        // Arrow carries DECIMAL(38,0) like HUGEINT; inside containers only the type tells them apart.
        Value::HugeInt(i) if ty.is_some_and(|t| matches!(t.kind, Kind::Decimal { .. })) => {
            Json::String(i.to_string())
        }
        // Inside containers the crate reads UHUGEINT's 128 bits as signed; the bits are exact.
        Value::HugeInt(i) if ty.and_then(ColumnType::scalar) == Some(Scalar::UHugeInt) => {
            unsigned(*i as u128)
        }
        Value::HugeInt(i) => integer(*i),
        Value::UHugeInt(u) => unsigned(*u),
        Value::Float(f) => float(f.to_string().parse::<f64>().unwrap_or(f64::from(*f))),
        Value::Double(d) => float(*d),
        Value::Decimal(d) => Json::String(d.to_string()),
        Value::Text(s) => text(s, ty),
        Value::Blob(bytes) => blob(bytes, ty),
        Value::Geometry(wkb) => Json::String(base64::engine::general_purpose::STANDARD.encode(wkb)),
        Value::Enum(s) => Json::String(s.clone()),
        Value::Date32(days) => Json::String(date(*days)),
        Value::Time64(unit, v) => Json::String(time_of_day(*unit, *v)),
        Value::Timestamp(unit, v) => {
            let with_zone = ty.and_then(ColumnType::scalar) == Some(Scalar::TimestampTz);
            Json::String(timestamp(*unit, *v, with_zone))
        }
        Value::Interval {
            months,
            days,
            nanos,
        } => Json::String(interval(*months, *days, *nanos)),
        Value::List(items) => {
            let child = ty.and_then(|t| match &t.kind {
                Kind::List(c) => Some(c.as_ref()),
                _ => None,
            });
            Json::Array(items.iter().map(|v| to_json(v, child)).collect())
        }
        Value::Array(items) => {
            let child = ty.and_then(|t| match &t.kind {
                Kind::Array { child, .. } => Some(child.as_ref()),
                _ => None,
            });
            Json::Array(items.iter().map(|v| to_json(v, child)).collect())
        }
        Value::Struct(fields) => {
            let member_types = ty.and_then(|t| match &t.kind {
                Kind::Struct(m) => Some(m.as_slice()),
                _ => None,
            });
            let mut object = serde_json::Map::new();
            for (i, (name, v)) in fields.iter().enumerate() {
                let member = member_types.and_then(|m| m.get(i)).map(|(_, t)| t);
                object.insert(name.clone(), to_json(v, member));
            }
            Json::Object(object)
        }
        Value::Map(entries) => {
            let (key_ty, value_ty) = match ty.map(|t| &t.kind) {
                Some(Kind::Map { key, value }) => (Some(key.as_ref()), Some(value.as_ref())),
                _ => (None, None),
            };
            Json::Array(
                entries
                    .iter()
                    .map(|(k, v)| {
                        let mut pair = serde_json::Map::new();
                        pair.insert("key".into(), to_json(k, key_ty));
                        pair.insert("value".into(), to_json(v, value_ty));
                        Json::Object(pair)
                    })
                    .collect(),
            )
        }
        // Which member is set is not carried by the crate's value: the member whose type can
        // hold this value's shape, when that decides the rendering (see `union_member`).
        Value::Union(inner) => {
            let members = ty.and_then(|t| match &t.kind {
                Kind::Union(m) => Some(m.as_slice()),
                _ => None,
            });
            match members {
                Some(members) => union_member(inner, members),
                None => to_json(inner, None),
            }
        }
        other => Json::String(format!("{other:?}")),
    }
}

/// A UNION value converted as its member: every member whose type could hold the value's
/// shape is tried, and if they all render it alike, that is the answer (e.g. the one
/// `TIMESTAMPTZ` member of `UNION(t TIMESTAMPTZ, s VARCHAR)` gives the value its `Z`). If
/// members of the same shape render it differently (`UNION(a TIMESTAMP, b TIMESTAMPTZ)`), the
/// value cannot say which is set and is converted untyped.
fn union_member(inner: &Value, members: &[(String, ColumnType)]) -> Json {
    let mut renderings = members
        .iter()
        .filter(|(_, member)| could_hold(member, inner))
        .map(|(_, member)| to_json(inner, Some(member)));
    match renderings.next() {
        Some(first) if renderings.all(|other| other == first) => first,
        _ => to_json(inner, None),
    }
}

/// Whether a value of `member`'s type arrives from the crate as `value`'s variant.
fn could_hold(member: &ColumnType, value: &Value) -> bool {
    use Scalar as S;
    let scalar = member.scalar();
    match value {
        Value::Null => true,
        Value::Boolean(_) => scalar == Some(S::Boolean),
        Value::TinyInt(_)
        | Value::SmallInt(_)
        | Value::Int(_)
        | Value::BigInt(_)
        | Value::UTinyInt(_)
        | Value::USmallInt(_)
        | Value::UInt(_)
        | Value::UBigInt(_) => matches!(
            scalar,
            Some(
                S::TinyInt
                    | S::SmallInt
                    | S::Integer
                    | S::BigInt
                    | S::UTinyInt
                    | S::USmallInt
                    | S::UInteger
                    | S::UBigInt
            )
        ),
        Value::HugeInt(_) => {
            matches!(scalar, Some(S::HugeInt | S::UHugeInt))
                || matches!(member.kind, Kind::Decimal { .. })
        }
        Value::UHugeInt(_) => scalar == Some(S::UHugeInt),
        Value::Float(_) | Value::Double(_) => matches!(scalar, Some(S::Float | S::Double)),
        Value::Decimal(_) => matches!(member.kind, Kind::Decimal { .. }),
        Value::Text(_) => matches!(scalar, Some(S::Varchar | S::Uuid | S::Enum)),
        Value::Blob(_) => matches!(
            scalar,
            Some(S::Blob | S::Bit | S::Bignum | S::Uuid | S::Geometry)
        ),
        Value::Geometry(_) => scalar == Some(S::Geometry),
        Value::Enum(_) => scalar == Some(S::Enum),
        Value::Date32(_) => scalar == Some(S::Date),
        Value::Time64(..) => matches!(scalar, Some(S::Time | S::TimeNs | S::TimeTz)),
        Value::Timestamp(..) => matches!(
            scalar,
            Some(S::Timestamp | S::TimestampS | S::TimestampMs | S::TimestampNs | S::TimestampTz)
        ),
        Value::Interval { .. } => scalar == Some(S::Interval),
        Value::List(_) => matches!(member.kind, Kind::List(_)),
        Value::Array(_) => matches!(member.kind, Kind::Array { .. }),
        Value::Struct(_) => matches!(member.kind, Kind::Struct(_)),
        Value::Map(_) => matches!(member.kind, Kind::Map { .. }),
        Value::Union(_) => matches!(member.kind, Kind::Union(_)),
        // `Value` is non-exhaustive: a variant added later matches no member, so it converts
        // untyped, as before.
        _ => false,
    }
}

fn integer(i: i128) -> Json {
    if (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&i) {
        // In range, so the conversion is exact.
        Json::from(i as i64)
    } else {
        Json::String(i.to_string())
    }
}

fn unsigned(u: u128) -> Json {
    match i128::try_from(u) {
        Ok(i) => integer(i),
        Err(_) => Json::String(u.to_string()),
    }
}

fn float(f: f64) -> Json {
    if f.is_nan() {
        Json::String("NaN".into())
    } else if f.is_infinite() {
        Json::String(if f > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        serde_json::Number::from_f64(f).map_or(Json::Null, Json::Number)
    }
}

fn text(s: &str, ty: Option<&ColumnType>) -> Json {
    if ty.is_some_and(ColumnType::is_json)
        && numbers_survive_doubles(s)
        && let Ok(parsed) = serde_json::from_str::<Json>(s)
    {
        return parsed;
    }
    Json::String(s.to_string())
}

/// Whether every number in the JSON text `s` keeps its exact value when read as an IEEE
/// double, as JSON consumers commonly hold numbers (and `serde_json` parses fractions): an
/// integer within ±(2^53 − 1), or a number whose double has the same decimal value. A JSON
/// value with any other number is returned as its text, so no digit is silently lost.
fn numbers_survive_doubles(s: &str) -> bool {
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                // The escaped character cannot end the string.
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len()
                    && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                if !number_survives_double(&s[start..i]) {
                    return false;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    true
}

fn number_survives_double(token: &str) -> bool {
    let Ok(value) = token.parse::<f64>() else {
        // Not a JSON number after all: serde_json decides whether the text parses.
        return true;
    };
    if !value.is_finite() {
        return false;
    }
    let integral = !token.contains(['.', 'e', 'E']);
    if integral && value.abs() > MAX_SAFE_INTEGER as f64 {
        return false;
    }
    decimal_value(token).is_some_and(|v| Some(v) == decimal_value(&format!("{value:e}")))
}

/// The decimal value of a JSON number's text as (negative, significant digits, power of ten),
/// with no leading or trailing zero digit, so equal values compare equal.
fn decimal_value(text: &str) -> Option<(bool, String, i64)> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i64>().ok()?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{fraction}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let significant = digits.trim_start_matches('0');
    let trimmed = significant.trim_end_matches('0');
    if trimmed.is_empty() {
        return Some((false, String::new(), 0));
    }
    let fraction_len = i64::try_from(fraction.len()).ok()?;
    let trailing = i64::try_from(significant.len() - trimmed.len()).ok()?;
    Some((
        negative,
        trimmed.to_string(),
        exponent - fraction_len + trailing,
    ))
}

fn blob(bytes: &[u8], ty: Option<&ColumnType>) -> Json {
    let decoded = match ty.and_then(ColumnType::scalar) {
        // The Arrow export carries DuckDB's internal encodings of these as binary.
        Some(Scalar::Bit) => bit_string(bytes),
        Some(Scalar::Bignum) => bignum_string(bytes),
        _ => None,
    };
    Json::String(decoded.unwrap_or_else(|| base64::engine::general_purpose::STANDARD.encode(bytes)))
}

/// DuckDB's BIT: one byte giving the number of padding bits, then the bits, most significant
/// first, the padding at the start of the first data byte.
fn bit_string(bytes: &[u8]) -> Option<String> {
    let (&padding, data) = bytes.split_first()?;
    let padding = usize::from(padding);
    if padding > 7 || (data.is_empty() && padding > 0) {
        return None;
    }
    let bits = data
        .iter()
        .flat_map(|byte| (0..8).rev().map(move |i| (byte >> i) & 1));
    Some(
        bits.skip(padding)
            .map(|b| if b == 1 { '1' } else { '0' })
            .collect(),
    )
}

/// Magnitudes up to this many bytes (~9,900 digits) are printed in decimal; larger ones in
/// hexadecimal, which is exact and linear-time where decimal conversion is quadratic.
const BIGNUM_DECIMAL_MAX_BYTES: usize = 4096;

/// DuckDB's BIGNUM: a 3-byte big-endian header whose top bit is set for non-negative numbers
/// and whose other 23 bits count the data bytes, then the big-endian magnitude; a negative
/// number has every byte (header and data) inverted.
fn bignum_string(bytes: &[u8]) -> Option<String> {
    if bytes.len() < 3 {
        return None;
    }
    let negative = bytes[0] & 0x80 == 0;
    let byte = |b: u8| if negative { !b } else { b };
    let len = (usize::from(byte(bytes[0]) & 0x7f) << 16)
        | (usize::from(byte(bytes[1])) << 8)
        | usize::from(byte(bytes[2]));
    let data: Vec<u8> = bytes[3..].iter().map(|&b| byte(b)).collect();
    if data.len() != len {
        return None;
    }
    let sign = if negative { "-" } else { "" };
    if data.len() > BIGNUM_DECIMAL_MAX_BYTES {
        let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
        let hex = hex.trim_start_matches('0');
        return Some(format!(
            "{sign}0x{}",
            if hex.is_empty() { "0" } else { hex }
        ));
    }
    // Little-endian limbs in base 10^9.
    let mut limbs: Vec<u64> = vec![0];
    for &b in &data {
        let mut carry = u64::from(b);
        for limb in limbs.iter_mut() {
            let v = *limb * 256 + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push(carry % 1_000_000_000);
            carry /= 1_000_000_000;
        }
    }
    let mut out = String::from(sign);
    let mut iter = limbs.iter().rev();
    if let Some(top) = iter.next() {
        out.push_str(&top.to_string());
    }
    for limb in iter {
        out.push_str(&format!("{limb:09}"));
    }
    if out == "-0" {
        Some("0".into())
    } else {
        Some(out)
    }
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day) (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = (if mp < 10 { mp + 3 } else { mp - 9 }) as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// ISO 8601 year: at least four digits, astronomical numbering (year 0 is 1 BC).
///
/// The date and time renderers write into one buffer each: a 1,000-row result with a
/// timestamp column formats a thousand of them, and an allocation per part showed up there.
fn push_iso_year(out: &mut String, y: i64) {
    let _ = if y < 0 {
        write!(out, "-{:04}", -y)
    } else {
        write!(out, "{y:04}")
    };
}

/// `YYYY-MM-DD` of a day number.
fn push_date(out: &mut String, days: i64) {
    let (y, m, d) = civil_from_days(days);
    push_iso_year(out, y);
    let _ = write!(out, "-{m:02}-{d:02}");
}

fn date(days: i32) -> String {
    match days {
        DATE_INFINITY => "infinity".into(),
        DATE_NEG_INFINITY => "-infinity".into(),
        _ => {
            let mut out = String::with_capacity(10);
            push_date(&mut out, i64::from(days));
            out
        }
    }
}

/// Nanoseconds per unit.
fn nanos_per(unit: TimeUnit) -> i128 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

/// `HH:MM:SS` plus the fraction without trailing zeros.
fn push_clock(out: &mut String, nanos_of_day: i128) {
    let secs = nanos_of_day / 1_000_000_000;
    let frac = nanos_of_day % 1_000_000_000;
    let _ = write!(
        out,
        "{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    );
    if frac != 0 {
        let mut digits = [b'0'; 9];
        let mut rest = frac.unsigned_abs();
        for digit in digits.iter_mut().rev() {
            *digit = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        let kept = digits.iter().rposition(|&d| d != b'0').map_or(0, |i| i + 1);
        out.push('.');
        // ASCII digits, so each byte is a char.
        out.extend(digits[..kept].iter().map(|&d| char::from(d)));
    }
}

fn time_of_day(unit: TimeUnit, v: i64) -> String {
    let mut out = String::with_capacity(18);
    push_clock(&mut out, i128::from(v) * nanos_per(unit));
    out
}

fn timestamp(unit: TimeUnit, v: i64, with_zone: bool) -> String {
    match v {
        TIMESTAMP_INFINITY => return "infinity".into(),
        TIMESTAMP_NEG_INFINITY => return "-infinity".into(),
        _ => {}
    }
    let total = i128::from(v) * nanos_per(unit);
    let day_nanos: i128 = 86_400 * 1_000_000_000;
    let days = total.div_euclid(day_nanos);
    let of_day = total.rem_euclid(day_nanos);
    let mut out = String::with_capacity(32);
    // |days| < 2^63 / 86400, so it fits an i64.
    push_date(&mut out, days as i64);
    out.push('T');
    push_clock(&mut out, of_day);
    if with_zone {
        out.push('Z');
    }
    out
}

/// ISO 8601 duration with a sign per component, as PostgreSQL's `iso_8601` style prints it.
fn interval(months: i32, days: i32, nanos: i64) -> String {
    let mut out = String::from("P");
    let (years, months) = (months / 12, months % 12);
    if years != 0 {
        out.push_str(&format!("{years}Y"));
    }
    if months != 0 {
        out.push_str(&format!("{months}M"));
    }
    if days != 0 {
        out.push_str(&format!("{days}D"));
    }
    if nanos != 0 {
        out.push('T');
        let negative = nanos < 0;
        let abs = i128::from(nanos).abs();
        let sign = if negative { "-" } else { "" };
        let hours = abs / 3_600_000_000_000;
        let minutes = (abs / 60_000_000_000) % 60;
        let secs = (abs / 1_000_000_000) % 60;
        let frac = abs % 1_000_000_000;
        if hours != 0 {
            out.push_str(&format!("{sign}{hours}H"));
        }
        if minutes != 0 {
            out.push_str(&format!("{sign}{minutes}M"));
        }
        if secs != 0 || frac != 0 {
            if frac == 0 {
                out.push_str(&format!("{sign}{secs}S"));
            } else {
                let digits = format!("{frac:09}");
                out.push_str(&format!("{sign}{secs}.{}S", digits.trim_end_matches('0')));
            }
        }
    }
    if out == "P" { "PT0S".into() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_match_known_days() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(-1), "1969-12-31");
        assert_eq!(date(19_723), "2024-01-01");
        assert_eq!(date(11_016), "2000-02-29");
        assert_eq!(date(-719_528), "0000-01-01");
        assert_eq!(date(-719_529), "-0001-12-31");
    }

    #[test]
    fn intervals_render_as_iso_durations() {
        assert_eq!(interval(0, 0, 0), "PT0S");
        assert_eq!(interval(14, 3, 3_723_500_000_000), "P1Y2M3DT1H2M3.5S");
        assert_eq!(interval(-1, 0, -1_000_000_000), "P-1MT-1S");
    }

    #[test]
    fn json_numbers_that_a_double_cannot_hold_are_detected() {
        for exact in [
            "0",
            "-0",
            "1",
            "-17",
            "2.5",
            "2.50",
            "0.1",
            "1e-7",
            "1.5E+3",
            "123.456",
            "9007199254740991",
            "-9007199254740991",
            "1.7976931348623157e308",
        ] {
            assert!(number_survives_double(exact), "{exact}");
        }
        for lossy in [
            "9007199254740992",
            "12345678901234567890",
            "3.14159265358979323846",
            "0.10000000000000000001",
            "1e400",
            "-1e400",
        ] {
            assert!(!number_survives_double(lossy), "{lossy}");
        }
        // Digits inside strings, escaped quotes included, are text, not numbers.
        assert!(numbers_survive_doubles(
            r#"{"s": "12345678901234567890 \" 98765432109876543210", "n": [1, 2.5]}"#
        ));
        assert!(!numbers_survive_doubles(
            r#"{"s": "x", "n": [1, 12345678901234567890]}"#
        ));
    }

    #[test]
    fn integers_beyond_two_to_the_53_become_strings() {
        assert_eq!(
            integer(MAX_SAFE_INTEGER),
            Json::from(MAX_SAFE_INTEGER as i64)
        );
        assert_eq!(
            integer(MAX_SAFE_INTEGER + 1),
            Json::String("9007199254740992".into())
        );
        assert_eq!(
            integer(-MAX_SAFE_INTEGER - 1),
            Json::String("-9007199254740992".into())
        );
    }
}
