//! `list_files`: the data files of the folders the operator declared (`--files NAME=DIR`), by the
//! names queries read them by (`exports/2026/readings.parquet`), a page at a time.

use serde_json::{Value, json};

use super::arguments::{Argument, tool_arguments};
use super::catalog_lookup::MAX_FUZZY_MATCHES;
use super::context::ToolContext;
use super::name::ToolName;
use super::tool::{Answer, Request, check_limit, tool};
use crate::folders::{FolderFile, Listing};
use crate::mcp::envelope::{ErrorBody, Reply, Status, nullable};
use crate::mcp::{fuzzy, render};
use crate::privacy::glob_matches;
use duckgate_validate::error::ErrorKind;

/// Files one page shows when no limit is given.
pub const DEFAULT_LIMIT: i64 = 200;
/// Most files one page shows.
pub const MAX_LIMIT: i64 = 1000;
/// The furthest a page may start.
const MAX_OFFSET: i64 = 1_000_000_000;
/// Entries of the folders one listing looks at, for each file one query may read
/// (`--files-max-count`): as the readers' own listing bound (`folders.cpp`).
const LISTED_PER_FILE: u64 = 10;

fn description(_time_zone: &str) -> String {
    format!(
        "Use this when you want to know which data files you can query: lists the Parquet, \
         CSV and JSON files of the folders the operator declared, by the path SQL reads them \
         by (FROM 'exports/2026/a.parquet'), with format, size and when modified; \
         {DEFAULT_LIMIT} per page (offset for the next). \
         Use describe_table instead when you need one file's columns (give its path), \
         sample_rows for its first rows. \
         Common compositions: list_files → describe_table → query."
    )
}

fn data_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "folders": { "type": "array", "items": { "type": "string" } },
            "files": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": { "type": "string", "description": "What SQL names it by: the folder's name, a slash, its path in the folder." },
                        "format": { "type": "string", "enum": ["parquet", "csv", "json", "other"] },
                        "size_bytes": {
                            "anyOf": [{ "type": "integer", "minimum": 0 }, { "type": "null" }],
                            "description": "Null for a file whose columns the operator's privacy rules hide: its size would tell of them."
                        },
                        "modified": { "type": "string", "description": "Last modified, ISO 8601 in UTC." }
                    },
                    "required": ["path", "format", "size_bytes", "modified"]
                }
            },
            "total": { "type": "integer", "minimum": 0, "description": "Files found in all (of the pattern, if one was given)." },
            "offset": { "type": "integer", "minimum": 0 },
            "next_offset": nullable("integer"),
            "complete": { "type": "boolean", "description": "False when the folders hold more entries than one listing looks at: narrow with folder or pattern." }
        },
        "required": ["folders", "files", "total", "offset", "next_offset", "complete"]
    })
}

tool! {
    /// The `list_files` tool.
    ListFiles(ListFilesArgs), "List data files"
}

async fn run(server: &ToolContext<'_>, args: ListFilesArgs, _context: &Request) -> Answer {
    let limit = check_limit(
        ToolName::ListFiles,
        args.limit,
        DEFAULT_LIMIT,
        MAX_LIMIT,
        |limit| json!({ "limit": limit }),
    )?;
    let offset = args.offset.unwrap_or(0);
    if !(0..=MAX_OFFSET).contains(&offset) {
        return Err(ErrorBody::new(
            ErrorKind::InvalidArgument,
            format!("offset must be between 0 and {MAX_OFFSET} (got {offset})."),
        )
        .construct("offset")
        .suggest(ToolName::ListFiles.as_str(), Some(json!({}))));
    }
    let offset = usize::try_from(offset).unwrap_or(0);
    let rules = server.gateway().folder_rules();
    let names = rules.names();
    if let Some(folder) = &args.folder
        && !names.iter().any(|name| name == folder)
    {
        let mut error = ErrorBody::new(
            ErrorKind::UnknownName,
            if names.is_empty() {
                format!("No folder is declared on this server, so there is no '{folder}'.")
            } else {
                format!(
                    "Folder '{folder}' is not declared. Folders: {}.",
                    names.join(", ")
                )
            },
        )
        .construct(folder.clone())
        .suggest(ToolName::ListFiles.as_str(), Some(json!({})));
        error.recovery.fuzzy_matches =
            fuzzy::closest_off_thread(folder, names.iter().map(String::as_str), MAX_FUZZY_MATCHES)
                .await;
        return Err(error);
    }
    let Listing { files, stopped } = listing(server, args.folder.clone()).await?;
    let files = without_telling_sizes(server, files);
    let matching: Vec<ListedFile> = match &args.pattern {
        Some(pattern) => files
            .into_iter()
            .filter(|listed| glob_matches(pattern, &listed.file.path))
            .collect(),
        None => files,
    };
    let budget = server.gateway().config().max_reply_bytes;
    Ok(page_reply(
        &names, &matching, offset, limit, !stopped, budget,
    ))
}

/// The files of the declared folders (of `only`, when given) the agent may see, walked off the
/// async threads.
async fn listing(server: &ToolContext<'_>, only: Option<String>) -> Result<Listing, ErrorBody> {
    let rules = server.gateway().folder_rules();
    let privacy = server.gateway().config().privacy.clone();
    let max_entries =
        usize::try_from(rules.max_files.saturating_mul(LISTED_PER_FILE)).unwrap_or(usize::MAX);
    tokio::task::spawn_blocking(move || {
        crate::folders::list_files(
            &rules,
            only.as_deref(),
            |path| privacy.hides_file(path),
            max_entries,
        )
    })
    .await
    .map_err(|e| {
        ErrorBody::new(
            ErrorKind::InternalError,
            format!("The folders could not be listed: {e}"),
        )
    })
}

/// `files`, each with its size unless a privacy rule hides columns of it: a file's size is a
/// sum over its columns, hidden ones included.
fn without_telling_sizes(server: &ToolContext<'_>, files: Vec<FolderFile>) -> Vec<ListedFile> {
    let privacy = &server.gateway().config().privacy;
    files
        .into_iter()
        .map(|file| ListedFile {
            size_bytes: (!privacy.has_file_column_rules(&file.path)).then_some(file.size_bytes),
            file,
        })
        .collect()
}

/// A file as `list_files` shows it.
struct ListedFile {
    file: FolderFile,
    /// `None` where the size would tell of hidden columns.
    size_bytes: Option<u64>,
}

/// The `schema://files` resource: the first [`MAX_LIMIT`] files, as `list_files` shows them.
pub(crate) async fn files_resource(server: &ToolContext<'_>) -> Result<Value, ErrorBody> {
    let Listing { files, stopped } = listing(server, None).await?;
    let files = without_telling_sizes(server, files);
    let names = server.gateway().folder_rules().names();
    let shown = files
        .len()
        .min(usize::try_from(MAX_LIMIT).unwrap_or(usize::MAX));
    Ok(page(
        &names,
        files.len(),
        files.get(..shown).unwrap_or_default(),
        0,
        !stopped,
    )
    .envelope
    .data)
}

/// One page of `files` from `offset`: at most `limit`, and no more than fit the reply budget.
fn page_reply(
    folders: &[String],
    files: &[ListedFile],
    offset: usize,
    limit: usize,
    complete: bool,
    budget: usize,
) -> Reply {
    let available = files.get(offset..).unwrap_or_default();
    let mut shown = available.len().min(limit);
    loop {
        let reply = page(
            folders,
            files.len(),
            available.get(..shown).unwrap_or_default(),
            offset,
            complete,
        );
        if shown == 0 || reply.bytes() <= budget {
            return reply;
        }
        shown /= 2;
    }
}

fn page(
    folders: &[String],
    total: usize,
    shown: &[ListedFile],
    offset: usize,
    complete: bool,
) -> Reply {
    let next_offset = (offset + shown.len() < total).then_some(offset + shown.len());
    let entries: Vec<Value> = shown
        .iter()
        .map(|listed| {
            json!({
                "path": listed.file.path,
                "format": listed.file.format,
                "size_bytes": listed.size_bytes,
                "modified": modified_utc(listed.file.modified_unix),
            })
        })
        .collect();
    let mut text = String::new();
    for listed in shown {
        let size = listed.size_bytes.map_or_else(
            || "size not shown".to_owned(),
            |bytes| format!("{bytes} bytes"),
        );
        text.push_str(&format!(
            "{}  {}  {size}  {}\n",
            render::inline(&listed.file.path),
            listed.file.format,
            modified_utc(listed.file.modified_unix)
        ));
    }
    text.push_str(&match (total, next_offset) {
        (0, _) if folders.is_empty() => {
            "No folder of data files is declared on this server (--files NAME=DIR).".to_owned()
        }
        (0, _) => "No data files found.".to_owned(),
        (_, Some(next)) => format!(
            "{} of {total} files shown (from {offset}); the next page: list_files with offset {next}.",
            shown.len()
        ),
        (_, None) => format!("{} of {total} files shown (from {offset}).", shown.len()),
    });
    if !complete {
        text.push_str(
            "\nThe folders hold more entries than one listing looks at: name a folder or a pattern.",
        );
    }
    let status = if shown.is_empty() {
        Status::Empty
    } else {
        Status::Success
    };
    let hints: &[&str] = if shown.is_empty() {
        &[]
    } else {
        &["describe_table", "sample_rows", "query"]
    };
    Reply::ok(
        status,
        json!({
            "folders": folders,
            "files": entries,
            "total": total,
            "offset": offset,
            "next_offset": next_offset,
            "complete": complete,
        }),
        hints,
        text,
    )
}

/// `unix` seconds as ISO 8601 in UTC (`2026-11-29T08:30:00Z`).
fn modified_utc(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let seconds = unix.rem_euclid(86_400);
    let (year, month, day) = crate::calendar::civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60
    )
}

tool_arguments! {
    /// `list_files` arguments.
    pub struct ListFilesArgs {
        /// Only this declared folder.
        pub folder: Option<String> =
            Argument::described("Only the files of this declared folder (its name, as in FROM 'name/…')."),
        /// Only paths matching this pattern.
        pub pattern: Option<String> = Argument::described(
            "Only paths matching this pattern, written as SQL names them: * is any run (slashes too), ? one character (e.g. exports/2026/*.parquet).",
        ),
        /// Where the page starts.
        pub offset: Option<i64> =
            Argument::described("Files to skip: the next_offset of the previous page.").range(0, MAX_OFFSET, 0),
        /// Files per page.
        pub limit: Option<i64> =
            Argument::described("Files per page.").limit(MAX_LIMIT, DEFAULT_LIMIT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modification_times_are_utc_iso_8601() {
        assert_eq!(modified_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(modified_utc(1_796_546_096), "2026-12-06T08:34:56Z");
    }

    #[test]
    fn a_page_fits_the_budget_and_says_where_the_next_starts() {
        let files: Vec<ListedFile> = (0..500)
            .map(|i| ListedFile {
                file: FolderFile {
                    path: format!("exports/day-{i:04}.parquet"),
                    format: "parquet",
                    size_bytes: 1000 + i,
                    modified_unix: 1_796_546_096,
                },
                size_bytes: Some(1000 + i),
            })
            .collect();
        let folders = vec!["exports".to_owned()];
        let reply = page_reply(&folders, &files, 10, 1000, true, 16 * 1024);
        assert!(reply.bytes() <= 16 * 1024);
        let data = &reply.envelope.data;
        let shown = data["files"].as_array().unwrap().len();
        assert!(shown > 0 && shown < 490, "{shown}");
        assert_eq!(data["next_offset"], json!(10 + shown));
        assert_eq!(data["total"], json!(500));
        let last = page_reply(&folders, &files, 495, 1000, true, 16 * 1024);
        assert_eq!(last.envelope.data["next_offset"], Value::Null);
        assert_eq!(last.envelope.data["files"].as_array().unwrap().len(), 5);
    }
}
