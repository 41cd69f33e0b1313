//! SIGTERM and SIGINT, handled rather than left to their default action.
//!
//! The kernel never applies a default action to the first process of a PID namespace: as a
//! container's PID 1 (`docker run` without `--init`), duckgate would ignore `docker stop`'s
//! SIGTERM and Ctrl-C until the runtime gave up and sent SIGKILL. So every command that runs in
//! the async runtime handles both itself: `serve` stops serving, ends its workers and exits
//! ([`stop_signal`], awaited beside the session); the commands that run once exit as the
//! default action would ([`exit_on_stop_signal`]).

use std::fmt;

use tokio::signal::unix::{SignalKind, signal};

/// A signal that asks duckgate to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StopSignal {
    /// `docker stop`, `kill`, a service manager.
    Terminate,
    /// Ctrl-C at a terminal.
    Interrupt,
}

impl StopSignal {
    /// The exit status a shell expects of a process that a signal ended: 128 + its number.
    pub(super) fn exit_code(self) -> u8 {
        let number = match self {
            StopSignal::Terminate => nix::sys::signal::Signal::SIGTERM,
            StopSignal::Interrupt => nix::sys::signal::Signal::SIGINT,
        } as u8;
        128 + number
    }
}

impl fmt::Display for StopSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StopSignal::Terminate => "SIGTERM",
            StopSignal::Interrupt => "SIGINT",
        })
    }
}

/// Resolves at the first SIGTERM or SIGINT; never, when the handlers cannot be installed (then
/// the default actions stay, which is all that is lost, and stderr says so).
pub(super) async fn stop_signal() -> StopSignal {
    let handlers = signal(SignalKind::terminate())
        .and_then(|term| signal(SignalKind::interrupt()).map(|int| (term, int)));
    let (mut terminate, mut interrupt) = match handlers {
        Ok(handlers) => handlers,
        Err(error) => {
            tracing::warn!("cannot handle SIGTERM and SIGINT: {error}");
            return std::future::pending().await;
        }
    };
    tokio::select! {
        _ = terminate.recv() => StopSignal::Terminate,
        _ = interrupt.recv() => StopSignal::Interrupt,
    }
}

/// For a command that runs once: on SIGTERM or SIGINT, exit at once with 128 + its number, as
/// the default action would end it (its workers die with it: their parent-death signal). A
/// task beside the command, so a command that blocks its own thread still ends.
pub(super) fn exit_on_stop_signal() {
    tokio::spawn(async {
        let signal = stop_signal().await;
        eprintln!("duckgate: stopped by {signal}");
        std::process::exit(i32::from(signal.exit_code()));
    });
}
