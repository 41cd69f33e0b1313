//! What the parent can tell about the database file without opening it: whether this process
//! may read it, and, when not, the folder or file that stops it; and whether the file is a
//! mount point of its own (a container's single-file mount), which hides its write-ahead log.
//!
//! Both are asked of the kernel by path (`access(2)`, `stat(2)`, `/proc/self/mountinfo`): the
//! parent never opens the database.

use std::fmt;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::unistd::{AccessFlags, access};

/// Whether the database can be read, as far as the parent can tell.
#[derive(Debug)]
pub enum DatabaseFile {
    /// It exists and this process may read it.
    Readable,
    /// There is no file at the path (or a folder on the way does not exist).
    Missing,
    /// It may exist, but this process may not reach it.
    Unreadable(Unreadable),
}

/// Why the database cannot be read: the first folder on its path that this process may not
/// enter, or the file itself.
#[derive(Debug)]
pub struct Unreadable {
    /// The database path.
    pub db: PathBuf,
    /// Where access stops: a folder that cannot be entered, or the file.
    pub blocked_at: PathBuf,
    /// Whether `blocked_at` is the database file itself (else a folder above it).
    pub is_the_file: bool,
    /// Its permission bits and owner, where `stat` can tell them.
    pub mode_and_owner: Option<(u32, u32)>,
    /// This process's user and group.
    pub uid: u32,
    /// This process's group.
    pub gid: u32,
    /// The kernel's error.
    pub error: io::Error,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.is_the_file {
            "the file"
        } else {
            "the folder"
        };
        write!(
            f,
            "duckgate cannot read the database {}: {what} {} is not open to this process (uid {}, \
             gid {}): {}",
            self.db.display(),
            self.blocked_at.display(),
            self.uid,
            self.gid,
            self.error,
        )?;
        if let Some((mode, owner)) = self.mode_and_owner {
            write!(
                f,
                "; it has mode {:04o} and belongs to uid {owner}",
                mode & 0o7777
            )?;
        }
        f.write_str(".")
    }
}

impl Unreadable {
    /// What an agent is told: which database, and whether the file or a folder above it stops
    /// this process, without the path (no reply carries a host path: it shows the user's home
    /// and name). The operator's stderr line has the path ([`fmt::Display`]).
    pub fn for_agent(&self, name: &str) -> String {
        let what = if self.is_the_file {
            "its file"
        } else {
            "a folder above its file"
        };
        format!(
            "duckgate cannot read the database \"{name}\": {what} is not open to this process \
             (uid {}, gid {}): {}.",
            self.uid, self.gid, self.error
        )
    }

    /// What the operator can do about it.
    pub fn next_step(&self) -> String {
        format!(
            "Let uid {} read the database file and enter every folder above it (for example \
             chmod o+x on the folders and o+r on the file), or run duckgate as a user who can. \
             In a container, the user inside it (uid {}) must be able to read the folder you \
             mounted: with rootless Podman on Linux add --userns keep-id to the run command.",
            self.uid, self.uid
        )
    }
}

/// Ask the kernel whether `db` can be read by this process, and if not, where access stops.
pub fn examine(db: &Path) -> DatabaseFile {
    match access(db, AccessFlags::R_OK) {
        Ok(()) => DatabaseFile::Readable,
        Err(Errno::ENOENT | Errno::ENOTDIR) => DatabaseFile::Missing,
        Err(errno) => DatabaseFile::Unreadable(unreadable(db, errno)),
    }
}

/// The first folder on `db`'s path this process may not enter, else the file itself.
fn unreadable(db: &Path, errno: Errno) -> Unreadable {
    let uid = nix::unistd::getuid().as_raw();
    let gid = nix::unistd::getgid().as_raw();
    let folders: Vec<&Path> = db.ancestors().skip(1).collect();
    let blocked_folder = folders
        .into_iter()
        .rev()
        .find(|folder| access(*folder, AccessFlags::X_OK).is_err());
    let (blocked_at, is_the_file) = match blocked_folder {
        Some(folder) => (folder.to_path_buf(), false),
        None => (db.to_path_buf(), true),
    };
    let mode_and_owner = std::fs::metadata(&blocked_at)
        .ok()
        .map(|meta| (meta.mode(), meta.uid()));
    Unreadable {
        db: db.to_path_buf(),
        blocked_at,
        is_the_file,
        mode_and_owner,
        uid,
        gid,
        error: io::Error::from(errno),
    }
}

/// Whether `db` is itself a mount point: a single file bind-mounted into a container. DuckDB
/// keeps changes that are not yet checkpointed in `<db>.wal` beside the file, which such a
/// mount does not bring along (and a writer that replaces the file leaves the mount on the old
/// one), so the server would answer from stale data.
pub fn is_single_file_mount(db: &Path) -> bool {
    let Ok(mountinfo) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return false;
    };
    let db = db.canonicalize().unwrap_or_else(|_| db.to_path_buf());
    mount_points(&mountinfo).any(|point| point == db)
}

/// The mount points of `/proc/self/mountinfo` (its fifth field, with the kernel's octal
/// escapes of space, tab, newline and backslash undone).
fn mount_points(mountinfo: &str) -> impl Iterator<Item = PathBuf> + '_ {
    mountinfo
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|field| PathBuf::from(unescape_octal(field)))
}

fn unescape_octal(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        let escape = bytes
            .get(i + 1..i + 4)
            .filter(|digits| byte == b'\\' && digits.iter().all(|d| (b'0'..=b'7').contains(d)));
        match escape {
            Some(digits) => {
                let value = digits
                    .iter()
                    .fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 4;
            }
            None => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The warning `server_info` gives an agent for the database `name` mounted as a single file:
/// the operator's [`single_file_mount_warning`] without the path.
pub fn single_file_mount_notice(name: &str) -> String {
    format!(
        "the database \"{name}\" is mounted as a single file: DuckDB's write-ahead log, where a \
         writer keeps changes until its next checkpoint, is not visible through such a mount, \
         and a writer that replaces the file is not seen either, so answers may come from stale \
         data. The operator can mount the folder that holds it instead."
    )
}

/// The warning for a single-file mount: the operator's stderr at start.
pub fn single_file_mount_warning(db: &Path) -> String {
    format!(
        "the database {} is mounted as a single file: DuckDB's write-ahead log {}.wal, where a \
         writer keeps changes until its next checkpoint, is not visible through such a mount, \
         and a writer that replaces the file is not seen either, so answers may come from stale \
         data. Mount the folder that holds it instead (-v /Users/me/health:/data:ro, then \
         --db /data/{})",
        db.display(),
        db.display(),
        db.file_name()
            .map_or_else(|| "cgm.duckdb".into(), |name| name.to_string_lossy()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_are_read_with_their_escapes_undone() {
        let mountinfo = "\
22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
801 790 0:52 /health/cgm.duckdb /data/cgm.duckdb ro,relatime - virtiofs share ro
802 790 0:52 /a /my\\040data/x\\134y rw - ext4 /dev/sda1 rw
";
        let points: Vec<PathBuf> = mount_points(mountinfo).collect();
        assert_eq!(
            points,
            [
                PathBuf::from("/"),
                PathBuf::from("/data/cgm.duckdb"),
                PathBuf::from("/my data/x\\y"),
            ]
        );
    }

    #[test]
    fn an_ordinary_file_is_not_a_mount_point() {
        let exe = std::env::current_exe().unwrap();
        assert!(!is_single_file_mount(&exe));
        assert!(is_single_file_mount(Path::new("/")), "/ is a mount point");
    }

    #[test]
    fn a_missing_file_is_missing_and_an_existing_one_readable() {
        let exe = std::env::current_exe().unwrap();
        assert!(matches!(examine(&exe), DatabaseFile::Readable));
        assert!(matches!(
            examine(&exe.join("nothing.duckdb")),
            DatabaseFile::Missing
        ));
        assert!(matches!(
            examine(Path::new("/no/such/folder/cgm.duckdb")),
            DatabaseFile::Missing
        ));
    }
}
