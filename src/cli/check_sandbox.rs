//! `duckgate check-sandbox`: what this kernel's confinement of query workers holds.

use std::path::PathBuf;
use std::process::ExitCode;

use duckgate::gateway::GatewayConfig;
use duckgate::sandbox::preflight;

use super::out;
use super::start::usage_error;

/// `duckgate check-sandbox`: run the start-up preflight (our own binary, confined exactly as a
/// worker would be, opening no database) and print each property with the mechanism that keeps
/// it here; exit 0 when duckgate would start without `--allow-unconfined`, 1 otherwise.
pub(super) async fn check_sandbox(db: Option<PathBuf>) -> ExitCode {
    // Without --db the preflight grants no database: it grants one only if the file exists,
    // and this one is never created.
    let db = db.unwrap_or_else(|| {
        std::env::temp_dir().join(format!(
            "duckgate-check-sandbox-{}-no-database",
            std::process::id()
        ))
    });
    let mut config = GatewayConfig::new(db);
    config.warm_workers = 0;
    config.fork_workers = false;
    config.allow_unconfined = true;
    let (spec, _) = match duckgate::gateway::worker_spec(&config) {
        Ok(spec) => spec,
        Err(e) => return usage_error(&e.message),
    };
    let posture = match preflight::posture(&spec).await {
        Ok(posture) => posture,
        Err(failure) => {
            out::text(&failure.to_string());
            return ExitCode::from(1);
        }
    };
    let confined = preflight::fully_confined(&posture);
    out::text(&duckgate::mcp::render::sandbox_report(&posture, confined));
    if confined {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
