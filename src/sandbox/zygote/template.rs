//! The template process (`duckgate __worker --start template`): confine, warm DuckDB, then fork
//! workers on the server's orders. The ordered steps are in the module above.

use std::collections::BTreeSet;
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::PathBuf;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, kill, sigprocmask};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::socket::{MsgFlags, send};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;
use zygote_fork::{Forked, fork_single_threaded, receive_with_descriptors};

use super::{Event, MAX_MESSAGE_BYTES, Order};
use crate::engine::{Engine, HeldDatabases, Template};
use crate::protocol::worker_args::{WorkerArgs, WorkerStart};
use crate::protocol::{Failure, Response};
use crate::sandbox::bypass::Bypass;
use crate::sandbox::confine::{self, ProcessInspection, TemplateFilter};
use crate::sandbox::frame;
use crate::sandbox::worker::serve_ready;
use duckgate_validate::error::ErrorKind;

/// Run the template until the server closes its control socket; returns the exit code.
pub fn run(args: &WorkerArgs) -> i32 {
    match start(args) {
        Ok(mut state) => match state.serve() {
            Ok(()) => 0,
            Err(e) => {
                let _ = writeln!(io::stderr(), "duckgate template: {e}");
                4
            }
        },
        Err(e) => {
            let _ = send_event(&Event::StartFailed(e));
            3
        }
    }
}

/// Everything the template keeps between orders.
struct State {
    args: WorkerArgs,
    bypass: Bypass,
    inspection: ProcessInspection,
    /// The template's own system-call filter, which each child stacks its worker's rules on.
    filter: TemplateFilter,
    /// The warm instance each child takes over. Always `Some` in the template: a child takes
    /// its own copy, after the fork.
    engine: Option<Template>,
    /// SIGCHLD, as a descriptor the loop polls. Always `Some` in the template; a child closes
    /// its copy.
    children_signal: Option<SignalFd>,
    /// Children forked and not yet reaped: the only pids [`Order::Kill`] may signal.
    live: BTreeSet<i32>,
}

/// Steps 1 to 3: confine, warm DuckDB, report ready.
fn start(args: &WorkerArgs) -> Result<State, Failure> {
    let bypass = Bypass::from_env().map_err(|e| internal(format!("template: {e}")))?;
    // Before confinement: landlock grants no path of the databases; the workers forked from
    // this template inherit these descriptors with the DuckDB instance (`engine::HeldDatabases`).
    let held = HeldDatabases::open(&args.databases().map_err(internal)?);
    let inspection = confine::inspect_process()
        .map_err(|e| internal(format!("template sandbox setup failed: {e}")))?;
    let (posture, filter) = confine::confine_template(&args.confine_plan(&bypass), inspection)
        .map_err(|e| internal(format!("template sandbox setup failed: {e}")))?;
    let engine = Engine::template(&args.engine_config(&bypass), held)?;
    // SIGCHLD is read from a descriptor, never delivered: the loop below is the only place
    // children are reaped.
    let mut chld = SigSet::empty();
    chld.add(Signal::SIGCHLD);
    sigprocmask(SigmaskHow::SIG_BLOCK, Some(&chld), None)
        .map_err(|e| internal(format!("template: blocking SIGCHLD failed: {e}")))?;
    let children_signal =
        SignalFd::with_flags(&chld, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
            .map_err(|e| internal(format!("template: signalfd failed: {e}")))?;
    send_event(&Event::Ready(Box::new(posture)))
        .map_err(|e| internal(format!("template could not report ready: {e}")))?;
    Ok(State {
        args: args.clone(),
        bypass,
        inspection,
        filter,
        engine: Some(engine),
        children_signal: Some(children_signal),
        live: BTreeSet::new(),
    })
}

impl State {
    /// Step 4: orders in, events out, until the server hangs up.
    ///
    /// An error ends the template; its text is only logged. The server does not need to know
    /// why: any end of the template means "spawn workers until a new one is up".
    fn serve(&mut self) -> Result<(), String> {
        let mut buf = vec![0u8; MAX_MESSAGE_BYTES];
        loop {
            let (control_ready, children_ready) = {
                let control = io::stdin();
                let Some(children_signal) = &self.children_signal else {
                    return Err("the SIGCHLD descriptor is gone".into());
                };
                let mut fds = [
                    PollFd::new(control.as_fd(), PollFlags::POLLIN),
                    PollFd::new(children_signal.as_fd(), PollFlags::POLLIN),
                ];
                match poll(&mut fds, PollTimeout::NONE) {
                    Ok(_) => {}
                    Err(nix::errno::Errno::EINTR) => continue,
                    Err(e) => return Err(format!("poll failed: {e}")),
                }
                (fds[0].any().unwrap_or(false), fds[1].any().unwrap_or(false))
            };
            if children_ready {
                self.reap()?;
            }
            if control_ready {
                let (len, mut fds) = receive_with_descriptors(io::stdin().as_fd(), &mut buf)
                    .map_err(|e| format!("reading an order failed: {e}"))?;
                if len == 0 {
                    // The server is gone; so are the children (their parent-death signal).
                    return Ok(());
                }
                // `recvmsg` fills at most the buffer.
                let order: Order = serde_json::from_slice(buf.get(..len).unwrap_or_default())
                    .map_err(|e| format!("malformed order: {e}"))?;
                match order {
                    Order::Fork {
                        temp_dir,
                        max_temp_bytes,
                    } => {
                        let socket = match (fds.pop(), fds.is_empty()) {
                            (Some(socket), true) => socket,
                            _ => {
                                send_event(&Event::ForkFailed {
                                    message: "a fork order must carry exactly one socket".into(),
                                })
                                .map_err(|e| e.to_string())?;
                                continue;
                            }
                        };
                        self.fork(socket, temp_dir, max_temp_bytes)?;
                    }
                    Order::Kill { pid } => {
                        // Only an unreaped child: its pid cannot have been reused.
                        if self.live.contains(&pid) {
                            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
                        }
                    }
                }
            }
        }
    }

    fn fork(
        &mut self,
        socket: OwnedFd,
        temp_dir: Option<PathBuf>,
        max_temp_bytes: u64,
    ) -> Result<(), String> {
        let template_pid = std::process::id() as i32;
        match fork_single_threaded() {
            Ok(Forked::Parent { child }) => {
                drop(socket);
                self.live.insert(child.as_raw());
                send_event(&Event::Forked {
                    pid: child.as_raw(),
                })
                .map_err(|e| e.to_string())
            }
            Ok(Forked::Child) => {
                let code = match become_worker(self, socket, temp_dir, max_temp_bytes, template_pid)
                {
                    Ok(()) => 0,
                    Err(e) => {
                        let mut out = io::stdout().lock();
                        let _ = frame::write_frame(&mut out, &Response::Error(e));
                        let _ = out.flush();
                        3
                    }
                };
                zygote_fork::exit_now(code)
            }
            Err(e) => send_event(&Event::ForkFailed {
                message: e.to_string(),
            })
            .map_err(|e| e.to_string()),
        }
    }

    /// Reap every child that has exited, and tell the server.
    fn reap(&mut self) -> Result<(), String> {
        if let Some(children_signal) = &self.children_signal {
            while let Ok(Some(_)) = children_signal.read_signal() {}
        }
        loop {
            match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::Exited(pid, _)) => self.exited(pid, None)?,
                Ok(WaitStatus::Signaled(pid, signal, _)) => {
                    self.exited(pid, Some(signal as i32))?
                }
                Ok(WaitStatus::StillAlive) | Err(nix::errno::Errno::ECHILD) => return Ok(()),
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => {}
                Err(e) => return Err(format!("waitpid failed: {e}")),
            }
        }
    }

    fn exited(&mut self, pid: Pid, signal: Option<i32>) -> Result<(), String> {
        self.live.remove(&pid.as_raw());
        send_event(&Event::Exited {
            pid: pid.as_raw(),
            signal,
        })
        .map_err(|e| e.to_string())
    }
}

/// The child's steps 1 to 3 (see the module above), then one request.
fn become_worker(
    state: &mut State,
    socket: OwnedFd,
    temp_dir: Option<PathBuf>,
    max_temp_bytes: u64,
    template_pid: i32,
) -> Result<(), Failure> {
    // The order's socket replaces the control socket (descriptor 0) and the template's null
    // standard output: the child can neither read the server's orders nor forge events. The
    // template's SIGCHLD descriptor is closed too: the child has no children.
    drop(state.children_signal.take());
    nix::unistd::dup2_stdin(&socket).map_err(|e| internal(format!("dup2 failed: {e}")))?;
    nix::unistd::dup2_stdout(&socket).map_err(|e| internal(format!("dup2 failed: {e}")))?;
    drop(socket);
    let args = WorkerArgs {
        temp_dir,
        max_temp_bytes,
        parent_pid: template_pid,
        start: WorkerStart::Spare,
        ..state.args.clone()
    };
    let posture = confine::confine_forked_child(
        &args.confine_plan(&state.bypass),
        state.inspection,
        &state.filter,
    )
    .map_err(|e| internal(format!("sandbox setup failed: {e}")))?;
    let config = args.engine_config(&state.bypass);
    let engine = state
        .engine
        .take()
        .ok_or_else(|| internal("the template has no DuckDB instance".into()))?
        .into_worker(config.spill.as_ref(), &args.databases().map_err(internal)?)?;
    serve_ready(
        engine,
        posture,
        &args,
        &state.bypass,
        &mut io::stdout().lock(),
    )
}

/// Write one event on the control socket (standard input, a `SOCK_SEQPACKET` socket).
fn send_event(event: &Event) -> nix::Result<()> {
    let bytes = serde_json::to_vec(event).map_err(|_| nix::errno::Errno::EINVAL)?;
    let sent = send(io::stdin().as_raw_fd(), &bytes, MsgFlags::MSG_NOSIGNAL)?;
    if sent == bytes.len() {
        Ok(())
    } else {
        Err(nix::errno::Errno::EMSGSIZE)
    }
}

fn internal(message: String) -> Failure {
    Failure::new(ErrorKind::InternalError, message)
}
