//! The two operations duckgate's zygote needs that Rust cannot offer safely, each made sound by
//! a check it performs itself (see `docs/ARCHITECTURE.md` of duckgate, "The zygote"):
//!
//! - [`fork_single_threaded`]: `fork()`, refused unless `/proc/self/task` lists exactly one
//!   thread. `fork()` copies only the calling thread; in a multi-threaded process a lock another
//!   thread holds at that moment stays held forever in the child, so anything but
//!   async-signal-safe calls there is undefined. With one thread there is no other thread to hold
//!   anything, and the child is an ordinary single-threaded copy.
//! - [`receive_with_descriptors`]: `recvmsg()` with `SCM_RIGHTS`, taking ownership of the
//!   descriptors the kernel has just installed in this process.

// No panics on the paths an agent's input reaches: `unwrap`, `expect` and indexing that may
// panic are refused outside tests (clippy.toml lets tests use them). An exception is marked
// where it stands, with its reason.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::IoSliceMut;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
pub use nix::unistd::Pid;

/// Which side of a fork the caller is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forked {
    /// The original process; `child` is the new one.
    Parent {
        /// The child's pid.
        child: Pid,
    },
    /// The new process: single-threaded, a copy of the parent's memory.
    Child,
}

/// Why [`fork_single_threaded`] did not fork.
#[derive(Debug)]
pub enum ForkError {
    /// `/proc/self/task` could not be listed, so the thread count is unknown: no fork.
    Census(std::io::Error),
    /// The process runs more than one thread: forking it would be unsound.
    Threads {
        /// Entries of `/proc/self/task`.
        count: usize,
    },
    /// `fork()` itself failed (`EAGAIN`, `ENOMEM`, or a seccomp filter's `EPERM`).
    Fork(nix::errno::Errno),
}

impl std::fmt::Display for ForkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ForkError::Census(e) => write!(f, "cannot count this process's threads: {e}"),
            ForkError::Threads { count } => write!(
                f,
                "refusing to fork: this process runs {count} threads, and fork() is sound only \
                 with one"
            ),
            ForkError::Fork(e) => write!(f, "fork() failed: {e}"),
        }
    }
}

impl std::error::Error for ForkError {}

/// The threads of this process: the entries of `/proc/self/task`.
pub fn thread_count() -> std::io::Result<usize> {
    let mut count = 0;
    for entry in std::fs::read_dir("/proc/self/task")? {
        entry?;
        count += 1;
    }
    Ok(count)
}

/// Fork, but only while this process has exactly one thread (checked in `/proc/self/task`
/// immediately before).
///
/// The check cannot go stale before the fork: the only thread that could start another is the
/// one running this function.
pub fn fork_single_threaded() -> Result<Forked, ForkError> {
    let count = thread_count().map_err(ForkError::Census)?;
    if count != 1 {
        return Err(ForkError::Threads { count });
    }
    // SAFETY: `fork` is unsafe because, in a multi-threaded process, the child may only make
    // async-signal-safe calls (other threads' locks stay held). The process was just counted to
    // have one thread, this one, and only this thread could have started another since; so the
    // child is a complete copy with no lock held by a vanished thread.
    match unsafe { nix::unistd::fork() } {
        Ok(nix::unistd::ForkResult::Parent { child }) => Ok(Forked::Parent { child }),
        Ok(nix::unistd::ForkResult::Child) => Ok(Forked::Child),
        Err(e) => Err(ForkError::Fork(e)),
    }
}

/// The most descriptors one message may carry.
pub const MAX_DESCRIPTORS: usize = 4;

/// Receive one message from `socket` into `buf`, with the descriptors it carries
/// (`SCM_RIGHTS`, at most [`MAX_DESCRIPTORS`], each close-on-exec). Returns the bytes received
/// (0: the peer closed) and the descriptors, now owned by the caller. A message whose
/// descriptors did not fit is an error (`EMSGSIZE`), and the ones that did are closed.
pub fn receive_with_descriptors(
    socket: BorrowedFd<'_>,
    buf: &mut [u8],
) -> nix::Result<(usize, Vec<OwnedFd>)> {
    let mut space = nix::cmsg_space!([RawFd; MAX_DESCRIPTORS]);
    let mut iov = [IoSliceMut::new(buf)];
    let message = recvmsg::<()>(
        socket.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )?;
    let mut received = Vec::new();
    for control in message.cmsgs()? {
        if let ControlMessageOwned::ScmRights(fds) = control {
            for fd in fds {
                // SAFETY: the kernel has just installed `fd` in this process's table for this
                // message (SCM_RIGHTS), and nothing else in the process knows its number, so
                // this is its one owner.
                received.push(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
    }
    if message.flags.contains(MsgFlags::MSG_CTRUNC) {
        return Err(nix::errno::Errno::EMSGSIZE);
    }
    Ok((message.bytes, received))
}

/// End this process at once with `code`, without running exit handlers or static destructors:
/// a forked child's copies of those belong to the template's state.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` takes no pointer, touches no memory of ours and never returns.
    unsafe { nix::libc::_exit(code) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a second thread alive (started here and parked on a channel, so it is certainly
    /// running while the call is made), the fork is refused before `fork()` is reached, and the
    /// refusal counts both threads.
    #[test]
    fn fork_single_threaded_refuses_while_another_thread_runs() {
        let (release, parked) = std::sync::mpsc::channel::<()>();
        let (started, running) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || {
            started.send(()).unwrap();
            let _ = parked.recv();
        });
        running.recv().unwrap();
        assert!(thread_count().unwrap() >= 2, "the second thread is listed");
        let outcome = fork_single_threaded();
        match outcome {
            Err(ForkError::Threads { count }) => assert!(count >= 2, "counted {count}"),
            // Only reached if the check failed to refuse: the copy must not run the harness.
            Ok(Forked::Child) => exit_now(101),
            Ok(Forked::Parent { child }) => {
                let _ = nix::sys::wait::waitpid(child, None);
                panic!("forked pid {child} while another thread was running");
            }
            Err(e) => panic!("refused for the wrong reason: {e}"),
        }
        drop(release);
        other.join().unwrap();
    }
}
