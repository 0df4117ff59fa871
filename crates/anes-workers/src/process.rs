//! A worker in an `anes worker` child process, speaking the binary protocol over its stdin and
//! stdout: [`WorkerChild`] is the one child transport, used by the service's [`ProcessWorker`] and by
//! the canary's synchronous client. Isolating it kills the process; a crash is seen as the end of its
//! stdout. Each child gets a temporary folder of its own (its `TMPDIR`), removed once it is gone: a
//! killed child cleans nothing up itself.

use std::path::{Path, PathBuf};
use std::process::{Child, Command as ProcessCommand, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

use crate::child_temp::ChildTemp;
use crate::protocol::{Reply, WorkerCommand};
use crate::stream::{ReplySink, StreamEnd, read_replies, spawn_writer};
use crate::{ReplyBatcher, WorkerHandle, WorkerId, WorkerMessage, WorkerOutput};

/// How long a child whose output ended may take to exit on its own before it is killed: its exit
/// follows the end of its output within moments, and the status it exits with is worth reporting.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// A running `anes worker --protocol binary` child: a writer thread sends the commands queued with
/// [`WorkerChild::send`], a reader thread hands its replies on. When its output ends or breaks, the
/// reader makes sure the child is gone and reports how it ended. Dropping it kills the child and
/// removes its temporary folder.
#[derive(Debug)]
pub struct WorkerChild {
    program: PathBuf,
    child: Arc<Mutex<Child>>,
    commands: Option<Sender<WorkerCommand>>,
    writer: Option<JoinHandle<()>>,
    reader: Option<JoinHandle<()>>,
    // Dropped in `stop`, after the child is gone.
    temp: Option<ChildTemp>,
}

impl WorkerChild {
    /// Starts `program worker --protocol binary` with piped stdin and stdout (stderr is inherited, so
    /// the child's complaints reach the caller's log). Its replies go to `sink`, and at the end why,
    /// with the process's exit (`its output ended; the process exit status: 0`). Threads are named
    /// `{name}-stdin` and `{name}-stdout`.
    pub fn spawn(program: &Path, name: &str, sink: impl ReplySink) -> std::io::Result<WorkerChild> {
        WorkerChild::spawn_with_args(program, &[], name, sink)
    }

    /// [`WorkerChild::spawn`] with more arguments after `worker --protocol binary` (a libretro
    /// worker's `--libretro CORE --content FILE`).
    pub fn spawn_with_args(
        program: &Path,
        extra: &[std::ffi::OsString],
        name: &str,
        mut sink: impl ReplySink,
    ) -> std::io::Result<WorkerChild> {
        let temp = ChildTemp::create()?;
        let mut child = ProcessCommand::new(program)
            .args(["worker", "--protocol", "binary"])
            .args(extra)
            .env("TMPDIR", &temp.0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
            (Some(stdin), Some(stdout)) => (stdin, stdout),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(std::io::Error::other("the child's stdin or stdout is not piped"));
            }
        };
        let child = Arc::new(Mutex::new(child));
        let (tx, rx) = crossbeam_channel::unbounded::<WorkerCommand>();
        let writer = spawn_writer(format!("{name}-stdin"), stdin, rx, None);
        let reader_child = Arc::clone(&child);
        let reader = std::thread::Builder::new().name(format!("{name}-stdout")).spawn(move || {
            let end = read_replies(stdout, &mut sink);
            let status = finish(&reader_child, &end);
            sink.ended(format!("{}; the process {status}", end.reason()));
        });
        let mut worker = WorkerChild {
            program: program.to_path_buf(),
            child,
            commands: Some(tx),
            writer: None,
            reader: None,
            temp: Some(temp),
        };
        // On an error the child is killed by `worker`'s drop.
        worker.writer = Some(writer?);
        worker.reader = Some(reader?);
        Ok(worker)
    }

    /// The executable this child runs.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// Queues a command; false when the child no longer takes commands (its input closed or failed).
    pub fn send(&self, command: WorkerCommand) -> bool {
        self.commands.as_ref().is_some_and(|tx| tx.send(command).is_ok())
    }

    /// Closes the child's stdin once the commands queued so far are written: `anes worker` then ends.
    pub fn close_input(&mut self) {
        self.commands = None;
    }

    /// The child's exit status, if it has exited.
    pub fn try_wait(&self) -> Option<ExitStatus> {
        self.lock().try_wait().ok().flatten()
    }

    /// Kills the child, as a crash would; its reader reports the end.
    pub fn kill(&self) {
        let _ = self.lock().kill();
    }

    /// Kills the child and waits until it and both threads are gone, then removes its temporary
    /// folder. Idempotent.
    pub fn stop(&mut self) {
        self.commands = None;
        {
            let mut child = self.lock();
            let _ = child.kill();
            let _ = child.wait();
        }
        for thread in [self.writer.take(), self.reader.take()].into_iter().flatten() {
            let _ = thread.join();
        }
        self.temp = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Child> {
        self.child.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for WorkerChild {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Makes sure the child is gone after its output stopped and says how it ended. A child whose output
/// ended gets [`EXIT_GRACE`] to exit by itself; one that broke the protocol, or that stopped being
/// listened to, may well be running still and is killed at once.
fn finish(child: &Mutex<Child>, end: &StreamEnd) -> String {
    let mut child = child.lock().unwrap_or_else(|p| p.into_inner());
    if *end == StreamEnd::Ended {
        let until = Instant::now() + EXIT_GRACE;
        while Instant::now() < until {
            if let Ok(Some(status)) = child.try_wait() {
                return status.to_string();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let _ = child.kill();
    child.wait().map(|s| s.to_string()).unwrap_or_else(|e| e.to_string())
}

/// A pipeline's worker in a child process: its replies go to the pipeline in batches, and its end as
/// [`WorkerOutput::Exited`].
#[derive(Debug)]
pub struct ProcessWorker {
    child: WorkerChild,
}

impl ProcessWorker {
    /// Starts `program worker --protocol binary` reporting to `events`.
    pub fn spawn(
        program: &Path,
        worker: WorkerId,
        incarnation: u64,
        events: Sender<WorkerMessage>,
    ) -> Result<ProcessWorker, std::io::Error> {
        ProcessWorker::spawn_with_args(program, &[], worker, incarnation, events)
    }

    /// [`ProcessWorker::spawn`] with more arguments after `worker --protocol binary` (a libretro
    /// worker's `--libretro CORE --content FILE`).
    pub fn spawn_with_args(
        program: &Path,
        extra: &[std::ffi::OsString],
        worker: WorkerId,
        incarnation: u64,
        events: Sender<WorkerMessage>,
    ) -> Result<ProcessWorker, std::io::Error> {
        let name = format!("worker-{worker}-{incarnation}");
        let child = WorkerChild::spawn_with_args(
            program,
            extra,
            &name,
            ReplyBatcher::new(worker, incarnation, events),
        )?;
        Ok(ProcessWorker { child })
    }
}

impl ReplySink for ReplyBatcher {
    fn reply(&mut self, reply: Reply, more_buffered: bool) -> bool {
        self.push(reply);
        // Hand replies on as soon as nothing more is buffered: batches while the child streams, no
        // waiting when it pauses.
        if !more_buffered {
            self.flush();
        }
        true
    }

    fn ended(mut self, reason: String) {
        self.flush();
        self.send(WorkerOutput::Exited { reason });
    }
}

impl WorkerHandle for ProcessWorker {
    fn send(&mut self, command: WorkerCommand) {
        let _ = self.child.send(command);
    }

    fn stop(&mut self) {
        self.child.stop();
    }

    fn crash(&mut self) {
        self.child.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    struct Ignore;

    impl ReplySink for Ignore {
        fn reply(&mut self, _: Reply, _: bool) -> bool {
            true
        }
        fn ended(self, _: String) {}
    }

    #[test]
    fn a_killed_childs_temporary_folder_goes_with_what_it_left_there() {
        let scripts = ChildTemp::create().unwrap();
        // A stand-in for `anes worker`: fills a folder in its TMPDIR, as a core given the default
        // system folder may, then waits to be killed.
        let script = scripts.0.join("worker.sh");
        std::fs::write(
            &script,
            "#!/bin/sh\nmkdir \"$TMPDIR/system\" && echo x >\"$TMPDIR/system/left\"\nexec sleep 60\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        // Another test thread forking while the script was open for writing keeps it busy a moment.
        let mut child = (0..50)
            .find_map(|_| match WorkerChild::spawn(&script, "temp-test", Ignore) {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                    std::thread::sleep(Duration::from_millis(20));
                    None
                }
                other => Some(other.unwrap()),
            })
            .expect("the script runs");
        let temp = child.temp.as_ref().unwrap().0.clone();
        assert_ne!(temp, scripts.0);
        let left = temp.join("system/left");
        let start = Instant::now();
        while !left.exists() {
            assert!(start.elapsed() < Duration::from_secs(10), "the child never wrote {}", left.display());
            std::thread::sleep(Duration::from_millis(10));
        }
        child.stop();
        assert!(!temp.exists(), "{} is still there", temp.display());
        assert!(child.temp.is_none());
        child.stop();
    }
}
