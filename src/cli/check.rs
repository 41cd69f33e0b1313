//! `duckgate check`: whether the validator would accept SQL, without running it; against a
//! database's catalog (read through a confined worker) with `--db`.

use duckgate::protocol::databases::Declaration;
use std::process::ExitCode;

use duckgate::gateway::DEFAULT_MISSING_DB_HINT;

use super::args::DbArgs;
use super::out;
use super::start::{gateway_config, read_sql, start_once, usage_error};

/// `duckgate check`: exit 0 accepted (or passed on to the worker's checks), 1 refused.
pub(super) async fn check(db: Vec<Declaration>, sql: String) -> ExitCode {
    let sql = match read_sql(sql) {
        Ok(s) => s,
        Err(e) => return usage_error(&e),
    };
    let limits = duckgate_validate::validate::Limits::default();
    let verdict = if db.is_empty() {
        // Without the database there is no catalog, and a table missing from none is no
        // evidence: its names are taken on trust and said to be unchecked.
        duckgate_validate::validate::validate_sql_without_catalog(&sql, &limits)
    } else {
        let args = DbArgs {
            db,
            timeout: 30,
            queue_timeout: 10,
            memory_budget: None,
            memory_limit: Some(512 << 20),
            temp_dir: None,
            // Reading the catalog never spills.
            max_temp_size: 0,
            threads: 1,
            time_zone: None,
            max_reply_bytes: duckgate::gateway::DEFAULT_MAX_REPLY_BYTES,
            warm_workers: 0,
            max_concurrent: 1,
            spawn_workers: true,
            missing_db_hint: DEFAULT_MISSING_DB_HINT.into(),
            allow_unconfined: false,
            // The catalog is the databases'; `check` judges SQL as if no folder were declared.
            files: Vec::new(),
            files_max_count: duckgate::folders::DEFAULT_MAX_FILES,
            files_max_bytes: duckgate::folders::DEFAULT_MAX_FILE_BYTES,
        };
        let config = match gateway_config(&args, &[], "check against") {
            Ok(c) => c,
            Err(e) => return usage_error(&e),
        };
        let gateway = match start_once(config).await {
            Ok(g) => g,
            Err(code) => return code,
        };
        let snapshot = gateway.catalog().await;
        gateway.shutdown().await;
        let catalog = match snapshot {
            // What workers attach each database as: `name.schema.table` resolves.
            Ok(s) => duckgate::gateway::validator_catalog(&s, &gateway.config().databases),
            Err(e) => return usage_error(&format!("{}: {}", e.kind, e.message)),
        };
        duckgate_validate::validate::validate_sql(&sql, &catalog, &limits).map(|a| (a, Vec::new()))
    };
    match verdict {
        Ok((accepted, _))
            if accepted.kind == duckgate_validate::validate::StatementKind::Unparsed =>
        {
            out::text(
                "passed on: the validator cannot parse this DuckDB syntax and found nothing to \
                 refuse in it; DuckDB's own parse tree and plan decide in the worker when it runs \
                 (try `duckgate query`)",
            );
            ExitCode::SUCCESS
        }
        Ok((accepted, unchecked)) => {
            let relations = if accepted.relations.is_empty() {
                "none".to_string()
            } else {
                accepted.relations.join(", ")
            };
            let mut text = format!("accepted ({:?}); reads: {relations}", accepted.kind);
            if !unchecked.is_empty() {
                text.push_str(&format!(
                    "\nnote: table names were not checked ({}): pass --db to resolve them \
                     against the database's catalog",
                    unchecked.join(", ")
                ));
            }
            out::text(&text);
            ExitCode::SUCCESS
        }
        Err(refusal) => {
            let mut text = format!("refused ({}): {}", refusal.kind, refusal.message);
            if !refusal.suggestion.is_empty() {
                text.push_str(&format!("\nnext step: {}", refusal.suggestion));
            }
            out::text(&text);
            ExitCode::from(1)
        }
    }
}
