//! A worker on a thread of the service.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use crate::engine::{Engine, Flow};
use crate::protocol::{BuildInfo, PROTOCOL_VERSION, Reply, WorkerCommand};
use crate::{ReplyBatcher, WorkerHandle, WorkerId, WorkerMessage, WorkerOutput};

const RUNNING: u8 = 0;
const STOP: u8 = 1;
const CRASH: u8 = 2;

/// How often a stalled worker looks whether it has been stopped.
const STALL_POLL: Duration = Duration::from_millis(20);

/// A worker thread running an [`Engine`].
#[derive(Debug)]
pub struct ThreadWorker {
    commands: Option<Sender<WorkerCommand>>,
    state: Arc<AtomicU8>,
    thread: Option<JoinHandle<()>>,
}

impl ThreadWorker {
    /// Starts the thread; it says [`Reply::Hello`] first, as a child process would.
    pub fn spawn(
        worker: WorkerId,
        incarnation: u64,
        events: Sender<WorkerMessage>,
    ) -> Result<ThreadWorker, std::io::Error> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let state = Arc::new(AtomicU8::new(RUNNING));
        let thread_state = Arc::clone(&state);
        let thread = std::thread::Builder::new()
            .name(format!("worker-{worker}-{incarnation}"))
            .spawn(move || run(rx, &thread_state, ReplyBatcher::new(worker, incarnation, events)))?;
        Ok(ThreadWorker { commands: Some(tx), state, thread: Some(thread) })
    }
}

fn run(commands: Receiver<WorkerCommand>, state: &AtomicU8, mut out: ReplyBatcher) {
    out.push(Reply::Hello { protocol_version: PROTOCOL_VERSION, build: BuildInfo::current() });
    out.flush();
    let mut engine = Engine::new();
    let reason = loop {
        // Stopping or crashing drops the only sender, which ends this wait: an idle worker sleeps
        // until a command comes.
        let Ok(command) = commands.recv() else { break stop_reason(state) };
        if state.load(Ordering::Relaxed) != RUNNING {
            break stop_reason(state);
        }
        let flow = engine.handle(command, &mut |reply| out.push(reply));
        // With more commands queued the replies wait for the next full batch: a flush per command would
        // wake the pipeline for every small one. Before waiting (or stalling) everything goes out.
        if flow != Flow::Continue || commands.is_empty() {
            out.flush();
        }
        match flow {
            Flow::Continue => {}
            Flow::Shutdown => break "shut down on request".to_string(),
            Flow::Stall(duration) => {
                let until = Instant::now() + duration;
                while Instant::now() < until && state.load(Ordering::Relaxed) == RUNNING {
                    std::thread::sleep(STALL_POLL.min(until.saturating_duration_since(Instant::now())));
                }
            }
        }
    };
    out.send(WorkerOutput::Exited { reason });
}

fn stop_reason(state: &AtomicU8) -> String {
    if state.load(Ordering::Relaxed) == CRASH {
        "crashed (drill: the thread ended without finishing its work)".to_string()
    } else {
        "stopped".to_string()
    }
}

impl WorkerHandle for ThreadWorker {
    fn send(&mut self, command: WorkerCommand) {
        if let Some(tx) = &self.commands {
            let _ = tx.send(command);
        }
    }

    fn stop(&mut self) {
        let _ = self.state.compare_exchange(RUNNING, STOP, Ordering::Relaxed, Ordering::Relaxed);
        self.commands = None;
        if let Some(thread) = self.thread.take() {
            // A thread is stopped when it has returned: at most the frame batch in progress.
            let _ = thread.join();
        }
    }

    fn crash(&mut self) {
        self.state.store(CRASH, Ordering::Relaxed);
        self.commands = None;
    }
}

impl Drop for ThreadWorker {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::WireInput;

    fn next(rx: &crossbeam_channel::Receiver<WorkerMessage>) -> WorkerOutput {
        rx.recv_timeout(Duration::from_secs(10)).expect("a message").body
    }

    #[test]
    fn a_thread_worker_runs_frames_and_reports_how_it_ended() {
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut worker = ThreadWorker::spawn(WorkerId::B, 7, tx.clone()).unwrap();
        assert!(matches!(next(&rx), WorkerOutput::Replies(r) if matches!(r[0], Reply::Hello { .. })));
        worker.send(WorkerCommand::Load {
            rom: anes_fixtures::tiny_rom(),
            checkpoint_every: 60,
            region: None,
            power_on: None,
        });
        worker.send(WorkerCommand::Frames { first_seq: 0, inputs: vec![WireInput([0, 0, 0]); 3] });
        let mut records = 0;
        while records < 3 {
            if let WorkerOutput::Replies(replies) = next(&rx) {
                records += replies.iter().filter(|r| matches!(r, Reply::Record { .. })).count();
            }
        }
        worker.crash();
        assert!(matches!(next(&rx), WorkerOutput::Exited { reason } if reason.contains("crashed")));

        let mut stalled = ThreadWorker::spawn(WorkerId::A, 8, tx).unwrap();
        let _hello = next(&rx);
        stalled.send(WorkerCommand::Stall { millis: 600_000 });
        std::thread::sleep(Duration::from_millis(50));
        let started = Instant::now();
        stalled.stop();
        assert!(started.elapsed() < Duration::from_secs(2), "a stalled worker stops at once");
        let message = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!((message.worker, message.incarnation), (WorkerId::A, 8));
        assert!(matches!(message.body, WorkerOutput::Exited { reason } if reason == "stopped"));
    }
}
