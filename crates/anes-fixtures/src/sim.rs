//! The pipeline driven deterministically, for the pipeline's own tests and the service's: real
//! consoles ([`Engine`]) as workers, a seeded scheduler that decides which worker runs, which message
//! arrives next and when time passes, a model of Prometheus and Alertmanager that fires the alert when
//! the design's rule would, the referee, and a journal the test chooses ([`JournalSink`]).

use std::collections::VecDeque;
use std::time::Duration;

use anes_core::movie::FrameInput;
use anes_pipeline::engine::{Engine, Flow};
use anes_pipeline::protocol::{BuildInfo, PROTOCOL_VERSION, Reply, WorkerCommand};
use anes_pipeline::storage::{CommitFailure, JournalSink, execute_journal_action};
use anes_pipeline::worker::{WorkerId, WorkerMessage, WorkerOutput};
use anes_pipeline::*;

use crate::tiny_rom;

/// The design's alert: `flag == 1 or drift > 50` for 10 s.
pub const ALERT_FOR: Duration = Duration::from_secs(10);

/// A pipeline, its two workers and the alert, driven one step at a time.
pub struct Sim {
    pub pipeline: Pipeline,
    /// The storage shell the pipeline's journal and queue actions go to.
    pub storage: Box<dyn JournalSink>,
    /// Answers to pushes, oldest first.
    pub acks: VecDeque<PushOutcome>,
    pub now: Duration,
    pub rng: u64,
    pub rom: Vec<u8>,
    pub engines: [Option<Engine>; 2],
    pub incarnations: [u64; 2],
    pub inbox: [VecDeque<WorkerCommand>; 2],
    pub outbox: [VecDeque<WorkerMessage>; 2],
    pub stalled_until: [Duration; 2],
    pub events: VecDeque<Event>,
    /// When the alert condition became true, and whether the alert fired for it.
    pub bad_since: Option<Duration>,
    pub fired: bool,
    pub alerts_sent: u32,
    pub inputs_sent: u64,
    pub drained: Option<Option<Checkpoint>>,
    pub investigations: u32,
    pub persisted: u32,
    /// The checkpoints the pipeline asked to persist, in order.
    pub stored: Vec<Checkpoint>,
    /// The service dies before executing its action number `crash_at` (counted from 0).
    pub crash_at: Option<u64>,
    pub actions_run: u64,
    pub crashed: bool,
    /// What a restart rebuilds the pipeline with.
    pub pipeline_settings: PipelineSettings,
    /// The region each worker's `Load` asks for.
    pub load_regions: [Option<anes_core::Region>; 2],
    /// Workers that cannot be reached: a start ends at once with a refused connection.
    pub unreachable: [bool; 2],
    /// Workers that crash right after loading the ROM (reached, then failing: an attempt that counts).
    pub dies_after_load: [bool; 2],
}

impl Sim {
    pub fn new(settings: PipelineSettings, seed: u64) -> Sim {
        Sim::with_pipeline(Pipeline::new(settings), seed)
    }

    /// Drives a pipeline built elsewhere (recovered from a data directory, or with other settings),
    /// with an in-memory queue and no journal.
    pub fn with_pipeline(pipeline: Pipeline, seed: u64) -> Sim {
        let storage: Box<dyn JournalSink> = Box::new(NoJournal);
        Sim::with_storage(pipeline, storage, seed)
    }

    pub fn with_storage(pipeline: Pipeline, storage: Box<dyn JournalSink>, seed: u64) -> Sim {
        let mut sim = Sim {
            pipeline,
            storage,
            acks: VecDeque::new(),
            now: Duration::ZERO,
            rng: seed | 1,
            rom: tiny_rom(),
            engines: [None, None],
            incarnations: [0, 0],
            inbox: [VecDeque::new(), VecDeque::new()],
            outbox: [VecDeque::new(), VecDeque::new()],
            stalled_until: [Duration::ZERO; 2],
            events: VecDeque::new(),
            bad_since: None,
            fired: false,
            alerts_sent: 0,
            inputs_sent: 0,
            drained: None,
            investigations: 0,
            persisted: 0,
            stored: Vec::new(),
            crash_at: None,
            actions_run: 0,
            crashed: false,
            pipeline_settings: PipelineSettings::new("p1"),
            load_regions: [None; 2],
            unreachable: [false; 2],
            dies_after_load: [false; 2],
        };
        sim.run_actions();
        sim
    }

    pub fn random(&mut self, n: u64) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng % n.max(1)
    }

    pub fn run_actions(&mut self) {
        if self.crashed {
            return;
        }
        while let Some(action) = self.pipeline.poll_action(self.now) {
            if self.crash_at == Some(self.actions_run) {
                // The process dies here: this action and every one after it never happen.
                self.crashed = true;
                return;
            }
            self.actions_run += 1;
            match action {
                Action::Start { worker, incarnation } if self.unreachable[worker.index()] => {
                    self.outbox[worker.index()].push_back(WorkerMessage {
                        worker,
                        incarnation,
                        body: WorkerOutput::Exited { reason: "connect: connection refused".into() },
                    });
                }
                Action::Start { worker, incarnation } => {
                    let w = worker.index();
                    self.engines[w] = Some(Engine::new());
                    self.incarnations[w] = incarnation;
                    self.inbox[w].clear();
                    self.stalled_until[w] = Duration::ZERO;
                    self.outbox[w].push_back(WorkerMessage {
                        worker,
                        incarnation,
                        body: WorkerOutput::Replies(vec![Reply::Hello {
                            protocol_version: PROTOCOL_VERSION,
                            build: BuildInfo::current(),
                        }]),
                    });
                    let (rom, region) = (self.rom.clone(), self.load_regions[w]);
                    self.inbox[w].push_back(WorkerCommand::Load {
                        rom,
                        checkpoint_every: 8,
                        region,
                        power_on: None,
                    });
                }
                Action::SendToWorker { worker, command } => {
                    if self.engines[worker.index()].is_some() {
                        self.inbox[worker.index()].push_back(command);
                    }
                }
                Action::Stop { worker, incarnation } => {
                    let w = worker.index();
                    self.engines[w] = None;
                    self.inbox[w].clear();
                    self.events.push_back(Event::WorkerStopped { worker, incarnation });
                }
                Action::Crash { worker } => {
                    let w = worker.index();
                    if self.engines[w].take().is_some() {
                        self.inbox[w].clear();
                        self.outbox[w].push_back(WorkerMessage {
                            worker,
                            incarnation: self.incarnations[w],
                            body: WorkerOutput::Exited { reason: "crashed (drill)".into() },
                        });
                    }
                }
                Action::Investigate(investigation) => {
                    self.investigations += 1;
                    let suspects = anes_pipeline::referee::referee(&self.rom, &investigation)
                        .map(|(s, _)| s)
                        .unwrap_or_default();
                    self.events.push_back(Event::Verdict { incident: investigation.incident, suspects });
                }
                Action::Drained(checkpoint) => self.drained = Some(checkpoint),
                Action::PersistCheckpoint(checkpoint) => {
                    self.persisted += 1;
                    self.stored.push(checkpoint);
                }
                Action::BumpStoreEpoch => self.persisted += 1,
                Action::Acknowledge(outcome) => self.acks.push_back(outcome),
                storage @ (Action::AppendJournal { .. } | Action::Commit | Action::ReleaseJournal { .. }) => {
                    for answer in execute_journal_action(self.storage.as_mut(), &storage) {
                        self.pipeline.handle(self.now, answer);
                    }
                }
            }
        }
    }

    pub fn handle(&mut self, event: Event) {
        self.pipeline.handle(self.now, event);
        self.run_actions();
    }

    /// One worker handles one command.
    pub fn work(&mut self, w: usize) -> bool {
        if self.stalled_until[w] > self.now {
            return false;
        }
        let Some(command) = self.inbox[w].pop_front() else { return false };
        let Some(engine) = self.engines[w].as_mut() else { return false };
        let loading = matches!(command, WorkerCommand::Load { .. });
        let mut replies = Vec::new();
        let flow = engine.handle(command, &mut |r| replies.push(r));
        if let Flow::Stall(d) = flow {
            self.stalled_until[w] = self.now + d;
        }
        let worker = WorkerId::BOTH[w];
        self.outbox[w].push_back(WorkerMessage {
            worker,
            incarnation: self.incarnations[w],
            body: WorkerOutput::Replies(replies),
        });
        if loading && self.dies_after_load[w] {
            self.engines[w] = None;
            self.inbox[w].clear();
            self.outbox[w].push_back(WorkerMessage {
                worker,
                incarnation: self.incarnations[w],
                body: WorkerOutput::Exited { reason: "crashed after loading".into() },
            });
        }
        true
    }

    pub fn deliver(&mut self, w: usize) -> bool {
        let Some(message) = self.outbox[w].pop_front() else { return false };
        self.handle(Event::Worker(message));
        true
    }

    /// Prometheus and Alertmanager, modelled: the alert fires once the rule held for 10 s.
    pub fn alerting(&mut self) {
        let status = self.pipeline.status();
        let bad = status.diverged || status.drift_records > ALERT_DRIFT_THRESHOLD;
        match (bad, self.bad_since) {
            (true, None) => self.bad_since = Some(self.now),
            (true, Some(since)) if !self.fired && self.now - since >= ALERT_FOR => {
                self.fired = true;
                self.alerts_sent += 1;
                self.handle(Event::AlertFiring);
            }
            (false, Some(_)) => {
                if self.fired {
                    self.handle(Event::AlertResolved);
                }
                self.bad_since = None;
                self.fired = false;
            }
            _ => {}
        }
    }

    pub fn advance(&mut self, d: Duration) {
        self.now += d;
        self.handle(Event::Tick);
        self.alerting();
    }

    /// One random step: a worker works, a message arrives, an event is delivered, or time passes.
    pub fn step(&mut self) {
        match self.random(6) {
            0 | 1 => {
                let w = self.random(2) as usize;
                if !self.work(w) {
                    self.work(1 - w);
                }
            }
            2 | 3 => {
                let w = self.random(2) as usize;
                if !self.deliver(w) {
                    self.deliver(1 - w);
                }
            }
            4 => {
                if let Some(e) = self.events.pop_front() {
                    self.handle(e);
                }
            }
            _ => {
                let ms = 1 + self.random(50);
                self.advance(Duration::from_millis(ms));
            }
        }
    }

    pub fn offer(&mut self, n: u64) {
        for _ in 0..n {
            let input = sent(self.inputs_sent);
            if self.pipeline.offer_input(self.now, input).is_ok() {
                self.inputs_sent += 1;
            }
        }
        self.pipeline.commit_input();
        self.run_actions();
    }

    /// A producer's push, answered once its commit is.
    pub fn push(&mut self, first_seq: u64, inputs: &[FrameInput]) -> Result<PushOutcome, SequenceGap> {
        self.pipeline.push_batch(self.now, first_seq, inputs)?;
        self.run_actions();
        Ok(self.acks.pop_front().expect("a push is answered once its commit is"))
    }

    /// A push that may go unanswered: the service died before its commit was answered.
    pub fn try_push(&mut self, first_seq: u64, inputs: &[FrameInput]) -> Option<PushOutcome> {
        self.pipeline.push_batch(self.now, first_seq, inputs).ok()?;
        self.run_actions();
        self.acks.pop_front()
    }

    /// Runs everything that is pending, in order, advancing time in 100 ms steps, until nothing
    /// moves and the pipeline is normal with nothing unverified (or `limit` passes).
    pub fn settle(&mut self, limit: Duration) {
        let end = self.now + limit;
        loop {
            let mut moved = false;
            for w in 0..2 {
                while self.work(w) {
                    moved = true;
                }
                while self.deliver(w) {
                    moved = true;
                }
            }
            while let Some(e) = self.events.pop_front() {
                self.handle(e);
                moved = true;
            }
            let status = self.pipeline.status();
            let quiet = status.mode == Mode::Normal
                && status.accounting.unverified == 0
                && status.accounting.in_dlq == 0
                && !status.diverged
                && status.workers.iter().all(|w| w.phase == "running");
            if (!moved && quiet) || self.now >= end {
                return;
            }
            if !moved {
                self.advance(Duration::from_millis(100));
            }
        }
    }

    pub fn drill(&mut self, worker: WorkerId, drill: Drill) {
        self.handle(Event::Drill { worker, drill });
    }
}

/// The simulator's settings: checkpoints every 8 frames, a 64-record drift window.
pub fn settings(policy: RollbackPolicy) -> PipelineSettings {
    PipelineSettings {
        checkpoint_every: 8,
        persist_every: 8,
        drift_window: 64,
        policy,
        ..PipelineSettings::new("p1")
    }
}

/// Every record received was verified, once.
pub fn assert_nothing_lost(sim: &Sim) {
    let a = sim.pipeline.accounting();
    assert!(a.balanced(), "{a:?}");
    assert_eq!(a.received, sim.inputs_sent);
    assert_eq!(a.unverified + a.in_dlq, 0, "{a:?}");
    assert_eq!(a.received, a.verified_before_start + a.verified_direct + a.replayed_from_dlq, "{a:?}");
}

/// The record the simulated producer sends as number `seq` (what [`Sim::offer`] sends).
pub fn sent(seq: u64) -> FrameInput {
    FrameInput::buttons((seq % 7) as u8, 0)
}

/// A journal that keeps nothing: every commit succeeds.
#[derive(Debug, Default)]
pub struct NoJournal;

impl JournalSink for NoJournal {
    fn append(&mut self, _seq: u64, _input: FrameInput) {}
    fn commit(&mut self) -> Result<(), CommitFailure> {
        Ok(())
    }
    fn release_before(&mut self, _seq: u64) {}
}
