//! Starting a worker of any transport, and the one interface every transport's handle has.

use std::fmt;
use std::path::PathBuf;

use crossbeam_channel::Sender;
use serde::{Deserialize, Serialize};

use crate::process::ProcessWorker;
use crate::protocol::{Reply, WorkerCommand};
use crate::remote::tls::{ClientTls, client_config};
use crate::remote::{RemoteWorker, RemoteWorkers, read_token_file};
use crate::thread::ThreadWorker;
use crate::{WorkerId, WorkerMessage, WorkerOutput};

/// Where workers run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerMode {
    /// A thread of the service.
    #[default]
    Thread,
    /// An `anes worker` child process.
    Process,
    /// An `anes worker --listen` on another machine, over TCP (`[pipeline.remote]`).
    Remote,
}

/// How to start workers of a pipeline.
#[derive(Debug, Clone)]
pub struct WorkerLauncher {
    /// Thread or process.
    pub mode: WorkerMode,
    /// The `anes` executable, for process workers (its `worker` subcommand).
    pub program: Option<PathBuf>,
    /// Where remote workers listen, for remote workers.
    pub remote: Option<RemoteWorkers>,
    /// The consoles' region, sent in `Load`; `None`: the ROM header's.
    pub region: Option<anes_core::Region>,
    /// The consoles' power-on profile, sent in `Load`; `None`: the default (left out of the
    /// message, so workers of builds older than profiles take it).
    pub power_on: Option<anes_core::PowerOnProfile>,
    /// Arguments after `worker --protocol binary` for process workers A and B: a libretro
    /// pipeline's `--libretro CORE --content FILE` (empty for anes consoles).
    pub process_args: [Vec<std::ffi::OsString>; 2],
}

/// A running worker, whichever kind.
pub trait WorkerHandle: Send + fmt::Debug {
    /// Queues a command; never blocks on the worker.
    fn send(&mut self, command: WorkerCommand);
    /// Stops the worker for good and waits until it has (isolation). Idempotent.
    fn stop(&mut self);
    /// Makes the worker die abruptly, as a crash would (a drill).
    fn crash(&mut self);
}

impl WorkerLauncher {
    /// Starts a worker that reports to `events`, queues `Load` with `rom`, and returns its handle at
    /// once. A remote worker's token file is read again now; it is connected to on a thread of its own
    /// (its address resolved then), and a connection that fails is reported as its exit.
    pub fn start(
        &self,
        worker: WorkerId,
        incarnation: u64,
        rom: &[u8],
        checkpoint_every: u64,
        events: Sender<WorkerMessage>,
    ) -> Result<Box<dyn WorkerHandle>, std::io::Error> {
        let mut handle: Box<dyn WorkerHandle> = match self.mode {
            WorkerMode::Thread => Box::new(ThreadWorker::spawn(worker, incarnation, events)?),
            WorkerMode::Process => {
                let program = self.program.clone().ok_or_else(|| {
                    std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "process workers need the path of the anes executable",
                    )
                })?;
                let extra = &self.process_args[worker.index()];
                Box::new(ProcessWorker::spawn_with_args(&program, extra, worker, incarnation, events)?)
            }
            WorkerMode::Remote => {
                let remote = self.remote.as_ref().ok_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::NotFound, "remote workers need their addresses")
                })?;
                let token = read_token_file(&remote.token_file).map_err(std::io::Error::other)?;
                let tls = match &remote.tls_ca {
                    Some(ca) => Some(ClientTls {
                        config: client_config(ca).map_err(std::io::Error::other)?,
                        server_name: remote.tls_server_name.clone(),
                    }),
                    None => None,
                };
                let address = match worker {
                    WorkerId::A => &remote.a,
                    WorkerId::B => &remote.b,
                };
                // Connected on a thread of its own: the pipeline's thread never waits for a worker
                // that does not answer (issue 45); a failed connection arrives as the worker's exit.
                Box::new(RemoteWorker::start(address, token, tls, worker, incarnation, events)?)
            }
        };
        handle.send(WorkerCommand::Load {
            rom: rom.to_vec(),
            checkpoint_every,
            region: self.region,
            power_on: self.power_on,
        });
        Ok(handle)
    }
}

/// Collects replies and hands them on in batches: at most [`ReplyBatcher::FLUSH_AT`] at once, so the
/// pipeline sees progress while a long batch runs without waking for every record.
#[derive(Debug)]
pub(crate) struct ReplyBatcher {
    worker: WorkerId,
    incarnation: u64,
    events: Sender<WorkerMessage>,
    pending: Vec<Reply>,
}

impl ReplyBatcher {
    /// A quarter of the default drift window, as the lockstep runner's threaded batches: the pipeline
    /// wakes about once per 30 records per worker, and a worker's reported progress lags its real one by
    /// less than the drift alert's threshold (50).
    pub(crate) const FLUSH_AT: usize = 30;

    pub(crate) fn new(worker: WorkerId, incarnation: u64, events: Sender<WorkerMessage>) -> ReplyBatcher {
        ReplyBatcher { worker, incarnation, events, pending: Vec::with_capacity(Self::FLUSH_AT) }
    }

    pub(crate) fn push(&mut self, reply: Reply) {
        self.pending.push(reply);
        if self.pending.len() >= Self::FLUSH_AT {
            self.flush();
        }
    }

    pub(crate) fn flush(&mut self) {
        if !self.pending.is_empty() {
            let replies = std::mem::replace(&mut self.pending, Vec::with_capacity(Self::FLUSH_AT));
            self.send(WorkerOutput::Replies(replies));
        }
    }

    pub(crate) fn send(&self, body: WorkerOutput) {
        // The pipeline may be gone already (shutdown); nothing is listening then.
        let _ = self.events.send(WorkerMessage { worker: self.worker, incarnation: self.incarnation, body });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anes_core::PowerOnProfile;
    use anes_lockstep::{Machine, NesMachine};
    use std::time::Duration;

    /// A pipeline's power-on profile reaches its workers in `Load`: the worker's power-on record is
    /// the machine the profile makes here.
    #[test]
    fn workers_start_with_the_launchers_power_on_profile() {
        let rom = anes_fixtures::tiny_rom();
        for power_on in [None, Some(PowerOnProfile::WarmUp), Some(PowerOnProfile::Random(21))] {
            let launcher = WorkerLauncher {
                mode: WorkerMode::Thread,
                program: None,
                remote: None,
                region: None,
                power_on,
                process_args: Default::default(),
            };
            let (tx, rx) = crossbeam_channel::unbounded();
            let mut handle = launcher.start(WorkerId::A, 1, &rom, 60, tx).unwrap();
            let loaded = loop {
                let message = rx.recv_timeout(Duration::from_secs(10)).expect("a message");
                let WorkerOutput::Replies(replies) = message.body else { continue };
                if let Some(Reply::Loaded { record, .. }) =
                    replies.iter().find(|r| matches!(r, Reply::Loaded { .. }))
                {
                    break *record;
                }
            };
            handle.stop();
            let here = NesMachine::from_ines(&rom, power_on.unwrap_or_default().config()).unwrap();
            assert_eq!(loaded.state_hash, here.state_hash().0, "{power_on:?}");
        }
    }
}
