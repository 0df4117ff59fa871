//! A worker child process driven synchronously: commands out, replies in, in order. The canary runs one
//! per build (the baseline's and the candidate's `anes` executables).

use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command as ProcessCommand, Stdio};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};
use thiserror::Error;

use crate::worker::protocol::{
    BuildInfo, Command, PROTOCOL_VERSION, ProtocolError, Reply, decode_reply, encode_command, read_frame,
    read_hello_frame,
};

/// How long a reply may take before the child counts as hung, unless the caller says otherwise. A batch
/// of frames is answered record by record, so this bounds the time between two replies, not a whole run.
pub const DEFAULT_REPLY_TIMEOUT: Duration = Duration::from_secs(60);

/// Why talking to a worker failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WorkerError {
    /// The executable could not be started.
    #[error("{program}: cannot start it as a worker: {reason}")]
    Spawn {
        /// The executable.
        program: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// The child is not an anes worker of a protocol version this build speaks: its hello did not come,
    /// was damaged or named another version.
    #[error("{program}: {reason}")]
    Handshake {
        /// The executable.
        program: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// The child's output ended, broke the protocol, or stopped coming.
    #[error("{program}: {reason}")]
    Gone {
        /// The executable.
        program: PathBuf,
        /// What happened.
        reason: String,
    },
    /// The child refused a command.
    #[error("{program} refused {command}: {message}")]
    Refused {
        /// The executable.
        program: PathBuf,
        /// The command.
        command: &'static str,
        /// Its message.
        message: String,
    },
    /// The child answered with something else than the command calls for.
    #[error("{program} answered {command} with {got}")]
    Unexpected {
        /// The executable.
        program: PathBuf,
        /// The command.
        command: &'static str,
        /// What came instead (the reply's kind).
        got: String,
    },
}

/// How the child's output stopped being read.
#[derive(Debug)]
enum OutputEnd {
    /// It ended.
    Ended,
    /// It held something that is not a reply (damaged, cut off, malformed).
    Broken(ProtocolError),
}

/// A running `anes worker` child that speaks the binary protocol. Dropping it kills the child.
#[derive(Debug)]
pub struct WorkerProcess {
    program: PathBuf,
    child: Child,
    stdin: Option<BufWriter<ChildStdin>>,
    replies: Receiver<Result<Reply, OutputEnd>>,
    reply_timeout: Duration,
    build: BuildInfo,
    buf: Vec<u8>,
}

impl WorkerProcess {
    /// Starts `program worker --protocol binary` and reads its hello; from then on, a reply that takes
    /// longer than `reply_timeout` means the child hangs.
    pub fn spawn(program: &Path, reply_timeout: Duration) -> Result<WorkerProcess, WorkerError> {
        let mut child = ProcessCommand::new(program)
            .args(["worker", "--protocol", "binary"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| WorkerError::Spawn { program: program.to_path_buf(), reason: e.to_string() })?;
        let stdout = child.stdout.take().expect("piped");
        let stdin = child.stdin.take().expect("piped");
        let (tx, rx) = crossbeam_channel::unbounded();
        // A reader thread, so a child that stops talking is noticed by a timeout instead of a read that
        // never returns. It ends with the child's output.
        std::thread::Builder::new()
            .name("canary-worker-stdout".into())
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                let mut frame = Vec::new();
                let mut first = true;
                loop {
                    let read = if first {
                        read_hello_frame(&mut reader, &mut frame)
                    } else {
                        read_frame(&mut reader, &mut frame)
                    };
                    first = false;
                    let message = match read {
                        Ok(true) => decode_reply(&frame).map_err(OutputEnd::Broken),
                        Ok(false) => Err(OutputEnd::Ended),
                        Err(e) => Err(OutputEnd::Broken(e)),
                    };
                    let last = message.is_err();
                    if tx.send(message).is_err() || last {
                        return;
                    }
                }
            })
            .map_err(|e| WorkerError::Spawn { program: program.to_path_buf(), reason: e.to_string() })?;
        let mut worker = WorkerProcess {
            program: program.to_path_buf(),
            child,
            stdin: Some(BufWriter::new(stdin)),
            replies: rx,
            reply_timeout,
            build: BuildInfo { version: String::new(), git_commit: None, emulation_epoch: 0 },
            buf: Vec::new(),
        };
        let hello = worker.recv().map_err(|e| match e {
            WorkerError::Gone { program, reason } => WorkerError::Handshake { program, reason },
            other => other,
        })?;
        match hello {
            Reply::Hello { protocol_version, build } if protocol_version == PROTOCOL_VERSION => {
                worker.build = build;
                Ok(worker)
            }
            Reply::Hello { protocol_version, .. } => Err(WorkerError::Handshake {
                program: program.to_path_buf(),
                reason: format!(
                    "speaks worker protocol version {protocol_version}; this build speaks {PROTOCOL_VERSION}"
                ),
            }),
            other => Err(WorkerError::Handshake {
                program: program.to_path_buf(),
                reason: format!("its first message was {} instead of hello", kind(&other)),
            }),
        }
    }

    /// The executable.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The build the child named in its hello.
    pub fn build(&self) -> &BuildInfo {
        &self.build
    }

    /// Sends a command without waiting for its replies (batches are sent ahead of their answers).
    pub fn send(&mut self, command: &Command) -> Result<(), WorkerError> {
        self.buf.clear();
        encode_command(command, &mut self.buf);
        let written = match self.stdin.as_mut() {
            Some(stdin) => stdin.write_all(&self.buf).and_then(|()| stdin.flush()).is_ok(),
            None => false,
        };
        if written { Ok(()) } else { Err(self.gone("it stopped reading its input")) }
    }

    /// The next reply.
    pub fn recv(&mut self) -> Result<Reply, WorkerError> {
        match self.replies.recv_timeout(self.reply_timeout) {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(OutputEnd::Ended)) => {
                let reason = self.exit_reason("its output ended");
                Err(self.gone(&reason))
            }
            // A child that broke the protocol may well be running still: no waiting for its exit.
            Ok(Err(OutputEnd::Broken(e))) => Err(self.gone(&format!("protocol error: {e}"))),
            Err(RecvTimeoutError::Timeout) => {
                Err(self.gone(&format!("no reply for {} s: it hangs", self.reply_timeout.as_secs_f64())))
            }
            Err(RecvTimeoutError::Disconnected) => {
                let reason = self.exit_reason("its output ended");
                Err(self.gone(&reason))
            }
        }
    }

    /// Sends `command` and returns its one reply, turning a refusal into an error.
    pub fn request(&mut self, command: &Command, name: &'static str) -> Result<Reply, WorkerError> {
        self.send(command)?;
        match self.recv()? {
            Reply::Error { message } => {
                Err(WorkerError::Refused { program: self.program.clone(), command: name, message })
            }
            reply => Ok(reply),
        }
    }

    /// An error for a reply of the wrong kind.
    pub fn unexpected(&self, command: &'static str, reply: &Reply) -> WorkerError {
        WorkerError::Unexpected { program: self.program.clone(), command, got: kind(reply).to_string() }
    }

    /// Asks the child to exit and waits for it (killing it if it does not go within a second).
    pub fn shutdown(mut self) {
        let _ = self.send(&Command::Shutdown);
        self.stdin = None;
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn gone(&self, reason: &str) -> WorkerError {
        WorkerError::Gone { program: self.program.clone(), reason: reason.to_string() }
    }

    /// `reason`, with how the process ended once it has (its exit follows the end of its output
    /// within moments).
    fn exit_reason(&mut self, reason: &str) -> String {
        for _ in 0..50 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return format!("{reason}; the process {status}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        reason.to_string()
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        self.stdin = None;
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// A reply's kind, for messages.
pub fn kind(reply: &Reply) -> &'static str {
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
