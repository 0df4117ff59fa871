//! JSON lines: one message per line, `{"type": "record", ...}`, byte strings in hex, unknown fields
//! refused, at most [`MAX_JSON_LINE_LEN`] bytes a line.

use super::binary::{MAX_NAME_LEN, MAX_TEXT_LEN, check_picture};
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

/// Parses one JSON line as a reply, within the limits the binary decoder applies.
pub fn reply_from_json(line: &str) -> Result<Reply, ProtocolError> {
    serde_json::from_str(line).map_err(|e| ProtocolError::Json(e.to_string())).and_then(check_reply)
}

/// The binary decoder's string and picture limits: a line may hold 32 MiB, and the strings are kept
/// (a worker's build, notices) and pictures' sizes multiplied, whichever encoding brought them.
fn check_reply(reply: Reply) -> Result<Reply, ProtocolError> {
    let within = |message, field, text: &str, max: usize| {
        if text.len() > max {
            return Err(ProtocolError::BadField {
                message,
                field,
                problem: format!("{} bytes is longer than the {max}-byte limit", text.len()),
            });
        }
        Ok(())
    };
    match &reply {
        Reply::Hello { build, .. } => {
            within("hello", "version", &build.version, MAX_NAME_LEN)?;
            within("hello", "git_commit", build.git_commit.as_deref().unwrap_or(""), MAX_NAME_LEN)?;
        }
        Reply::FaultFired { spec, refused, .. } => {
            within("fault_fired", "spec", spec, MAX_NAME_LEN)?;
            within("fault_fired", "refused", refused.as_deref().unwrap_or(""), MAX_TEXT_LEN)?;
        }
        Reply::Error { message } => within("error", "message", message, MAX_TEXT_LEN)?,
        Reply::Disassembly { text, .. } => within("disassembly", "text", text, MAX_TEXT_LEN)?,
        Reply::Picture { width, height, rgb } => check_picture(*width, *height, rgb.len())?,
        Reply::Loaded { .. }
        | Reply::Record { .. }
        | Reply::Snapshot { .. }
        | Reply::Restored { .. }
        | Reply::Probe { .. }
        | Reply::Stepped { .. } => {}
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::super::BuildInfo;
    use super::super::binary::MAX_PICTURE_SIDE;
    use super::*;

    fn refused(reply: &Reply) -> (&'static str, &'static str, String) {
        let line = serde_json::to_string(reply).unwrap();
        match reply_from_json(&line) {
            Err(ProtocolError::BadField { message, field, problem }) => (message, field, problem),
            other => panic!("{line:.80} parsed as {other:.200?}"),
        }
    }

    #[test]
    fn strings_longer_than_the_binary_limits_are_refused_by_name() {
        let long = |n| "x".repeat(n);
        let fault = |spec, refused| Reply::FaultFired { seq: 1, spec, refused };
        let hello = |version, git_commit| Reply::Hello {
            protocol_version: 2,
            build: BuildInfo { version, git_commit, emulation_epoch: 1 },
        };
        for (reply, message, field, max) in [
            (fault(long(MAX_NAME_LEN + 1), None), "fault_fired", "spec", MAX_NAME_LEN),
            (fault("stall:1".into(), Some(long(MAX_TEXT_LEN + 1))), "fault_fired", "refused", MAX_TEXT_LEN),
            (Reply::Error { message: long(16 << 20) }, "error", "message", MAX_TEXT_LEN),
            (hello(long(MAX_NAME_LEN + 1), None), "hello", "version", MAX_NAME_LEN),
            (hello("1.0".into(), Some(long(MAX_NAME_LEN + 1))), "hello", "git_commit", MAX_NAME_LEN),
            (
                Reply::Disassembly { opcode: 0, text: long(MAX_TEXT_LEN + 1) },
                "disassembly",
                "text",
                MAX_TEXT_LEN,
            ),
        ] {
            let (m, f, problem) = refused(&reply);
            assert_eq!((m, f), (message, field));
            assert!(problem.contains(&format!("{max}-byte limit")), "{problem}");
        }
        let at_limit = [
            fault(long(MAX_NAME_LEN), Some(long(MAX_TEXT_LEN))),
            Reply::Error { message: long(MAX_TEXT_LEN) },
            hello(long(MAX_NAME_LEN), Some(long(MAX_NAME_LEN))),
            Reply::Disassembly { opcode: 0, text: long(MAX_TEXT_LEN) },
        ];
        for reply in at_limit {
            assert_eq!(reply_from_json(&serde_json::to_string(&reply).unwrap()), Ok(reply));
        }
    }

    #[test]
    fn a_picture_is_refused_unless_its_bytes_are_its_size() {
        let picture = |width, height, len| Reply::Picture { width, height, rgb: vec![7; len] };
        for (width, height, len, field) in [
            (u32::MAX, u32::MAX, 0, "width"),
            (2, MAX_PICTURE_SIDE + 1, 0, "height"),
            (2, 1, 5, "rgb"),
            (2, 1, 7, "rgb"),
            (MAX_PICTURE_SIDE, MAX_PICTURE_SIDE, 3, "rgb"),
        ] {
            let (message, f, problem) = refused(&picture(width, height, len));
            assert_eq!((message, f), ("picture", field), "{width}x{height}: {problem}");
        }
        for (width, height) in [(0, 0), (2, 1), (256, 240)] {
            let reply = picture(width, height, (width * height * 3) as usize);
            assert_eq!(reply_from_json(&serde_json::to_string(&reply).unwrap()), Ok(reply));
        }
    }

    #[test]
    fn an_inject_spec_longer_than_the_binary_limit_is_refused() {
        let line = |len| serde_json::to_string(&WorkerCommand::Inject { spec: "f".repeat(len) }).unwrap();
        assert!(command_from_json(&line(MAX_NAME_LEN)).is_ok());
        match command_from_json(&line(MAX_NAME_LEN + 1)) {
            Err(ProtocolError::BadField { message: "inject", field: "spec", problem }) => {
                assert!(problem.contains("1025 bytes"), "{problem}")
            }
            other => panic!("{other:?}"),
        }
    }
}
