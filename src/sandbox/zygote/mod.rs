//! The zygote: one fresh, confined, single-use process per query, forked from a warm template
//! instead of spawned and warmed from scratch (`docs/ARCHITECTURE.md`, "The zygote").
//!
//! A spawned worker pays ~25 ms of CPU before it is ready: exec, dynamic loading, DuckDB's
//! instance, the warm-up. Back to back, that is the latency. The template pays it once; each
//! worker it forks pays a fork and its own confinement and DuckDB threads.
//!
//! The template ([`template`], `duckgate __worker --start template`):
//! 1. confines itself as [`Role::Template`](crate::sandbox::confine::Role::Template): a worker's
//!    landlock, rlimits and seccomp, loosened only to fork, SIGKILL its children, and let them
//!    set their own parent-death signal and limits;
//! 2. opens a warm DuckDB that runs no thread of its own
//!    ([`crate::engine::Engine::template`]: `threads = 1` and `async_threads = 0`; no checker
//!    thread yet);
//! 3. reports ready, then serves the server's [`Order`]s on its control socket (standard
//!    input, a `SOCK_SEQPACKET` socket), one at a time, and reports [`Event`]s there;
//! 4. for [`Order::Fork`], forks with `zygote_fork::fork_single_threaded`, which counts
//!    `/proc/self/task` right before and refuses unless it finds exactly one thread.
//!
//! Each forked child, before it touches any request:
//! 1. makes the socket the order carried its standard input and output (which closes the
//!    template's control socket in the child) and drops the template's other descriptors;
//! 2. confines itself as a worker on top of the template's rules
//!    ([`crate::sandbox::confine::confine_forked_child`]): parent-death signal (the template),
//!    the worker's rlimits (CPU time from zero), landlock on its own temporary directory, the
//!    worker's seccomp filter with its own pid (no process creation, signals only to itself);
//! 3. only then starts its threads ([`crate::engine::Template::into_worker`]), reports ready,
//!    and answers one request exactly as a spawned worker does
//!    ([`crate::sandbox::worker::serve_ready`]).
//!
//! The server ([`handle::Zygote`]) kills a child by asking the template, which kills only
//! children it has not reaped (so never a recycled pid), and frees a child's slot when the
//! template reports it reaped. If the template dies or cannot start, the pool spawns workers
//! as before and `server_info` says why (`crate::sandbox::pool`).

pub mod handle;
pub mod template;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::protocol::{Failure, Posture};

/// The largest control message: orders and events are a few hundred bytes.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// What the server asks of the template, one per `SOCK_SEQPACKET` message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Fork one worker. The message carries exactly one descriptor: the worker's end of a
    /// socket pair, which becomes its standard input and output.
    Fork {
        /// The worker's private temporary directory (made by the server beneath the
        /// template's), or none: no spilling.
        temp_dir: Option<PathBuf>,
        /// What that directory may hold.
        max_temp_bytes: u64,
    },
    /// SIGKILL a child the template has not reaped yet (otherwise nothing).
    Kill {
        /// Its pid.
        pid: i32,
    },
}

/// What the template tells the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// Confined and warm: the template's own posture.
    Ready(Box<Posture>),
    /// The template could not confine itself or start DuckDB; it exits.
    StartFailed(Failure),
    /// The answer to a [`Order::Fork`], in order: the child's pid.
    Forked {
        /// The child's pid.
        pid: i32,
    },
    /// The answer to a [`Order::Fork`] that could not be carried out.
    ForkFailed {
        /// Why.
        message: String,
    },
    /// A child has exited and been reaped: its pid is free, its memory released.
    Exited {
        /// Its pid.
        pid: i32,
        /// The signal that ended it, if one did.
        signal: Option<i32>,
    },
}
