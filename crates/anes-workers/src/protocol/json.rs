//! JSON lines: one message per line, `{"type": "record", ...}`, byte strings in hex, unknown fields
//! refused, at most [`MAX_JSON_LINE_LEN`] bytes a line.

use super::{MAX_JSON_LINE_LEN, ProtocolError, Reply, WorkerCommand, check_limits};

/// Reads one line (without its `\n`) into `line`. `Ok(false)` at the end of the stream. A line longer
/// than [`MAX_JSON_LINE_LEN`] is read to its end without being kept (memory stays bounded) and is
/// [`ProtocolError::LineTooLong`]: the stream can go on after it.
pub fn read_line(reader: &mut impl std::io::BufRead, line: &mut Vec<u8>) -> Result<bool, ProtocolError> {
    line.clear();
    let mut too_long = false;
    let mut any = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if available.is_empty() {
            break;
        }
        any = true;
        let (chunk, used, end) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], at + 1, true),
            None => (available, available.len(), false),
        };
        if !too_long && line.len() + chunk.len() > MAX_JSON_LINE_LEN {
            too_long = true;
            line.clear();
            line.shrink_to(MAX_JSON_LINE_LEN.min(64 << 10));
        }
        if !too_long {
            line.extend_from_slice(chunk);
        }
        reader.consume(used);
        if end {
            break;
        }
    }
    if too_long {
        return Err(ProtocolError::LineTooLong { max: MAX_JSON_LINE_LEN });
    }
    Ok(any)
}

/// Parses one JSON line as a command, within the protocol's limits.
pub fn command_from_json(line: &str) -> Result<WorkerCommand, ProtocolError> {
    serde_json::from_str(line).map_err(|e| ProtocolError::Json(e.to_string())).and_then(check_limits)
}

/// Parses one JSON line as a reply.
pub fn reply_from_json(line: &str) -> Result<Reply, ProtocolError> {
    serde_json::from_str(line).map_err(|e| ProtocolError::Json(e.to_string()))
}
