//! A worker at the other end of a byte stream (a child's pipes; a TCP connection): one thread writes
//! the commands queued for it, in the binary encoding, and one reads its replies, hello first.

use std::io::{BufReader, BufWriter, Read, Write};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::Receiver;

use crate::protocol::{
    BuildInfo, PROTOCOL_VERSION, ProtocolError, Reply, WorkerCommand, decode_reply, encode_command,
    encode_heartbeat, read_frame, read_hello_frame,
};

/// How reading a worker's replies stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEnd {
    /// The stream ended.
    Ended,
    /// It held something that is not a reply (damaged, cut off, malformed).
    Broken(ProtocolError),
    /// Its first message was not a hello of this protocol version.
    Refused(String),
    /// Whoever took the replies stopped taking them.
    Dropped,
}

impl StreamEnd {
    /// The end as words, for a worker's exit reason.
    pub fn reason(&self) -> String {
        match self {
            StreamEnd::Ended => "its output ended".to_string(),
            // A reset connection is not the worker breaking the protocol.
            StreamEnd::Broken(ProtocolError::Io(e)) => format!("reading its output failed: {e}"),
            StreamEnd::Broken(e) => format!("protocol error: {e}"),
            StreamEnd::Refused(reason) => reason.clone(),
            StreamEnd::Dropped => "nobody reads its replies any more".to_string(),
        }
    }
}

/// Where a stream transport's reader thread hands what the worker says.
pub trait ReplySink: Send + 'static {
    /// One reply, with whether more are buffered already (so a sink can batch while the worker
    /// streams and hand on when it pauses). False: stop reading.
    fn reply(&mut self, reply: Reply, more_buffered: bool) -> bool;
    /// The stream stopped, for this reason; nothing follows.
    fn ended(self, reason: String);
}

/// The build a hello names, or why it is refused.
pub fn check_hello(reply: &Reply) -> Result<&BuildInfo, String> {
    match reply {
        Reply::Hello { protocol_version, build } if *protocol_version == PROTOCOL_VERSION => Ok(build),
        Reply::Hello { protocol_version, .. } => Err(format!(
            "it speaks worker protocol version {protocol_version}; this build speaks {PROTOCOL_VERSION}"
        )),
        // A listening worker's refusal of a connection (its token, or another coordinator's session).
        Reply::Error { message } => Err(format!("it refused: {message}")),
        other => Err(format!("its first message was {} instead of hello", reply_kind(other))),
    }
}

/// Reads replies from `input` until it ends or breaks, hands each to `sink`, and says how it stopped.
/// The first message must be a hello of this version ([`check_hello`]); it is handed on too.
pub(crate) fn read_replies(input: impl Read, sink: &mut impl ReplySink) -> StreamEnd {
    let mut input = BufReader::new(input);
    let mut frame = Vec::new();
    let mut first = true;
    loop {
        let read =
            if first { read_hello_frame(&mut input, &mut frame) } else { read_frame(&mut input, &mut frame) };
        match read {
            Ok(true) => {}
            Ok(false) => return StreamEnd::Ended,
            Err(e) => return StreamEnd::Broken(e),
        }
        let reply = match decode_reply(&frame) {
            Ok(reply) => reply,
            Err(e) => return StreamEnd::Broken(e),
        };
        if first {
            first = false;
            if let Err(reason) = check_hello(&reply) {
                return StreamEnd::Refused(reason);
            }
        }
        if !sink.reply(reply, !input.buffer().is_empty()) {
            return StreamEnd::Dropped;
        }
    }
}

/// Starts the thread that encodes the queued commands onto `output`; it ends when the queue's senders
/// are gone (then `output` is dropped: a child sees its stdin close) or a write fails. With
/// `heartbeat`, a heartbeat frame goes out whenever no command was queued for that long.
pub(crate) fn spawn_writer(
    name: String,
    output: impl Write + Send + 'static,
    commands: Receiver<WorkerCommand>,
    heartbeat: Option<Duration>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new().name(name).spawn(move || {
        let mut out = BufWriter::new(output);
        let mut buf = Vec::new();
        loop {
            let next = match heartbeat {
                Some(interval) => commands.recv_timeout(interval).map_err(|e| e.is_timeout()),
                None => commands.recv().map_err(|_| false),
            };
            buf.clear();
            match next {
                Ok(command) => encode_command(&command, &mut buf),
                Err(true) => encode_heartbeat(&mut buf),
                Err(false) => break,
            }
            if out.write_all(&buf).is_err() {
                return;
            }
            // Flush when nothing else is queued, so a batch of commands goes in one write.
            if commands.is_empty() && out.flush().is_err() {
                return;
            }
        }
        let _ = out.flush();
    })
}

/// A reply's kind, as its `type` in JSON lines.
pub fn reply_kind(reply: &Reply) -> &'static str {
    match reply {
        Reply::Hello { .. } => "hello",
        Reply::Loaded { .. } => "loaded",
        Reply::Record { .. } => "record",
        Reply::Snapshot { .. } => "snapshot",
        Reply::Restored { .. } => "restored",
        Reply::FaultFired { .. } => "fault_fired",
        Reply::Error { .. } => "error",
        Reply::Probe { .. } => "probe",
        Reply::Stepped { .. } => "stepped",
        Reply::Disassembly { .. } => "disassembly",
        Reply::Picture { .. } => "picture",
    }
}
