//! The server's side of the zygote: start the template, order forks and kills, learn of exits.

use std::collections::{HashMap, VecDeque};
use std::io::IoSlice;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::socket::{
    AddressFamily, ControlMessage, MsgFlags, SockFlag, SockType, sendmsg, socketpair,
};
use tokio::io::Interest;
use tokio::net::UnixDatagram;
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

use super::{Event, MAX_MESSAGE_BYTES, Order};
use crate::protocol::worker_args::{WorkerArgs, WorkerStart};
use crate::protocol::{Failure, Posture};
use crate::sandbox::bypass::Bypass;
use duckgate_validate::error::ErrorKind;

/// How a forked worker ended, as the template saw when it reaped it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    /// The signal that ended it; `None` for a normal exit, or when the template itself died
    /// (its children die with it, by their parent-death signal).
    pub signal: Option<i32>,
}

/// A worker the template has just forked, not yet ready.
#[derive(Debug)]
pub struct ForkedChild {
    /// Its pid.
    pub pid: i32,
    /// The server's end of its standard input and output.
    pub stream: tokio::net::UnixStream,
    /// Resolves once the template has reaped it (or the template is gone).
    pub exited: oneshot::Receiver<Exit>,
}

/// A fork's outcome. The failure is a sentence, not a type: the pool answers every failed fork
/// the same way (it spawns the worker instead) and only logs why, and `server_info` shows the
/// template's death to a person.
type ForkReply = Result<(i32, oneshot::Receiver<Exit>), String>;

/// What the event reader shares with callers.
#[derive(Debug, Default)]
struct Shared {
    /// Callers waiting for the answer to their fork order, in the order the orders were sent.
    pending_forks: VecDeque<oneshot::Sender<ForkReply>>,
    /// Children forked and not reported reaped.
    exits: HashMap<i32, oneshot::Sender<Exit>>,
    /// Why the template is gone, once it is.
    dead: Option<String>,
}

/// A running template.
#[derive(Debug)]
pub struct Zygote {
    /// The server's end of the control socket: `SOCK_SEQPACKET`, one order or event per
    /// message, driven through tokio's datagram type (whose `send` and `recv` are the
    /// message-preserving calls a sequenced-packet socket takes).
    control: UnixDatagram,
    process: tokio::sync::Mutex<Child>,
    pid: u32,
    posture: Posture,
    shared: Mutex<Shared>,
    /// Held from queueing a fork's reply slot until its order is sent, so replies and orders
    /// stay in the same order.
    order_lock: tokio::sync::Mutex<()>,
    /// The server is stopping it on purpose (shutdown, or a replaced database file): its end is
    /// not news.
    stopping: std::sync::atomic::AtomicBool,
}

impl Zygote {
    /// Spawn the template (`args.start` is set to [`WorkerStart::Template`]; `args.temp_dir` is
    /// the directory the workers' own are made in) and wait for it to report ready.
    pub async fn start(
        exe: &Path,
        args: &WorkerArgs,
        bypass: &Bypass,
        startup_timeout: Duration,
    ) -> Result<Arc<Zygote>, Failure> {
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .map_err(|e| internal(format!("could not make the template's control socket: {e}")))?;
        let args = WorkerArgs {
            start: WorkerStart::Template,
            ..args.clone()
        };
        let mut cmd = Command::new(exe);
        cmd.args(args.to_argv());
        // Like a worker, the template sees nothing of the operator's environment but the test
        // switch.
        cmd.env_clear();
        if let Some((name, value)) = bypass.worker_env() {
            cmd.env(name, value);
        }
        cmd.stdin(Stdio::from(theirs))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|e| {
            internal(format!(
                "could not start the template process ({}): {e}",
                exe.display()
            ))
        })?;
        let pid = child.id().unwrap_or(0);
        if let Some(stderr) = child.stderr.take() {
            crate::sandbox::child_stderr::forward_stderr(stderr, pid);
        }
        let control = std::os::unix::net::UnixDatagram::from(ours);
        let control = control
            .set_nonblocking(true)
            .and_then(|()| UnixDatagram::from_std(control))
            .map_err(|e| internal(format!("could not watch the control socket: {e}")))?;
        let zygote = Zygote {
            control,
            process: tokio::sync::Mutex::new(child),
            pid,
            posture: Posture::default(),
            shared: Mutex::new(Shared::default()),
            order_lock: tokio::sync::Mutex::new(()),
            stopping: std::sync::atomic::AtomicBool::new(false),
        };
        let first = tokio::time::timeout(startup_timeout, zygote.receive()).await;
        let posture = match first {
            Ok(Ok(Some(Event::Ready(posture)))) => *posture,
            Ok(Ok(Some(Event::StartFailed(e)))) => {
                zygote.stop().await;
                return Err(e);
            }
            Ok(Ok(other)) => {
                zygote.stop().await;
                return Err(internal(format!(
                    "the template sent {other:?} instead of its ready report"
                )));
            }
            Ok(Err(e)) => {
                zygote.stop().await;
                return Err(internal(format!(
                    "the template's control socket failed: {e}"
                )));
            }
            Err(_) => {
                zygote.stop().await;
                return Err(internal(format!(
                    "the template did not become ready within {} s",
                    startup_timeout.as_secs()
                )));
            }
        };
        let zygote = Arc::new(Zygote { posture, ..zygote });
        tokio::spawn(Arc::clone(&zygote).read_events());
        Ok(zygote)
    }

    /// The template's pid.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The template's own confinement.
    pub fn posture(&self) -> &Posture {
        &self.posture
    }

    /// Why the template is gone; `None` while it runs.
    pub fn death(&self) -> Option<String> {
        self.shared.lock().ok().and_then(|s| s.dead.clone())
    }

    /// Order one worker, and wait (at most `timeout`) for the template to have forked it.
    pub async fn fork(
        &self,
        temp_dir: Option<PathBuf>,
        max_temp_bytes: u64,
        timeout: Duration,
    ) -> Result<ForkedChild, String> {
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::Stream,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .map_err(|e| format!("could not make a worker's socket: {e}"))?;
        let (reply_to, reply) = oneshot::channel();
        {
            let _in_order = self.order_lock.lock().await;
            {
                let mut shared = self.shared.lock().map_err(|_| "poisoned".to_string())?;
                if let Some(dead) = &shared.dead {
                    return Err(dead.clone());
                }
                shared.pending_forks.push_back(reply_to);
            }
            let order = Order::Fork {
                temp_dir,
                max_temp_bytes,
            };
            self.send(&order, Some(&theirs))
                .await
                .map_err(|e| format!("could not send a fork order: {e}"))?;
        }
        drop(theirs);
        let (pid, exited) = match tokio::time::timeout(timeout, reply).await {
            Ok(Ok(reply)) => reply?,
            Ok(Err(_)) => {
                return Err(self
                    .death()
                    .unwrap_or_else(|| "the template is gone".into()));
            }
            Err(_) => return Err("the template did not fork in time".into()),
        };
        let stream = std::os::unix::net::UnixStream::from(ours);
        stream
            .set_nonblocking(true)
            .and_then(|()| tokio::net::UnixStream::from_std(stream))
            .map(|stream| ForkedChild {
                pid,
                stream,
                exited,
            })
            .map_err(|e| format!("could not watch a worker's socket: {e}"))
    }

    /// Ask the template to SIGKILL `pid`, one of its children not yet reported reaped.
    pub async fn kill(&self, pid: i32) {
        let _ = self.send(&Order::Kill { pid }, None).await;
    }

    /// Kill the template (its children die with it) and reap it.
    pub async fn stop(&self) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let mut process = self.process.lock().await;
        if let Some(pid) = process.id() {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = process.kill().await;
        let _ = process.wait().await;
    }

    /// Dispatch the template's events until its control socket closes; then mark it dead.
    async fn read_events(self: Arc<Self>) {
        let why = loop {
            match self.receive().await {
                Ok(Some(Event::Forked { pid })) => {
                    let (exit_to, exited) = oneshot::channel();
                    let Ok(mut shared) = self.shared.lock() else {
                        break "poisoned".to_string();
                    };
                    shared.exits.insert(pid, exit_to);
                    if let Some(waiter) = shared.pending_forks.pop_front() {
                        let _ = waiter.send(Ok((pid, exited)));
                    }
                }
                Ok(Some(Event::ForkFailed { message })) => {
                    let Ok(mut shared) = self.shared.lock() else {
                        break "poisoned".to_string();
                    };
                    if let Some(waiter) = shared.pending_forks.pop_front() {
                        let _ = waiter.send(Err(message));
                    }
                }
                Ok(Some(Event::Exited { pid, signal })) => {
                    let Ok(mut shared) = self.shared.lock() else {
                        break "poisoned".to_string();
                    };
                    if let Some(exit_to) = shared.exits.remove(&pid) {
                        let _ = exit_to.send(Exit { signal });
                    }
                }
                Ok(Some(Event::Ready(_) | Event::StartFailed(_))) => {}
                Ok(None) => break "the template process exited".to_string(),
                // A template that dies with an order unread resets the socket.
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                    break "the template process exited".to_string();
                }
                Err(e) => break format!("the template's control socket failed: {e}"),
            }
        };
        let status = {
            let mut process = self.process.lock().await;
            tokio::time::timeout(Duration::from_secs(1), process.wait()).await
        };
        let why = match status {
            Ok(Ok(status)) => format!("{why} ({status})"),
            _ => why,
        };
        if self.stopping.load(std::sync::atomic::Ordering::SeqCst) {
            tracing::debug!(template = self.pid, "{why}: stopped by the server");
        } else {
            tracing::warn!(
                template = self.pid,
                "{why}; workers are spawned until a new template is up"
            );
        }
        if let Ok(mut shared) = self.shared.lock() {
            shared.dead = Some(why.clone());
            for waiter in shared.pending_forks.drain(..) {
                let _ = waiter.send(Err(why.clone()));
            }
            // Dropping the senders tells every waiter its child is gone: each child's
            // parent-death signal killed it with the template.
            shared.exits.clear();
        }
    }

    async fn receive(&self) -> std::io::Result<Option<Event>> {
        let mut buf = vec![0u8; MAX_MESSAGE_BYTES];
        match self.control.recv(&mut buf).await? {
            0 => Ok(None),
            // `recv` fills at most the buffer.
            n => serde_json::from_slice(buf.get(..n).unwrap_or_default())
                .map(Some)
                .map_err(std::io::Error::other),
        }
    }

    async fn send(&self, order: &Order, descriptor: Option<&OwnedFd>) -> std::io::Result<()> {
        let bytes = serde_json::to_vec(order).map_err(std::io::Error::other)?;
        let raw = descriptor.map(|fd| [fd.as_fd().as_raw_fd()]);
        let rights;
        let cmsgs: &[ControlMessage<'_>] = match &raw {
            Some(raw) => {
                rights = [ControlMessage::ScmRights(raw)];
                &rights
            }
            None => &[],
        };
        self.control
            .async_io(Interest::WRITABLE, || {
                sendmsg::<()>(
                    self.control.as_raw_fd(),
                    &[IoSlice::new(&bytes)],
                    cmsgs,
                    MsgFlags::MSG_NOSIGNAL,
                    None,
                )
                .map_err(std::io::Error::from)
            })
            .await
            .map(drop)
    }
}

fn internal(message: String) -> Failure {
    Failure::new(ErrorKind::InternalError, message)
}
