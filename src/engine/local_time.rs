//! TIMESTAMPTZ values in the operator's zone (`--time-zone`): the UTC offset of each instant,
//! looked up in DuckDB's own ICU time-zone data, so a time the agent reads (`22:10-05:00`)
//! is the one `hour()` and `::DATE` in the same reply work with.
//!
//! The worker cannot read the system's zone files (landlock), and asking DuckDB once per value
//! would cost a query per row. Offsets are constant between a zone's transitions, so a lookup
//! asks DuckDB, on a second connection (the first is still streaming the result), for the
//! offsets at every whole hour of a window around the instant, and places each transition
//! found between two hours to the second with two more small queries. Every later instant in
//! the window is answered from those spans. This holds for any zone whose transitions are more
//! than an hour apart, which is every zone of the IANA database.

use duckdb::Connection;

use super::convert::ZoneOffsets;
use super::own_sql::{Cache, OwnSql};
use super::statement::{Sql, prepare_sql};

const SECOND: i64 = 1_000_000;
const MINUTE: i64 = 60 * SECOND;
const HOUR: i64 = 60 * MINUTE;
/// The first window: a week and a day of hourly offsets (about 200 rows), enough for a typical
/// result (1,000 CGM readings are three and a half days).
const FIRST_WINDOW: i64 = 8 * 24 * HOUR;
/// Windows double on each miss up to a year, so a result spanning years asks a few times.
const LARGEST_WINDOW: i64 = 366 * 24 * HOUR;

/// Whether `zone` is UTC under another name: its instants keep the plain `Z`.
pub(crate) fn is_utc(zone: &str) -> bool {
    const NAMES: [&str; 10] = [
        "utc",
        "uct",
        "zulu",
        "universal",
        "gmt",
        "gmt0",
        "gmt+0",
        "gmt-0",
        "greenwich",
        "z",
    ];
    let name = zone.trim().to_ascii_lowercase();
    let name = name.strip_prefix("etc/").unwrap_or(&name);
    NAMES.contains(&name)
}

/// A run of instants `[start, end)` with one offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: i64,
    end: i64,
    offset: i32,
}

/// The offsets of one zone, learnt from DuckDB as instants come.
pub(crate) struct LocalTime<'a> {
    zone: String,
    /// The connection a lookup connection is cloned from.
    base: &'a Connection,
    lookup: Option<Connection>,
    /// Known spans, sorted and disjoint.
    spans: Vec<Span>,
    window: i64,
    /// A lookup failed (an instant DuckDB cannot place): the rest render in UTC.
    failed: bool,
}

impl<'a> LocalTime<'a> {
    /// Offsets of `zone`, asked of the DuckDB instance behind `base`.
    pub(crate) fn new(zone: &str, base: &'a Connection) -> LocalTime<'a> {
        LocalTime {
            zone: zone.to_owned(),
            base,
            lookup: None,
            spans: Vec::new(),
            window: FIRST_WINDOW,
            failed: is_utc(zone),
        }
    }

    fn known(&self, micros: i64) -> Option<i32> {
        let at = self.spans.partition_point(|span| span.end <= micros);
        self.spans
            .get(at)
            .filter(|span| span.start <= micros)
            .map(|span| span.offset)
    }

    /// Offsets in seconds at `start`, `start + step`, … up to `stop` inclusive.
    fn offsets(&mut self, start: i64, stop: i64, step: i64) -> Result<Vec<(i64, i32)>, String> {
        if self.lookup.is_none() {
            self.lookup = Some(self.base.try_clone().map_err(|e| e.to_string())?);
        }
        let Some(lookup) = &self.lookup else {
            return Err("no lookup connection".into());
        };
        let offsets = OwnSql::fixed(
            "SELECT g, (epoch_us(timezone(?::VARCHAR, timezone('UTC', make_timestamp(g)))) - g) \
             // 1000000 FROM range(?::BIGINT, ?::BIGINT, ?::BIGINT) t(g) ORDER BY g",
        );
        let mut stmt =
            prepare_sql(lookup, Sql::Own(&offsets), Cache::Keep).map_err(|e| e.to_string())?;
        let stop = stop.checked_add(1).ok_or("instant out of range")?;
        let rows = stmt
            .query_map(duckdb::params![self.zone, start, stop, step], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?))
            })
            .map_err(|e| e.to_string())?;
        rows.map(|row| {
            let (at, offset) = row.map_err(|e| e.to_string())?;
            Ok((at, i32::try_from(offset).map_err(|e| e.to_string())?))
        })
        .collect()
    }

    /// The first instant in `(before, after]` with `after`'s offset: the transition, to the
    /// second.
    fn transition(&mut self, before: i64, after: (i64, i32)) -> Result<i64, String> {
        let minutes = self.offsets(before, after.0, MINUTE)?;
        let first_minute = minutes
            .iter()
            .find(|(_, offset)| *offset == after.1)
            .map_or(after.0, |(at, _)| *at);
        let seconds = self.offsets(first_minute - MINUTE, first_minute, SECOND)?;
        Ok(seconds
            .iter()
            .find(|(at, offset)| *at > before && *offset == after.1)
            .map_or(first_minute, |(at, _)| *at))
    }

    /// Learn the spans of a window starting at the hour of `micros`.
    fn learn(&mut self, micros: i64) -> Result<(), String> {
        let start = micros.div_euclid(HOUR) * HOUR;
        let stop = start
            .checked_add(self.window)
            .ok_or("instant out of range")?;
        self.window = (self.window * 2).min(LARGEST_WINDOW);
        let hours = self.offsets(start, stop, HOUR)?;
        let mut learnt = Vec::new();
        let mut current: Option<Span> = None;
        for (at, offset) in hours {
            match current {
                Some(mut span) if span.offset == offset => {
                    span.end = at;
                    current = Some(span);
                }
                Some(mut span) => {
                    let change = self.transition(span.end, (at, offset))?;
                    span.end = change;
                    learnt.push(span);
                    current = Some(Span {
                        start: change,
                        end: at,
                        offset,
                    });
                }
                None => {
                    current = Some(Span {
                        start: at,
                        end: at,
                        offset,
                    });
                }
            }
        }
        // The last span ends just after its last hour: nothing past it is known.
        if let Some(mut span) = current {
            span.end += 1;
            learnt.push(span);
        }
        learnt.retain(|span| span.end > span.start);
        // Keep the known spans disjoint: the new window wins where they overlap.
        self.spans.retain(|old| {
            !learnt
                .iter()
                .any(|new| old.start < new.end && new.start < old.end)
        });
        self.spans.extend(learnt);
        self.spans.sort_by_key(|span| span.start);
        Ok(())
    }
}

impl ZoneOffsets for LocalTime<'_> {
    fn offset_seconds(&mut self, utc_micros: i64) -> Option<i32> {
        if self.failed {
            return None;
        }
        if let Some(offset) = self.known(utc_micros) {
            return Some(offset);
        }
        match self.learn(utc_micros) {
            Ok(()) => self.known(utc_micros).or_else(|| {
                self.failed = true;
                None
            }),
            Err(error) => {
                tracing::debug!("time-zone offsets unavailable, showing UTC: {error}");
                self.failed = true;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine_connection(zone: &str) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!("SET TimeZone = '{zone}';"))
            .unwrap();
        conn
    }

    /// DuckDB's own rendering of the instant's local time and offset, in seconds.
    fn duckdb_offset(conn: &Connection, zone: &str, micros: i64) -> i32 {
        conn.query_row(
            "SELECT (epoch_us(timezone(?::VARCHAR, timezone('UTC', make_timestamp(?::BIGINT)))) \
             - ?::BIGINT) // 1000000",
            duckdb::params![zone, micros, micros],
            |row| row.get::<_, i64>(0),
        )
        .map(|o| o as i32)
        .unwrap()
    }

    #[test]
    fn utc_under_any_name_keeps_z() {
        for name in ["UTC", "Etc/UTC", "etc/utc", "Zulu", "GMT", "Etc/GMT+0"] {
            assert!(is_utc(name), "{name}");
        }
        for name in ["Europe/London", "America/New_York", "Etc/GMT+5"] {
            assert!(!is_utc(name), "{name}");
        }
    }

    #[test]
    fn offsets_match_duckdb_every_quarter_hour_across_both_changes_of_a_year() {
        let conn = engine_connection("UTC");
        for zone in ["America/New_York", "Australia/Lord_Howe", "Europe/Berlin"] {
            let mut local = LocalTime::new(zone, &conn);
            // 2025-01-01 00:00 UTC, every 15 minutes for a year (both changes), out of order
            // halves so windows are learnt backwards too.
            let start = 1_735_689_600_000_000_i64;
            let steps: Vec<i64> = (0..(365 * 96)).collect();
            let (first, second) = steps.split_at(steps.len() / 2);
            for &step in second.iter().chain(first.iter()).step_by(7) {
                let at = start + step * 15 * MINUTE;
                assert_eq!(
                    local.offset_seconds(at),
                    Some(duckdb_offset(&conn, zone, at)),
                    "{zone} at {at}"
                );
            }
        }
    }

    #[test]
    fn a_transition_is_placed_to_the_second() {
        let conn = engine_connection("UTC");
        let mut local = LocalTime::new("America/New_York", &conn);
        // 2025-03-09 07:00:00 UTC is 02:00 EST, when New York springs forward.
        let change = 1_741_503_600_000_000_i64;
        assert_eq!(local.offset_seconds(change - 3 * HOUR), Some(-5 * 3600));
        assert_eq!(local.offset_seconds(change - 1), Some(-5 * 3600));
        assert_eq!(local.offset_seconds(change), Some(-4 * 3600));
        assert_eq!(local.offset_seconds(change + 1), Some(-4 * 3600));
    }

    #[test]
    fn an_unknown_zone_falls_back_to_utc() {
        let conn = engine_connection("UTC");
        let mut local = LocalTime::new("Mars/Olympus_Mons", &conn);
        assert_eq!(local.offset_seconds(0), None);
    }
}
