//! `duckgate serve` (also duckgate without a subcommand): MCP over stdio until the client
//! closes it.

use std::process::ExitCode;

use duckgate::gateway::{Gateway, GatewayConfig};

use super::args::ServeArgs;
use super::start::{
    StartFailure, UsageError, database_lines, gateway_config, start_gateway, usage_error,
};
use super::stop::stop_signal;

pub(super) async fn serve(args: ServeArgs) -> ExitCode {
    let file = match &args.config {
        Some(path) => match duckgate::config_file::ConfigFile::load(path) {
            Ok(file) => file,
            Err(e) => return usage_error(&UsageError::Config(e)),
        },
        None => Default::default(),
    };
    let mut config = match gateway_config(&args.db, &file.databases, "serve") {
        Ok(c) => c,
        Err(e) => return usage_error(&e),
    };
    if let Err(e) = privacy_and_audit(&args, file, &mut config) {
        return usage_error(&e);
    }
    let descriptions = match &args.descriptions {
        Some(path) => match duckgate::mcp::load_descriptions(path) {
            Ok(d) => d,
            Err(e) => return usage_error(&e),
        },
        None => Default::default(),
    };
    let options = duckgate::mcp::ServeOptions { descriptions };
    let (gateway, refused) = match start_gateway(config.clone(), true).await {
        Ok(g) => {
            for line in database_lines(&g.config().databases) {
                eprintln!("{line}");
            }
            (g, false)
        }
        // An MCP client shows tool errors, not stderr: serve the refusal as the answer to every
        // call (no worker ever starts), then exit 1 as a refused start does.
        Err(StartFailure::Refused(refusal)) => match Gateway::refusing(config, refusal) {
            Ok(g) => (g, true),
            Err(e) => return usage_error(&e.message),
        },
        Err(StartFailure::Exit(code)) => return code,
    };
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        eprintln!("{}", terminal_notice(&gateway.config().databases));
    }
    // A signal ends the session where it is: dropping it cancels rmcp's service and every call
    // in flight (their workers are killed as their handles drop).
    let result = tokio::select! {
        result = duckgate::mcp::serve_stdio(gateway.clone(), options) => result,
        signal = stop_signal() => {
            tracing::info!("stopping on {signal}: ending the workers");
            gateway.shutdown().await;
            return ExitCode::from(signal.exit_code());
        }
    };
    gateway.shutdown().await;
    match result {
        Ok(()) if refused => ExitCode::from(1),
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("server stopped: {e}");
            ExitCode::from(1)
        }
    }
}

/// `--config` and the `--hide-*`/`--audit-*` flags into the gateway's configuration (the
/// file's `[databases]` went into `gateway_config`).
fn privacy_and_audit(
    args: &ServeArgs,
    mut file: duckgate::config_file::ConfigFile,
    config: &mut GatewayConfig,
) -> Result<(), UsageError> {
    file.privacy
        .hide_tables
        .extend(args.hide_table.iter().cloned());
    file.privacy
        .hide_columns
        .extend(args.hide_column.iter().cloned());
    let audit = file.audit;
    if let Some(path) = args.audit_log.as_ref().or(audit.log.as_ref()) {
        let redact = args.audit_redact_sql || audit.redact_sql;
        let required = args.audit_required || audit.required;
        let max_bytes = args
            .audit_max_bytes
            .or(audit.max_bytes)
            .unwrap_or(duckgate::audit::DEFAULT_MAX_BYTES);
        if max_bytes == 0 {
            return Err(UsageError::AuditMaxBytesZero);
        }
        let generations = args
            .audit_generations
            .or(audit.generations)
            .unwrap_or(duckgate::audit::DEFAULT_GENERATIONS);
        if generations < duckgate::audit::MIN_GENERATIONS {
            return Err(UsageError::AuditTooFewGenerations);
        }
        let log = duckgate::audit::AuditLog::open(path, redact, required)
            .map_err(UsageError::Audit)?
            .with_max_bytes(max_bytes)
            .with_generations(generations);
        config.audit = Some(std::sync::Arc::new(log));
    } else if args.audit_required || audit.required {
        return Err(UsageError::AuditRequiredWithoutLog);
    }
    for (name, dir) in &file.files {
        let dir = super::args::user_path(&dir.to_string_lossy()).map_err(UsageError::Files)?;
        config.files.push((name.clone(), dir));
    }
    config.privacy = file.privacy;
    config.spill_with_privacy_rules = args.spill_with_privacy_rules;
    Ok(())
}

/// What `serve` says when a person runs it in a terminal: it waits for an MCP client's JSON-RPC
/// on stdin, so typing gets nowhere.
fn terminal_notice(databases: &duckgate::protocol::databases::Databases) -> String {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "duckgate".into());
    // Every database as `--db` flags that declare the same names: the default by its path
    // when its file names it so, the others as NAME=PATH.
    let db = databases
        .iter()
        .enumerate()
        .map(|(at, d)| {
            if at == 0 && duckgate::protocol::databases::name_of_file(&d.path) == d.name {
                d.path.display().to_string()
            } else {
                format!("{}={}", d.name, d.path.display())
            }
        })
        .collect::<Vec<_>>()
        .join(" --db ");
    format!(
        "duckgate serve is an MCP server: it reads JSON-RPC from an MCP client on stdin and \
         answers on stdout, so it waits here without a prompt (Ctrl-D or Ctrl-C ends it).\n\
         Connect a client instead, e.g. Claude Code:\n  \
         claude mcp add -s user duckgate -- {exe} serve --db {db}\n\
         or Claude Desktop (see the README). To try queries by hand: {exe} query --db {db} \
         \"SELECT 1\"; for a guided session: {exe} demo"
    )
}
