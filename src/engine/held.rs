//! The declared databases' files, opened read-only by the process before it confines itself
//! (a spawned worker in `sandbox::worker`, the zygote's template before it forks its workers),
//! and read by DuckDB only through those descriptors (`duckgate/database_files.cpp`).
//!
//! Why: landlock grants by path. A grant on a database's path would let every open of it through,
//! whatever asked (with every check of the SQL and DuckDB's hardening off, SQL could read the raw
//! bytes, hidden tables and columns included, by the path, by `..` out of a declared folder, or
//! through a symbolic link placed in one). Opened here, before landlock, the files need no grant:
//! the kernel denies every open of their paths after confinement, and the only way to their bytes
//! is the descriptors, which only duckgate's own ATTACH opens through (see
//! [`duckgate_plan_reader::Attaching`]).

use std::fs::OpenOptions;
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use duckgate_plan_reader::HeldFile;

use crate::protocol::databases::{Databases, held_name};

/// Each database's file and WAL, opened as they are now: each only if it is a regular file
/// that could be opened read-only.
#[derive(Debug, Default)]
pub struct HeldDatabases {
    pub(super) files: Vec<HeldFile>,
}

impl HeldDatabases {
    /// Open every database of `databases` and its WAL, in declared order (the names ATTACH uses
    /// are by position: [`held_name`]). A file that cannot be opened is left out: attaching it then
    /// fails as a missing file does (its `stat`, which landlock does not restrict, still tells a
    /// missing file from one that is there), and a WAL that did not exist is one DuckDB finds
    /// absent, as before.
    pub fn open(databases: &Databases) -> HeldDatabases {
        let mut files = Vec::new();
        for (index, database) in databases.iter().enumerate() {
            let name = held_name(index);
            if let Some(descriptor) = open_regular(&database.path) {
                files.push(HeldFile {
                    name: name.clone(),
                    descriptor,
                });
            }
            if let Some(descriptor) = open_regular(&database.wal()) {
                files.push(HeldFile {
                    name: format!("{name}.wal"),
                    descriptor,
                });
            }
        }
        HeldDatabases { files }
    }
}

/// `path` opened read-only, without following it into a FIFO's wait or a terminal, if it is a
/// regular file.
fn open_regular(path: &Path) -> Option<OwnedFd> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)
        .ok()?;
    file.metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|_| OwnedFd::from(file))
}
