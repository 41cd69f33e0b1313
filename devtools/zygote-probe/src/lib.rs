//! `fork()` for one measurement: duckgate's zygote probe (`benches/zygote_probe.rs`), which times
//! a template process holding a warm DuckDB that forks one child per query. Not for production:
//! see [`fork_for_measurement`].

pub use nix::unistd::ForkResult;

/// Fork the calling process.
///
/// Only for the zygote benchmark. The caller holds a DuckDB instance whose own threads are
/// running; after `fork()` the child has only the calling thread, and any lock another thread
/// held at that moment stays held in the child. That is exactly why duckgate does not ship this
/// design (docs/ARCHITECTURE.md, "Decisions"); the benchmark measures what it would gain.
pub fn fork_for_measurement() -> nix::Result<ForkResult> {
    // SAFETY: `fork` is sound to call; what is unsound by the book is what the child does next in
    // a multi-threaded parent (anything not async-signal-safe). The benchmark's child does that
    // knowingly, to measure it, and its only outputs are timings and row counts.
    unsafe { nix::unistd::fork() }
}

/// Leave a forked child at once, without running the parent's exit handlers or destructors
/// (DuckDB's static state belongs to the template).
pub fn exit_child(code: i32) -> ! {
    // SAFETY: `_exit` takes no pointers and never returns; skipping destructors is its purpose.
    unsafe { nix::libc::_exit(code) }
}

/// Wait for a forked child to exit.
pub fn reap(child: nix::unistd::Pid) -> nix::Result<()> {
    nix::sys::wait::waitpid(child, None).map(drop)
}
