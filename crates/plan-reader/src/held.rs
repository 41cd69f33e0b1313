//! The declared databases, read through descriptors the process opened before it confined itself
//! (`duckgate/database_files.cpp`): landlock grants no path of them, so these descriptors are the
//! only way the process reaches their bytes.

use std::ffi::c_char;
use std::os::fd::{IntoRawFd, OwnedFd};
use std::ptr;

use crate::ffi::{self, Text};
use crate::registry::{DatabaseToken, database_of};

/// One file the process holds open for DuckDB to attach: a database or its WAL.
#[derive(Debug)]
pub struct HeldFile {
    /// The name ATTACH opens it by: `duckgate-database://N`, or that and `.wal` (the prefix is
    /// `database_files.cpp`'s `HELD_PREFIX`; duckgate's side names them,
    /// `duckgate::protocol::databases::held_name`).
    pub name: String,
    /// The read-only descriptor, kept open for the process's life.
    pub descriptor: OwnedFd,
}

/// Serve `files` to the database `token` names, under their names, read-only; the descriptors
/// stay open for the process's life (a forked copy of the process inherits them and the mount).
/// Once per database.
pub fn hold_database_files(token: DatabaseToken, files: Vec<HeldFile>) -> Result<(), String> {
    let database = database_of(token).ok_or("no such database")?;
    let (kept, descriptors): (Vec<String>, Vec<OwnedFd>) = files
        .into_iter()
        .map(|file| (file.name, file.descriptor))
        .unzip();
    let names: Vec<Text> = kept
        .iter()
        .map(|name| Text {
            data: name.as_ptr().cast(),
            size: name.len(),
        })
        .collect();
    // Ownership passes to the process: the C side keeps these numbers and never closes them.
    let fds: Vec<i32> = descriptors
        .into_iter()
        .map(IntoRawFd::into_raw_fd)
        .collect();
    let mut error: *mut c_char = ptr::null_mut();
    // SAFETY: `database` is open for the process's life (`open_in_memory`); `names` and `fds`
    // hold `len` entries each, `names` pointing into `kept`, which outlives the call (the C side
    // copies them); `error` is a valid out pointer.
    let status = unsafe {
        ffi::duckgate_database_files_mount(
            database,
            names.as_ptr(),
            fds.as_ptr(),
            fds.len(),
            &mut error,
        )
    };
    // SAFETY: the C side sets `error` only to a `duckdb_malloc`ed string, or leaves it null.
    let message = unsafe { ffi::take_duckdb_string(error) };
    if status == 0 {
        Ok(())
    } else {
        Err(message.unwrap_or_else(|| "the databases' files could not be mounted".into()))
    }
}

/// While this lives, the held files' names of one database are served: duckgate's own ATTACH
/// statements, while no statement of the agent's runs on it. Dropping it refuses them again.
#[derive(Debug)]
pub struct Attaching(duckdb::ffi::duckdb_database);

impl Attaching {
    /// Serve the held files' names of the database `token` names until the returned guard is
    /// dropped; an error when none are held there.
    pub fn start(token: DatabaseToken) -> Result<Attaching, String> {
        let database = database_of(token).ok_or("no such database")?;
        // SAFETY: `database` is open for the process's life; the call stores a flag.
        match unsafe { ffi::duckgate_database_files_attaching(database, 1) } {
            0 => Ok(Attaching(database)),
            _ => Err("this database holds no files".into()),
        }
    }
}

impl Drop for Attaching {
    fn drop(&mut self) {
        // SAFETY: as in `start`; the set exists, since `start` found it.
        unsafe { ffi::duckgate_database_files_attaching(self.0, 0) };
    }
}

/// Release this process's POSIX locks on every file held for the database `token` names, as
/// closing a descriptor of each would.
pub fn release_database_locks(token: DatabaseToken) -> std::io::Result<()> {
    let database = database_of(token).ok_or_else(|| std::io::Error::other("no such database"))?;
    // SAFETY: `database` is open for the process's life; the call walks its held descriptors
    // with `fcntl(F_SETLK, F_UNLCK)`.
    match unsafe { ffi::duckgate_database_files_unlock(database) } {
        0 => Ok(()),
        errno => Err(std::io::Error::from_raw_os_error(errno)),
    }
}
