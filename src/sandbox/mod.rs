//! Worker processes: the parent side (spawn, pool, deadline, kill) and the child side (confine).
//!
//! A worker is our own binary re-executed as `duckgate __worker …` with a cleared environment.
//! It confines itself (see [`confine`]), creates a hardened in-memory DuckDB, runs a warm-up
//! query, then writes one `Response::Posture` frame as its "ready" signal, reads exactly one
//! `Request` frame, writes exactly one `Response` frame and exits. Once at start-up, the server
//! runs it in a confine-only mode to learn whether this kernel can confine workers at all
//! ([`preflight`]).
//!
//! The frames alone (both sides of them) build without DuckDB, for the fuzz workspace
//! (`worker-protocol` feature); everything else needs the `engine` feature.

#[cfg(feature = "engine")]
pub mod budget;
#[cfg(feature = "engine")]
pub mod bypass;
#[cfg(feature = "engine")]
mod child_stderr;
#[cfg(feature = "engine")]
pub mod confine;
pub mod frame;
#[cfg(feature = "engine")]
pub mod pool;
#[cfg(feature = "engine")]
pub mod preflight;
#[cfg(feature = "test-bypass")]
pub mod probe;
#[cfg(feature = "engine")]
pub mod temp_dir;
#[cfg(feature = "engine")]
pub mod worker;
#[cfg(feature = "engine")]
pub mod zygote;
