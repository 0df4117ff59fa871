//! A worker in an `anes worker` child process: isolating it kills the process, and a crash is seen as
//! the end of its stdout.

use std::io::{BufReader, BufWriter, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command as ProcessCommand, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::Sender;

use super::protocol::{
    Command, PROTOCOL_VERSION, Reply, decode_reply, encode_command, read_frame, read_hello_frame,
};
use super::{ReplyBatcher, WorkerHandle, WorkerId, WorkerMessage, WorkerOutput};

/// A child process speaking the binary protocol.
#[derive(Debug)]
pub struct ProcessWorker {
    child: Arc<Mutex<Child>>,
    commands: Option<Sender<Command>>,
    writer: Option<JoinHandle<()>>,
    reader: Option<JoinHandle<()>>,
}

impl ProcessWorker {
    /// Starts `program worker --protocol binary` with piped stdin and stdout (stderr is inherited, so
    /// the child's complaints reach the service's log).
    pub fn spawn(
        program: &Path,
        worker: WorkerId,
        incarnation: u64,
        events: Sender<WorkerMessage>,
    ) -> Result<ProcessWorker, std::io::Error> {
        let mut child = ProcessCommand::new(program)
            .args(["worker", "--protocol", "binary"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let child = Arc::new(Mutex::new(child));
        let (tx, rx) = crossbeam_channel::unbounded::<Command>();
        let writer = std::thread::Builder::new()
            .name(format!("worker-{worker}-{incarnation}-stdin"))
            .spawn(move || write_commands(&rx, stdin))?;
        let reader_child = Arc::clone(&child);
        let reader = std::thread::Builder::new()
            .name(format!("worker-{worker}-{incarnation}-stdout"))
            .spawn(move || {
                let mut out = ReplyBatcher::new(worker, incarnation, events);
                let reason = read_replies(BufReader::new(stdout), &mut out);
                out.flush();
                // The child is gone or speaking nonsense: make sure it is gone, and say how it ended.
                let status = {
                    let mut child = reader_child.lock().unwrap_or_else(|p| p.into_inner());
                    let _ = child.kill();
                    child.wait().map(|s| s.to_string()).unwrap_or_else(|e| e.to_string())
                };
                out.send(WorkerOutput::Exited { reason: format!("{reason}; the process {status}") });
            })?;
        Ok(ProcessWorker { child, commands: Some(tx), writer: Some(writer), reader: Some(reader) })
    }
}

fn write_commands(commands: &crossbeam_channel::Receiver<Command>, stdin: ChildStdin) {
    let mut out = BufWriter::new(stdin);
    let mut buf = Vec::new();
    while let Ok(command) = commands.recv() {
        buf.clear();
        encode_command(&command, &mut buf);
        if out.write_all(&buf).is_err() {
            return;
        }
        // Flush when nothing else is queued, so a batch of commands goes in one write.
        if commands.is_empty() && out.flush().is_err() {
            return;
        }
    }
}

fn read_replies<R: std::io::Read>(mut stdout: BufReader<R>, out: &mut ReplyBatcher) -> String {
    let mut frame = Vec::new();
    let mut first = true;
    loop {
        let read = if first {
            read_hello_frame(&mut stdout, &mut frame)
        } else {
            read_frame(&mut stdout, &mut frame)
        };
        match read {
            Ok(true) => {}
            Ok(false) => return "its output ended".to_string(),
            Err(e) => return format!("protocol error: {e}"),
        }
        let reply = match decode_reply(&frame) {
            Ok(r) => r,
            Err(e) => return format!("protocol error: {e}"),
        };
        if first {
            first = false;
            match &reply {
                Reply::Hello { protocol_version, .. } if *protocol_version == PROTOCOL_VERSION => {}
                Reply::Hello { protocol_version, .. } => {
                    return format!(
                        "it speaks worker protocol version {protocol_version}; this build speaks {PROTOCOL_VERSION}"
                    );
                }
                other => return format!("protocol error: the first message was not hello but {other:?}"),
            }
        }
        out.push(reply);
        // Hand replies on as soon as nothing more is buffered: batches while the child streams, no
        // waiting when it pauses.
        if stdout.buffer().is_empty() {
            out.flush();
        }
    }
}

impl WorkerHandle for ProcessWorker {
    fn send(&mut self, command: Command) {
        if let Some(tx) = &self.commands {
            let _ = tx.send(command);
        }
    }

    fn stop(&mut self) {
        self.commands = None;
        {
            let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
            let _ = child.kill();
            let _ = child.wait();
        }
        for thread in [self.writer.take(), self.reader.take()].into_iter().flatten() {
            let _ = thread.join();
        }
    }

    fn crash(&mut self) {
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        let _ = child.kill();
    }
}

impl Drop for ProcessWorker {
    fn drop(&mut self) {
        self.stop();
    }
}
