//! Each worker's private temporary directory, where DuckDB spills what does not fit in its
//! `memory_limit` (`docs/ARCHITECTURE.md`, "Spilling and the memory budget").
//!
//! Layout, under the root the operator chose (`--temp-dir`) or [`default_root`]:
//!
//! ```text
//! <root>/                      0700, owned by this user
//!   server-<pid>-<nonce>.lock  flock()ed by the live server for its whole life
//!   server-<pid>-<nonce>/      0700, this server's workers
//!     w-<n>/                   0700, one worker's: landlock grants it read-write, DuckDB's
//!                              temp_directory points at it
//! ```
//!
//! Removal, whatever the way a worker ends:
//! - the pool removes `w-<n>` once it has reaped the worker: after a reply, a deadline or
//!   cancellation kill, a crash, or a SIGKILL from outside ([`WorkerTempDir`]'s `Drop`);
//! - the server removes its own `server-…` directory when it exits ([`TempRoot`]'s `Drop`);
//! - when the server itself dies without cleaning up (SIGKILL, a crash), its workers die with it
//!   (parent-death signal), the kernel drops its lock, and the next server to start sweeps every
//!   `server-…` whose lock nobody holds ([`TempRoot::open`]).
//!
//! The lock file is locked under a temporary name and only then renamed into place, so a
//! starting server never sees another live server's lock unlocked and never sweeps its files.

use std::fs::{self, DirBuilder, File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Prefix of a server's directory and lock file in the root.
const SERVER_PREFIX: &str = "server-";

/// How old an unlocked `.server-….lock.pending` file must be before a sweep takes it for a dead
/// server's. A starting server creates its file, then locks it: in between, the file is
/// unlocked, and a sweep by another server starting at the same moment would remove it (or
/// hold its lock for an instant, so the starting server's own attempt fails) and that server
/// would fail to start.
const PENDING_GRACE: std::time::Duration = std::time::Duration::from_secs(60);

/// Why the temporary directory cannot be set up. Each names the path and the way out.
#[derive(Debug)]
pub enum TempDirError {
    /// The root could not be created.
    CreateRoot {
        /// The root.
        root: PathBuf,
        /// The error.
        error: io::Error,
    },
    /// The root exists but is not a private directory of this user: another user could read
    /// or plant files in it.
    RootNotPrivate {
        /// The root.
        root: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// This server's own directory or lock could not be made.
    Instance {
        /// The path.
        path: PathBuf,
        /// The error.
        error: io::Error,
    },
}

impl std::fmt::Display for TempDirError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TempDirError::CreateRoot { root, error } => {
                write!(
                    f,
                    "cannot create the workers' temporary directory {}: {error}; pass --temp-dir \
                     with a directory you can write, or --max-temp-size 0 to run without spilling",
                    root.display()
                )?;
                if error.raw_os_error() == Some(nix::errno::Errno::EROFS as i32) {
                    f.write_str(
                        ". The file system is read-only: in a container run with --read-only, \
                         mount a tmpfs for it (--tmpfs /tmp; spilled data then stays in memory) \
                         or a volume, and pass --temp-dir with a folder on it",
                    )?;
                }
                Ok(())
            }
            TempDirError::RootNotPrivate { root, why } => write!(
                f,
                "the workers' temporary directory {} is not private ({why}); remove it, or \
                 pass --temp-dir with a directory only you can use",
                root.display()
            ),
            TempDirError::Instance { path, error } => write!(
                f,
                "cannot set up {} in the workers' temporary directory: {error}; pass --temp-dir \
                 with a directory you can write, or --max-temp-size 0 to run without spilling",
                path.display()
            ),
        }
    }
}

/// The file system the root is on, for the operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backing {
    /// A disk: spilled data leaves RAM.
    Disk,
    /// tmpfs: spilled data stays in RAM (outside the memory budget), so spilling only
    /// helps while RAM is free.
    Memory,
}

/// This server's place under the root: the lock that says it is alive, and the directory its
/// workers' directories are made in. Removed on drop.
#[derive(Debug)]
pub struct TempRoot {
    root: PathBuf,
    instance: PathBuf,
    lock_path: PathBuf,
    /// Held (flock) until drop; the kernel releases it if the server dies.
    _lock: File,
    next_worker: AtomicU64,
    backing: Backing,
}

impl TempRoot {
    /// Create (or check) the root, sweep what dead servers left, and make this server's
    /// directory.
    pub fn open(root: &Path) -> Result<TempRoot, TempDirError> {
        create_private_dir_all(root)?;
        sweep(root);
        let name = format!("{SERVER_PREFIX}{}-{:016x}", std::process::id(), nonce());
        let lock_path = root.join(format!("{name}.lock"));
        let instance = root.join(&name);
        let instance_error = |path: &Path| {
            let path = path.to_path_buf();
            move |error| TempDirError::Instance { path, error }
        };
        // Locked before it has the name the sweep looks for.
        let pending = root.join(format!(".{name}.lock.pending"));
        let lock = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&pending)
            .map_err(instance_error(&pending))?;
        lock.try_lock().map_err(|e| match e {
            TryLockError::Error(error) => TempDirError::Instance {
                path: pending.clone(),
                error,
            },
            TryLockError::WouldBlock => TempDirError::Instance {
                path: pending.clone(),
                error: io::Error::other("locked by another process"),
            },
        })?;
        fs::rename(&pending, &lock_path).map_err(instance_error(&lock_path))?;
        DirBuilder::new()
            .mode(0o700)
            .create(&instance)
            .map_err(instance_error(&instance))?;
        Ok(TempRoot {
            backing: backing(root),
            root: root.to_path_buf(),
            instance,
            lock_path,
            _lock: lock,
            next_worker: AtomicU64::new(0),
        })
    }

    /// The root the operator chose (or the default).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// This server's directory, in which each worker's is made.
    pub fn instance(&self) -> &Path {
        &self.instance
    }

    /// Whether spilled data leaves RAM.
    pub fn backing(&self) -> Backing {
        self.backing
    }

    /// Bytes free for spilling now, on the root's file system.
    pub fn free_bytes(&self) -> u64 {
        nix::sys::statvfs::statvfs(&self.instance)
            .map(|s| s.blocks_available() * s.fragment_size())
            .unwrap_or(0)
    }

    /// Make the next worker's directory (mode 0700), removed when the returned guard drops.
    pub fn worker_dir(&self) -> io::Result<WorkerTempDir> {
        let n = self.next_worker.fetch_add(1, Ordering::Relaxed);
        let path = self.instance.join(format!("w-{n}"));
        DirBuilder::new().mode(0o700).create(&path)?;
        Ok(WorkerTempDir { path })
    }
}

impl Drop for TempRoot {
    fn drop(&mut self) {
        remove_logged(&self.instance);
        let _ = fs::remove_file(&self.lock_path);
    }
}

/// One worker's temporary directory; removed with everything in it on drop. The pool drops it
/// only after the worker has been reaped, so nothing writes into it any more.
#[derive(Debug)]
pub struct WorkerTempDir {
    path: PathBuf,
}

impl WorkerTempDir {
    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for WorkerTempDir {
    fn drop(&mut self) {
        remove_logged(&self.path);
    }
}

/// Bytes the files directly in `dir` occupy on disk (DuckDB's spill files: it makes no
/// subdirectories, and landlock gives the worker no right to).
pub fn bytes_used(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.blocks() * 512)
        .sum()
}

/// What a call is told when its worker was stopped for spilling more than `max`.
pub fn over_cap_message(max: u64) -> String {
    format!(
        "The query needed more than its {} of temporary disk space (--max-temp-size), so its \
         worker was stopped. Filter or aggregate earlier, or select fewer columns; the operator \
         can raise --max-temp-size.",
        crate::size::format_size(max)
    )
}

/// The default root: `$XDG_RUNTIME_DIR/duckgate`, else `<system temp>/duckgate-<uid>`, the first
/// of them on a disk; when both are in RAM (tmpfs), `~/.cache/duckgate/spill`, because spilling
/// to RAM would not relieve memory. `--temp-dir` overrides it.
///
/// A place on a read-only file system is never chosen while another can be written: in a
/// container whose root file system is read-only (`--read-only`) with a tmpfs on `/tmp`, the
/// cache folder is read-only too, and the tmpfs is the one place that works.
pub fn default_root() -> PathBuf {
    let uid = nix::unistd::geteuid().as_raw();
    let mut candidates = Vec::new();
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        candidates.push(PathBuf::from(runtime).join("duckgate"));
    }
    candidates.push(std::env::temp_dir().join(format!("duckgate-{uid}")));
    let writable = |path: &PathBuf| !read_only(&existing_ancestor(path));
    let on_disk = candidates
        .iter()
        .find(|c| writable(c) && backing(&existing_ancestor(c)) == Backing::Disk);
    match (on_disk, cache_root().filter(writable)) {
        (Some(found), _) => found.clone(),
        (None, Some(cache)) => cache,
        (None, None) => match candidates.iter().position(writable) {
            Some(first_writable) => candidates.swap_remove(first_writable),
            None => candidates.swap_remove(0),
        },
    }
}

/// Whether `path` is on a file system mounted read-only.
fn read_only(path: &Path) -> bool {
    use nix::sys::statvfs::{FsFlags, statvfs};
    statvfs(path).is_ok_and(|s| s.flags().contains(FsFlags::ST_RDONLY))
}

/// `$XDG_CACHE_HOME/duckgate/spill`, else `~/.cache/duckgate/spill`.
fn cache_root() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("duckgate").join("spill"))
}

/// The nearest ancestor of `path` that exists (for asking its file system before creating it).
fn existing_ancestor(path: &Path) -> PathBuf {
    path.ancestors()
        .find(|p| p.exists())
        .unwrap_or(Path::new("/"))
        .to_path_buf()
}

/// Whether `path`'s file system keeps its files in RAM.
fn backing(path: &Path) -> Backing {
    use nix::sys::statfs::{TMPFS_MAGIC, statfs};
    match statfs(path) {
        Ok(s) if s.filesystem_type() == TMPFS_MAGIC => Backing::Memory,
        _ => Backing::Disk,
    }
}

/// Create `root` (and missing parents) and check it is a directory of this user that nobody
/// else can enter: the server trusts what it finds there only as far as removing it.
fn create_private_dir_all(root: &Path) -> Result<(), TempDirError> {
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(root)
        .map_err(|error| TempDirError::CreateRoot {
            root: root.to_path_buf(),
            error,
        })?;
    let not_private = |why: String| TempDirError::RootNotPrivate {
        root: root.to_path_buf(),
        why,
    };
    let meta = fs::symlink_metadata(root).map_err(|e| not_private(e.to_string()))?;
    if !meta.file_type().is_dir() {
        return Err(not_private("it is not a directory".into()));
    }
    let uid = nix::unistd::geteuid().as_raw();
    if meta.uid() != uid {
        return Err(not_private(format!(
            "it belongs to uid {}, not {uid}",
            meta.uid()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(not_private(format!(
            "its mode is {:o}; it must be 700",
            meta.mode() & 0o777
        )));
    }
    Ok(())
}

/// Remove what servers that are no longer alive left in `root`: each `server-…` directory and
/// lock file whose lock nobody holds (or whose lock file is gone), and lock files a server died
/// before renaming. Best effort: a failure is logged, not fatal.
fn sweep(root: &Path) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    let mut servers = std::collections::BTreeSet::new();
    let mut pending = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with(&format!(".{SERVER_PREFIX}")) && name.ends_with(".pending") {
            pending.push(entry.path());
        } else if name.starts_with(SERVER_PREFIX) {
            servers.insert(name.trim_end_matches(".lock").to_string());
        }
    }
    for lock_path in pending {
        let settled = fs::metadata(&lock_path)
            .and_then(|meta| meta.modified())
            .is_ok_and(|modified| modified.elapsed().is_ok_and(|age| age >= PENDING_GRACE));
        // Only then is the lock tested: testing takes it, for an instant.
        if settled && unlocked(&lock_path) == Some(true) {
            let _ = fs::remove_file(&lock_path);
        }
    }
    for server in servers {
        let dir = root.join(&server);
        let lock_path = root.join(format!("{server}.lock"));
        // `None`: the lock file is gone, so its server died while creating or sweeping it.
        if unlocked(&lock_path) != Some(false) {
            if dir.exists() {
                tracing::info!(path = %dir.display(), "removing the temporary files of a duckgate server that is no longer running");
            }
            remove_logged(&dir);
            let _ = fs::remove_file(&lock_path);
        }
    }
}

/// Whether nobody holds the lock on `lock_path` (`None`: the file does not exist). A lock that
/// cannot be tested counts as held: nothing is removed on a doubt.
fn unlocked(lock_path: &Path) -> Option<bool> {
    match File::open(lock_path) {
        Ok(lock) => match lock.try_lock() {
            Ok(()) => Some(true),
            Err(TryLockError::WouldBlock) => Some(false),
            Err(TryLockError::Error(error)) => {
                tracing::warn!(path = %lock_path.display(), %error, "cannot tell whether a duckgate server still uses this");
                Some(false)
            }
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(error) => {
            tracing::warn!(path = %lock_path.display(), %error, "cannot tell whether a duckgate server still uses this");
            Some(false)
        }
    }
}

fn remove_logged(path: &Path) {
    match fs::remove_dir_all(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "could not remove a worker's temporary files")
        }
    }
}

/// A number that makes this server's directory name unguessable to other local users' races.
fn nonce() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "duckgate-temp-dir-test-{name}-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_sweep_spares_the_unlocked_file_of_a_server_still_starting_and_removes_an_old_one() {
        let root = scratch("pending");
        create_private_dir_all(&root).unwrap();
        let starting = root.join(".server-1-00000000000000aa.lock.pending");
        let abandoned = root.join(".server-2-00000000000000bb.lock.pending");
        fs::write(&starting, b"").unwrap();
        fs::write(&abandoned, b"").unwrap();
        let long_ago = std::time::SystemTime::now() - PENDING_GRACE * 2;
        File::options()
            .write(true)
            .open(&abandoned)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        sweep(&root);
        assert!(
            starting.exists(),
            "a server between creating and locking its file"
        );
        assert!(
            !abandoned.exists(),
            "a server that died before locking its file"
        );
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn servers_starting_at_the_same_moment_all_start() {
        let root = scratch("together");
        for _ in 0..25 {
            let opened: Vec<_> = (0..8)
                .map(|_| {
                    let root = root.clone();
                    std::thread::spawn(move || TempRoot::open(&root).map(drop))
                })
                .collect();
            for server in opened {
                server.join().unwrap().unwrap();
            }
        }
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn worker_directories_are_private_and_removed_on_drop() {
        let root = scratch("private");
        let temp = TempRoot::open(&root).unwrap();
        let worker = temp.worker_dir().unwrap();
        let mode = fs::metadata(worker.path()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert_eq!(fs::metadata(&root).unwrap().mode() & 0o777, 0o700);
        fs::write(worker.path().join("spill.tmp"), b"x").unwrap();
        let path = worker.path().to_path_buf();
        drop(worker);
        assert!(!path.exists());
        let instance = temp.instance().to_path_buf();
        drop(temp);
        assert!(!instance.exists());
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_dead_servers_leftovers_are_swept_and_a_live_servers_are_kept() {
        let root = scratch("sweep");
        let live = TempRoot::open(&root).unwrap();
        let live_worker = live.worker_dir().unwrap();
        // A dead server: its files, its lock file, nobody holding the lock.
        let dead = root.join("server-1-00000000000000aa");
        fs::create_dir_all(dead.join("w-0")).unwrap();
        fs::write(dead.join("w-0/duckdb_temp_block.tmp"), b"spilled").unwrap();
        fs::write(root.join("server-1-00000000000000aa.lock"), b"").unwrap();
        // One that died before its lock existed.
        let orphan = root.join("server-2-00000000000000bb");
        fs::create_dir_all(&orphan).unwrap();
        let next = TempRoot::open(&root).unwrap();
        assert!(!dead.exists() && !orphan.exists());
        assert!(!root.join("server-1-00000000000000aa.lock").exists());
        assert!(
            live_worker.path().exists(),
            "a live server's worker directory was swept"
        );
        drop((live_worker, live, next));
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_root_other_users_can_enter_is_refused() {
        let root = scratch("open-mode");
        fs::create_dir_all(&root).unwrap();
        fs::set_permissions(&root, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        let error = TempRoot::open(&root).unwrap_err();
        assert!(
            matches!(error, TempDirError::RootNotPrivate { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("--temp-dir"), "{error}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_default_root_belongs_to_this_user() {
        let root = default_root();
        let uid = nix::unistd::geteuid().as_raw().to_string();
        let text = root.to_string_lossy();
        assert!(text.contains("duckgate"), "{text}");
        assert!(
            text.ends_with(&format!("duckgate-{uid}"))
                || text.ends_with("duckgate")
                || text.ends_with("spill"),
            "{text}"
        );
    }
}
