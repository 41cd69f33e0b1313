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
//!   as local time in the operator's zone with its offset (`2024-01-31T13:45:00.5-05:00`; in
//!   UTC with `Z` when that zone is UTC), `infinity`/`-infinity` as DuckDB spells them; INTERVAL as an ISO 8601
//!   duration with a sign per component (`P1Y2M3DT4H5M6.5S`, `P-1M`, `PT0S`);
//! - UUID and ENUM: their text; JSON: its text, as DuckDB's clients return it (so a JSON
//!   `null` is the text `null`, never SQL NULL, and no number loses digits);
//! - VARIANT: the JSON value DuckDB casts it to (as text if a number would lose digits);
//! - TIME WITH TIME ZONE, TIME_NS: DuckDB's text (`13:45:00+02`); TIMESTAMPTZ_NS: ISO 8601
//!   with the session zone's offset;
//! - LIST/ARRAY: arrays; STRUCT: objects in field order; unnamed STRUCT (`TUPLE`): arrays;
//!   UNION: the member's value, rendered by the member's type (untyped only if two members of
//!   one storage shape would differ);
//! - MAP: always an array of `{"key": …, "value": …}` objects, whatever the key type, so its
//!   shape does not depend on the data and non-text keys survive.
//!
//! The parts:
//! - `types`: [`ColumnType`], read from DuckDB's logical type, and DuckDB's names for types;
//! - `values`: [`to_json_in`], one value to JSON by its type: numbers, text, JSON, BLOB, BIT, BIGNUM;
//! - `datetime`: DATE, TIME, TIMESTAMP and INTERVAL as ISO 8601 text.
//!
//! [`Value`]: duckdb::types::Value

mod datetime;
mod types;
mod values;

pub(crate) use types::ColumnType;

pub(crate) use values::{ZoneOffsets, to_json_in};
