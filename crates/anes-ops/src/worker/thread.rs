//! A worker on a thread of the service.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use super::engine::{Engine, Flow};
use super::protocol::{BuildInfo, Command, PROTOCOL_VERSION, Reply};
use super::{ReplyBatcher, WorkerHandle, WorkerId, WorkerMessage, WorkerOutput};

const RUNNING: u8 = 0;
const STOP: u8 = 1;
const CRASH: u8 = 2;

/// How often a stalled worker looks whether it has been stopped.
const STALL_POLL: Duration = Duration::from_millis(20);

/// A worker thread running an [`Engine`].
#[derive(Debug)]
pub struct ThreadWorker {
    commands: Option<Sender<Command>>,
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

fn run(commands: Receiver<Command>, state: &AtomicU8, mut out: ReplyBatcher) {
    out.push(Reply::Hello { protocol_version: PROTOCOL_VERSION, build: BuildInfo::current() });
    out.flush();
    let mut engine = Engine::new();
    let reason = loop {
        let command = match commands.recv_timeout(STALL_POLL) {
            Ok(c) => c,
            Err(RecvTimeoutError::Timeout) => {
                if state.load(Ordering::Relaxed) != RUNNING {
                    break stop_reason(state);
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => break "stopped".to_string(),
        };
        if state.load(Ordering::Relaxed) != RUNNING {
            break stop_reason(state);
        }
        let flow = engine.handle(command, &mut |reply| out.push(reply));
        out.flush();
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
    fn send(&mut self, command: Command) {
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
