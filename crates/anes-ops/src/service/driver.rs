//! One pipeline's driver thread: the thin shell that feeds the state machine its events (worker
//! messages, control messages, ticks, the replay source) and executes its actions (workers, storage,
//! the checkpoint writer, investigations, answers to pushes).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anes_core::hex::to_hex;
use crossbeam_channel::{Receiver, Sender};
use serde::Serialize;

use super::handle::Control;
use crate::config::PipelineConfig;
use crate::pipeline::{
    Accounting, Action, Checkpoint, Event, Investigation, Pipeline, PipelineObserver, PipelineSettings,
    PipelineStatus, PipelineStorage, PushOutcome, ReplaySource, SequenceGap, StorageThread,
};
use crate::recovery::DirLockGuard;
use crate::store::writer::{CheckpointWriter, PendingCheckpoint};
use crate::worker::{WorkerHandle, WorkerId, WorkerLauncher, WorkerMessage, WorkerOutput};

/// How often a busy pipeline's clock ticks at most (a quiet one ticks at its next deadline,
/// [`Pipeline::poll_timeout`], or every [`QUIET`]).
const TICK: Duration = Duration::from_millis(50);
/// How often the status the HTTP API reads is refreshed while the pipeline is busy.
pub(super) const PUBLISH: Duration = Duration::from_millis(100);
/// How often a quiet pipeline's thread wakes with nothing due: its status refreshed (the seconds it
/// shows count on), its metrics observed, its clock ticked.
pub(super) const QUIET: Duration = Duration::from_secs(1);
/// How long a drain may take before the service stops with the last checkpoint verified so far.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the checkpoint writer gets at shutdown to store the final checkpoint.
const WRITER_FINISH: Duration = Duration::from_secs(10);

/// How a pipeline ended.
#[derive(Debug, Clone, Serialize)]
pub struct PipelineReport {
    /// `pipeline_id`.
    pub id: String,
    /// Where every record went.
    pub accounting: Accounting,
    /// The final checkpoint's frame.
    pub final_checkpoint_seq: Option<u64>,
    /// Its state hash.
    pub final_state_hash: Option<String>,
    /// True when both workers were verified to have it at shutdown.
    pub final_checkpoint_verified: bool,
    /// True when the store took it: false for a fenced service (another coordinator owns the pipeline,
    /// and continues from its own checkpoints and the shared journal), or a store that refused it.
    pub final_checkpoint_stored: bool,
    /// Where it was written.
    pub final_checkpoint_file: Option<String>,
}

/// What a driver runs: the pipeline's configuration, its ROM, its replay source (none for pushed
/// input) and how its workers start.
pub(super) struct PipelinePlan {
    pub(super) config: PipelineConfig,
    pub(super) settings: PipelineSettings,
    pub(super) rom: Arc<Vec<u8>>,
    pub(super) source: Option<ReplaySource>,
    pub(super) launcher: WorkerLauncher,
}

pub(super) struct Driver {
    pub(super) pipeline: Pipeline,
    pub(super) observer: PipelineObserver,
    pub(super) storage: Option<StorageThread>,
    /// Producers waiting for their push's answer ([`Action::Acknowledge`]), oldest first.
    pub(super) replies: VecDeque<tokio::sync::oneshot::Sender<Result<PushOutcome, SequenceGap>>>,
    pub(super) writer: Option<CheckpointWriter>,
    pub(super) _lock: DirLockGuard,
    pub(super) plan: PipelinePlan,
    pub(super) control: Receiver<Control>,
    pub(super) control_tx: Sender<Control>,
    pub(super) status: Arc<Mutex<Arc<PipelineStatus>>>,
    pub(super) clock: Instant,
    pub(super) evidence_dir: PathBuf,
    pub(super) state_dir: Option<PathBuf>,
}

impl Driver {
    pub(super) fn run(mut self) -> PipelineReport {
        let id = self.plan.settings.id.clone();
        let (worker_tx, worker_rx) = crossbeam_channel::unbounded::<WorkerMessage>();
        let mut workers: [Option<Box<dyn WorkerHandle>>; 2] = [None, None];
        let mut last_tick = Duration::ZERO;
        let mut last_publish = Duration::ZERO;
        // Something happened since the status was last published.
        let mut busy = true;
        let mut drain_deadline: Option<Duration> = None;
        let final_checkpoint = loop {
            let now = self.clock.elapsed();
            if drain_deadline.is_none() {
                self.offer_replay(now);
            }
            let producing =
                drain_deadline.is_none() && self.plan.source.as_ref().is_some_and(|s| !s.finished());
            self.pipeline.expect_input(producing);
            let mut drained = None;
            self.run_actions(now, &mut workers, &worker_tx, &mut drained);
            if let Some(checkpoint) = drained {
                break checkpoint.map(|c| (c, true));
            }
            if let Some(deadline) = drain_deadline
                && now >= deadline
            {
                tracing::error!(pipeline = %id, "drain timed out: stopping with the newest checkpoint verified so far");
                break self.pipeline.abandon_drain().map(|c| (c, false));
            }
            busy |= producing;
            let publish_every = if busy { PUBLISH } else { QUIET };
            if now.saturating_sub(last_publish) >= publish_every {
                last_publish = now;
                busy = false;
                self.publish();
            }
            // Wakes on messages; else at the pipeline's next deadline, when a real-time replay's next
            // record is due, at the next publication, or while draining at the next tick. A pipeline
            // with no room (fenced, backlog full, a failed journal commit's backoff, whose end is a
            // deadline) takes nothing when a record falls due, so waking for it would spin.
            let deadline = self.pipeline.poll_timeout();
            let mut wait = last_publish.saturating_add(publish_every).saturating_sub(now);
            if let Some(at) = deadline {
                wait = wait.min(at.saturating_sub(now));
            }
            match (&self.plan.source, drain_deadline) {
                (Some(source), None) if source.is_real_time() && self.pipeline.room() > 0 => {
                    if let Some(due) = source.next_due_at() {
                        wait = wait.min(due.saturating_sub(now));
                    }
                }
                (_, Some(_)) => wait = wait.min(TICK),
                _ => {}
            }
            crossbeam_channel::select! {
                recv(worker_rx) -> message => {
                    busy = true;
                    if let Ok(message) = message {
                        let now = self.clock.elapsed();
                        self.pipeline.handle(now, Event::Worker(message));
                        // Take what else has arrived before acting: batches instead of one wake per record.
                        for message in worker_rx.try_iter().take(256) {
                            self.pipeline.handle(now, Event::Worker(message));
                        }
                    }
                }
                recv(self.control) -> control => {
                    busy = true;
                    if let Ok(control) = control {
                        if matches!(control, Control::Event(Event::Drain)) && drain_deadline.is_none() {
                            drain_deadline = Some(self.clock.elapsed() + DRAIN_TIMEOUT);
                        }
                        self.control_message(control);
                    }
                }
                default(wait) => {}
            }
            let now = self.clock.elapsed();
            let due = deadline.is_some_and(|at| now >= at);
            if due || now.saturating_sub(last_tick) >= TICK {
                last_tick = now;
                self.pipeline.handle(now, Event::Tick);
            }
            self.observer.observe(&mut self.pipeline);
        };
        for (w, handle) in workers.iter_mut().enumerate() {
            if let Some(mut h) = handle.take() {
                h.stop();
                tracing::debug!(pipeline = %id, worker = %WorkerId::BOTH[w], "worker stopped at shutdown");
            }
        }
        if let Some(storage) = self.storage.take() {
            storage.finish();
        }
        if let Some(writer) = self.writer.take()
            && !writer.finish(WRITER_FINISH)
        {
            tracing::error!(pipeline = %id, "the checkpoint store did not take the final checkpoint within {WRITER_FINISH:?}");
        }
        // What the store said of the final checkpoint (stored, or fenced) comes back as events.
        let now = self.clock.elapsed();
        for control in self.control.try_iter() {
            if let Control::Event(event @ Event::Store(_)) = control {
                self.pipeline.handle(now, event);
            }
        }
        self.observer.observe(&mut self.pipeline);
        self.publish();
        self.report(final_checkpoint)
    }

    fn offer_replay(&mut self, now: Duration) {
        if let Some(source) = self.plan.source.as_mut() {
            self.pipeline.offer_from(now, source);
        }
    }

    fn control_message(&mut self, control: Control) {
        let now = self.clock.elapsed();
        match control {
            Control::Event(event) => self.pipeline.handle(now, event),
            Control::Push { first_seq, inputs, reply } => {
                match self.pipeline.push_batch(now, first_seq, &inputs) {
                    Ok(()) => self.replies.push_back(reply),
                    Err(gap) => {
                        let _ = reply.send(Err(gap));
                    }
                }
            }
        }
    }

    fn run_actions(
        &mut self,
        now: Duration,
        workers: &mut [Option<Box<dyn WorkerHandle>>; 2],
        worker_tx: &Sender<WorkerMessage>,
        drained: &mut Option<Option<Checkpoint>>,
    ) {
        let id = self.plan.settings.id.clone();
        let mut answers = Vec::new();
        while let Some(action) = self.pipeline.poll_action(now) {
            self.observer.log_notices(&mut self.pipeline);
            match action {
                Action::Start { worker, incarnation } => {
                    if let Some(mut old) = workers[worker.index()].take() {
                        old.stop();
                    }
                    match self.plan.launcher.start(
                        worker,
                        incarnation,
                        &self.plan.rom,
                        self.plan.settings.checkpoint_every,
                        worker_tx.clone(),
                    ) {
                        Ok(handle) => workers[worker.index()] = Some(handle),
                        Err(e) => {
                            tracing::error!(pipeline = %id, %worker, error = %e, "cannot start a worker");
                            let _ = worker_tx.send(WorkerMessage {
                                worker,
                                incarnation,
                                body: WorkerOutput::Exited { reason: format!("could not start: {e}") },
                            });
                        }
                    }
                }
                Action::SendToWorker { worker, command } => {
                    if let Some(h) = workers[worker.index()].as_mut() {
                        h.send(command);
                    }
                }
                Action::Stop { worker, incarnation } => {
                    if let Some(mut h) = workers[worker.index()].take() {
                        h.stop();
                    }
                    tracing::warn!(pipeline = %id, %worker, incarnation, "worker isolated: stopped");
                    self.pipeline.handle(now, Event::WorkerStopped { worker, incarnation });
                }
                Action::Crash { worker } => {
                    if let Some(h) = workers[worker.index()].as_mut() {
                        h.crash();
                    }
                }
                Action::Investigate(investigation) => self.investigate(now, *investigation),
                Action::Drained(checkpoint) => *drained = Some(checkpoint),
                Action::PersistCheckpoint(c) => {
                    if let Some(writer) = &self.writer {
                        writer.submit(PendingCheckpoint {
                            frame: c.seq,
                            cpu_cycle: c.cpu_cycle,
                            state_hash: c.state_hash,
                            snapshot: c.snapshot,
                        });
                    }
                }
                Action::BumpStoreEpoch => {
                    if let Some(writer) = &self.writer {
                        writer.bump_epoch();
                    }
                }
                Action::Acknowledge(outcome) => {
                    if let Some(reply) = self.replies.pop_front() {
                        answers.push((reply, outcome));
                    }
                }
                storage @ (Action::AppendJournal { .. } | Action::Commit | Action::ReleaseJournal { .. }) => {
                    debug_assert!(PipelineStorage::executes(&storage));
                    if let Some(thread) = &self.storage {
                        thread.send(storage);
                    }
                }
            }
        }
        if !answers.is_empty() {
            // A producer that reads the metrics or the status after its answer sees its records counted.
            self.observer.observe(&mut self.pipeline);
            self.publish();
            for (reply, outcome) in answers {
                let _ = reply.send(Ok(outcome));
            }
        }
    }

    /// The referee runs here (a few frames of emulation, while the pipeline is halted anyway); the
    /// evidence bundle is written on a thread of its own. A libretro pipeline has no referee (a
    /// third instance of either core would not say which build is right): its bundle is the
    /// lockstep runner's over a worker of each core.
    fn investigate(&mut self, now: Duration, investigation: Investigation) {
        let id = self.plan.settings.id.clone();
        let incident = investigation.incident;
        if let (Some(spec), Some(content), Some(program)) =
            (&self.plan.config.libretro, &self.plan.config.rom, &self.plan.launcher.program)
        {
            self.pipeline.handle(now, Event::Verdict { incident, suspects: Vec::new() });
            let retro = crate::evidence::RetroPipeline {
                program: program.clone(),
                spec: spec.clone(),
                content: content.clone(),
            };
            self.write_evidence_on_thread(incident, move |id, dir| {
                crate::evidence::write_retro_evidence(&retro, id, &investigation, dir)
            });
            return;
        }
        let (suspects, referee_record) = match crate::evidence::referee(&self.plan.rom, &investigation) {
            Ok(found) => found,
            Err(e) => {
                tracing::error!(pipeline = %id, incident, error = %e, "the referee could not run");
                self.pipeline.handle(now, Event::Verdict { incident, suspects: Vec::new() });
                return;
            }
        };
        self.pipeline.handle(now, Event::Verdict { incident, suspects: suspects.clone() });
        let rom = Arc::clone(&self.plan.rom);
        self.write_evidence_on_thread(incident, move |id, dir| {
            crate::evidence::write_evidence(&rom, id, &investigation, &suspects, referee_record, dir)
        });
    }

    /// Writes an incident's evidence with `write(pipeline id, folder)` on a thread of its own, and
    /// tells the pipeline the file to link when it is written.
    fn write_evidence_on_thread(
        &self,
        incident: u64,
        write: impl FnOnce(&str, &Path) -> Result<PathBuf, crate::evidence::InvestigationError> + Send + 'static,
    ) {
        let id = self.plan.settings.id.clone();
        let relative = format!("{id}/incident-{incident}");
        let dir = self.evidence_dir.join(&relative);
        let back = self.control_tx.clone();
        let spawned = std::thread::Builder::new().name(format!("evidence-{id}")).spawn(move || {
            match write(&id, &dir) {
                Ok(path) => {
                    let file = path.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default();
                    tracing::info!(pipeline = %id, incident, path = %path.display(), "evidence written");
                    let _ = back.send(Control::Event(Event::EvidenceWritten {
                        incident,
                        path: format!("{relative}/{file}"),
                    }));
                }
                Err(e) => {
                    tracing::error!(pipeline = %id, incident, error = %e, "writing the evidence failed")
                }
            }
        });
        if let Err(e) = spawned {
            tracing::error!(pipeline = %self.plan.settings.id, error = %e, "cannot start the evidence writer");
        }
    }

    fn publish(&self) {
        let status = Arc::new(self.pipeline.status());
        *self.status.lock().unwrap_or_else(|p| p.into_inner()) = status;
    }

    fn report(&self, checkpoint: Option<(Checkpoint, bool)>) -> PipelineReport {
        let id = self.plan.settings.id.clone();
        let status = self.pipeline.status();
        let stored = checkpoint.as_ref().is_some_and(|(c, _)| {
            status.fence.is_none() && status.store.persisted_seq.is_some_and(|seq| seq >= c.seq)
        });
        let mut file = None;
        if let (Some(dir), Some((c, verified))) = (&self.state_dir, &checkpoint) {
            match write_checkpoint(dir, &id, c, *verified, stored, status.fence) {
                Ok(path) => file = Some(path.display().to_string()),
                Err(e) => tracing::error!(pipeline = %id, error = %e, "writing the final checkpoint failed"),
            }
        }
        let report = PipelineReport {
            id: id.clone(),
            accounting: self.pipeline.accounting(),
            final_checkpoint_seq: checkpoint.as_ref().map(|(c, _)| c.seq),
            final_state_hash: checkpoint.as_ref().map(|(c, _)| to_hex(&c.state_hash)),
            final_checkpoint_verified: checkpoint.as_ref().is_some_and(|(_, v)| *v),
            final_checkpoint_stored: stored,
            final_checkpoint_file: file,
        };
        let a = report.accounting;
        tracing::info!(
            pipeline = %id,
            received = a.received,
            verified_direct = a.verified_direct,
            verified_after_dlq = a.verified_after_dlq,
            replayed_from_dlq = a.replayed_from_dlq,
            in_dlq = a.in_dlq,
            unverified = a.unverified,
            final_checkpoint_seq = report.final_checkpoint_seq,
            final_state_hash = report.final_state_hash.as_deref(),
            verified = report.final_checkpoint_verified,
            stored = report.final_checkpoint_stored,
            fenced = status.fence.map(|f| f.describe()),
            "pipeline stopped"
        );
        report
    }
}

fn write_checkpoint(
    dir: &Path,
    id: &str,
    c: &Checkpoint,
    verified: bool,
    stored: bool,
    fence: Option<crate::pipeline::Fence>,
) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let snap = dir.join(format!("{id}.snap"));
    anes_fs::write_output(&snap, &c.snapshot).map_err(|e| e.to_string())?;
    let meta = serde_json::json!({
        "pipeline_id": id,
        "seq": c.seq,
        "state_hash": to_hex(&c.state_hash),
        "verified_at_shutdown": verified,
        "stored": stored,
        "fenced": fence.map(|f| f.describe()),
    });
    anes_fs::write_output(
        &dir.join(format!("{id}.json")),
        &serde_json::to_vec_pretty(&meta).expect("serializes"),
    )
    .map_err(|e| e.to_string())?;
    Ok(snap)
}
