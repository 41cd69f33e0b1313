//! Exactly the files the operator gave: each file named, and each regular file directly in each
//! folder named (not recursively, not hidden ones), sorted by name.
//!
//! - **No globbing, by construction.** A name is only ever a path here; no vendor's file ever
//!   reaches DuckDB (the vendors are read in Rust), and a generic CSV reaches DuckDB's reader as
//!   `/proc/self/fd/<n>` of a descriptor this module opened: digits and slashes, which DuckDB
//!   cannot read as a pattern (`generic::descriptor_path`). `[s]ecret.csv` is that name and no
//!   other; a file named `**` is one file.
//! - **No symbolic link followed out of a folder.** A link in a given folder is followed only
//!   when its target, fully resolved, lies inside that folder; otherwise it is skipped and the
//!   summary says so, without naming where it leads. A link named on the command line is the
//!   operator's own choice and is followed.
//! - **Regular files only.** A FIFO, socket or device is never opened (opening a FIFO blocks,
//!   a device can be anything); the descriptor of every file read is checked again with
//!   `fstat` after opening, with `O_NONBLOCK` so a file swapped for a FIFO cannot block.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::error::{ErrorKind, ImportError};

/// One file to import, or one found and refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// The path as given, or as found in a given folder (what the summary shows).
    pub path: PathBuf,
    /// The path to open: the same, or a link's resolved target inside its folder.
    open: PathBuf,
    /// Whether it was found in a folder (then a link's target has been resolved).
    in_folder: bool,
    /// Why it is not read, when it is not.
    pub refused: Option<Refused>,
}

/// Why a found file is not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// A symbolic link in a folder whose target lies outside it.
    LinkOutOfFolder,
    /// A symbolic link in a folder whose target does not exist.
    BrokenLink,
    /// A FIFO, socket or device.
    Special(&'static str),
}

impl Refused {
    /// What the summary says.
    pub fn reason(self) -> String {
        match self {
            Refused::LinkOutOfFolder => {
                "a symbolic link to a file outside the folder: not followed".into()
            }
            Refused::BrokenLink => "a symbolic link to nothing".into(),
            Refused::Special(what) => format!("{what}: import reads regular files only"),
        }
    }
}

impl Input {
    /// Whether it was found in a given folder (rather than named on the command line).
    pub fn found_in_folder(&self) -> bool {
        self.in_folder
    }

    /// Open it for reading, as a regular file (checked on the open descriptor).
    pub fn open(&self) -> Result<File, ImportError> {
        let mut options = OpenOptions::new();
        options.read(true);
        let mut flags = nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_CLOEXEC;
        if self.in_folder {
            // The resolved target has no link left in it; one put there since is not followed.
            flags |= nix::fcntl::OFlag::O_NOFOLLOW;
        }
        options.custom_flags(flags.bits());
        let file = options.open(&self.open).map_err(ImportError::unreadable)?;
        let meta = file.metadata().map_err(ImportError::unreadable)?;
        if !meta.file_type().is_file() {
            return Err(special_error(special_kind(&meta.file_type())));
        }
        Ok(file)
    }
}

fn special_kind(file_type: &std::fs::FileType) -> &'static str {
    if file_type.is_fifo() {
        "a FIFO (named pipe)"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() || file_type.is_block_device() {
        "a device"
    } else if file_type.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

/// The error of a special file named on the command line.
pub fn special_error(what: &'static str) -> ImportError {
    ImportError::new(
        ErrorKind::SpecialFile,
        format!("it is {what}: import reads regular files only and never opened it"),
    )
}

/// The files `inputs` name (see the module's documentation).
pub fn input_files(inputs: &[PathBuf]) -> Result<Vec<Input>, ImportError> {
    let mut files = Vec::new();
    for input in inputs {
        let meta = std::fs::metadata(input).map_err(|error| {
            ImportError::new(
                ErrorKind::InputMissing,
                format!(
                    "cannot read {}: {error}",
                    super::text::shown(&input.display().to_string())
                ),
            )
        })?;
        if meta.is_dir() {
            let found = folder(input)?;
            if found.is_empty() {
                return Err(ImportError::new(
                    ErrorKind::EmptyFolder,
                    format!(
                        "{} holds no file",
                        super::text::shown(&input.display().to_string())
                    ),
                ));
            }
            files.extend(found);
        } else {
            let refused = (!meta.file_type().is_file())
                .then(|| Refused::Special(special_kind(&meta.file_type())));
            files.push(Input {
                path: input.clone(),
                open: input.clone(),
                in_folder: false,
                refused,
            });
        }
    }
    if files.is_empty() {
        return Err(ImportError::new(ErrorKind::NoInput, "no file to import"));
    }
    Ok(files)
}

/// The entries of one folder.
fn folder(dir: &Path) -> Result<Vec<Input>, ImportError> {
    let listing_failed = |error: std::io::Error| {
        ImportError::new(
            ErrorKind::InputMissing,
            format!(
                "cannot list {}: {error}",
                super::text::shown(&dir.display().to_string())
            ),
        )
    };
    let root = std::fs::canonicalize(dir).map_err(listing_failed)?;
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(listing_failed)? {
        let entry = entry.map_err(listing_failed)?;
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let file_type = entry.file_type().map_err(listing_failed)?;
        let mut input = Input {
            path: path.clone(),
            open: path.clone(),
            in_folder: true,
            refused: None,
        };
        if file_type.is_dir() {
            continue;
        } else if file_type.is_symlink() {
            match std::fs::canonicalize(&path) {
                Err(_) => input.refused = Some(Refused::BrokenLink),
                Ok(target) if !target.starts_with(&root) => {
                    input.refused = Some(Refused::LinkOutOfFolder)
                }
                Ok(target) => match std::fs::metadata(&target) {
                    Ok(meta) if meta.is_dir() => continue,
                    Ok(meta) if !meta.is_file() => {
                        input.refused = Some(Refused::Special(special_kind(&meta.file_type())))
                    }
                    Ok(_) => input.open = target,
                    Err(_) => input.refused = Some(Refused::BrokenLink),
                },
            }
        } else if !file_type.is_file() {
            input.refused = Some(Refused::Special(special_kind(&file_type)));
        }
        found.push(input);
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}
