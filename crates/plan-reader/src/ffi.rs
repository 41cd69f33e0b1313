//! The C side (`vendor/libduckdb-sys/duckgate/plan_reader.h`): its declarations, and the
//! conversion of the facts it hands over into owned Rust values. Every `unsafe` of the crate is
//! in this file.

use std::ffi::{CStr, CString, c_char};
use std::ptr;

use duckdb::ffi as duckdb_c;

use crate::errors::DuckdbError;
use duckgate_plan_facts::{
    Code, ColumnKind, Fact, FunctionFact, FunctionKind, PlanFacts, ScanColumn, ScanFacts,
};
use duckgate_plan_facts::{
    Enumeration, ExceptionType, ExpressionClass, LogicalOperatorType, LogicalTypeId,
};

/// `duckgate_text`.
#[repr(C)]
pub(crate) struct Text {
    pub(crate) data: *const c_char,
    pub(crate) size: usize,
}

/// `duckgate_plan_fact`.
#[repr(C)]
pub(crate) struct RawFact {
    kind: u32,
    code: u32,
    detail: u64,
    label: Text,
    path: *const Text,
    path_len: usize,
    operator_ordinal: u32,
}

/// `duckgate_plan_judge`.
pub(crate) type RawJudge = extern "C" fn(
    database_token: u64,
    connection_id: u64,
    phase: u32,
    facts: *const RawFact,
    fact_count: usize,
) -> u32;

unsafe extern "C" {
    fn duckgate_plan_reader_install(
        database: duckdb_c::duckdb_database,
        judge: RawJudge,
        database_token: u64,
        error: *mut *mut c_char,
    ) -> i32;
    fn duckgate_plan_enum_name(enumeration: u32, code: u32, name: *mut *mut c_char) -> i32;
    fn duckgate_pivot_parts(
        database: duckdb_c::duckdb_database,
        sql: *const c_char,
        sql_size: usize,
        parts: *mut *mut c_char,
        parts_size: *mut usize,
    ) -> i32;
    fn duckgate_call_select(
        database: duckdb_c::duckdb_database,
        sql: *const c_char,
        sql_size: usize,
        select: *mut *mut c_char,
        select_size: *mut usize,
    ) -> i32;
    fn duckgate_folders_mount(
        database: duckdb_c::duckdb_database,
        names: *const Text,
        dirs: *const Text,
        count: usize,
        database_files: *const Text,
        database_file_count: usize,
        check: u32,
        max_files: u64,
        max_bytes: u64,
        privacy: RawFolderPrivacy,
        database_token: u64,
        error: *mut *mut c_char,
    ) -> i32;
    pub(crate) fn duckgate_database_files_mount(
        database: duckdb_c::duckdb_database,
        names: *const Text,
        fds: *const i32,
        count: usize,
        error: *mut *mut c_char,
    ) -> i32;
    pub(crate) fn duckgate_database_files_attaching(
        database: duckdb_c::duckdb_database,
        on: u32,
    ) -> i32;
    pub(crate) fn duckgate_database_files_unlock(database: duckdb_c::duckdb_database) -> i32;
}

/// What one glob of the declared folders may match: files, and their bytes together.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GlobCaps {
    /// The most files.
    pub(crate) max_files: u64,
    /// The most bytes, together.
    pub(crate) max_bytes: u64,
}

/// `duckgate_folder_privacy_t`.
pub(crate) type RawFolderPrivacy = extern "C" fn(
    database_token: u64,
    question: u32,
    file: *const c_char,
    file_size: usize,
    column: *const c_char,
    column_size: usize,
) -> u32;

// `duckgate_fact_kind`.
const FACT_OPERATOR: u32 = 1;
const FACT_EXPRESSION: u32 = 2;
const FACT_SCALAR_FUNCTION: u32 = 3;
const FACT_AGGREGATE_FUNCTION: u32 = 4;
const FACT_WINDOW_FUNCTION: u32 = 5;
const FACT_TABLE_FUNCTION: u32 = 6;
const FACT_TABLE_SCAN: u32 = 7;
const FACT_SCAN_COLUMN: u32 = 8;
const FACT_TYPE: u32 = 9;
const FACT_FILE: u32 = 10;
const FACT_UNKNOWN: u32 = 11;
const FACT_RESULT_TYPE: u32 = 12;
const FACT_NAMED_PARAMETER: u32 = 13;

/// `AggregateStateExportMode::STATE_EXPORT`.
const STATE_EXPORT: u32 = 2;

/// Take ownership of a string DuckDB allocated (`duckdb_malloc`) and free it.
///
/// # Safety
/// `text` is null or a NUL-terminated string from `duckdb_malloc` that nothing else frees.
pub(crate) unsafe fn take_duckdb_string(text: *mut c_char) -> Option<String> {
    if text.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated per this function's contract.
    let owned = unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: allocated by `duckdb_malloc`, freed once, here.
    unsafe { duckdb_c::duckdb_free(text.cast()) };
    Some(owned)
}

/// Install the reader on `database` (see `duckgate_plan_reader_install`).
///
/// # Safety
/// `database` is an open database handle from `duckdb_open_ext`.
pub(crate) unsafe fn install(
    database: duckdb_c::duckdb_database,
    judge: RawJudge,
    token: u64,
) -> Result<(), String> {
    let mut error: *mut c_char = ptr::null_mut();
    // SAFETY: `database` is open per this function's contract; `error` is a valid out pointer.
    let status = unsafe { duckgate_plan_reader_install(database, judge, token, &mut error) };
    // SAFETY: the C side sets `error` only to a `duckdb_malloc`ed string, or leaves it null.
    let message = unsafe { take_duckdb_string(error) };
    if status == 0 {
        Ok(())
    } else {
        Err(message.unwrap_or_else(|| "the plan reader could not be installed".into()))
    }
}

/// Mount `folders` ((name, directory) pairs) on `database`'s file system, refusing `..`, links
/// that lead out and `database_files` under any name when `check`, with at most what `caps`
/// allow to one glob, and asking `privacy` (with `database_token`) what the request's privacy
/// rules hide (see `duckgate_folders_mount`).
///
/// # Safety
/// `database` is an open database handle from `duckdb_open_ext`.
pub(crate) unsafe fn mount_folders(
    database: duckdb_c::duckdb_database,
    folders: &[(String, String)],
    database_files: &[String],
    check: bool,
    caps: GlobCaps,
    privacy: RawFolderPrivacy,
    database_token: u64,
) -> Result<(), String> {
    let text = |s: &String| Text {
        data: s.as_ptr().cast(),
        size: s.len(),
    };
    let names: Vec<Text> = folders.iter().map(|(name, _)| text(name)).collect();
    let dirs: Vec<Text> = folders.iter().map(|(_, dir)| text(dir)).collect();
    let database_files: Vec<Text> = database_files.iter().map(text).collect();
    let mut error: *mut c_char = ptr::null_mut();
    // SAFETY: `database` is open per this function's contract; `names` and `dirs` hold `count`
    // texts each and `database_files` its length, pointing into `folders`, which outlives the
    // call (the C side copies them); `error` is a valid out pointer.
    let status = unsafe {
        duckgate_folders_mount(
            database,
            names.as_ptr(),
            dirs.as_ptr(),
            names.len(),
            database_files.as_ptr(),
            database_files.len(),
            u32::from(check),
            caps.max_files,
            caps.max_bytes,
            privacy,
            database_token,
            &mut error,
        )
    };
    // SAFETY: the C side sets `error` only to a `duckdb_malloc`ed string, or leaves it null.
    let message = unsafe { take_duckdb_string(error) };
    if status == 0 {
        Ok(())
    } else {
        Err(message.unwrap_or_else(|| "the declared folders could not be mounted".into()))
    }
}

/// DuckDB's name of `code` in `enumeration`.
pub(crate) fn enum_name(enumeration: Enumeration, code: u32) -> Option<String> {
    let mut name: *mut c_char = ptr::null_mut();
    // SAFETY: plain values and a valid out pointer; the function only reads DuckDB's tables.
    let status = unsafe { duckgate_plan_enum_name(enumeration as u32, code, &mut name) };
    // SAFETY: set only to a `duckdb_malloc`ed string, or left null.
    let name = unsafe { take_duckdb_string(name) };
    if status == 0 { name } else { None }
}

/// A C function of the reader that reads `sql` with DuckDB's parser and, when it returns 1, hands
/// back a `duckdb_malloc`ed buffer and its size (`duckgate_pivot_parts`, `duckgate_call_select`).
type SqlReader = unsafe extern "C" fn(
    duckdb_c::duckdb_database,
    *const c_char,
    usize,
    *mut *mut c_char,
    *mut usize,
) -> i32;

/// What `reader` hands back for `sql`, copied out of DuckDB's allocation; `None` when it returns
/// anything but 1.
///
/// # Safety
/// `database` is an open database handle from `duckdb_open_ext` that stays open during the call.
unsafe fn read_sql(
    database: duckdb_c::duckdb_database,
    sql: &str,
    reader: SqlReader,
) -> Option<Vec<u8>> {
    let mut buffer: *mut c_char = ptr::null_mut();
    let mut size: usize = 0;
    // SAFETY: `database` is open per this function's contract; `sql` is readable for its length
    // (the C side takes a size, not a NUL); both out pointers are valid.
    let found = unsafe {
        reader(
            database,
            sql.as_ptr().cast(),
            sql.len(),
            &mut buffer,
            &mut size,
        )
    };
    if found != 1 || buffer.is_null() {
        return None;
    }
    // SAFETY: on 1 the C side set `buffer` to a `duckdb_malloc`ed buffer of `size` bytes.
    let bytes = unsafe { std::slice::from_raw_parts(buffer.cast::<u8>(), size) }.to_vec();
    // SAFETY: allocated by `duckdb_malloc`, freed once, here, after the copy above.
    unsafe { duckdb_c::duckdb_free(buffer.cast()) };
    Some(bytes)
}

/// The parts `duckgate_pivot_parts` writes for `sql`, each as the bytes it wrote (see
/// `vendor/libduckdb-sys/duckgate/pivot_parts.h`); `None` when `sql` is not that shape.
///
/// # Safety
/// `database` is an open database handle from `duckdb_open_ext` that stays open during the call.
pub(crate) unsafe fn pivot_parts(
    database: duckdb_c::duckdb_database,
    sql: &str,
) -> Option<Vec<Vec<u8>>> {
    // SAFETY: this function's contract is `read_sql`'s.
    let bytes = unsafe { read_sql(database, sql, duckgate_pivot_parts) }?;
    split_parts(&bytes)
}

/// The SELECT `duckgate_call_select` writes for `sql` (see
/// `vendor/libduckdb-sys/duckgate/call_select.h`); `None` when `sql` is not one CALL.
///
/// # Safety
/// `database` is an open database handle from `duckdb_open_ext` that stays open during the call.
pub(crate) unsafe fn call_select(
    database: duckdb_c::duckdb_database,
    sql: &str,
) -> Option<Vec<u8>> {
    // SAFETY: this function's contract is `read_sql`'s.
    unsafe { read_sql(database, sql, duckgate_call_select) }
}

/// The parts of `duckgate_pivot_parts`' buffer: each a little-endian u64 length and its bytes.
fn split_parts(mut bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut parts = Vec::new();
    while !bytes.is_empty() {
        let (size, rest) = bytes.split_first_chunk::<8>()?;
        let size = usize::try_from(u64::from_le_bytes(*size)).ok()?;
        let part = rest.get(..size)?;
        parts.push(part.to_vec());
        bytes = rest.get(size..)?;
    }
    Some(parts)
}

/// Open an in-memory database through the C API with `settings` as its configuration.
pub(crate) fn open_in_memory_raw(
    settings: &[(&str, &str)],
) -> Result<duckdb_c::duckdb_database, String> {
    let mut config: duckdb_c::duckdb_config = ptr::null_mut();
    // SAFETY: a valid out pointer; on success the config is destroyed below on every path.
    if unsafe { duckdb_c::duckdb_create_config(&mut config) } != duckdb_c::DuckDBSuccess {
        return Err("DuckDB could not create a configuration".into());
    }
    let configured = settings.iter().try_for_each(|(key, value)| {
        let c_key = CString::new(*key).map_err(|_| format!("setting {key:?} holds a NUL"))?;
        let c_value = CString::new(*value).map_err(|_| format!("value of {key} holds a NUL"))?;
        // SAFETY: `config` is live; both strings are NUL-terminated and outlive the call.
        match unsafe { duckdb_c::duckdb_set_config(config, c_key.as_ptr(), c_value.as_ptr()) } {
            duckdb_c::DuckDBSuccess => Ok(()),
            _ => Err(format!("DuckDB refused the setting {key} = {value}")),
        }
    });
    let mut database: duckdb_c::duckdb_database = ptr::null_mut();
    let mut error: *mut c_char = ptr::null_mut();
    let opened = configured.and_then(|()| {
        let path = c":memory:";
        // SAFETY: valid path, out pointers and a live config.
        let status =
            unsafe { duckdb_c::duckdb_open_ext(path.as_ptr(), &mut database, config, &mut error) };
        // SAFETY: `error` is null or a `duckdb_malloc`ed message owned by us.
        let message = unsafe { take_duckdb_string(error) };
        match status {
            duckdb_c::DuckDBSuccess => Ok(database),
            _ => Err(message.unwrap_or_else(|| "DuckDB could not open a database".into())),
        }
    });
    // SAFETY: created above and not used after this.
    unsafe { duckdb_c::duckdb_destroy_config(&mut config) };
    opened
}

/// The text of a C `duckgate_text`.
///
/// # Safety
/// `text.data` points to `text.size` readable bytes (or is null with size 0) for this call.
unsafe fn text(text: &Text) -> String {
    if text.data.is_null() || text.size == 0 {
        return String::new();
    }
    // SAFETY: readable for `size` bytes per this function's contract.
    let bytes = unsafe { std::slice::from_raw_parts(text.data.cast::<u8>(), text.size) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// The text at `data`, `size` bytes.
///
/// # Safety
/// `data` points to `size` readable bytes (or is null with size 0) for this call.
pub(crate) unsafe fn text_of(data: *const c_char, size: usize) -> String {
    // SAFETY: per this function's contract.
    unsafe { text(&Text { data, size }) }
}

/// The facts of one plan, copied out of the C side's arrays.
///
/// # Safety
/// `facts` points to `count` facts whose texts and paths stay valid during this call, as the C
/// side's judge call guarantees.
pub(crate) unsafe fn read_facts(facts: *const RawFact, count: usize) -> PlanFacts {
    let raw: &[RawFact] = if facts.is_null() || count == 0 {
        &[]
    } else {
        // SAFETY: `count` facts at `facts`, valid for this call.
        unsafe { std::slice::from_raw_parts(facts, count) }
    };
    let mut plan = PlanFacts::default();
    // The scan the current operator's table, column and file facts belong to.
    let mut scan_of: Option<(u32, usize)> = None;
    for fact in raw {
        // SAFETY: valid per this function's contract.
        let label = unsafe { text(&fact.label) };
        let path: Vec<String> = if fact.path.is_null() || fact.path_len == 0 {
            Vec::new()
        } else {
            // SAFETY: `path_len` texts at `path`, valid for this call.
            unsafe { std::slice::from_raw_parts(fact.path, fact.path_len) }
                .iter()
                // SAFETY: each text is valid for this call.
                .map(|part| unsafe { text(part) })
                .collect()
        };
        let function = |kind| {
            Fact::Function(FunctionFact {
                kind,
                path: path.clone(),
                name: label.clone(),
            })
        };
        let current_scan = |plan: &mut PlanFacts| -> Option<usize> {
            match scan_of {
                Some((ordinal, index)) if ordinal == fact.operator_ordinal => Some(index),
                _ => {
                    plan.facts.push(Fact::Unknown(format!(
                        "a scan's detail ({label}) outside its scan"
                    )));
                    None
                }
            }
        };
        match fact.kind {
            FACT_OPERATOR => plan.facts.push(Fact::Operator(code(
                LogicalOperatorType::from_code(fact.code),
                fact.code,
                &label,
            ))),
            FACT_EXPRESSION => plan.facts.push(Fact::Expression(code(
                ExpressionClass::from_code(fact.code),
                fact.code,
                &label,
            ))),
            FACT_SCALAR_FUNCTION => plan.facts.push(function(if fact.code == 1 {
                FunctionKind::Cast
            } else {
                FunctionKind::Scalar
            })),
            FACT_AGGREGATE_FUNCTION => plan.facts.push(function(FunctionKind::Aggregate {
                exports_state: fact.code == STATE_EXPORT,
            })),
            FACT_WINDOW_FUNCTION => plan.facts.push(function(FunctionKind::Window)),
            FACT_TABLE_FUNCTION => {
                plan.facts.push(function(FunctionKind::Table));
                plan.scans.push(ScanFacts {
                    function: path.clone(),
                    table: None,
                    columns: Vec::new(),
                    files: None,
                    named_parameters: Vec::new(),
                });
                scan_of = Some((fact.operator_ordinal, plan.scans.len() - 1));
            }
            FACT_TABLE_SCAN => {
                if let Some(scan) = current_scan(&mut plan).and_then(|at| scan_mut(&mut plan, at)) {
                    scan.table = Some(path.clone());
                }
            }
            FACT_SCAN_COLUMN => {
                let kind = match fact.code {
                    0 => Some(ColumnKind::Own),
                    1 => Some(ColumnKind::RowId),
                    2 => Some(ColumnKind::Virtual),
                    _ => None,
                };
                match (kind, current_scan(&mut plan)) {
                    (Some(kind), Some(at)) => {
                        if let Some(scan) = scan_mut(&mut plan, at) {
                            scan.columns.push(ScanColumn {
                                kind,
                                index: fact.detail,
                                name: label.clone(),
                            });
                        }
                    }
                    (None, _) => plan.facts.push(Fact::Unknown(format!(
                        "a scan column of kind {}",
                        fact.code
                    ))),
                    (Some(_), None) => {}
                }
            }
            FACT_TYPE => plan.facts.push(Fact::Type {
                id: code(LogicalTypeId::from_code(fact.code), fact.code, &label),
                aggregate_state: fact.detail == 1,
            }),
            FACT_FILE => match (fact.code, current_scan(&mut plan)) {
                (1, Some(at)) => {
                    if let Some(scan) = scan_mut(&mut plan, at) {
                        scan.files = Some(Vec::new());
                    }
                }
                (0, Some(at)) => {
                    if let Some(files) =
                        scan_mut(&mut plan, at).and_then(|scan| scan.files.as_mut())
                    {
                        files.push(label.clone());
                    } else {
                        plan.facts
                            .push(Fact::Unknown("a file before its list".into()));
                    }
                }
                (0 | 1, None) => plan
                    .facts
                    .push(Fact::Unknown("a file outside any scan".into())),
                (other, _) => plan
                    .facts
                    .push(Fact::Unknown(format!("a file fact of code {other}"))),
            },
            FACT_UNKNOWN => plan.facts.push(Fact::Unknown(label.clone())),
            FACT_RESULT_TYPE => plan.result_types.push(label.clone()),
            FACT_NAMED_PARAMETER => {
                if let Some(scan) = current_scan(&mut plan).and_then(|at| scan_mut(&mut plan, at)) {
                    scan.named_parameters.push(label.clone());
                }
            }
            other => plan
                .facts
                .push(Fact::Unknown(format!("a fact of kind {other}"))),
        }
    }
    plan
}

fn code<T>(known: Option<T>, code: u32, label: &str) -> Code<T> {
    match known {
        Some(value) => Code::Known(value),
        None => Code::Unrecognised {
            code,
            label: label.to_owned(),
        },
    }
}

// The reader of DuckDB's typed errors (`vendor/libduckdb-sys/duckgate/error_reader.h`).

/// `duckgate_error_field`.
#[repr(C)]
struct RawErrorField {
    key: Text,
    value: Text,
}

/// `duckgate_error`.
#[repr(C)]
struct RawError {
    database_token: u64,
    connection_id: u64,
    exception_type: u32,
    message: Text,
    fields: *const RawErrorField,
    field_count: usize,
}

/// `duckgate_error_visitor`.
type RawErrorVisitor = extern "C" fn(context: *mut std::ffi::c_void, error: *const RawError);

unsafe extern "C" {
    fn duckgate_error_reader_install(
        database: duckdb_c::duckdb_database,
        database_token: u64,
        error: *mut *mut c_char,
    ) -> i32;
    fn duckgate_error_reader_take(visitor: RawErrorVisitor, context: *mut std::ffi::c_void) -> i32;
}

/// Install the error reader on `database` (see `duckgate_error_reader_install`).
///
/// # Safety
/// `database` is an open database handle from `duckdb_open_ext`.
pub(crate) unsafe fn install_error_reader(
    database: duckdb_c::duckdb_database,
    token: u64,
) -> Result<(), String> {
    let mut error: *mut c_char = ptr::null_mut();
    // SAFETY: `database` is open per this function's contract; `error` is a valid out pointer.
    let status = unsafe { duckgate_error_reader_install(database, token, &mut error) };
    // SAFETY: the C side sets `error` only to a `duckdb_malloc`ed string, or leaves it null.
    let message = unsafe { take_duckdb_string(error) };
    if status == 0 {
        Ok(())
    } else {
        Err(message.unwrap_or_else(|| "the error reader could not be installed".into()))
    }
}

/// `duckgate_error_visitor`: copies the error into the `Option<DuckdbError>` at `context`.
extern "C" fn copy_error(context: *mut std::ffi::c_void, error: *const RawError) {
    if context.is_null() || error.is_null() {
        return;
    }
    // A panic must not unwind into DuckDB's C++ frames: the error is then left unread.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: the C side passes an error valid for this call, and `context` is the
        // `&mut Option<DuckdbError>` `take_error` passed, alive for the call.
        let (raw, slot) = unsafe { (&*error, &mut *context.cast::<Option<DuckdbError>>()) };
        let fields: &[RawErrorField] = if raw.fields.is_null() || raw.field_count == 0 {
            &[]
        } else {
            // SAFETY: `field_count` fields at `fields`, valid for this call.
            unsafe { std::slice::from_raw_parts(raw.fields, raw.field_count) }
        };
        *slot = Some(DuckdbError {
            database: raw.database_token,
            connection_id: raw.connection_id,
            exception_type: match ExceptionType::from_code(raw.exception_type) {
                Some(known) => Code::Known(known),
                None => Code::Unrecognised {
                    code: raw.exception_type,
                    label: String::new(),
                },
            },
            // SAFETY: each text is valid for this call.
            message: unsafe { text(&raw.message) },
            extra_info: fields
                .iter()
                // SAFETY: each text is valid for this call.
                .map(|field| unsafe { (text(&field.key), text(&field.value)) })
                .collect(),
        });
    }));
}

/// The scan at `at` of `plan`, to add a detail to. A scan is pushed before its details, so it is
/// there; were it not, the plan gets an unknown fact, which the judge refuses.
fn scan_mut(plan: &mut PlanFacts, at: usize) -> Option<&mut ScanFacts> {
    if at >= plan.scans.len() {
        plan.facts.push(Fact::Unknown(
            "a scan's detail for a scan not read".to_string(),
        ));
    }
    plan.scans.get_mut(at)
}

/// The typed error of the failure the `duckdb` crate just reported on this thread as
/// `reported` (its message), if DuckDB ended a query with it: `None` when the last query this
/// thread ended on a database opened by [`crate::open_in_memory`] did not fail with exactly that
/// message (the failure came before any query began, such as a statement that does not parse,
/// or from the crate itself). Taking it forgets it.
///
/// The message is compared whole, as an identity check that the record is this failure's: it
/// is never read for meaning.
pub fn take_typed_error(reported: &str) -> Option<DuckdbError> {
    take_error().filter(|error| error.message == reported)
}

/// The error the last query this thread ended failed with, if it did (and forget it).
fn take_error() -> Option<DuckdbError> {
    let mut slot: Option<DuckdbError> = None;
    // SAFETY: `copy_error` matches the visitor's signature and `slot` outlives the call.
    unsafe {
        duckgate_error_reader_take(copy_error, (&mut slot as *mut Option<DuckdbError>).cast());
    }
    slot
}
