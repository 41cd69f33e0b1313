//! Which connections are armed, with which judge, and the callback DuckDB's side calls.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use duckdb::Connection;

use crate::ffi::{self, RawFact};
use duckgate_plan_facts::PlanFacts;

/// Which of a prepare's two plans a judge is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// As DuckDB's binder made it, before any optimizer ran: every object the statement
    /// references, and nothing evaluated yet.
    Bound,
    /// After DuckDB's optimizers: what execution will read.
    Optimized,
}

/// A judge's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The plan may go on.
    Allow,
    /// DuckDB's prepare fails; the judge keeps its reason for its caller.
    Refuse,
}

/// What decides, for an armed connection, whether a plan may go on.
///
/// It is called on the thread that prepares, while DuckDB holds the connection's lock: it must
/// not call into DuckDB. A panic counts as a refusal.
pub trait Judge: Send + Sync {
    /// Judge one plan.
    fn judge(&self, phase: Phase, facts: &PlanFacts) -> Verdict;
}

/// The database a reader was installed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DatabaseToken(u64);

/// An armed connection's judge and counts.
struct Armed {
    judge: Arc<dyn Judge>,
    judged: Arc<Counts>,
}

#[derive(Default)]
struct Counts {
    bound: AtomicU64,
    optimized: AtomicU64,
}

/// Armed connections by (database, DuckDB connection id).
static ARMED: Mutex<Option<HashMap<(u64, u64), Armed>>> = Mutex::new(None);

/// The raw handle of each database a reader was installed on, by token, as an address (a raw
/// pointer is not `Send`). The databases live as long as the process (see [`open_in_memory`]).
static DATABASES: Mutex<Option<HashMap<u64, usize>>> = Mutex::new(None);

/// The raw handle of the database `token` names.
pub(crate) fn database_of(token: DatabaseToken) -> Option<duckdb::ffi::duckdb_database> {
    let databases = DATABASES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let address = *databases.as_ref()?.get(&token.0)?;
    Some(address as duckdb::ffi::duckdb_database)
}

/// The next database's token.
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

fn armed() -> MutexGuard<'static, Option<HashMap<(u64, u64), Armed>>> {
    // A judge never runs under this lock, so a poisoned lock only means a panic elsewhere
    // between a get and an insert: the map is still whole.
    ARMED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Open an in-memory DuckDB with `settings` (DuckDB's configuration options, applied at open)
/// and the plan reader installed, and return a connection to it.
///
/// The database lives as long as the process: the `duckdb` crate's connections made from a raw
/// handle never close it, and its connections may be cloned at any time. duckgate opens one per
/// worker process.
pub fn open_in_memory(
    settings: &[(&str, &str)],
    folders: &FolderMounts<'_>,
) -> Result<(Connection, DatabaseToken), String> {
    let database = ffi::open_in_memory_raw(settings)?;
    let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    // SAFETY: `database` was just opened and is never closed (see above).
    unsafe { ffi::install(database, judge_plan, token) }?;
    DATABASES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(token, database as usize);
    // SAFETY: as above. Installed before the first connection opens, so every connection of
    // the database records its errors.
    unsafe { ffi::install_error_reader(database, token) }?;
    if !folders.folders.is_empty() {
        // SAFETY: as above.
        unsafe {
            ffi::mount_folders(
                database,
                folders.folders,
                folders.database_files,
                folders.check,
                ffi::GlobCaps {
                    max_files: folders.max_files,
                    max_bytes: folders.max_bytes,
                },
                folder_privacy,
                token,
            )
        }?;
    }
    // SAFETY: `database` is open and stays open for the process's life, which the handle the
    // `duckdb` crate keeps (without closing it) therefore never outlives.
    let connection = unsafe { Connection::open_from_raw(database) }
        .map_err(|e| format!("could not connect to the database: {e}"))?;
    Ok((connection, DatabaseToken(token)))
}

/// Folders to mount on the database's file system (`duckgate_folders_mount`): a path that
/// begins with a name and a slash is read, read-only, from its directory.
#[derive(Debug, Clone, Copy)]
pub struct FolderMounts<'a> {
    /// (name, absolute directory with its links resolved) pairs.
    pub folders: &'a [(String, String)],
    /// Refuse `..` and paths whose links lead out of their folder (off only to show that the
    /// kernel holds alone).
    pub check: bool,
    /// The database file and its WAL: with `check`, a file of a folder that is one of them
    /// under another name (a hard link) is refused.
    pub database_files: &'a [String],
    /// The most files one glob may match.
    pub max_files: u64,
    /// The most bytes the files one glob matches may hold together.
    pub max_bytes: u64,
}

impl FolderMounts<'static> {
    /// No folder.
    pub const NONE: FolderMounts<'static> = FolderMounts {
        folders: &[],
        check: true,
        database_files: &[],
        max_files: 0,
        max_bytes: 0,
    };
}

/// What the operator's privacy rules hide of the declared folders, asked by DuckDB's side as it
/// lists, opens and binds their files (`folders.cpp`). Files are named as the agent names them,
/// `NAME/…`.
///
/// It is called on DuckDB's threads, while DuckDB holds its own locks: it must not call into
/// DuckDB. A panic counts as "hidden" (and an option as refused).
pub trait FolderPrivacy: Send + Sync {
    /// The file does not exist for queries.
    fn hides_file(&self, file: &str) -> bool;
    /// A column rule names the file.
    fn has_column_rules(&self, file: &str) -> bool;
    /// The column of the file does not exist for queries.
    fn hides_column(&self, file: &str, column: &str) -> bool;
    /// The reader's named parameter may not be used on files a column rule names.
    fn refuses_option(&self, option: &str) -> bool;
}

/// The privacy rules of each database's request, by token.
static FOLDER_PRIVACY: Mutex<Option<HashMap<u64, Arc<dyn FolderPrivacy>>>> = Mutex::new(None);

/// From now on, the declared folders of the database `token` names hide what `privacy` hides
/// (`None`: nothing). Set before the request's first statement.
pub fn set_folder_privacy(token: DatabaseToken, privacy: Option<Arc<dyn FolderPrivacy>>) {
    let mut map = FOLDER_PRIVACY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let map = map.get_or_insert_with(HashMap::new);
    match privacy {
        Some(privacy) => map.insert(token.0, privacy),
        None => map.remove(&token.0),
    };
}

/// `duckgate_folder_privacy_t`: the callback DuckDB's side makes about a file or its column.
extern "C" fn folder_privacy(
    database_token: u64,
    question: u32,
    file: *const std::ffi::c_char,
    file_size: usize,
    column: *const std::ffi::c_char,
    column_size: usize,
) -> u32 {
    const NO: u32 = 0;
    const YES: u32 = 1;
    let privacy = FOLDER_PRIVACY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .as_ref()
        .and_then(|map| map.get(&database_token).cloned());
    // No rules hide anything, and no option is classified: refused (asked only of files a
    // column rule names, so not asked at all without rules).
    let Some(privacy) = privacy else {
        return if question == 3 { YES } else { NO };
    };
    // A panic must not unwind into DuckDB's C++ frames: it hides.
    let answer = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the C side passes texts of the given sizes, valid for the duration of this call.
        let (file, column) = unsafe {
            (
                ffi::text_of(file, file_size),
                ffi::text_of(column, column_size),
            )
        };
        match question {
            0 => privacy.hides_file(&file),
            1 => privacy.has_column_rules(&file),
            2 => privacy.hides_column(&file, &column),
            3 => privacy.refuses_option(&column),
            _ => true,
        }
    }));
    match answer {
        Ok(false) => NO,
        Ok(true) | Err(_) => YES,
    }
}

/// A connection whose plans are judged, and how many were.
pub struct ArmedConnection {
    key: (u64, u64),
    judged: Arc<Counts>,
}

impl std::fmt::Debug for ArmedConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArmedConnection")
            .field("connection_id", &self.key.1)
            .finish_non_exhaustive()
    }
}

impl ArmedConnection {
    /// How many plans of `phase` were judged on this connection since it was armed.
    pub fn plans_judged(&self, phase: Phase) -> u64 {
        match phase {
            Phase::Bound => self.judged.bound.load(Ordering::SeqCst),
            Phase::Optimized => self.judged.optimized.load(Ordering::SeqCst),
        }
    }

    /// Give the connection another judge (the counts go on).
    pub fn rearm(&self, judge: Arc<dyn Judge>) {
        let mut armed = armed();
        armed.get_or_insert_with(HashMap::new).insert(
            self.key,
            Armed {
                judge,
                judged: self.judged.clone(),
            },
        );
    }
}

/// From now on, every plan DuckDB prepares on `connection` (of the database `token` names) is
/// handed to `judge`. There is no way to disarm a connection but to drop it with its database.
pub fn arm(
    connection: &Connection,
    token: DatabaseToken,
    judge: Arc<dyn Judge>,
) -> Result<ArmedConnection, String> {
    let id: u64 = connection
        .query_row("SELECT current_connection_id()", [], |row| row.get(0))
        .map_err(|e| format!("could not read the connection's id: {e}"))?;
    let judged = Arc::new(Counts::default());
    let key = (token.0, id);
    armed().get_or_insert_with(HashMap::new).insert(
        key,
        Armed {
            judge,
            judged: judged.clone(),
        },
    );
    Ok(ArmedConnection { key, judged })
}

/// `duckgate_plan_judge`: the callback DuckDB's side makes with every plan.
extern "C" fn judge_plan(
    database_token: u64,
    connection_id: u64,
    phase: u32,
    facts: *const RawFact,
    fact_count: usize,
) -> u32 {
    const ALLOW: u32 = 0;
    const REFUSE: u32 = 1;
    const NOT_ARMED: u32 = 2;
    let found = armed()
        .as_ref()
        .and_then(|map| map.get(&(database_token, connection_id)))
        .map(|armed| (armed.judge.clone(), armed.judged.clone()));
    let Some((judge, judged)) = found else {
        return NOT_ARMED;
    };
    let phase = match phase {
        0 => Phase::Bound,
        1 => Phase::Optimized,
        _ => return REFUSE,
    };
    match phase {
        Phase::Bound => judged.bound.fetch_add(1, Ordering::SeqCst),
        Phase::Optimized => judged.optimized.fetch_add(1, Ordering::SeqCst),
    };
    // A panic must not unwind into DuckDB's C++ frames: it becomes a refusal.
    let verdict = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the C side passes `fact_count` facts valid for the duration of this call.
        let facts = unsafe { ffi::read_facts(facts, fact_count) };
        judge.judge(phase, &facts)
    }));
    match verdict {
        Ok(Verdict::Allow) => ALLOW,
        Ok(Verdict::Refuse) | Err(_) => REFUSE,
    }
}
