//! A worker child process driven synchronously: commands out, replies in, in order. The canary runs one
//! per build (the baseline's and the candidate's `anes` executables), over the child transport of
//! `anes-workers` ([`WorkerChild`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anes_workers::WorkerChild;
use anes_workers::protocol::{BuildInfo, Reply, WorkerCommand};
use anes_workers::stream::{ReplySink, StreamEnd};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use thiserror::Error;

/// How long a reply may take before the child counts as hung, unless the caller says otherwise. A batch
/// of frames is answered record by record, so this bounds the time between two replies, not a whole run.
pub const DEFAULT_REPLY_TIMEOUT: Duration = Duration::from_secs(60);

/// Why talking to a worker failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WorkerError {
    /// The executable could not be started.
    #[error("{program}: cannot start it as a worker: {reason}")]
    Spawn {
        /// The worker executable, as given.
        program: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// The child is not an anes worker of a protocol version this build speaks: its hello did not come,
    /// was damaged or named another version.
    #[error("{program}: {reason}")]
    Handshake {
        /// The worker executable, as given.
        program: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// The child's output ended, broke the protocol, or stopped coming.
    #[error("{program}: {reason}")]
    Gone {
        /// The worker executable, as given.
        program: PathBuf,
        /// Why it is taken as gone: end of output, a protocol error, or the timeout that ran out.
        reason: String,
        /// How the child ended, when the parent can tell.
        end: Option<WorkerEnd>,
    },
    /// The child refused a command.
    #[error("{program} refused {command}: {message}")]
    Refused {
        /// The worker executable, as given.
        program: PathBuf,
        /// The command's name on the wire (`load`, `frames`...).
        command: &'static str,
        /// The worker's error message, as sent.
        message: String,
    },
    /// The child answered with something else than the command calls for.
    #[error("{program} answered {command} with {got}")]
    Unexpected {
        /// The worker executable, as given.
        program: PathBuf,
        /// The command's name on the wire (`load`, `frames`...).
        command: &'static str,
        /// What came instead (the reply's kind).
        got: String,
    },
}

impl WorkerError {
    /// How the child ended, for a child taken as gone whose end the parent could tell.
    pub fn end(&self) -> Option<WorkerEnd> {
        match self {
            WorkerError::Gone { end, .. } => *end,
            _ => None,
        }
    }
}

/// How a worker child that stopped answering ended, as far as its parent can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerEnd {
    /// Its output ended and a signal had ended it: a crash (11 SIGSEGV, 6 SIGABRT, 7 SIGBUS...) or
    /// a kill from outside.
    Signal(i32),
    /// Its output ended and it had exited by itself with this status.
    Exited(i32),
    /// No reply came within the reply timeout: it hangs. It is killed when its client is dropped.
    Hung(Duration),
    /// Its output was not the protocol (damaged, cut off, or no hello): the parent killed it.
    Protocol,
}

impl WorkerEnd {
    /// How a child whose output stopped for `reason` (its reader's words, which start with the
    /// stream's end) ended, given its exit status once reaped.
    fn of(reason: &str, status: Option<std::process::ExitStatus>) -> Option<WorkerEnd> {
        use std::os::unix::process::ExitStatusExt;
        if !reason.starts_with(&StreamEnd::Ended.reason()) {
            return Some(WorkerEnd::Protocol);
        }
        let status = status?;
        match (status.code(), status.signal()) {
            (Some(code), _) => Some(WorkerEnd::Exited(code)),
            (None, Some(signal)) => Some(WorkerEnd::Signal(signal)),
            (None, None) => None,
        }
    }
}

/// How long a client whose child stopped reading waits for the reader to say how the child ended
/// (the reader gives an exiting child half a second to go).
const END_WAIT: Duration = Duration::from_secs(2);

/// What the child's reader thread hands to the client.
#[derive(Debug)]
enum Incoming {
    Reply(Reply),
    /// The child's output stopped: why, with how the process ended.
    End(String),
}

/// Hands a child's replies to the client's channel.
#[derive(Debug)]
struct ToClient(Sender<Incoming>);

impl ReplySink for ToClient {
    fn reply(&mut self, reply: Reply, _more_buffered: bool) -> bool {
        self.0.send(Incoming::Reply(reply)).is_ok()
    }

    fn ended(self, reason: String) {
        let _ = self.0.send(Incoming::End(reason));
    }
}

/// A running `anes worker` child driven synchronously: a thin client of [`WorkerChild`], the
/// transport the service's process workers use. Dropping it kills the child.
#[derive(Debug)]
pub struct WorkerProcess {
    child: WorkerChild,
    replies: Receiver<Incoming>,
    reply_timeout: Duration,
    build: BuildInfo,
    /// The last command sent (its name on the wire) and the frame it concerns when known: what a
    /// reply that never comes is named by.
    awaiting: Option<(&'static str, Option<u64>)>,
}

impl WorkerProcess {
    /// Starts `program worker --protocol binary` and reads its hello; from then on, a reply that takes
    /// longer than `reply_timeout` means the child hangs. The reader is a thread of its own, so a child
    /// that stops talking is noticed by a timeout instead of a read that never returns.
    pub fn spawn(program: &Path, reply_timeout: Duration) -> Result<WorkerProcess, WorkerError> {
        WorkerProcess::spawn_with_args(program, &[], reply_timeout)
    }

    /// [`WorkerProcess::spawn`] with more arguments for the worker (`--libretro CORE --content FILE`).
    pub fn spawn_with_args(
        program: &Path,
        extra: &[std::ffi::OsString],
        reply_timeout: Duration,
    ) -> Result<WorkerProcess, WorkerError> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let child =
            WorkerChild::spawn_with_args(program, extra, "canary-worker", ToClient(tx)).map_err(|e| {
                WorkerError::Spawn { program: program.to_path_buf(), reason: spawn_reason(program, &e) }
            })?;
        let mut worker = WorkerProcess {
            child,
            replies: rx,
            reply_timeout,
            build: BuildInfo { version: String::new(), git_commit: None, emulation_epoch: 0 },
            awaiting: None,
        };
        // The transport refuses a first message that is not a hello of this version; what arrives
        // here is one.
        match worker.recv() {
            Ok(Reply::Hello { build, .. }) => {
                worker.build = build;
                Ok(worker)
            }
            Ok(other) => Err(WorkerError::Handshake {
                program: program.to_path_buf(),
                reason: format!("its first message was {} instead of hello", kind(&other)),
            }),
            Err(WorkerError::Gone { program, reason, .. }) => Err(WorkerError::Handshake { program, reason }),
            Err(other) => Err(other),
        }
    }

    /// The worker executable this client started.
    pub fn program(&self) -> &Path {
        self.child.program()
    }

    /// The build the child named in its hello.
    pub fn build(&self) -> &BuildInfo {
        &self.build
    }

    /// Sends a command without waiting for its replies (batches are sent ahead of their answers).
    pub fn send(&mut self, command: &WorkerCommand) -> Result<(), WorkerError> {
        self.awaiting = Some((command_kind(command), command_frame(command)));
        if self.child.send(command.clone()) {
            return Ok(());
        }
        // Its input closed because it is gone: the reader says how it ended, within moments.
        let until = std::time::Instant::now() + END_WAIT;
        while let Ok(incoming) = self.replies.recv_deadline(until) {
            if let Incoming::End(reason) = incoming {
                return Err(self.ended(&reason));
            }
        }
        Err(self.gone("it stopped reading its input", None))
    }

    /// The next reply.
    pub fn recv(&mut self) -> Result<Reply, WorkerError> {
        match self.replies.recv_timeout(self.reply_timeout) {
            Ok(Incoming::Reply(reply)) => Ok(reply),
            Ok(Incoming::End(reason)) => Err(self.ended(&reason)),
            Err(RecvTimeoutError::Timeout) => {
                let secs = self.reply_timeout.as_secs_f64();
                // Which command hung, and where: a run of thousands of frames hangs at one of them.
                let reason = match self.awaiting {
                    None => format!("no hello for {secs} s: it hangs"),
                    Some((command, None)) => format!("no reply to {command} for {secs} s: it hangs"),
                    Some((command, Some(frame))) => {
                        format!("no reply to {command} (frame {frame}) for {secs} s: it hangs")
                    }
                };
                Err(self.gone(&reason, Some(WorkerEnd::Hung(self.reply_timeout))))
            }
            Err(RecvTimeoutError::Disconnected) => Err(self.gone("its output ended", None)),
        }
    }

    /// Sends `command` and returns its one reply, turning a refusal into an error.
    pub fn request(&mut self, command: &WorkerCommand, name: &'static str) -> Result<Reply, WorkerError> {
        self.request_at(command, name, None)
    }

    /// [`WorkerProcess::request`] of a command that concerns `frame` (frames run) when the command
    /// does not carry it (`snapshot`, `record`): a timeout names it.
    pub fn request_at(
        &mut self,
        command: &WorkerCommand,
        name: &'static str,
        frame: Option<u64>,
    ) -> Result<Reply, WorkerError> {
        self.send(command)?;
        self.awaiting = Some((name, frame.or(command_frame(command))));
        match self.recv()? {
            Reply::Error { message } => {
                Err(WorkerError::Refused { program: self.program().to_path_buf(), command: name, message })
            }
            reply => Ok(reply),
        }
    }

    /// An error for a reply of the wrong kind.
    pub fn unexpected(&self, command: &'static str, reply: &Reply) -> WorkerError {
        WorkerError::Unexpected {
            program: self.program().to_path_buf(),
            command,
            got: kind(reply).to_string(),
        }
    }

    /// Asks the child to exit and waits for it (killing it if it does not go within a second).
    pub fn shutdown(mut self) {
        let _ = self.send(&WorkerCommand::Shutdown);
        self.child.close_input();
        for _ in 0..100 {
            if self.child.try_wait().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn gone(&self, reason: &str, end: Option<WorkerEnd>) -> WorkerError {
        WorkerError::Gone { program: self.program().to_path_buf(), reason: reason.to_string(), end }
    }

    /// The child's output stopped for `reason`: the reader has reaped it by then, so its exit
    /// status tells a crash from an exit.
    fn ended(&self, reason: &str) -> WorkerError {
        self.gone(reason, WorkerEnd::of(reason, self.child.try_wait()))
    }
}

/// Why `program` did not start. A name without a slash is looked up on PATH only, never in the
/// current folder: "No such file or directory" for a file that is right there says the wrong thing.
fn spawn_reason(program: &Path, error: &std::io::Error) -> String {
    use std::os::unix::ffi::OsStrExt;
    let bare = !program.as_os_str().as_bytes().contains(&b'/');
    let on_path = || {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
    };
    if bare && error.kind() == std::io::ErrorKind::NotFound && program.is_file() && !on_path() {
        return format!("not found on PATH; for the file in this folder write ./{}", program.display());
    }
    error.to_string()
}

pub use anes_workers::stream::reply_kind as kind;

/// A command's name on the wire (its `type` in JSON lines).
fn command_kind(command: &WorkerCommand) -> &'static str {
    match command {
        WorkerCommand::Load { .. } => "load",
        WorkerCommand::Frames { .. } => "frames",
        WorkerCommand::Restore { .. } => "restore",
        WorkerCommand::Snapshot => "snapshot",
        WorkerCommand::Inject { .. } => "inject",
        WorkerCommand::Stall { .. } => "stall",
        WorkerCommand::Shutdown => "shutdown",
        WorkerCommand::BeginFrame { .. } => "begin_frame",
        WorkerCommand::StepInstruction => "step_instruction",
        WorkerCommand::Probe => "probe",
        WorkerCommand::Record => "record",
        WorkerCommand::Disassemble => "disassemble",
        WorkerCommand::Picture => "picture",
    }
}

/// The frame a command names: a batch's first, a restore's.
fn command_frame(command: &WorkerCommand) -> Option<u64> {
    match command {
        WorkerCommand::Frames { first_seq, .. } => Some(*first_seq),
        WorkerCommand::Restore { seq, .. } => Some(*seq),
        _ => None,
    }
}
