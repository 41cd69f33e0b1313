//! `duckgate query` and `duckgate plot`: one call through one confined worker, its answer on
//! stdout (a text table, or where the PNG went and what it shows).

use std::path::PathBuf;
use std::process::ExitCode;

use tokio_util::sync::CancellationToken;

use super::args::DbArgs;
use super::out;
use super::start::{call_failed, one_call, usage_error};

/// `duckgate query`.
pub(super) async fn query(args: DbArgs, limit: usize, sql: String) -> ExitCode {
    let (gateway, sql) = match one_call(&args, "query", sql).await {
        Ok(started) => started,
        Err(code) => return code,
    };
    let outcome = gateway.query(&sql, limit, CancellationToken::new()).await;
    gateway.shutdown().await;
    match outcome {
        Ok(result) => {
            out::text(&duckgate::mcp::render::query_text(&result));
            ExitCode::SUCCESS
        }
        Err(e) => call_failed(&e),
    }
}

/// `duckgate plot`.
pub(super) async fn plot(
    args: DbArgs,
    chart: duckgate::protocol::ChartRequest,
    out_path: PathBuf,
    sql: String,
) -> ExitCode {
    use base64::Engine as _;
    let (gateway, sql) = match one_call(&args, "plot", sql).await {
        Ok(started) => started,
        Err(code) => return code,
    };
    let outcome = gateway.plot(&sql, chart, CancellationToken::new()).await;
    gateway.shutdown().await;
    match outcome {
        Ok(reply) => {
            let png = match base64::engine::general_purpose::STANDARD.decode(&reply.png_base64) {
                Ok(png) => png,
                Err(e) => {
                    out::text(&format!(
                        "internal_error: the worker's PNG did not decode: {e}"
                    ));
                    return ExitCode::from(1);
                }
            };
            if let Err(e) = std::fs::write(&out_path, &png) {
                return usage_error(&format!("cannot write {}: {e}", out_path.display()));
            }
            out::text(&format!(
                "Wrote {} ({}×{} px, {} bytes).\n{}",
                out_path.display(),
                reply.width,
                reply.height,
                png.len(),
                reply.summary_text
            ));
            ExitCode::SUCCESS
        }
        Err(e) => call_failed(&e),
    }
}
