//! A worker that breaks the protocol on purpose, for `tests/it/worker_replies.rs`.
//!
//! The pool starts it in place of duckgate's own binary (`GatewayConfig::worker_exe`, which no
//! CLI flag or MCP call can set). It starts the real `duckgate __worker` beside itself
//! (`target/release/duckgate`), with the same arguments but `--parent-pid` set to its own pid
//! (the worker checks its parent), and relays the frames. The real worker confines itself and
//! answers as usual; this relay then replaces the reply, as a compromised worker could, when the
//! query's SQL names a misbehaviour (`SELECT 'rogue:malformed'`):
//! - `rogue:oversized`: a length prefix of ~4 GiB, then nothing (the pipe stays open);
//! - `rogue:malformed`: a well-formed length, then bytes that are not a reply;
//! - `rogue:truncated`: a length of 1,000 bytes, then 10 bytes and exit;
//! - `rogue:silent`: exit without a reply;
//! - `rogue:wrong_kind`: a valid reply of the wrong kind (a catalog for a query);
//! - `rogue:crash`: die by SIGKILL instead of replying.
//!
//! Any other request is relayed unchanged, so the next call gets the real worker's answer.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use duckgate::protocol::{CatalogSnapshot, Request, Response};
use duckgate::sandbox::frame;
use nix::sys::signal::{self, Signal};

fn main() -> ExitCode {
    match relay() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "rogue_worker: {e}");
            ExitCode::from(3)
        }
    }
}

/// The real duckgate binary: `target/release/examples/rogue_worker` → `target/release/duckgate`.
fn real_duckgate() -> Result<PathBuf, String> {
    let own = std::env::current_exe().map_err(|e| format!("own path: {e}"))?;
    let release = own
        .parent()
        .and_then(|examples| examples.parent())
        .ok_or("no target directory above the example")?;
    Ok(release.join("duckgate"))
}

fn read_raw(input: &mut impl Read) -> Result<Vec<u8>, String> {
    let mut prefix = [0u8; 4];
    input
        .read_exact(&mut prefix)
        .map_err(|e| format!("read prefix: {e}"))?;
    let mut body = vec![0u8; u32::from_be_bytes(prefix) as usize];
    input
        .read_exact(&mut body)
        .map_err(|e| format!("read body: {e}"))?;
    Ok(body)
}

fn write_raw(out: &mut impl Write, prefix: u32, body: &[u8]) -> Result<(), String> {
    out.write_all(&prefix.to_be_bytes())
        .and_then(|()| out.write_all(body))
        .and_then(|()| out.flush())
        .map_err(|e| format!("write: {e}"))
}

fn relay() -> Result<(), String> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--parent-pid") {
        args[i + 1] = std::process::id().to_string();
    }
    let mut worker = Command::new(real_duckgate()?)
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("start the real worker: {e}"))?;
    let mut to_worker = worker.stdin.take().ok_or("worker stdin")?;
    let mut from_worker = worker.stdout.take().ok_or("worker stdout")?;
    let mut out = std::io::stdout().lock();
    let mut input = std::io::stdin().lock();

    // The ready report (or the preflight's only report), unchanged.
    let ready = read_raw(&mut from_worker)?;
    write_raw(&mut out, ready.len() as u32, &ready)?;

    if args.iter().any(|a| a == "--confine-only") {
        return Ok(()); // the start-up preflight: the ready report is all it asks for
    }
    let request_bytes = read_raw(&mut input)?;
    let request: Request = frame::decode(&request_bytes).map_err(|e| e.to_string())?;
    let misbehaviour = match &request {
        Request::Query { sql, .. } => sql
            .split("rogue:")
            .nth(1)
            .map(|rest| {
                rest.chars()
                    .take_while(|c| c.is_ascii_alphabetic() || *c == '_')
            })
            .map(String::from_iter),
        _ => None,
    };
    write_raw(&mut to_worker, request_bytes.len() as u32, &request_bytes)?;
    let reply = read_raw(&mut from_worker)?;
    let _ = worker.wait();

    match misbehaviour.as_deref() {
        None => write_raw(&mut out, reply.len() as u32, &reply),
        Some("oversized") => {
            write_raw(&mut out, 0xFFFF_FFF0, b"")?;
            // Keep the pipe open: the pool must refuse on the prefix, not wait for a body.
            std::thread::sleep(Duration::from_secs(60));
            Ok(())
        }
        Some("malformed") => {
            let body = b"{not a reply!}";
            write_raw(&mut out, body.len() as u32, body)
        }
        Some("truncated") => {
            let _ = write_raw(&mut out, 1000, b"{\"rows\": [");
            std::process::exit(0)
        }
        Some("silent") => std::process::exit(0),
        Some("wrong_kind") => {
            let wrong = frame::encode(&Response::Catalog(CatalogSnapshot::default()));
            out.write_all(&wrong)
                .and_then(|()| out.flush())
                .map_err(|e| e.to_string())
        }
        Some("crash") => {
            // SIGKILL rather than abort(): this relay is not confined, and abort() could leave
            // a core file behind.
            signal::raise(Signal::SIGKILL).map_err(|e| e.to_string())?;
            Ok(())
        }
        Some(other) => Err(format!("unknown misbehaviour {other:?}")),
    }
}
