//! The in-process DuckDB oracle the answer-comparing suites share (tests/it/everyday_corpus.rs,
//! tests/it/conformance.rs): the same SQL run on a read-only in-process connection, its values
//! rendered to JSON following the shapes duckgate documents, and the comparison with what
//! duckgate answered over MCP.
//!
//! The rendering is written here, not taken from duckgate's conversion code, so a rendering bug
//! in duckgate shows up as a difference rather than being shared by both sides. Where the
//! `duckdb` crate cannot decode a value (VARIANT, TIME WITH TIME ZONE, TIME_NS, TIMESTAMPTZ_NS,
//! untyped NULL inside nested types) or decodes it lossily (an INTERVAL past about 292 years
//! overflows its nanoseconds), the value is taken from DuckDB itself: the query is wrapped so
//! that DuckDB casts those parts to its own text (INTERVAL, TIMETZ, …) or JSON (VARIANT), and
//! the oracle renders that text by the column's original type. Nothing is hard-coded.

use std::fmt::Write as _;
use std::path::Path;

use base64::Engine as _;
use duckdb::core::{LogicalTypeHandle, LogicalTypeId};
use duckdb::types::{TimeUnit, Value};
use duckdb::{AccessMode, Config, Connection};
use duckgate::mcp_client::{McpClient, envelope_of};
use serde_json::{Value as Json, json};

/// Relative tolerance for floating-point values: parallel aggregation may change the last bits.
pub const FLOAT_TOLERANCE: f64 = 1e-9;

/// How JSON-typed values are expected back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonEncoding {
    /// The document's text as a JSON string, so a JSON `null` is the string `"null"`, distinct
    /// from SQL NULL (the lossless encoding).
    Text,
}

/// A result: column names, DuckDB's type names when known, and rows as JSON values.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// Column names, in order.
    pub columns: Vec<String>,
    /// DuckDB's name of each column's type (`DESCRIBE`'s `column_type`); `None` where DuckDB
    /// cannot describe the statement (`CALL`).
    pub types: Option<Vec<String>>,
    /// Rows, each value rendered as duckgate documents it.
    pub rows: Vec<Vec<Json>>,
}

// ------------------------------------------------------------------------------------------
// The oracle: in-process DuckDB and an independent rendering of its values.
// ------------------------------------------------------------------------------------------

/// What the oracle needs of a column's DuckDB type to render its values.
#[derive(Debug, Clone)]
pub struct OracleType {
    /// `None`: a type id the `duckdb` crate does not know (TIMESTAMPTZ_NS in this version).
    id: Option<LogicalTypeId>,
    json: bool,
    /// TIMESTAMPTZ or TIMESTAMPTZ_NS: shown as local time with its offset.
    zoned: bool,
    decimal: (u8, u8),
    /// Field or member names (STRUCT, UNION); all empty for an unnamed STRUCT (a tuple).
    names: Vec<String>,
    children: Vec<OracleType>,
}

impl OracleType {
    /// What the oracle needs of the DuckDB type `handle`, its children's included.
    pub fn of(handle: &LogicalTypeHandle) -> OracleType {
        let raw_id = handle.try_id();
        let id = raw_id.ok();
        let zoned = id == Some(LogicalTypeId::TimestampTZ)
            || raw_id == Err(duckdb::ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_TZ_NS);
        let children = match id {
            Some(
                LogicalTypeId::List
                | LogicalTypeId::Array
                | LogicalTypeId::Struct
                | LogicalTypeId::Map
                | LogicalTypeId::Union,
            ) => (0..handle.num_children())
                .map(|i| OracleType::of(&handle.child(i)))
                .collect(),
            _ => Vec::new(),
        };
        let names = match id {
            Some(LogicalTypeId::Struct | LogicalTypeId::Union) => (0..handle.num_children())
                .map(|i| handle.child_name(i))
                .collect(),
            _ => Vec::new(),
        };
        OracleType {
            zoned,
            json: id == Some(LogicalTypeId::Varchar)
                && handle
                    .get_alias()
                    .is_some_and(|a| a.eq_ignore_ascii_case("json")),
            decimal: if id == Some(LogicalTypeId::Decimal) {
                (handle.decimal_width(), handle.decimal_scale())
            } else {
                (0, 0)
            },
            id,
            names,
            children,
        }
    }

    fn child(&self, i: usize) -> Option<&OracleType> {
        self.children.get(i)
    }

    /// A STRUCT whose fields have no names: a tuple.
    fn is_tuple(&self) -> bool {
        self.id == Some(LogicalTypeId::Struct) && self.names.iter().all(String::is_empty)
    }

    /// A leaf whose value DuckDB renders for the oracle: its own text, or JSON for VARIANT.
    fn rendered_by_duckdb(&self) -> bool {
        (self.zoned && self.id.is_none())
            || matches!(
                self.id,
                None | Some(
                    LogicalTypeId::Interval
                        | LogicalTypeId::TimeTZ
                        | LogicalTypeId::TimeNs
                        | LogicalTypeId::Bit
                        | LogicalTypeId::Bignum
                        | LogicalTypeId::Variant
                        | LogicalTypeId::SqlNull
                )
            )
    }

    /// Whether any part of this type needs DuckDB's rendering.
    fn needs_duckdb(&self) -> bool {
        self.rendered_by_duckdb() || self.children.iter().any(OracleType::needs_duckdb)
    }

    /// The type to cast a value of this type to, so that the crate decodes it: the parts DuckDB
    /// renders become VARCHAR (its text), JSON (VARIANT) or INTEGER (an untyped NULL, whose
    /// values are all NULL); the rest keeps its type (ENUM as its text, ARRAY as a LIST: both
    /// render the same).
    fn decodable_sql(&self) -> String {
        let quote = |name: &str| format!("\"{}\"", name.replace('"', "\"\""));
        let fields = |names: &[String], children: &[OracleType]| {
            names
                .iter()
                .zip(children)
                .enumerate()
                .map(|(i, (name, child))| {
                    // A tuple's fields get positional names: DuckDB casts structs by position
                    // when the target's names differ.
                    let name = if name.is_empty() {
                        format!("f{i}")
                    } else {
                        name.clone()
                    };
                    format!("{} {}", quote(&name), child.decodable_sql())
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(id) = self.id else {
            return "VARCHAR".into();
        };
        match id {
            // BIT and BIGNUM reach the crate as their storage bytes; DuckDB's text is the value.
            LogicalTypeId::Interval
            | LogicalTypeId::TimeTZ
            | LogicalTypeId::TimeNs
            | LogicalTypeId::Bit
            | LogicalTypeId::Bignum => "VARCHAR".into(),
            LogicalTypeId::Variant => "JSON".into(),
            LogicalTypeId::SqlNull => "INTEGER".into(),
            LogicalTypeId::List | LogicalTypeId::Array => {
                format!("{}[]", self.children[0].decodable_sql())
            }
            LogicalTypeId::Map => format!(
                "MAP({}, {})",
                self.children[0].decodable_sql(),
                self.children[1].decodable_sql()
            ),
            LogicalTypeId::Struct => format!("STRUCT({})", fields(&self.names, &self.children)),
            LogicalTypeId::Union => format!("UNION({})", fields(&self.names, &self.children)),
            LogicalTypeId::Decimal => format!("DECIMAL({}, {})", self.decimal.0, self.decimal.1),
            LogicalTypeId::Varchar if self.json => "JSON".into(),
            LogicalTypeId::Varchar | LogicalTypeId::Enum => "VARCHAR".into(),
            LogicalTypeId::Boolean => "BOOLEAN".into(),
            LogicalTypeId::Tinyint => "TINYINT".into(),
            LogicalTypeId::Smallint => "SMALLINT".into(),
            LogicalTypeId::Integer => "INTEGER".into(),
            LogicalTypeId::Bigint => "BIGINT".into(),
            LogicalTypeId::Hugeint => "HUGEINT".into(),
            LogicalTypeId::UTinyint => "UTINYINT".into(),
            LogicalTypeId::USmallint => "USMALLINT".into(),
            LogicalTypeId::UInteger => "UINTEGER".into(),
            LogicalTypeId::UBigint => "UBIGINT".into(),
            LogicalTypeId::UHugeint => "UHUGEINT".into(),
            LogicalTypeId::Float => "FLOAT".into(),
            LogicalTypeId::Double => "DOUBLE".into(),
            LogicalTypeId::Blob => "BLOB".into(),
            LogicalTypeId::Uuid => "UUID".into(),
            LogicalTypeId::Date => "DATE".into(),
            LogicalTypeId::Time => "TIME".into(),
            LogicalTypeId::Timestamp => "TIMESTAMP".into(),
            LogicalTypeId::TimestampS => "TIMESTAMP_S".into(),
            LogicalTypeId::TimestampMs => "TIMESTAMP_MS".into(),
            LogicalTypeId::TimestampNs => "TIMESTAMP_NS".into(),
            LogicalTypeId::TimestampTZ => "TIMESTAMPTZ".into(),
            LogicalTypeId::Geometry => "GEOMETRY".into(),
            // Types a query cannot return; DuckDB's text is the only faithful rendering left.
            _ => "VARCHAR".into(),
        }
    }
}

/// The read-only in-process connection, in the server's time zone and lambda syntax.
pub struct Oracle {
    conn: Connection,
    json: JsonEncoding,
    /// A connection in the oracle's zone, for rendering instants as local time: each oracle its
    /// own, so tests in other zones running beside it cannot change it.
    zoned: Connection,
}

impl Oracle {
    /// `db`, opened read-only, in `time_zone`.
    pub fn open(db: &Path, time_zone: &str, json: JsonEncoding) -> Oracle {
        let config = Config::default()
            .access_mode(AccessMode::ReadOnly)
            .expect("read-only config");
        let conn = Connection::open_with_flags(db, config).expect("open the database read-only");
        Oracle::with(conn, time_zone, json)
    }

    /// An in-memory database, in `time_zone` (to check the oracle's own rendering).
    pub fn in_memory(time_zone: &str, json: JsonEncoding) -> Oracle {
        Oracle::with(
            Connection::open_in_memory().expect("in-memory DuckDB"),
            time_zone,
            json,
        )
    }

    /// An in-memory database that reads files named relative to `root` (DuckDB's
    /// `file_search_path`): `exports/x.parquet` is `root/exports/x.parquet`, as duckgate reads
    /// a folder declared as `exports=root/exports`.
    pub fn in_folder_root(root: &Path, time_zone: &str, json: JsonEncoding) -> Oracle {
        let conn = Connection::open_in_memory().expect("in-memory DuckDB");
        conn.execute_batch(&format!(
            "SET file_search_path = '{}';",
            root.display().to_string().replace('\'', "''")
        ))
        .expect("file_search_path");
        Oracle::with(conn, time_zone, json)
    }

    /// `db`, opened read-only, reading files named relative to `root` as
    /// [`Oracle::in_folder_root`] does (for a database whose views read a declared folder's
    /// files).
    pub fn open_in_folder_root(
        db: &Path,
        root: &Path,
        time_zone: &str,
        json: JsonEncoding,
    ) -> Oracle {
        let oracle = Oracle::open(db, time_zone, json);
        oracle
            .conn
            .execute_batch(&format!(
                "SET file_search_path = '{}';",
                root.display().to_string().replace('\'', "''")
            ))
            .expect("file_search_path");
        oracle
    }

    fn with(conn: Connection, time_zone: &str, json: JsonEncoding) -> Oracle {
        conn.execute_batch(&format!(
            "SET TimeZone = '{time_zone}'; SET lambda_syntax = 'ENABLE_SINGLE_ARROW';"
        ))
        .expect("oracle settings");
        let zoned = Connection::open_in_memory().expect("in-memory DuckDB");
        zoned
            .execute_batch(&format!("SET TimeZone = '{time_zone}';"))
            .expect("the zone of local times");
        Oracle { conn, json, zoned }
    }

    /// Check the oracle against the contract: the one row of `sql` must render as `expected`,
    /// column by column. Returns the answer for further checks.
    pub fn assert_renders(&self, sql: &str, expected: &[Json]) -> Answer {
        let answer = self.answer(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        let row = &answer.rows[0];
        assert_eq!(row.len(), expected.len(), "{:?}", answer.columns);
        for (i, want) in expected.iter().enumerate() {
            assert_eq!(&row[i], want, "column {}", answer.columns[i]);
        }
        answer
    }

    /// DuckDB's answer to `sql`.
    pub fn answer(&self, sql: &str) -> Result<Answer, String> {
        let sql = sql.trim().trim_end_matches(';').trim_end();
        let types = self.type_names(sql);
        let column_types: Vec<OracleType> = {
            let stmt = self.conn.prepare(sql).map_err(|e| e.to_string())?;
            (0..stmt.column_count())
                .map(|i| OracleType::of(&stmt.column_logical_type(i)))
                .collect()
        };
        if !column_types.iter().any(OracleType::needs_duckdb) {
            let (columns, rows) = self.rows(sql, &column_types)?;
            return Ok(Answer {
                columns,
                types,
                rows,
            });
        }
        // DuckDB renders the parts the crate cannot decode: cast them in a wrapping query.
        // Its column names come from DESCRIBE, as the wrapper renames them by position.
        let columns = self.column_names(sql)?;
        let aliases: Vec<String> = (0..column_types.len()).map(|i| format!("c{i}")).collect();
        let selected: Vec<String> = column_types
            .iter()
            .zip(&aliases)
            .map(|(ty, alias)| {
                if ty.needs_duckdb() {
                    format!("CAST({alias} AS {})", ty.decodable_sql())
                } else {
                    alias.clone()
                }
            })
            .collect();
        let wrapped = format!(
            "SELECT {} FROM ({sql}) AS oracle_rendered({})",
            selected.join(", "),
            aliases.join(", ")
        );
        let (_, rows) = self.rows(&wrapped, &column_types)?;
        Ok(Answer {
            columns,
            types,
            rows,
        })
    }

    /// Run `sql` and render its rows by `types` (the original columns' types).
    fn rows(
        &self,
        sql: &str,
        types: &[OracleType],
    ) -> Result<(Vec<String>, Vec<Vec<Json>>), String> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| e.to_string())?;
        let mut rows = stmt.query([]).map_err(|e| e.to_string())?;
        let (columns, executed): (Vec<String>, Vec<OracleType>) = {
            let stmt = rows.as_ref().expect("rows of a statement");
            (0..stmt.column_count())
                .map(|i| {
                    (
                        stmt.column_name(i).cloned().unwrap_or_default(),
                        OracleType::of(&stmt.column_logical_type(i)),
                    )
                })
                .unzip()
        };
        // A statement DuckDB's parser made several (a PIVOT without IN: CREATE TYPE, then the
        // pivot) is described, once prepared, by its first part: the result's own columns are
        // the answer's.
        let types = if executed.len() == types.len() {
            types
        } else {
            &executed
        };
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| e.to_string())? {
            let mut values = Vec::with_capacity(types.len());
            for (i, ty) in types.iter().enumerate() {
                let value = row.get_ref(i).map_err(|e| e.to_string())?.to_owned();
                values.push(render(&value, Some(ty), self.json, &self.zoned));
            }
            out.push(values);
        }
        Ok((columns, out))
    }

    /// `DESCRIBE`'s rows for `sql`: (column name, DuckDB's type name).
    fn describe(&self, sql: &str) -> Result<Vec<(String, String)>, String> {
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT column_name, column_type FROM (DESCRIBE {sql})"
            ))
            .map_err(|e| e.to_string())?;
        let rows = stmt
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .map_err(|e| e.to_string())?;
        rows.collect::<duckdb::Result<Vec<_>>>()
            .map_err(|e| e.to_string())
    }

    fn type_names(&self, sql: &str) -> Option<Vec<String>> {
        self.describe(sql)
            .ok()
            .map(|rows| rows.into_iter().map(|(_, ty)| ty).collect())
    }

    fn column_names(&self, sql: &str) -> Result<Vec<String>, String> {
        Ok(self
            .describe(sql)?
            .into_iter()
            .map(|(name, _)| name)
            .collect())
    }
}

/// A DuckDB value as duckgate documents its JSON: integers as numbers while a double holds them
/// exactly (else text), DECIMAL as exact text, dates and times in ISO 8601 (TIMESTAMPTZ and TIMESTAMPTZ_NS
/// as local time with its offset, from DuckDB's own text), INTERVAL as an ISO 8601 duration with a sign per component, JSON by `json`, LIST
/// as arrays, STRUCT as objects (a tuple as an array, by position), MAP as `[{"key", "value"}]`,
/// BLOB and GEOMETRY (WKB) as base64; BIT, BIGNUM, TIME WITH TIME ZONE, TIME_NS and TIMESTAMPTZ_NS as
/// DuckDB's own text, VARIANT as its JSON value.
pub fn render(
    value: &Value,
    ty: Option<&OracleType>,
    json: JsonEncoding,
    zoned: &Connection,
) -> Json {
    let id = ty.and_then(|t| t.id);
    let unknown_type = ty.is_some_and(|t| t.id.is_none());
    match value {
        Value::Null => Json::Null,
        // The text DuckDB rendered for the oracle (see `OracleType::decodable_sql`).
        Value::Text(s) if id == Some(LogicalTypeId::Interval) => match interval_from_text(s) {
            Some((months, days, micros)) => {
                Json::String(duration_text(months, days, micros * 1000))
            }
            None => Json::String(format!("<the oracle cannot read DuckDB's interval {s:?}>")),
        },
        Value::Text(s) if id == Some(LogicalTypeId::Variant) => parse_json(s),
        Value::Text(s) if ty.is_some_and(|t| t.zoned) => Json::String(iso_zoned(s)),
        Value::Timestamp(unit, v) if ty.is_some_and(|t| t.zoned) => {
            Json::String(local_text(unit.to_micros(*v), zoned))
        }
        Value::Text(s)
            if unknown_type
                || matches!(id, Some(LogicalTypeId::TimeTZ | LogicalTypeId::TimeNs)) =>
        {
            Json::String(s.clone())
        }
        Value::Boolean(b) => Json::Bool(*b),
        Value::TinyInt(v) => json!(v),
        Value::SmallInt(v) => json!(v),
        Value::Int(v) => json!(v),
        Value::UTinyInt(v) => json!(v),
        Value::USmallInt(v) => json!(v),
        Value::UInt(v) => json!(v),
        Value::BigInt(v) => whole_number(i128::from(*v)),
        Value::UBigInt(v) => whole_number(i128::from(*v)),
        Value::HugeInt(v) if id == Some(LogicalTypeId::Decimal) => {
            Json::String(decimal_text(*v, ty.map_or(0, |t| t.decimal.1)))
        }
        Value::HugeInt(v) => whole_number(*v),
        Value::UHugeInt(v) => match i128::try_from(*v) {
            Ok(v) => whole_number(v),
            Err(_) => Json::String(v.to_string()),
        },
        // The shortest decimal that reads back as the same f32, as a person would write it.
        Value::Float(f) => floating(f.to_string().parse().unwrap_or(f64::from(*f))),
        Value::Double(d) => floating(*d),
        Value::Decimal(d) => Json::String(decimal_text(d.value(), d.scale())),
        Value::Text(s) if ty.is_some_and(|t| t.json) => match json {
            JsonEncoding::Text => Json::String(s.clone()),
        },
        Value::Text(s) | Value::Enum(s) => Json::String(s.clone()),
        Value::Blob(bytes) | Value::Geometry(bytes) => {
            Json::String(base64::engine::general_purpose::STANDARD.encode(bytes))
        }
        Value::Date32(days) => Json::String(date_text(i64::from(*days))),
        Value::Time64(unit, v) => Json::String(clock_text(i128::from(*v) * nanos_per(*unit))),
        Value::Timestamp(unit, v) => {
            let nanos = i128::from(*v) * nanos_per(*unit);
            let day = 86_400_000_000_000_i128;
            let mut text = date_text(nanos.div_euclid(day) as i64);
            text.push('T');
            text.push_str(&clock_text(nanos.rem_euclid(day)));
            if id == Some(LogicalTypeId::TimestampTZ) {
                text.push('Z');
            }
            Json::String(text)
        }
        Value::Interval {
            months,
            days,
            nanos,
        } => Json::String(duration_text(*months, *days, i128::from(*nanos))),
        Value::List(items) | Value::Array(items) => {
            let child = ty.and_then(|t| t.child(0));
            Json::Array(
                items
                    .iter()
                    .map(|v| render(v, child, json, zoned))
                    .collect(),
            )
        }
        Value::Struct(fields) if ty.is_some_and(OracleType::is_tuple) => Json::Array(
            fields
                .iter()
                .enumerate()
                .map(|(i, (_, v))| render(v, ty.and_then(|t| t.child(i)), json, zoned))
                .collect(),
        ),
        Value::Struct(fields) => Json::Object(
            fields
                .iter()
                .enumerate()
                .map(|(i, (name, v))| {
                    (
                        name.clone(),
                        render(v, ty.and_then(|t| t.child(i)), json, zoned),
                    )
                })
                .collect(),
        ),
        Value::Map(entries) => Json::Array(
            entries
                .iter()
                .map(|(k, v)| {
                    json!({
                        "key": render(k, ty.and_then(|t| t.child(0)), json, zoned),
                        "value": render(v, ty.and_then(|t| t.child(1)), json, zoned),
                    })
                })
                .collect(),
        ),
        // The crate drops the member's tag: rendered by its storage alone.
        Value::Union(member) => render(member, None, json, zoned),
        // A value the oracle cannot render can never match.
        other => Json::String(format!("<the oracle does not render {other:?}>")),
    }
}

/// A JSON document as its value; text that does not parse stays text.
/// An instant as local time with its offset, from DuckDB's own `strftime` in the oracle's zone
/// (`%z` keeps an offset's seconds, e.g. New York's -04:56:02 before 1883, which DuckDB's text
/// cast drops): independent of duckgate's offset lookup.
fn local_text(micros: i64, conn: &Connection) -> String {
    match micros {
        i64::MAX => return "infinity".into(),
        m if m == -i64::MAX => return "-infinity".into(),
        _ => {}
    }
    let (clock, offset): (String, String) = conn
        .query_row(
            "SELECT strftime(t, '%Y-%m-%dT%H:%M:%S.%f'), strftime(t, '%z')
             FROM (SELECT make_timestamp(?::BIGINT) AT TIME ZONE 'UTC' AS t)",
            [micros],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .expect("DuckDB renders the instant");
    let clock = clock.trim_end_matches('0').trim_end_matches('.');
    let digits: String = offset.chars().filter(char::is_ascii_digit).collect();
    let sign = if offset.starts_with('-') { '-' } else { '+' };
    // `%z` is `-05`, `+0530` or `-04:56:02`; ISO 8601 wants `-05:00`, `+05:30`, `-04:56:02`.
    let part = |range: std::ops::Range<usize>| digits.get(range).unwrap_or("00").to_string();
    let mut iso = format!("{clock}{sign}{}:{}", part(0..2), part(2..4));
    if part(4..6) != "00" {
        iso.push(':');
        iso.push_str(&part(4..6));
    }
    iso
}

/// DuckDB's text for a zoned instant in the session's zone (`2024-01-31 08:45:00.5-05`),
/// reshaped to ISO 8601 (`2024-01-31T08:45:00.5-05:00`): the local time with its offset.
fn iso_zoned(text: &str) -> String {
    if text.contains("infinity") {
        return text.to_string();
    }
    let iso = text.replacen(' ', "T", 1);
    let clock = iso.find('T').map_or(0, |t| t + 1);
    match iso[clock..].rfind(['+', '-']) {
        Some(at) if iso.len() - (clock + at) == 3 => format!("{iso}:00"),
        _ => iso,
    }
}

fn parse_json(text: &str) -> Json {
    serde_json::from_str(text).unwrap_or_else(|_| Json::String(text.to_string()))
}

/// DuckDB's text of an INTERVAL (`1 year 2 months 3 days 04:05:06.5`, `-1 month`,
/// `2562047788:00:00`, `00:00:00`) as (months, days, microseconds).
fn interval_from_text(text: &str) -> Option<(i32, i32, i128)> {
    let (mut months, mut days, mut micros) = (0i64, 0i64, 0i128);
    let mut words = text.split_whitespace();
    while let Some(word) = words.next() {
        if word.contains(':') {
            let (negative, clock) = match word.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, word),
            };
            let mut parts = clock.split(':');
            let hours: i128 = parts.next()?.parse().ok()?;
            let minutes: i128 = parts.next()?.parse().ok()?;
            let second_part = parts.next()?;
            if parts.next().is_some() {
                return None;
            }
            let (seconds, fraction) = second_part.split_once('.').unwrap_or((second_part, ""));
            let seconds: i128 = seconds.parse().ok()?;
            let fraction: i128 = if fraction.is_empty() {
                0
            } else {
                format!("{fraction:0<6}").get(..6)?.parse().ok()?
            };
            let total = ((hours * 60 + minutes) * 60 + seconds) * 1_000_000 + fraction;
            micros += if negative { -total } else { total };
            continue;
        }
        let amount: i64 = word.parse().ok()?;
        let unit = words.next()?;
        if unit.starts_with("year") {
            months += amount * 12;
        } else if unit.starts_with("mon") {
            months += amount;
        } else if unit.starts_with("day") {
            days += amount;
        } else {
            return None;
        }
    }
    Some((
        i32::try_from(months).ok()?,
        i32::try_from(days).ok()?,
        micros,
    ))
}

fn whole_number(v: i128) -> Json {
    const EXACT_IN_A_DOUBLE: i128 = (1 << 53) - 1;
    if (-EXACT_IN_A_DOUBLE..=EXACT_IN_A_DOUBLE).contains(&v) {
        json!(v as i64)
    } else {
        Json::String(v.to_string())
    }
}

fn floating(f: f64) -> Json {
    if f.is_nan() {
        json!("NaN")
    } else if f.is_infinite() {
        json!(if f > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(f)
    }
}

fn decimal_text(unscaled: i128, scale: u8) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let scale = usize::from(scale);
    let sign = if unscaled < 0 { "-" } else { "" };
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (whole, fraction) = padded.split_at(padded.len() - scale);
    format!("{sign}{whole}.{fraction}")
}

fn nanos_per(unit: TimeUnit) -> i128 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// `YYYY-MM-DD` of a day number since 1970-01-01, counted year by year and month by month.
fn date_text(days_since_epoch: i64) -> String {
    let mut year = 1970;
    let mut day = days_since_epoch;
    let year_length = |y: i64| if is_leap(y) { 366 } else { 365 };
    while day < 0 {
        year -= 1;
        day += year_length(year);
    }
    while day >= year_length(year) {
        day -= year_length(year);
        year += 1;
    }
    let february = if is_leap(year) { 29 } else { 28 };
    let months = [31, february, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let mut month = 0;
    while day >= months[month] {
        day -= months[month];
        month += 1;
    }
    format!("{year:04}-{:02}-{:02}", month + 1, day + 1)
}

/// `HH:MM:SS` and the fraction of a second without trailing zeros.
fn clock_text(nanos_of_day: i128) -> String {
    let seconds = nanos_of_day / 1_000_000_000;
    let mut text = format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60
    );
    let fraction = nanos_of_day % 1_000_000_000;
    if fraction != 0 {
        let digits = format!("{fraction:09}");
        let _ = write!(text, ".{}", digits.trim_end_matches('0'));
    }
    text
}

/// ISO 8601 duration, each component with its own sign: `P1Y2M3DT4H5M6.5S`, `P-1M`, `PT0S`.
/// The time part is not bounded: 2562047788 hours is `PT2562047788H`.
fn duration_text(months: i32, days: i32, nanos: i128) -> String {
    let mut text = String::from("P");
    for (amount, unit) in [(months / 12, 'Y'), (months % 12, 'M'), (days, 'D')] {
        if amount != 0 {
            let _ = write!(text, "{amount}{unit}");
        }
    }
    if nanos != 0 {
        text.push('T');
        let sign = if nanos < 0 { "-" } else { "" };
        let total = nanos.abs();
        let hours = total / 3_600_000_000_000;
        let minutes = total / 60_000_000_000 % 60;
        let seconds = total / 1_000_000_000 % 60;
        let fraction = total % 1_000_000_000;
        if hours != 0 {
            let _ = write!(text, "{sign}{hours}H");
        }
        if minutes != 0 {
            let _ = write!(text, "{sign}{minutes}M");
        }
        if seconds != 0 || fraction != 0 {
            let _ = write!(text, "{sign}{seconds}");
            if fraction != 0 {
                let digits = format!("{fraction:09}");
                let _ = write!(text, ".{}", digits.trim_end_matches('0'));
            }
            text.push('S');
        }
    }
    if text == "P" {
        "PT0S".to_string()
    } else {
        text
    }
}

// ------------------------------------------------------------------------------------------
// The server side and the comparison.
// ------------------------------------------------------------------------------------------

/// What the server said about one query.
#[derive(Debug)]
pub enum Reply {
    /// A success envelope: its columns, types and rows.
    Answered(Answer),
    /// Anything else: the envelope's status and the whole envelope.
    Failed {
        /// The envelope's `status`.
        status: String,
        /// The whole envelope, for the failure message.
        envelope: Json,
    },
}

/// duckgate's answer to `sql` through its `query` tool.
pub async fn mcp_answer(client: &McpClient, sql: &str) -> Reply {
    let result = match client
        .call("query", json!({ "sql": sql, "limit": 10000 }))
        .await
    {
        Ok(result) => result,
        Err(e) => {
            return Reply::Failed {
                status: "transport error".into(),
                envelope: json!(e),
            };
        }
    };
    let envelope = envelope_of(&result).clone();
    let status = envelope["status"]
        .as_str()
        .unwrap_or("<no status>")
        .to_string();
    let truncated = envelope["data"]["truncated"].as_bool() == Some(true);
    if !matches!(status.as_str(), "success" | "empty") || truncated {
        return Reply::Failed { status, envelope };
    }
    let column_field = |field: &str| -> Vec<String> {
        envelope["data"]["columns"]
            .as_array()
            .map(|c| {
                c.iter()
                    .map(|c| c[field].as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let rows: Vec<Vec<Json>> = envelope["data"]["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| r.as_array().cloned().unwrap_or_default())
                .collect()
        })
        .unwrap_or_default();
    Reply::Answered(Answer {
        columns: column_field("name"),
        types: Some(column_field("type")),
        rows,
    })
}

/// Equal JSON values, floating-point numbers within [`FLOAT_TOLERANCE`] (relative). An integer
/// never equals a float: a column rendered with the wrong kind of number is a difference.
pub fn same_value(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) if x.is_f64() || y.is_f64() => {
            match (x.is_f64() && y.is_f64(), x.as_f64(), y.as_f64()) {
                (true, Some(x), Some(y)) => {
                    x == y || (x - y).abs() <= FLOAT_TOLERANCE * x.abs().max(y.abs())
                }
                _ => false,
            }
        }
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(x, y))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// A sort key for comparing rows as multisets: floats rounded to 9 significant digits, so rows
/// that differ only in the last bits sort alike; object keys sorted.
fn sort_key(value: &Json, out: &mut String) {
    match value {
        Json::Number(n) if n.is_f64() => {
            let _ = write!(out, "{:.8e}", n.as_f64().unwrap_or_default());
        }
        Json::Array(items) => {
            out.push('[');
            for item in items {
                sort_key(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Json::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for key in keys {
                let _ = write!(out, "{key:?}:");
                sort_key(&map[key], out);
                out.push(',');
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn sorted(rows: &[Vec<Json>]) -> Vec<Vec<Json>> {
    let mut keyed: Vec<(String, Vec<Json>)> = rows
        .iter()
        .map(|row| {
            let mut key = String::new();
            sort_key(&Json::Array(row.clone()), &mut key);
            (key, row.clone())
        })
        .collect();
    keyed.sort_by(|(a, _), (b, _)| a.cmp(b));
    keyed.into_iter().map(|(_, row)| row).collect()
}

/// The first difference between the oracle's answer and the server's, if any: column names,
/// then (with `compare_types`, where DuckDB could describe the statement) type names, then rows
/// (in order when `ordered`, else as multisets).
pub fn first_difference(
    oracle: &Answer,
    server: &Answer,
    ordered: bool,
    compare_types: bool,
) -> Option<String> {
    if oracle.columns != server.columns {
        return Some(format!(
            "column names: DuckDB {:?}, duckgate {:?}",
            oracle.columns, server.columns
        ));
    }
    if compare_types
        && let (Some(expected), Some(got)) = (&oracle.types, &server.types)
        && expected != got
    {
        return Some(format!(
            "column types: DuckDB {expected:?}, duckgate {got:?}"
        ));
    }
    if oracle.rows.len() != server.rows.len() {
        return Some(format!(
            "{} rows from DuckDB, {} from duckgate",
            oracle.rows.len(),
            server.rows.len()
        ));
    }
    let (left, right) = if ordered {
        (oracle.rows.clone(), server.rows.clone())
    } else {
        (sorted(&oracle.rows), sorted(&server.rows))
    };
    for (i, (l, r)) in left.iter().zip(&right).enumerate() {
        if l.len() != r.len() || !l.iter().zip(r).all(|(x, y)| same_value(x, y)) {
            let which = if ordered { "row" } else { "sorted row" };
            return Some(format!(
                "{which} {i}: DuckDB {}, duckgate {}",
                Json::Array(l.clone()),
                Json::Array(r.clone())
            ));
        }
    }
    None
}
