//! `server_info`: the server, its limits, and the sandbox actually in force.

use serde_json::{Value, json};

use super::context::ToolContext;
use super::tool::{Answer, NoArgs, Request, tool};
use super::{query, sample_rows, search_schema};
use crate::mcp::envelope::{Reply, Status, nullable};
use crate::mcp::render;
use crate::size::format_size;

fn description(_time_zone: &str) -> String {
    "Use this when a limit surprised you or the user asks how data is protected: \
     reports the server name, version, the databases and folders it serves (by name), limits \
     (rows, timeout, result size) and the sandbox actually in force (each promise and the \
     mechanism that keeps it, landlock, seccomp, rlimits, DuckDB settings), and what \
     this session's transport ignored or refused. \
     Use list_tables instead when you want the data. \
     Common compositions: server_info → query within the limits."
        .to_owned()
}

fn data_schema() -> Value {
    let pairs = json!({
        "type": "array",
        "items": { "type": "array", "items": { "type": "string" }, "minItems": 2, "maxItems": 2 }
    });
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string" },
            "version": { "type": "string" },
            "databases": {
                "type": "array",
                "description": "The databases this server serves, the default first: SQL names another database's tables with its name (pump.main.boluses). Host paths are never shown.",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": { "type": "string" },
                        "default": { "type": "boolean", "description": "Its tables are named without the database's name." },
                        "granted": {
                            "type": "array",
                            "items": { "type": "string", "enum": ["file", "write-ahead log"] },
                            "description": "What a worker started now is handed of it, read-only: the file and its write-ahead log, each only if it exists, opened before the worker confines itself. Landlock grants no path of either: SQL cannot open them by any name."
                        }
                    },
                    "required": ["name", "default", "granted"]
                }
            },
            "database_warning": {
                "anyOf": [{ "type": "string" }, { "type": "null" }],
                "description": "Why answers may not reflect the database as its writer sees it (a database mounted into a container as a single file, without its write-ahead log), or null."
            },
            "time_zone": {
                "type": "string",
                "description": "DuckDB's TimeZone in the workers: now(), current_date and TIMESTAMPTZ dates use it, and TIMESTAMPTZ values are shown in it with their offset."
            },
            "workers": {
                "type": "object",
                "description": "Where each query's fresh, confined worker process comes from: forked from a warm template (fast), or spawned (the fallback, with the reason).",
                "properties": {
                    "origin": { "type": "string", "enum": ["template", "spawned"] },
                    "template_pid": { "type": "integer" },
                    "template_starts": { "type": "integer" },
                    "reason": { "type": "string" }
                },
                "required": ["origin"]
            },
            "limits": {
                "type": "object",
                "properties": {
                    "query_default_rows": { "type": "integer" },
                    "query_max_rows": { "type": "integer" },
                    "sample_max_rows": { "type": "integer" },
                    "search_max_matches": { "type": "integer" },
                    "timeout_seconds": { "type": "number" },
                    "max_reply_bytes": { "type": "integer", "description": "One byte budget per reply, text and structured content together; rows past it are cut." },
                    "memory_limit": {
                        "type": "string",
                        "description": "DuckDB's memory_limit in each worker: past it, DuckDB spills to disk."
                    },
                    "memory": {
                        "type": "object",
                        "description": "The memory budget all workers together stay under, and each worker's hard cap (RLIMIT_DATA).",
                        "properties": {
                            "budget_bytes": { "type": "integer" },
                            "budget_source": { "type": "string", "enum": ["flag", "half_of_memory"] },
                            "slots": { "type": "integer", "description": "Workers that may run queries at once, each with a full share." },
                            "idle_processes": { "type": "integer", "description": "Warm spares and the template: they run no query and are charged a small fixed amount each." },
                            "cap_bytes": { "type": "integer" },
                            "duckdb_limit_bytes": { "type": "integer" },
                            "overhead_bytes": { "type": "integer" }
                        },
                        "required": ["budget_bytes", "budget_source", "slots", "cap_bytes", "duckdb_limit_bytes", "overhead_bytes"]
                    },
                    "spill": {
                        "anyOf": [
                            {
                                "type": "object",
                                "description": "Where workers spill: a private directory per worker under root, removed when it ends.",
                                "properties": {
                                    "root": { "type": "string" },
                                    "backing": { "type": "string", "enum": ["disk", "memory"] },
                                    "max_bytes_per_worker": { "type": "integer" }
                                },
                                "required": ["root", "backing", "max_bytes_per_worker"]
                            },
                            { "type": "null" }
                        ]
                    },
                    "threads": { "type": "integer" },
                    "max_concurrent_queries": { "type": "integer" },
                    "warm_workers": { "type": "integer" }
                },
                "required": [
                    "query_default_rows", "query_max_rows", "sample_max_rows", "search_max_matches",
                    "timeout_seconds", "max_reply_bytes", "memory_limit", "memory", "spill", "threads",
                    "max_concurrent_queries", "warm_workers"
                ]
            },
            "posture": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {
                            "landlock": { "type": "string", "enum": ["fully_enforced", "not_enforced"] },
                            "landlock_abi": nullable("integer"),
                            "seccomp": { "type": "boolean" },
                            "no_new_privs": { "type": "boolean" },
                            "rlimits": pairs.clone(),
                            "duckdb_settings": pairs,
                            "bypassed_layers": { "type": "array", "items": { "type": "string" } },
                            "unenforced": { "type": "array", "items": { "type": "string" } },
                            "properties": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "property": { "type": "string" },
                                        "promise": { "type": "string" },
                                        "mechanism": { "type": "string" },
                                        "enforced": { "type": "boolean" }
                                    },
                                    "required": ["property", "promise", "mechanism", "enforced"]
                                }
                            }
                        },
                        "required": ["landlock", "landlock_abi", "seccomp", "no_new_privs", "rlimits", "duckdb_settings", "bypassed_layers", "unenforced", "properties"]
                    },
                    { "type": "null" }
                ]
            },
            "posture_error": nullable("string"),
            "folders": {
                "type": "object",
                "description": "The folders of data files the operator declared (--files), by the names SQL reads them by (NAME/path, never their host paths), what the kernel (landlock) lets a worker do beneath each (nothing there is writable), and what one query may read of them.",
                "properties": {
                    "names": { "type": "array", "items": { "type": "string" } },
                    "granted": {
                        "type": "array",
                        "items": { "type": "string", "enum": ["read files", "list directories"] },
                        "description": "What a worker may do beneath each folder (landlock); empty when none is declared."
                    },
                    "max_files_per_query": { "type": "integer" },
                    "max_bytes_per_query": { "type": "integer" }
                },
                "required": ["names", "granted", "max_files_per_query", "max_bytes_per_query"]
            },
            "session": {
                "type": "object",
                "description": "What this session's transport ignored or refused (none of it ends the session), and the audit log's generations.",
                "properties": {
                    "notifications_ignored": { "type": "integer", "description": "Notifications before the first request, or cancelling no request in flight." },
                    "replies_ignored": { "type": "integer", "description": "Responses or errors sent before the first request." },
                    "duplicate_ids_refused": { "type": "integer", "description": "Requests answered at once with an error because their id was still in flight." },
                    "audit": {
                        "anyOf": [
                            {
                                "type": "object",
                                "properties": {
                                    "generations_kept": { "type": "integer", "description": "Files of the audit log on disk (PATH, PATH.1, …)." },
                                    "generations_cap": { "type": "integer" },
                                    "max_bytes_per_generation": { "type": "integer" },
                                    "over_cap": { "type": "boolean", "description": "More generations are kept than the cap because other running servers hold them (their newest records are never removed); a server alone on its log stays within the cap." }
                                },
                                "required": ["generations_kept", "generations_cap", "max_bytes_per_generation", "over_cap"]
                            },
                            { "type": "null" }
                        ]
                    }
                },
                "required": ["notifications_ignored", "replies_ignored", "duplicate_ids_refused", "audit"]
            }
        },
        "required": ["name", "version", "databases", "folders", "database_warning", "time_zone", "limits", "posture", "posture_error", "session"]
    })
}

tool! {
    /// The `server_info` tool.
    ServerInfo(NoArgs), "Server info and sandbox posture"
}

/// The server, the limits of every tool and of the workers, and the posture the workers report;
/// `partial` when the posture cannot be read.
async fn run(server: &ToolContext<'_>, _args: NoArgs, _context: &Request) -> Answer {
    let config = server.gateway().config();
    let posture = server
        .gateway()
        .posture()
        .await
        .map(|posture| without_database_paths(posture, &config.databases));
    let databases: Vec<Value> = config
        .databases
        .iter()
        .enumerate()
        .map(|(at, database)| {
            let mut granted = Vec::new();
            if database.path.exists() {
                granted.push("file");
            }
            if database.wal().exists() {
                granted.push("write-ahead log");
            }
            json!({ "name": database.name, "default": at == 0, "granted": granted })
        })
        .collect();
    let memory = server.gateway().memory();
    let spill = server.gateway().spill();
    let workers = server.gateway().worker_origin().await;
    let limits = json!({
        "query_default_rows": query::DEFAULT_LIMIT,
        "query_max_rows": query::MAX_LIMIT,
        "sample_max_rows": sample_rows::MAX_LIMIT,
        "search_max_matches": search_schema::MAX_LIMIT,
        "timeout_seconds": config.timeout.as_secs_f64(),
        "max_reply_bytes": config.max_reply_bytes,
        "memory_limit": format_size(memory.duckdb_limit_bytes),
        "memory": memory,
        "spill": spill,
        "threads": config.threads,
        "max_concurrent_queries": config.max_concurrent,
        "warm_workers": config.warm_workers,
    });
    let mut text = format!(
        "duckgate {} serving {} (read-only)\nLimits: query rows 1–{} (default {}), timeout {} s, \
             reply ≤ {} bytes, {} threads, {} concurrent queries\nMemory: {}\nSpilling: {}\n\
             Local time: {} (now(), current_date and TIMESTAMPTZ dates use it; TIMESTAMPTZ values are shown in it with their offset)",
        env!("CARGO_PKG_VERSION"),
        render::databases_text(&config.databases),
        query::MAX_LIMIT,
        query::DEFAULT_LIMIT,
        config.timeout.as_secs_f64(),
        config.max_reply_bytes,
        config.threads,
        config.max_concurrent,
        render::memory_text(&memory),
        render::spill_text(spill.as_ref()),
        config.time_zone,
    );
    text.push_str(&format!("\nWorkers: {}", render::workers_text(&workers)));
    let folder_rules = server.gateway().folder_rules();
    let folder_names = folder_rules.names();
    if !folder_names.is_empty() {
        text.push_str(&format!(
            "\nFolders of data files (read-only; landlock lets workers read and list beneath each): {}; one query reads at most {} files of {} together",
            folder_names.join(", "),
            folder_rules.max_files,
            format_size(folder_rules.max_bytes)
        ));
    }
    let mounted_alone: Vec<String> = config
        .databases
        .iter()
        .filter(|d| crate::gateway::database_file::is_single_file_mount(&d.path))
        .map(|d| crate::gateway::database_file::single_file_mount_notice(&d.name))
        .collect();
    let database_warning = (!mounted_alone.is_empty()).then(|| mounted_alone.join(" "));
    if let Some(warning) = &database_warning {
        text.push_str(&format!("\nWARNING: {warning}"));
    }
    let counts = server.session_counts();
    let audit = config.audit.as_ref().map(|log| log.stats());
    text.push_str(&format!(
        "\nSession: {} notifications ignored, {} replies ignored, {} duplicate ids refused",
        counts.notifications_ignored, counts.replies_ignored, counts.duplicate_ids_refused
    ));
    if let Some(audit) = &audit {
        text.push_str(&format!(
            "\nAudit log: {} generations kept (cap {}, {} bytes each){}",
            audit.generations_kept,
            audit.generations_cap,
            audit.max_bytes_per_generation,
            if audit.over_cap {
                "; past the cap: other running servers hold the oldest"
            } else {
                ""
            }
        ));
    }
    let (status, posture_value, posture_error) = match posture {
        Ok(posture) => {
            text.push('\n');
            text.push_str(&render::posture_text(&posture));
            if !posture.rlimits.is_empty() {
                let rlimits: Vec<String> = posture
                    .rlimits
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                text.push_str(&format!("\nrlimits: {}", rlimits.join(", ")));
            }
            if !posture.duckdb_settings.is_empty() {
                let settings: Vec<String> = posture
                    .duckdb_settings
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                text.push_str(&format!("\nDuckDB: {}", settings.join(", ")));
            }
            if !posture.bypassed_layers.is_empty() {
                text.push_str(&format!(
                    "\nWARNING: test bypasses in force: {}",
                    posture.bypassed_layers.join(", ")
                ));
            }
            for gap in &posture.unenforced {
                text.push_str(&format!(
                    "\nWARNING: NOT ENFORCED (--allow-unconfined): {gap}"
                ));
            }
            (
                Status::Success,
                serde_json::to_value(posture).unwrap_or(Value::Null),
                None,
            )
        }
        Err(error) => {
            text.push_str(&format!(
                "\nSandbox posture unavailable: {} ({})",
                error.message, error.kind
            ));
            (Status::Partial, Value::Null, Some(error.message))
        }
    };
    let data = json!({
        "name": "duckgate",
        "version": env!("CARGO_PKG_VERSION"),
        "databases": databases,
        "database_warning": database_warning,
        "time_zone": config.time_zone,
        "workers": workers,
        "limits": limits,
        "posture": posture_value,
        "posture_error": posture_error,
        "folders": {
            "granted": if folder_names.is_empty() { Vec::new() } else { crate::sandbox::confine::folder_grants() },
            "names": folder_names,
            "max_files_per_query": folder_rules.max_files,
            "max_bytes_per_query": folder_rules.max_bytes,
        },
        "session": {
            "notifications_ignored": counts.notifications_ignored,
            "replies_ignored": counts.replies_ignored,
            "duplicate_ids_refused": counts.duplicate_ids_refused,
            "audit": audit,
        },
    });
    Ok(Reply::ok(status, data, &["list_tables"], text))
}

/// `posture` with each database's path in DuckDB's settings (`allowed_paths` names every file
/// and write-ahead log) replaced by the database's name: no reply carries a host path, which
/// shows the user's home and name.
fn without_database_paths(
    mut posture: crate::protocol::Posture,
    databases: &crate::protocol::databases::Databases,
) -> crate::protocol::Posture {
    for (_, value) in &mut posture.duckdb_settings {
        // From the last database back: `duckgate-database://1` begins `duckgate-database://10`'s
        // name, so the longer names are replaced first.
        let all: Vec<_> = databases.iter().enumerate().collect();
        for (index, database) in all.into_iter().rev() {
            // The name the worker attaches it by (`allowed_paths` holds it), and its path, should
            // any setting hold that; the write-ahead log first: its name begins with the file's.
            let held = crate::protocol::databases::held_name(index);
            for (name, shown) in [
                (
                    format!("{held}.wal"),
                    format!("<database {}>.wal", database.name),
                ),
                (held, format!("<database {}>", database.name)),
                (
                    database.wal().to_string_lossy().into_owned(),
                    format!("<database {}>.wal", database.name),
                ),
                (
                    database.path.to_string_lossy().into_owned(),
                    format!("<database {}>", database.name),
                ),
            ] {
                if !name.is_empty() && value.contains(&name) {
                    *value = value.replace(&name, &shown);
                }
            }
        }
    }
    posture
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::databases::{Databases, Declaration, held_name};

    /// Eleven databases: the reserved name of the second (`…://1`) begins the eleventh's
    /// (`…://10`), and each must still be shown by its own database's name.
    #[test]
    fn every_reserved_name_is_shown_by_its_own_databases_name() {
        let declarations: Vec<Declaration> = (0..11)
            .map(|i| Declaration::parse(&format!("db{i}=/nowhere/db{i}.duckdb")).unwrap())
            .collect();
        let databases = Databases::new(&declarations).unwrap();
        let held: Vec<String> = (0..11)
            .flat_map(|i| [held_name(i), format!("{}.wal", held_name(i))])
            .map(|name| format!("'{name}'"))
            .collect();
        let posture = crate::protocol::Posture {
            duckdb_settings: vec![("allowed_paths".into(), format!("[{}]", held.join(", ")))],
            ..Default::default()
        };
        let shown = &without_database_paths(posture, &databases).duckdb_settings[0].1;
        let expected: Vec<String> = (0..11)
            .flat_map(|i| {
                [
                    format!("'<database db{i}>'"),
                    format!("'<database db{i}>.wal'"),
                ]
            })
            .collect();
        assert_eq!(shown, &format!("[{}]", expected.join(", ")));
    }
}
