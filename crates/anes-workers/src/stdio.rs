//! The child's side of the protocol: `anes worker` reads commands from stdin and writes replies to
//! stdout until `shutdown` or the end of its input.
//!
//! A reader thread reads and decodes the commands, one ahead of the one being handled, so a `stall`
//! can end as soon as the input does: a parent that closed the worker's stdin is gone, and a worker
//! that slept on would outlive it by up to [`MAX_STALL_MILLIS`].
//!
//! [`MAX_STALL_MILLIS`]: crate::protocol::MAX_STALL_MILLIS

use std::io::{BufReader, BufWriter, Read, Write};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};

use crate::engine::{Engine, Flow, Handler};
use crate::protocol::{
    BuildInfo, Encoding, HEARTBEAT_FRAME, PROTOCOL_VERSION, ProtocolError, Reply, WorkerCommand,
    command_from_json, decode_command, encode_reply, read_frame, read_line,
};

/// Read-ahead of the input: large enough that a long JSON line is read in few calls.
const INPUT_BUFFER_LEN: usize = 64 << 10;

/// What the reader thread hands on.
#[derive(Debug)]
enum Incoming {
    /// A command, or why one complete message is not a command (the stream goes on after it).
    WorkerCommand(Result<WorkerCommand, ProtocolError>),
    /// The input ended: cleanly (`None`) or in a way the stream cannot go on after.
    End(Option<ProtocolError>),
}

/// Serves the protocol over `input` and `output` in `encoding`. Returns at `shutdown` or at the end of
/// the input, also during a stall; an unreadable command is answered with [`Reply::Error`], and the
/// session goes on when the stream can continue after it (a JSON line, of any length; a complete binary
/// frame whose checksum matches) and ends when it cannot (an oversized, damaged or cut-off binary
/// frame), with that error.
pub fn serve(
    encoding: Encoding,
    input: impl Read + Send + 'static,
    output: impl Write,
) -> Result<(), ProtocolError> {
    serve_with(encoding, input, output, &mut Engine::new())
}

/// [`serve`] with another handler of the commands: a libretro core's
/// ([`crate::retro_engine::RetroEngine`]) instead of the anes console's [`Engine`].
pub fn serve_with(
    encoding: Encoding,
    input: impl Read + Send + 'static,
    output: impl Write,
    engine: &mut dyn Handler,
) -> Result<(), ProtocolError> {
    let mut out = ReplyWriter { encoding, out: BufWriter::new(output), buf: Vec::new() };
    out.write(&Reply::Hello { protocol_version: PROTOCOL_VERSION, build: BuildInfo::current() })?;
    out.flush()?;
    let commands = spawn_reader(encoding, input)?;
    let mut held = None;
    loop {
        let incoming = match held.take() {
            Some(incoming) => incoming,
            None => commands.recv().unwrap_or(Incoming::End(None)),
        };
        let command = match incoming {
            Incoming::WorkerCommand(Ok(command)) => command,
            Incoming::WorkerCommand(Err(e)) => {
                out.write(&Reply::Error { message: format!("unreadable command: {e}") })?;
                out.flush()?;
                continue;
            }
            Incoming::End(None) => return Ok(()),
            Incoming::End(Some(e)) => {
                // The parent may still be reading: say why the session ends.
                let _ =
                    out.write(&Reply::Error { message: format!("unreadable input, the worker stops: {e}") });
                let _ = out.flush();
                return Err(e);
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
            Flow::Stall(duration) => match stall(&commands, duration) {
                Stalled::InputEnded => return Ok(()),
                Stalled::Over(next) => held = next,
            },
            Flow::Shutdown => return Ok(()),
        }
    }
}

enum Stalled {
    /// The input ended during the stall: the worker ends.
    InputEnded,
    /// The stall is over; the command that arrived during it, if one did, is next.
    Over(Option<Incoming>),
}

/// Answers nothing for `duration`, unless the input ends first. A command that arrives meanwhile is
/// kept for afterwards (commands are handled in order); the reader then reads one more ahead at most,
/// so the end of the input behind further commands is seen only when the stall is over.
fn stall(commands: &Receiver<Incoming>, duration: Duration) -> Stalled {
    let until = Instant::now() + duration;
    match commands.recv_timeout(duration) {
        Ok(Incoming::End(_)) | Err(RecvTimeoutError::Disconnected) => Stalled::InputEnded,
        Err(RecvTimeoutError::Timeout) => Stalled::Over(None),
        Ok(next) => {
            std::thread::sleep(until.saturating_duration_since(Instant::now()));
            Stalled::Over(Some(next))
        }
    }
}

/// Starts the thread that reads `input` and decodes commands, handing them on one at a time.
fn spawn_reader(
    encoding: Encoding,
    input: impl Read + Send + 'static,
) -> Result<Receiver<Incoming>, ProtocolError> {
    // One in the channel and one in the reader's hands: memory for at most two messages.
    let (tx, rx) = crossbeam_channel::bounded(1);
    std::thread::Builder::new().name("worker-stdin".into()).spawn(move || {
        let mut input = BufReader::with_capacity(INPUT_BUFFER_LEN, input);
        let mut frame = Vec::new();
        loop {
            let incoming = match encoding {
                Encoding::Binary => match read_frame(&mut input, &mut frame) {
                    // A remote coordinator's sign of life: its work was reading it.
                    Ok(true) if frame == HEARTBEAT_FRAME => continue,
                    Ok(true) => Incoming::WorkerCommand(decode_command(&frame)),
                    Ok(false) => Incoming::End(None),
                    Err(e) => Incoming::End(Some(e)),
                },
                Encoding::JsonLines => match read_line(&mut input, &mut frame) {
                    Ok(true) if frame.iter().all(u8::is_ascii_whitespace) => continue,
                    Ok(true) => Incoming::WorkerCommand(match std::str::from_utf8(&frame) {
                        Ok(line) => command_from_json(line),
                        Err(e) => Err(ProtocolError::Json(format!("not UTF-8: {e}"))),
                    }),
                    Ok(false) => Incoming::End(None),
                    Err(e @ ProtocolError::LineTooLong { .. }) => Incoming::WorkerCommand(Err(e)),
                    Err(e) => Incoming::End(Some(e)),
                },
            };
            let last = matches!(incoming, Incoming::End(_));
            // The worker has returned (shutdown, or its output failed): nobody reads any more.
            if tx.send(incoming).is_err() || last {
                return;
            }
        }
    })?;
    Ok(rx)
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
    use crate::protocol::{
        MAX_STALL_MILLIS, WireInput, decode_reply, encode_command, read_frame, read_hello_frame,
        reply_from_json,
    };
    use anes_fixtures::tiny_rom;

    fn binary_replies(output: &[u8]) -> Vec<Reply> {
        let mut replies = Vec::new();
        let mut reader = output;
        let mut frame = Vec::new();
        assert!(read_hello_frame(&mut reader, &mut frame).unwrap());
        replies.push(decode_reply(&frame).unwrap());
        while read_frame(&mut reader, &mut frame).unwrap() {
            replies.push(decode_reply(&frame).unwrap());
        }
        replies
    }

    #[test]
    fn a_binary_session() {
        let mut input = Vec::new();
        encode_command(
            &WorkerCommand::Load { rom: tiny_rom(), checkpoint_every: 2, region: None, power_on: None },
            &mut input,
        );
        encode_command(
            &WorkerCommand::Frames { first_seq: 0, inputs: vec![WireInput([0, 0, 0]); 3] },
            &mut input,
        );
        encode_command(&WorkerCommand::Stall { millis: MAX_STALL_MILLIS + 1 }, &mut input);
        encode_command(&WorkerCommand::Shutdown, &mut input);
        let mut output = Vec::new();
        serve(Encoding::Binary, std::io::Cursor::new(input), &mut output).unwrap();
        let replies = binary_replies(&output);
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
    fn the_region_of_a_load_reaches_the_console_in_both_encodings() {
        let region = Some(anes_core::Region::Dendy);
        let mut input = Vec::new();
        encode_command(
            &WorkerCommand::Load { rom: tiny_rom(), checkpoint_every: 2, region, power_on: None },
            &mut input,
        );
        let mut output = Vec::new();
        serve(Encoding::Binary, std::io::Cursor::new(input), &mut output).unwrap();
        assert!(matches!(
            binary_replies(&output)[1],
            Reply::Loaded { region: Some(anes_core::Region::Dendy), .. }
        ));
        let rom = anes_core::hex::to_hex(&tiny_rom());
        let input =
            format!("{{\"type\":\"load\",\"rom\":\"{rom}\",\"checkpoint_every\":60,\"region\":\"dendy\"}}\n");
        let mut output = Vec::new();
        serve(Encoding::JsonLines, std::io::Cursor::new(input.into_bytes()), &mut output).unwrap();
        let text = String::from_utf8(output).unwrap();
        let loaded = reply_from_json(text.lines().nth(1).unwrap()).unwrap();
        assert!(matches!(loaded, Reply::Loaded { region: Some(anes_core::Region::Dendy), .. }), "{text}");
        assert!(text.lines().nth(1).unwrap().ends_with(r#""region":"dendy"}"#), "{text}");
    }

    #[test]
    fn a_json_lines_session() {
        let rom = anes_core::hex::to_hex(&tiny_rom());
        let input = format!(
            "{{\"type\":\"load\",\"rom\":\"{rom}\",\"checkpoint_every\":60}}\n\nnot json\n{{\"type\":\"frames\",\"first_seq\":0,\"inputs\":[[0,0,0]]}}\n"
        );
        let mut output = Vec::new();
        serve(Encoding::JsonLines, std::io::Cursor::new(input.into_bytes()), &mut output).unwrap();
        let text = String::from_utf8(output).unwrap();
        let replies: Vec<Reply> = text.lines().map(|l| reply_from_json(l).unwrap()).collect();
        assert!(matches!(replies[0], Reply::Hello { protocol_version: PROTOCOL_VERSION, .. }));
        assert!(matches!(&replies[3], Reply::Error { message } if message.contains("unreadable command")));
        assert!(matches!(replies[4], Reply::Record { seq: 0, .. }));
    }

    #[test]
    fn a_damaged_binary_frame_ends_the_session_with_a_reason() {
        let mut input = Vec::new();
        encode_command(&WorkerCommand::Probe, &mut input);
        let last = input.len() - 1;
        input[last] ^= 0x10;
        encode_command(&WorkerCommand::Probe, &mut input);
        let mut output = Vec::new();
        let err = serve(Encoding::Binary, std::io::Cursor::new(input), &mut output).unwrap_err();
        assert!(matches!(err, ProtocolError::ChecksumMismatch { .. }), "{err}");
        let replies = binary_replies(&output);
        assert_eq!(replies.len(), 2, "{replies:?}");
        assert!(matches!(&replies[1], Reply::Error { message } if message.contains("checksum mismatch")));
    }

    #[test]
    fn a_stall_ends_when_the_input_does_in_both_encodings() {
        for encoding in [Encoding::Binary, Encoding::JsonLines] {
            let input = match encoding {
                Encoding::Binary => {
                    let mut bytes = Vec::new();
                    encode_command(&WorkerCommand::Stall { millis: MAX_STALL_MILLIS }, &mut bytes);
                    bytes
                }
                Encoding::JsonLines => {
                    format!("{{\"type\":\"stall\",\"millis\":{MAX_STALL_MILLIS}}}\n").into_bytes()
                }
            };
            let started = Instant::now();
            serve(encoding, std::io::Cursor::new(input), std::io::sink()).unwrap();
            assert!(started.elapsed() < Duration::from_secs(10), "{encoding:?}: {:?}", started.elapsed());
        }
    }

    #[test]
    fn a_command_sent_during_a_stall_is_answered_after_it() {
        let mut input = Vec::new();
        encode_command(&WorkerCommand::Stall { millis: 300 }, &mut input);
        encode_command(&WorkerCommand::Probe, &mut input);
        let mut output = Vec::new();
        let started = Instant::now();
        serve(Encoding::Binary, std::io::Cursor::new(input), &mut output).unwrap();
        assert!(started.elapsed() >= Duration::from_millis(300), "{:?}", started.elapsed());
        let replies = binary_replies(&output);
        assert!(
            matches!(&replies[1], Reply::Error { message } if message.contains("no ROM loaded")),
            "{replies:?}"
        );
    }
}
