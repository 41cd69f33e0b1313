//! The stderr of the processes the server starts (workers, the zygote's template), drained
//! into the server's own log. Below both the pool and the zygote, which each start such
//! processes.

use tokio::io::AsyncReadExt;

/// Drain a worker's (or the template's) stderr into the server's log until it exits. Reads in
/// bounded chunks: a compromised worker must not make the parent buffer without limit.
pub(crate) fn forward_stderr(mut stderr: tokio::process::ChildStderr, pid: u32) {
    tokio::spawn(async move {
        let mut buf = vec![0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf).await {
            if n == 0 {
                break;
            }
            // `read` fills at most the buffer.
            let text = String::from_utf8_lossy(buf.get(..n).unwrap_or_default());
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                tracing::warn!(worker = pid, "{line}");
            }
        }
    });
}
