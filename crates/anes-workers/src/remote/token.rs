//! The token: read from its file, sent in its own frame, read back within a byte and time bound, and
//! compared in constant time.

use std::io::{ErrorKind, Read};
use std::path::Path;
use std::time::{Duration, Instant};

use thiserror::Error;

use super::{MAX_TOKEN_FILE_LEN, MAX_TOKEN_LEN, TOKEN_MAGIC};
use crate::protocol::FRAME_CHECKSUM_LEN;
use crate::protocol::frame::{begin_frame, end_frame, frame_checksum};

/// Why a connection's handshake failed, on the worker's side.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HandshakeError {
    /// Nothing, or not all of the token frame, came within the time allowed.
    #[error("no token within {} s", .waited.as_secs_f64())]
    Timeout {
        /// The time allowed.
        waited: Duration,
    },
    /// The connection closed before the token frame was complete.
    #[error("the connection closed {missing} bytes before the end of the token frame")]
    Closed {
        /// Bytes missing.
        missing: usize,
    },
    /// The token frame declares more contents than a token may have.
    #[error("token frame of {len} bytes: at most {max}")]
    TooLong {
        /// Declared length of the contents.
        len: usize,
        /// The largest contents accepted (magic and token).
        max: usize,
    },
    /// The frame does not start with the token's magic: not an anes coordinator.
    #[error("not a token frame (first bytes {found:02X?})")]
    NotAToken {
        /// What came instead, up to 4 bytes.
        found: Vec<u8>,
    },
    /// The frame's checksum does not match its contents.
    #[error("token frame damaged: checksum mismatch")]
    Damaged,
    /// A token that is not this worker's.
    #[error("wrong token")]
    WrongToken,
    /// Another coordinator is connected.
    #[error("busy: another coordinator is connected")]
    Busy,
    /// Closed before its token to free its handshake slot for a new connection: every slot was
    /// taken, and it was the oldest silent connection of the address holding the most.
    #[error(
        "closed before its token: every handshake slot was taken and this was the oldest silent one of the address holding the most"
    )]
    Evicted,
    /// The TLS handshake failed or timed out (nothing is sent back: the peer speaks no TLS, or not
    /// this worker's).
    #[error("TLS handshake: {0}")]
    Tls(String),
    /// Reading failed otherwise.
    #[error("{0}")]
    Io(String),
}

/// The token in `path` (through the size-capped reader), without the surrounding whitespace a
/// secret file often has (a trailing newline).
pub fn read_token_file(path: &Path) -> Result<Vec<u8>, String> {
    let bytes = anes_fs::read_capped(path, MAX_TOKEN_FILE_LEN, "token file").map_err(|e| e.problem())?;
    let token = bytes.trim_ascii();
    if token.is_empty() {
        return Err(format!("{}: the token file is empty", path.display()));
    }
    if token.len() > MAX_TOKEN_LEN {
        return Err(format!("{}: a token of {} bytes; at most {MAX_TOKEN_LEN}", path.display(), token.len()));
    }
    Ok(token.to_vec())
}

/// The token frame: `len u32`, `"ANWT"` and the token, the frame's checksum.
pub(crate) fn encode_token(token: &[u8], out: &mut Vec<u8>) {
    let start = begin_frame(out);
    out.extend_from_slice(&TOKEN_MAGIC);
    out.extend_from_slice(token);
    end_frame(out, start);
}

/// Reads the token frame from `stream` before `deadline` and checks the token against `expected`'s
/// digest. `set_timeout` bounds each read by the time left (a socket's read timeout).
pub(crate) fn read_and_check_token(
    stream: &mut impl Read,
    set_timeout: &mut dyn FnMut(Duration) -> std::io::Result<()>,
    timeout: Duration,
    expected: &blake3::Hash,
) -> Result<(), HandshakeError> {
    let deadline = Instant::now() + timeout;
    let mut len_bytes = [0u8; 4];
    read_exact_by(stream, set_timeout, deadline, timeout, &mut len_bytes)?;
    let len = u32::from_le_bytes(len_bytes) as usize;
    let max = TOKEN_MAGIC.len() + MAX_TOKEN_LEN;
    // Checked before anything is allocated or read: a garbage length costs nothing.
    if len > max {
        return Err(HandshakeError::TooLong { len, max });
    }
    let mut contents = vec![0u8; len + FRAME_CHECKSUM_LEN];
    read_exact_by(stream, set_timeout, deadline, timeout, &mut contents)?;
    let (contents, checksum) = contents.split_at(len);
    if checksum != frame_checksum(&len_bytes, contents) {
        return Err(HandshakeError::Damaged);
    }
    let Some(token) = contents.strip_prefix(&TOKEN_MAGIC) else {
        return Err(HandshakeError::NotAToken { found: contents[..contents.len().min(4)].to_vec() });
    };
    if digests_equal(&blake3::hash(token), expected) { Ok(()) } else { Err(HandshakeError::WrongToken) }
}

/// Compares two digests in time independent of where they differ: both are hashed first, so the
/// comparison leaks neither the token's length nor its prefix.
pub(crate) fn digests_equal(a: &blake3::Hash, b: &blake3::Hash) -> bool {
    let difference = a.as_bytes().iter().zip(b.as_bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    // `black_box` keeps the optimiser from turning the fold into an early exit.
    std::hint::black_box(difference) == 0
}

fn read_exact_by(
    stream: &mut impl Read,
    set_timeout: &mut dyn FnMut(Duration) -> std::io::Result<()>,
    deadline: Instant,
    timeout: Duration,
    buf: &mut [u8],
) -> Result<(), HandshakeError> {
    let mut filled = 0;
    while filled < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(HandshakeError::Timeout { waited: timeout });
        }
        set_timeout(left).map_err(|e| HandshakeError::Io(e.to_string()))?;
        match stream.read(&mut buf[filled..]) {
            Ok(0) => return Err(HandshakeError::Closed { missing: buf.len() - filled }),
            Ok(n) => filled += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(HandshakeError::Timeout { waited: timeout });
            }
            Err(e) => return Err(HandshakeError::Io(e.to_string())),
        }
    }
    Ok(())
}
