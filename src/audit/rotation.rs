//! The log's files: generations, which of them a running server holds, and rotation.
//!
//! `PATH` is rotated to `PATH.1` (and every `PATH.n` to `PATH.n+1`) before a record would take it
//! past `--audit-max-bytes`; past `--audit-generations` the oldest generations go, but never one
//! a running server holds. Each server holds a shared `flock` on every generation it has written
//! a record to, its newest `--audit-generations` − 1 of them: they go only once it has written
//! into that many newer ones, or has ended (the kernel drops its locks however it ends). So with
//! one server the log keeps at most `--audit-generations` files, and another server's records
//! are never removed while it runs, however much this one writes. Renames never replace a file (a
//! hard link, then an unlink, so the inode and its locks move along), and a generation that goes
//! may be anywhere in the line, the younger ones moving down to close the gap, so a server that
//! holds an old generation keeps that one and no other.

use std::collections::{BTreeSet, VecDeque};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::AuditError;

/// The files of an open log, as one server sees them.
#[derive(Debug)]
pub(super) struct Generations {
    path: PathBuf,
    /// Where records go now.
    pub(super) file: File,
    /// The generations this server has written to, oldest first, each share-locked: at most the
    /// newest `generations − 1`.
    held: VecDeque<Held>,
    /// Generations on disk at the last count, `PATH` included.
    pub(super) kept: u32,
    /// More generations than the cap are kept because running servers hold them.
    pub(super) over_cap: bool,
}

/// A generation this server holds: its identity and the locked descriptor.
#[derive(Debug)]
struct Held {
    id: (u64, u64),
    _lock: File,
}

impl Generations {
    /// Open (creating with mode 0600) `path` for appending.
    pub(super) fn open(path: &Path) -> Result<Generations, AuditError> {
        let file = open_append(path)?;
        Ok(Generations {
            path: path.to_path_buf(),
            file,
            held: VecDeque::new(),
            kept: 1 + rotated_count(path),
            over_cap: false,
        })
    }

    /// Hold the file records go to now (if not held yet), letting go of the oldest held beyond
    /// `window`.
    pub(super) fn hold_current(&mut self, window: u32) -> std::io::Result<()> {
        let meta = self.file.metadata()?;
        let id = (meta.dev(), meta.ino());
        if self.held.back().is_some_and(|held| held.id == id) {
            return Ok(());
        }
        // The same open file: the lock follows the inode through every rename.
        let lock = self.file.try_clone()?;
        lock.lock_shared()?;
        self.held.push_back(Held { id, _lock: lock });
        self.release_beyond(window);
        Ok(())
    }

    /// Let go of the oldest held generations until at most `keep` are held.
    fn release_beyond(&mut self, keep: u32) {
        while self.held.len() > keep as usize {
            self.held.pop_front();
        }
    }

    /// Make room for a line of `incoming` bytes under a cap of `max_bytes` per generation and
    /// `generations` of them: let go of this server's holds beyond what it keeps after the
    /// rotation, remove the oldest generations no running server holds (as many as needed to
    /// stay within the cap), close the gaps, shift every generation up by one and start a fresh
    /// `PATH`, mode 0600.
    pub(super) fn rotate(
        &mut self,
        incoming: u64,
        max_bytes: u64,
        generations: u32,
    ) -> Result<(), AuditError> {
        // Another server writing the same log may have rotated it: then `PATH` is a fresh file,
        // and this one goes on there.
        if !is_same_file(&self.file, &self.path) {
            self.file = open_append(&self.path)?;
            let size = self.file.metadata().map_or(0, |m| m.len());
            if size == 0 || size.saturating_add(incoming) <= max_bytes {
                return Ok(());
            }
        }
        // After it, this server holds the fresh `PATH` and at most `generations − 2` older ones.
        self.release_beyond(generations - 2);
        let rotated = rotated_count(&self.path);
        let mut excess = (rotated + 2).saturating_sub(generations);
        let mut removed = BTreeSet::new();
        for index in (1..=rotated).rev() {
            if excess == 0 {
                break;
            }
            let generation = generation_path(&self.path, index);
            match remove_unless_held(&generation) {
                Ok(Removal::Removed) => {
                    removed.insert(index);
                    excess -= 1;
                }
                Ok(Removal::Held) => {}
                Err(error) => tracing::warn!(
                    "cannot remove the audit log's old generation {}: {error}",
                    generation.display()
                ),
            }
        }
        let remaining: Vec<u32> = (1..=rotated).filter(|i| !removed.contains(i)).collect();
        for (from, to) in shift_plan(&remaining) {
            self.rename(from, to)?;
        }
        self.rename(0, 1)?;
        self.file = open_append(&self.path)?;
        self.kept = remaining.len() as u32 + 2;
        self.over_cap = excess > 0;
        Ok(())
    }

    /// Rename generation `from` to `to` (0 is `PATH`), never replacing a file.
    fn rename(&self, from: u32, to: u32) -> Result<(), AuditError> {
        let (from, to) = (
            generation_path_or_current(&self.path, from),
            generation_path_or_current(&self.path, to),
        );
        rename_no_replace(&from, &to).map_err(|error| AuditError::Rotate {
            path: from,
            rotated: to,
            error,
        })
    }
}

/// The renames that take the rotated generations still on disk (`remaining`, ascending indexes)
/// to `2, 3, …` in order, each into a free name: first those that move down into a gap, youngest
/// first, then those that move up by one, oldest first. `PATH` then becomes `PATH.1`.
fn shift_plan(remaining: &[u32]) -> Vec<(u32, u32)> {
    let targets = remaining.iter().zip(2..);
    let down = targets
        .clone()
        .filter(|(from, to)| to < *from)
        .map(|(from, to)| (*from, to));
    let up: Vec<(u32, u32)> = targets
        .filter(|(from, to)| to > *from)
        .map(|(from, to)| (*from, to))
        .collect();
    down.chain(up.into_iter().rev()).collect()
}

/// `PATH.index`: the generation `index` rotations old.
pub fn generation_path(path: &Path, index: u32) -> PathBuf {
    let mut rotated = path.as_os_str().to_owned();
    rotated.push(format!(".{index}"));
    PathBuf::from(rotated)
}

/// `PATH` for 0, else `PATH.index`.
fn generation_path_or_current(path: &Path, index: u32) -> PathBuf {
    match index {
        0 => path.to_path_buf(),
        _ => generation_path(path, index),
    }
}

/// `PATH.1`, where a rotated log goes.
pub fn rotated_path(path: &Path) -> PathBuf {
    generation_path(path, 1)
}

/// How many rotated generations there are: `PATH.1`, `PATH.2`, … up to the first missing.
pub(super) fn rotated_count(path: &Path) -> u32 {
    let mut count = 0;
    while std::fs::symlink_metadata(generation_path(path, count + 1)).is_ok() {
        count += 1;
    }
    count
}

/// Whether `file` is the file at `path` now.
fn is_same_file(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

/// What became of an old generation.
enum Removal {
    /// Removed (or already gone).
    Removed,
    /// A running server holds it: kept.
    Held,
}

/// Remove `path` unless a running server holds a lock on it; held exclusively while removed.
fn remove_unless_held(path: &Path) -> std::io::Result<Removal> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Removal::Removed),
        Err(error) => return Err(error),
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(Removal::Held),
        Err(std::fs::TryLockError::Error(error)) => return Err(error),
    }
    match std::fs::remove_file(path) {
        Ok(()) => Ok(Removal::Removed),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Removal::Removed),
        Err(error) => Err(error),
    }
}

/// Rename `from` to `to`, failing if `to` exists (a rename would silently replace it, and with
/// it records): a hard link then an unlink, which keeps the inode (and the locks on it).
fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    // Only the log's own files move: anything else in their place is the operator's to clear.
    if !std::fs::symlink_metadata(from)?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file; move it out of the way",
        ));
    }
    match std::fs::hard_link(from, to) {
        Ok(()) => std::fs::remove_file(from),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Err(error),
        // A file system without hard links: check, then rename (a race with another server's
        // rotation is possible only there).
        Err(_) if std::fs::symlink_metadata(to).is_err() => std::fs::rename(from, to),
        Err(error) => Err(error),
    }
}

pub(super) fn open_append(path: &Path) -> Result<File, AuditError> {
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)
        .map_err(|error| AuditError::Open {
            path: path.to_path_buf(),
            error,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Apply `plan` to generations named by their index, checking that every rename goes to a
    /// free name; the names in the end, each with the generation that holds it.
    fn apply(remaining: &[u32], plan: &[(u32, u32)]) -> Vec<(u32, u32)> {
        let mut names: std::collections::BTreeMap<u32, u32> =
            remaining.iter().map(|&i| (i, i)).collect();
        for &(from, to) in plan {
            assert!(
                !names.contains_key(&to),
                "{plan:?} renames {from} onto {to}"
            );
            let generation = names
                .remove(&from)
                .expect("renames a generation that is there");
            names.insert(to, generation);
        }
        names.into_iter().collect()
    }

    #[test]
    fn the_generations_left_close_their_gaps_in_order_and_leave_path_1_free() {
        let cases: [&[u32]; 8] = [
            &[],
            &[1, 2, 3],
            &[2, 3],
            &[1, 3],
            &[3, 4],
            &[1, 2, 5],
            &[4],
            &[2, 4, 5, 9],
        ];
        for remaining in cases {
            let plan = shift_plan(remaining);
            let after = apply(remaining, &plan);
            let expected: Vec<(u32, u32)> = remaining
                .iter()
                .zip(2..)
                .map(|(from, to)| (to, *from))
                .collect();
            assert_eq!(after, expected, "{remaining:?} with {plan:?}");
        }
    }
}
