//! `duckgate serve` driven over raw pipes, one JSON-RPC line at a time, for tests that write
//! what no MCP client would (lines that are not JSON, malformed requests).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A running server and its pipes.
pub struct RawSession {
    /// The server process (killed when dropped).
    pub child: tokio::process::Child,
    /// Its stdin, until a test closes it.
    pub stdin: Option<tokio::process::ChildStdin>,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl RawSession {
    /// `exe serve --db DB extra…`, not yet initialised.
    pub fn start(exe: &Path, db: &Path, extra: &[&str]) -> RawSession {
        RawSession::spawn(exe, db, extra, Stdio::null())
    }

    /// The same, its stderr written to `stderr` (created or truncated).
    pub fn start_logging(exe: &Path, db: &Path, extra: &[&str], stderr: &Path) -> RawSession {
        let file = std::fs::File::create(stderr).expect("create the stderr file");
        RawSession::spawn(exe, db, extra, Stdio::from(file))
    }

    fn spawn(exe: &Path, db: &Path, extra: &[&str], stderr: Stdio) -> RawSession {
        let mut child = tokio::process::Command::new(exe)
            .arg("serve")
            .arg("--db")
            .arg(db)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .expect("start duckgate serve");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        RawSession {
            child,
            stdin,
            stdout,
        }
    }

    /// Write `bytes` and a newline, as they are.
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Write one line.
    pub async fn send(&mut self, line: &str) {
        self.send_bytes(line.as_bytes()).await;
    }

    /// The next line on stdout, parsed (every line stdout carries must be JSON).
    pub async fn next_message(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.stdout.next_line())
            .await
            .expect("no message within 30 s")
            .unwrap()
            .expect("the server closed stdout");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {line}"))
    }

    /// The next message that is a reply with this `id` (others are skipped).
    pub async fn reply(&mut self, id: Value) -> Value {
        loop {
            let message = self.next_message().await;
            if message.get("id") == Some(&id) && message.get("method").is_none() {
                return message;
            }
        }
    }

    /// `initialize` and `notifications/initialized`.
    pub async fn initialize(&mut self) -> Value {
        self.send(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "raw", "version": "0" } }
        }).to_string()).await;
        let reply = self.reply(json!(1)).await;
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        reply
    }

    /// `server/discover` with `_meta` naming `version`: how a 2026-07-28 client starts.
    pub async fn discover(&mut self, id: i64, version: &str) -> Value {
        self.request(
            id,
            "server/discover",
            json!({ "_meta": request_meta(version) }),
        )
        .await
    }

    /// One request line of `method` with `params`, and its reply.
    pub async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(
            &json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string(),
        )
        .await;
        self.reply(json!(id)).await
    }

    /// A `tools/call` request line.
    pub async fn call(&mut self, id: i64, tool: &str, arguments: Value) {
        self.send(
            &json!({
                "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": tool, "arguments": arguments }
            })
            .to_string(),
        )
        .await;
    }

    /// Close stdin and wait for a clean exit.
    pub async fn finish(mut self) {
        drop(self.stdin.take());
        let status = tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("the server did not exit after stdin closed")
            .unwrap();
        assert!(status.success(), "{status}");
    }
}

/// The `_meta` every 2026-07-28 request carries (SEP-2575): the protocol version, the client's
/// identity and its capabilities (none).
pub fn request_meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": { "name": "raw", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}
