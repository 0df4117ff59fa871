//! The child's side of the protocol: `anes worker` reads commands from stdin and writes replies to
//! stdout until `shutdown` or the end of its input.

use std::io::{BufRead, BufReader, BufWriter, Read, Write};

use super::engine::{Engine, Flow};
use super::protocol::{
    BuildInfo, Encoding, PROTOCOL_VERSION, ProtocolError, Reply, command_from_json, decode_command,
    encode_reply, read_frame,
};

/// Serves the protocol over `input` and `output` in `encoding`. Returns at `shutdown` or at the end of
/// the input; an unreadable command is answered with [`Reply::Error`] when the stream can continue
/// after it (a JSON line, a complete binary frame) and ends the session when it cannot.
pub fn serve(encoding: Encoding, input: impl Read, output: impl Write) -> Result<(), ProtocolError> {
    let mut out = ReplyWriter { encoding, out: BufWriter::new(output), buf: Vec::new() };
    out.write(&Reply::Hello { protocol_version: PROTOCOL_VERSION, build: BuildInfo::current() })?;
    out.flush()?;
    let mut engine = Engine::new();
    let mut input = BufReader::new(input);
    let mut frame = Vec::new();
    let mut line = String::new();
    loop {
        let command = match encoding {
            Encoding::Binary => {
                if !read_frame(&mut input, &mut frame)? {
                    return Ok(());
                }
                decode_command(&frame)
            }
            Encoding::JsonLines => {
                line.clear();
                if input.read_line(&mut line)? == 0 {
                    return Ok(());
                }
                if line.trim().is_empty() {
                    continue;
                }
                command_from_json(&line)
            }
        };
        let command = match command {
            Ok(c) => c,
            Err(e) => {
                out.write(&Reply::Error { message: format!("unreadable command: {e}") })?;
                out.flush()?;
                continue;
            }
        };
        let mut failed = None;
        let flow = engine.handle(command, &mut |reply| {
            if failed.is_none() {
                failed = out.write(&reply).err();
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        out.flush()?;
        match flow {
            Flow::Continue => {}
            Flow::Stall(duration) => std::thread::sleep(duration),
            Flow::Shutdown => return Ok(()),
        }
    }
}

struct ReplyWriter<W: Write> {
    encoding: Encoding,
    out: BufWriter<W>,
    buf: Vec<u8>,
}

impl<W: Write> ReplyWriter<W> {
    fn write(&mut self, reply: &Reply) -> Result<(), ProtocolError> {
        match self.encoding {
            Encoding::Binary => {
                self.buf.clear();
                encode_reply(reply, &mut self.buf);
                self.out.write_all(&self.buf)?;
            }
            Encoding::JsonLines => {
                serde_json::to_writer(&mut self.out, reply).map_err(|e| ProtocolError::Io(e.to_string()))?;
                self.out.write_all(b"\n")?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), ProtocolError> {
        Ok(self.out.flush()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::protocol::{Command, WireInput, decode_reply, encode_command, reply_from_json};
    use anes_lockstep::testing::tiny_rom;

    #[test]
    fn a_binary_session() {
        let mut input = Vec::new();
        encode_command(&Command::Load { rom: tiny_rom(), checkpoint_every: 2 }, &mut input);
        encode_command(&Command::Frames { first_seq: 0, inputs: vec![WireInput([0, 0, 0]); 3] }, &mut input);
        input.extend_from_slice(&[1, 0, 0, 0, 0x7f]);
        encode_command(&Command::Shutdown, &mut input);
        let mut output = Vec::new();
        serve(Encoding::Binary, &input[..], &mut output).unwrap();
        let mut replies = Vec::new();
        let mut reader = &output[..];
        let mut frame = Vec::new();
        while read_frame(&mut reader, &mut frame).unwrap() {
            replies.push(decode_reply(&frame).unwrap());
        }
        let kinds: Vec<&str> = replies
            .iter()
            .map(|r| match r {
                Reply::Hello { .. } => "hello",
                Reply::Loaded { .. } => "loaded",
                Reply::Record { .. } => "record",
                Reply::Snapshot { .. } => "snapshot",
                Reply::Error { .. } => "error",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["hello", "loaded", "snapshot", "record", "record", "snapshot", "record", "error"]);
    }

    #[test]
    fn a_json_lines_session() {
        let rom = anes_core::hex::to_hex(&tiny_rom());
        let input = format!(
            "{{\"type\":\"load\",\"rom\":\"{rom}\",\"checkpoint_every\":60}}\n\nnot json\n{{\"type\":\"frames\",\"first_seq\":0,\"inputs\":[[0,0,0]]}}\n"
        );
        let mut output = Vec::new();
        serve(Encoding::JsonLines, input.as_bytes(), &mut output).unwrap();
        let text = String::from_utf8(output).unwrap();
        let replies: Vec<Reply> = text.lines().map(|l| reply_from_json(l).unwrap()).collect();
        assert!(matches!(replies[0], Reply::Hello { protocol_version: PROTOCOL_VERSION, .. }));
        assert!(matches!(&replies[3], Reply::Error { message } if message.contains("unreadable command")));
        assert!(matches!(replies[4], Reply::Record { seq: 0, .. }));
    }
}
