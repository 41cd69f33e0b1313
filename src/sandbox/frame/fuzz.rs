//! The frame fuzz targets' invariants (fuzz/fuzz_targets/worker_frame.rs and parent_frame.rs
//! are one line each).
//!
//! The input is what arrives on a pipe: for [`worker_frame`] the worker's standard input (a
//! `Request` frame the parent wrote, or anything a confused parent might write), for
//! [`parent_frame`] a worker's standard output (its ready report and its reply, or anything a
//! compromised worker writes). Checked on every input:
//!
//! - no panic, and the reader takes no more bytes than the frame announced: a length above the
//!   cap is refused after the 4 bytes of the prefix alone, before any of the body is read or
//!   allocated;
//! - the pipe may hand the bytes over in pieces of any size (the input's first byte chooses
//!   them): the outcome is the same as in one piece;
//! - both sides of the frame agree: the worker's blocking reader and the parent's tokio reader
//!   give the same outcome for the same bytes;
//! - a frame that decodes encodes to a frame that decodes to the same encoding (what one side
//!   writes, the other reads back as it was).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a fuzz harness reports a broken invariant by panicking"
)]

use std::io::{self, Read};
use std::pin::Pin;
use std::task::{Context, Poll};

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncRead, ReadBuf};

use super::{FrameError, MAX_REQUEST_BYTES, encode, read_frame, read_frame_async};
use crate::protocol::{Request, Response};

/// The cap the parent target reads replies with: well above every frame a short input can
/// hold, so the cap is met only by the announced lengths that go past it.
const REPLY_CAP: usize = 64 * 1024;

/// Check one input as the worker reads it: one `Request` frame (see the module documentation);
/// panics on a broken invariant.
pub fn worker_frame(data: &[u8]) {
    let (pieces, bytes) = split_choice(data);
    let whole = read_counted::<Request>(bytes, bytes.len().max(1), MAX_REQUEST_BYTES);
    let chunked = read_counted::<Request>(bytes, pieces, MAX_REQUEST_BYTES);
    assert_same("whole and in pieces", &whole, &chunked);
    let async_read = RUNTIME.with(|runtime| {
        runtime.block_on(read_async_counted::<Request>(
            bytes,
            pieces,
            MAX_REQUEST_BYTES,
        ))
    });
    assert_same("the worker's and the parent's reader", &whole, &async_read);
    check_outcome::<Request>(bytes, &whole, MAX_REQUEST_BYTES);
}

/// Check one input as the parent reads a worker's output: its ready report, then its reply, each
/// a `Response` frame (see the module documentation); panics on a broken invariant.
pub fn parent_frame(data: &[u8]) {
    let (pieces, mut bytes) = split_choice(data);
    for _ in 0..2 {
        let blocking = read_counted::<Response>(bytes, pieces, REPLY_CAP);
        let parent = RUNTIME.with(|runtime| {
            runtime.block_on(read_async_counted::<Response>(bytes, pieces, REPLY_CAP))
        });
        assert_same("the parent's and the worker's reader", &parent, &blocking);
        check_outcome::<Response>(bytes, &parent, REPLY_CAP);
        match parent.outcome {
            Ok(_) => bytes = &bytes[parent.consumed..],
            Err(_) => break,
        }
    }
}

thread_local! {
    /// One current-thread runtime per fuzzing thread: the parent reads frames on tokio.
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime builds");
}

/// The size of the pieces the pipe hands over (from the input's first byte, 1 to 256) and the
/// rest of the input.
fn split_choice(data: &[u8]) -> (usize, &[u8]) {
    match data.split_first() {
        Some((first, rest)) => (usize::from(*first) + 1, rest),
        None => (1, data),
    }
}

/// What reading one frame gave: the value re-encoded as a frame (or the error), and how many
/// bytes the reader took from the pipe.
struct Read1 {
    outcome: Result<Vec<u8>, FrameErrorKind>,
    consumed: usize,
}

/// A [`FrameError`] without its payload, to compare outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FrameErrorKind {
    Closed,
    TooLarge { announced: usize },
    Io,
    Malformed,
}

impl FrameErrorKind {
    fn of(error: &FrameError) -> FrameErrorKind {
        match error {
            FrameError::Closed => FrameErrorKind::Closed,
            FrameError::TooLarge { announced, .. } => FrameErrorKind::TooLarge {
                announced: *announced,
            },
            FrameError::Io(_) => FrameErrorKind::Io,
            FrameError::Malformed(_) => FrameErrorKind::Malformed,
        }
    }
}

fn settle<T: Serialize>(result: Result<T, FrameError>, consumed: usize) -> Read1 {
    Read1 {
        outcome: result
            .map(|value| encode(&value))
            .map_err(|error| FrameErrorKind::of(&error)),
        consumed,
    }
}

fn read_counted<T: DeserializeOwned + Serialize>(bytes: &[u8], pieces: usize, cap: usize) -> Read1 {
    let mut pipe = Pipe::new(bytes, pieces);
    let result = read_frame::<T, _>(&mut pipe, cap);
    settle(result, pipe.consumed)
}

async fn read_async_counted<T: DeserializeOwned + Serialize>(
    bytes: &[u8],
    pieces: usize,
    cap: usize,
) -> Read1 {
    let mut pipe = Pipe::new(bytes, pieces);
    let result = read_frame_async::<T, _>(&mut pipe, cap).await;
    settle(result, pipe.consumed)
}

fn assert_same(what: &str, a: &Read1, b: &Read1) {
    assert_eq!(a.outcome, b.outcome, "{what} disagree on the outcome");
    assert_eq!(a.consumed, b.consumed, "{what} took different byte counts");
}

/// The invariants of one outcome against the bytes it came from.
fn check_outcome<T: DeserializeOwned + Serialize>(bytes: &[u8], read: &Read1, cap: usize) {
    let announced = bytes
        .get(..4)
        .map(|prefix| u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize);
    match (&read.outcome, announced) {
        (Err(FrameErrorKind::TooLarge { announced: seen }), Some(announced)) => {
            assert_eq!(*seen, announced);
            assert!(announced > cap, "{announced} is within the cap {cap}");
            assert_eq!(read.consumed, 4, "the body of an oversized frame was read");
        }
        (Err(FrameErrorKind::TooLarge { .. }), None) => panic!("too large without a prefix"),
        (Err(FrameErrorKind::Closed), _) => {
            let whole = announced.map_or(usize::MAX, |len| len.saturating_add(4));
            assert!(bytes.len() < whole, "a whole frame was reported closed");
            assert_eq!(
                read.consumed,
                bytes.len(),
                "closed before the end of the pipe"
            );
        }
        (Err(FrameErrorKind::Io), _) => panic!("an in-memory pipe failed"),
        (Err(FrameErrorKind::Malformed), Some(announced)) => {
            assert!(announced <= cap);
            assert_eq!(read.consumed, announced + 4);
        }
        (Err(FrameErrorKind::Malformed), None) => panic!("malformed without a prefix"),
        (Ok(reencoded), Some(announced)) => {
            assert!(announced <= cap);
            assert_eq!(
                read.consumed,
                announced + 4,
                "the reader took more than the frame"
            );
            // What one side writes, the other reads back as it was.
            let again = read_counted::<T>(reencoded, reencoded.len(), usize::MAX);
            assert_eq!(
                again.outcome.as_ref(),
                Ok(reencoded),
                "a re-encoded frame does not read back the same"
            );
        }
        (Ok(_), None) => panic!("a frame without a prefix"),
    }
}

/// An in-memory pipe that hands over at most `pieces` bytes per read and counts what it gave.
struct Pipe<'a> {
    bytes: &'a [u8],
    pieces: usize,
    consumed: usize,
}

impl<'a> Pipe<'a> {
    fn new(bytes: &'a [u8], pieces: usize) -> Pipe<'a> {
        Pipe {
            bytes,
            pieces: pieces.max(1),
            consumed: 0,
        }
    }

    fn next_piece(&mut self, room: usize) -> &'a [u8] {
        let n = room.min(self.pieces).min(self.bytes.len() - self.consumed);
        let piece = &self.bytes[self.consumed..self.consumed + n];
        self.consumed += n;
        piece
    }
}

impl Read for Pipe<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let piece = self.next_piece(buf.len());
        buf[..piece.len()].copy_from_slice(piece);
        Ok(piece.len())
    }
}

impl AsyncRead for Pipe<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let piece = self.next_piece(buf.remaining());
        buf.put_slice(piece);
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Posture;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut out = (body.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn real_frames_pass_in_any_piece_size() {
        let request = encode(&Request::Query {
            sql: "SELECT 1".into(),
            limit: 5,
            max_bytes: 100,
            privacy: Default::default(),
        });
        let mut reply = encode(&Response::Posture(Posture::default()));
        reply.extend_from_slice(&encode(&Response::Error(crate::protocol::Failure::new(
            duckgate_validate::error::ErrorKind::Timeout,
            "too slow",
        ))));
        for pieces in [0u8, 1, 3, 255] {
            let mut input = vec![pieces];
            input.extend_from_slice(&request);
            worker_frame(&input);
            let mut input = vec![pieces];
            input.extend_from_slice(&reply);
            parent_frame(&input);
        }
    }

    #[test]
    fn oversized_truncated_and_malformed_frames_are_told_apart() {
        let huge = read_counted::<Request>(&u32::MAX.to_be_bytes(), 4, MAX_REQUEST_BYTES);
        assert_eq!(
            huge.outcome,
            Err(FrameErrorKind::TooLarge {
                announced: u32::MAX as usize
            })
        );
        assert_eq!(huge.consumed, 4);
        let short = read_counted::<Request>(&frame(b"{\"op\":")[..8], 1, MAX_REQUEST_BYTES);
        assert_eq!(short.outcome, Err(FrameErrorKind::Closed));
        let garbage = read_counted::<Request>(&frame(b"[1,2]"), 2, MAX_REQUEST_BYTES);
        assert_eq!(garbage.outcome, Err(FrameErrorKind::Malformed));
        for input in [
            &b""[..],
            b"\x00",
            b"\x07\xff\xff\xff\xff",
            b"\x00\x00\x00\x00\x02{}",
        ] {
            worker_frame(input);
            parent_frame(input);
        }
    }

    /// The seed corpora of `worker_frame` and `parent_frame`: every request the parent sends and
    /// every kind of reply a worker gives, as real frames, each in two piece sizes. Run by hand
    /// after changing the protocol:
    /// `cargo test --release --lib sandbox::frame::fuzz::tests::write_frame_fuzz_seeds -- --ignored`.
    #[test]
    #[ignore = "writes fuzz/corpus/worker_frame and parent_frame; run by hand"]
    fn write_frame_fuzz_seeds() {
        use crate::privacy::PrivacyPolicy;
        use crate::protocol::{
            CatalogSnapshot, ChartKind, ChartReply, ChartRequest, ColumnInfo, ColumnMeta,
            ExplainResult, Failure, PropertyPosture, QueryResult, RelationKind, TableInfo,
        };
        use serde_json::json;

        let privacy = PrivacyPolicy {
            hide_tables: vec!["patients".into()],
            hide_columns: vec!["*.serial_number".into()],
        };
        let chart = ChartRequest {
            kind: ChartKind::Agp,
            x: Some("ts".into()),
            y: Some("glucose_mg_dl".into()),
            title: Some("Last 14 days".into()),
            width: 900,
            height: 500,
            bins: None,
            target_range: Some((70.0, 180.0)),
        };
        let requests = [
            (
                "query",
                Request::Query {
                    sql: "SELECT ts, glucose_mg_dl FROM cgm_readings ORDER BY ts DESC".into(),
                    limit: 100,
                    max_bytes: 65536,
                    privacy: PrivacyPolicy::default(),
                },
            ),
            (
                "query-privacy",
                Request::Query {
                    sql: "SELECT count(*) FROM cgm_readings WHERE glucose_mg_dl < 54".into(),
                    limit: 1,
                    max_bytes: 65536,
                    privacy: privacy.clone(),
                },
            ),
            (
                "explain",
                Request::Explain {
                    sql: "SELECT avg(glucose_mg_dl) FROM cgm_readings".into(),
                    privacy: PrivacyPolicy::default(),
                },
            ),
            (
                "plot",
                Request::Plot {
                    sql: "SELECT ts, glucose_mg_dl FROM cgm_readings".into(),
                    chart,
                    privacy,
                },
            ),
            (
                "catalog",
                Request::Catalog {
                    privacy: PrivacyPolicy::default(),
                },
            ),
            ("posture", Request::Posture),
        ];
        let posture = Posture {
            landlock: crate::protocol::LandlockStatus::FullyEnforced,
            landlock_abi: Some(6),
            seccomp: true,
            no_new_privs: true,
            rlimits: vec![("RLIMIT_CORE".into(), "0".into())],
            properties: vec![PropertyPosture {
                property: "network".into(),
                promise: "no network, no unix sockets".into(),
                mechanism: "seccomp".into(),
                enforced: true,
            }],
            ..Posture::default()
        };
        let rows = QueryResult {
            columns: vec![
                ColumnMeta {
                    name: "ts".into(),
                    data_type: "TIMESTAMP".into(),
                },
                ColumnMeta {
                    name: "glucose_mg_dl".into(),
                    data_type: "INTEGER".into(),
                },
            ],
            rows: vec![
                vec![json!("2026-11-01 00:05:00"), json!(120)],
                vec![json!("2026-11-01 00:10:00"), json!(null)],
                vec![json!([1.5, {"a": "\u{2028}"}]), json!(-0.0)],
            ],
            row_count: 3,
            truncated: true,
            duration_ms: 1.25,
        };
        let catalog = CatalogSnapshot {
            databases: vec!["health".into(), "pump".into()],
            tables: vec![TableInfo {
                database: "health".into(),
                schema: "main".into(),
                name: "cgm_readings".into(),
                kind: RelationKind::Table,
                description: Some("CGM readings".into()),
                estimated_rows: Some(876),
                columns: vec![ColumnInfo {
                    name: "glucose_mg_dl".into(),
                    data_type: "INTEGER".into(),
                    nullable: true,
                    default: None,
                    primary_key: false,
                    unique: false,
                    references: None,
                    comment: Some("whole mg/dL".into()),
                    default_reads: Some(vec![]),
                    view_reads: None,
                }],
                indexes: vec![],
            }],
            foreign_keys: vec![],
            table_macros: vec![],
        };
        let replies = [
            ("rows", Response::Rows(rows)),
            (
                "plan",
                Response::Plan(ExplainResult {
                    plan: json!([{"name": "PROJECTION", "children": []}]),
                }),
            ),
            ("catalog", Response::Catalog(catalog)),
            (
                "chart",
                Response::Chart(ChartReply {
                    png_base64: "iVBORw0KGgo=".into(),
                    width: 900,
                    height: 500,
                    x: "ts".into(),
                    y: "glucose_mg_dl".into(),
                    rows_read: 3,
                    summary_columns: vec!["hour".into(), "median".into()],
                    summary_rows: vec![vec![json!(0), json!(118)]],
                    summary_text: "AGP of 3 readings".into(),
                }),
            ),
            (
                "error",
                Response::Error(Failure::new(
                    duckgate_validate::error::ErrorKind::UnknownName,
                    "Table with name cgm does not exist",
                )),
            ),
        ];
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
        let write = |target: &str, name: &str, body: &[u8]| {
            let dir = root.join(target);
            std::fs::create_dir_all(&dir).unwrap();
            for pieces in [0u8, 6] {
                let mut seed = vec![pieces];
                seed.extend_from_slice(body);
                std::fs::write(dir.join(format!("{name}-{}", pieces + 1)), seed).unwrap();
            }
        };
        for (name, request) in &requests {
            write("worker_frame", name, &encode(request));
        }
        let ready = encode(&Response::Posture(posture));
        for (name, reply) in &replies {
            let mut both = ready.clone();
            both.extend_from_slice(&encode(reply));
            write("parent_frame", name, &both);
        }
    }
}
