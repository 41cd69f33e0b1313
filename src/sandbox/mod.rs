//! Worker processes: the parent side (spawn, pool, deadline, kill) and the child side (confine).
//!
//! A worker is our own binary re-executed as `duckgate __worker …` with a cleared environment.
//! It confines itself (see [`confine`]), creates a hardened in-memory DuckDB, runs a warm-up
//! query, then writes one `Response::Posture` frame as its "ready" signal, reads exactly one
//! `Request` frame, writes exactly one `Response` frame and exits. Once at start-up, the server
//! runs it in a confine-only mode to learn whether this kernel can confine workers at all
//! ([`preflight`]).

pub mod budget;
pub mod bypass;
mod child_stderr;
pub mod confine;
pub mod frame;
pub mod pool;
pub mod preflight;
#[cfg(feature = "test-bypass")]
pub mod probe;
pub mod temp_dir;
pub mod worker;
pub mod zygote;
