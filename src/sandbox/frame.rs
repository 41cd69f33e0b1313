//! Length-prefixed JSON frames on a worker's stdin and stdout.
//!
//! A frame is a 4-byte big-endian length, then that many bytes of JSON. The reader refuses a
//! length above its cap *before* allocating, so a confused or hostile peer cannot make the other
//! side allocate without bound. Both sides read with the same steps: the worker blocking
//! ([`read_frame`]), the parent on tokio ([`read_frame_async`]); the fuzz targets `worker_frame`
//! and `parent_frame` hold both to the same answers ([`fuzz`]).

pub mod fuzz;

use std::io::{self, Read, Write};

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Largest request frame a worker accepts (the SQL cap is far below this).
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// Why a frame could not be read.
#[derive(Debug)]
pub enum FrameError {
    /// The pipe closed before a whole frame arrived.
    Closed,
    /// The announced length is above the cap.
    TooLarge {
        /// Announced length.
        announced: usize,
        /// The cap.
        cap: usize,
    },
    /// Reading or writing failed.
    Io(io::Error),
    /// The bytes are not the expected JSON.
    Malformed(serde_json::Error),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::Closed => f.write_str("the pipe closed before a whole frame arrived"),
            FrameError::TooLarge { announced, cap } => {
                write!(
                    f,
                    "frame of {announced} bytes is above the cap of {cap} bytes"
                )
            }
            FrameError::Io(e) => write!(f, "pipe I/O failed: {e}"),
            FrameError::Malformed(e) => {
                write!(f, "frame is not valid JSON of the expected shape: {e}")
            }
        }
    }
}

impl std::error::Error for FrameError {}

/// Encode `value` as one frame (length prefix included).
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    // Serializing our own protocol types cannot fail: they hold no maps with non-string keys.
    let body = serde_json::to_vec(value).unwrap_or_else(|_| b"null".to_vec());
    let mut out = Vec::with_capacity(body.len() + 4);
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// Decode a frame body (without the length prefix).
pub fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, FrameError> {
    serde_json::from_slice(body).map_err(FrameError::Malformed)
}

/// Parse a length prefix and check it against `cap`.
pub fn announced_len(prefix: [u8; 4], cap: usize) -> Result<usize, FrameError> {
    let announced = u32::from_be_bytes(prefix) as usize;
    if announced > cap {
        return Err(FrameError::TooLarge { announced, cap });
    }
    Ok(announced)
}

/// Write one frame and flush (blocking; used by the worker and by tests).
pub fn write_frame<T: Serialize, W: Write>(out: &mut W, value: &T) -> Result<(), FrameError> {
    out.write_all(&encode(value)).map_err(FrameError::Io)?;
    out.flush().map_err(FrameError::Io)
}

/// Read one frame of at most `cap` bytes (blocking; used by the worker and by tests).
pub fn read_frame<T: DeserializeOwned, R: Read>(
    input: &mut R,
    cap: usize,
) -> Result<T, FrameError> {
    let mut prefix = [0u8; 4];
    read_exact_or_closed(input, &mut prefix)?;
    let len = announced_len(prefix, cap)?;
    let mut body = vec![0u8; len];
    read_exact_or_closed(input, &mut body)?;
    decode(&body)
}

/// Read one frame of at most `cap` bytes on tokio (the parent's side of a worker's stdout).
pub async fn read_frame_async<T: DeserializeOwned, R: AsyncRead + Unpin>(
    input: &mut R,
    cap: usize,
) -> Result<T, FrameError> {
    let mut prefix = [0u8; 4];
    input.read_exact(&mut prefix).await.map_err(closed_or_io)?;
    let len = announced_len(prefix, cap)?;
    let mut body = vec![0u8; len];
    input.read_exact(&mut body).await.map_err(closed_or_io)?;
    decode(&body)
}

fn read_exact_or_closed<R: Read>(input: &mut R, buf: &mut [u8]) -> Result<(), FrameError> {
    input.read_exact(buf).map_err(closed_or_io)
}

/// The end of the pipe before a whole frame is [`FrameError::Closed`]; anything else is I/O.
fn closed_or_io(error: io::Error) -> FrameError {
    match error.kind() {
        io::ErrorKind::UnexpectedEof => FrameError::Closed,
        _ => FrameError::Io(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Request, Response};

    #[test]
    fn a_frame_round_trips() {
        let request = Request::Query {
            sql: "SELECT 1".into(),
            limit: 5,
            max_bytes: 100,
            privacy: Default::default(),
        };
        let bytes = encode(&request);
        let back: Request = read_frame(&mut bytes.as_slice(), MAX_REQUEST_BYTES).unwrap();
        assert!(
            matches!(back, Request::Query { ref sql, limit: 5, max_bytes: 100, .. } if sql == "SELECT 1")
        );
    }

    #[test]
    fn an_oversized_length_is_refused_before_allocating() {
        let mut bytes = (u32::MAX).to_be_bytes().to_vec();
        bytes.extend_from_slice(b"{}");
        let err = read_frame::<Response, _>(&mut bytes.as_slice(), 1024).unwrap_err();
        assert!(
            matches!(err, FrameError::TooLarge { announced, cap: 1024 } if announced == u32::MAX as usize)
        );
    }

    #[test]
    fn a_truncated_frame_is_closed_and_garbage_is_malformed() {
        let mut short = 10u32.to_be_bytes().to_vec();
        short.extend_from_slice(b"{\"a\"");
        assert!(matches!(
            read_frame::<Response, _>(&mut short.as_slice(), 1024),
            Err(FrameError::Closed)
        ));
        let mut garbage = 3u32.to_be_bytes().to_vec();
        garbage.extend_from_slice(b"abc");
        assert!(matches!(
            read_frame::<Response, _>(&mut garbage.as_slice(), 1024),
            Err(FrameError::Malformed(_))
        ));
    }
}
