//! The pipeline driven deterministically: real consoles ([`Engine`]) as workers, a seeded scheduler
//! that decides which worker runs, which message arrives next and when time passes, and a model of
//! Prometheus and Alertmanager that fires the alert when the design's rule would.

use std::collections::VecDeque;
use std::time::Duration;

use anes_core::movie::FrameInput;
use anes_lockstep::testing::tiny_rom;
use proptest::prelude::*;

use super::*;
use crate::journal::{Journal, NoJournal};
use crate::worker::engine::{Engine, Flow};
use crate::worker::protocol::{BuildInfo, PROTOCOL_VERSION, Reply, WorkerCommand};
use crate::worker::{WorkerId, WorkerMessage, WorkerOutput};

/// The design's alert: `flag == 1 or drift > 50` for 10 s.
const ALERT_FOR: Duration = Duration::from_secs(10);

struct Sim {
    pipeline: Pipeline,
    /// The storage shell the pipeline's journal and queue actions go to.
    storage: PipelineStorage,
    /// Answers to pushes, oldest first.
    acks: VecDeque<PushOutcome>,
    now: Duration,
    rng: u64,
    rom: Vec<u8>,
    engines: [Option<Engine>; 2],
    incarnations: [u64; 2],
    inbox: [VecDeque<WorkerCommand>; 2],
    outbox: [VecDeque<WorkerMessage>; 2],
    stalled_until: [Duration; 2],
    events: VecDeque<Event>,
    /// When the alert condition became true, and whether the alert fired for it.
    bad_since: Option<Duration>,
    fired: bool,
    alerts_sent: u32,
    inputs_sent: u64,
    drained: Option<Option<Checkpoint>>,
    investigations: u32,
    persisted: u32,
    /// The checkpoints the pipeline asked to persist, in order.
    stored: Vec<Checkpoint>,
    /// The service dies before executing its action number `crash_at` (counted from 0).
    crash_at: Option<u64>,
    actions_run: u64,
    crashed: bool,
    /// What a restart rebuilds the pipeline with.
    pipeline_settings: PipelineSettings,
    /// The region each worker's `Load` asks for.
    load_regions: [Option<anes_core::Region>; 2],
    /// Workers that cannot be reached: a start ends at once with a refused connection.
    unreachable: [bool; 2],
    /// Workers that crash right after loading the ROM (reached, then failing: an attempt that counts).
    dies_after_load: [bool; 2],
}

impl Sim {
    fn new(settings: PipelineSettings, seed: u64) -> Sim {
        Sim::with_pipeline(Pipeline::new(settings), seed)
    }

    /// Drives a pipeline built elsewhere (recovered from a data directory, or with other settings),
    /// with an in-memory queue and no journal.
    fn with_pipeline(pipeline: Pipeline, seed: u64) -> Sim {
        let storage = PipelineStorage::new(Box::new(NoJournal));
        Sim::with_storage(pipeline, storage, seed)
    }

    fn with_storage(pipeline: Pipeline, storage: PipelineStorage, seed: u64) -> Sim {
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

    fn random(&mut self, n: u64) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng % n.max(1)
    }

    fn run_actions(&mut self) {
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
                    let suspects = crate::evidence::referee(&self.rom, &investigation)
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
                    for answer in self.storage.execute(&storage) {
                        self.pipeline.handle(self.now, answer);
                    }
                }
            }
        }
    }

    fn handle(&mut self, event: Event) {
        self.pipeline.handle(self.now, event);
        self.run_actions();
    }

    /// One worker handles one command.
    fn work(&mut self, w: usize) -> bool {
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

    fn deliver(&mut self, w: usize) -> bool {
        let Some(message) = self.outbox[w].pop_front() else { return false };
        self.handle(Event::Worker(message));
        true
    }

    /// Prometheus and Alertmanager, modelled: the alert fires once the rule held for 10 s.
    fn alerting(&mut self) {
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

    fn advance(&mut self, d: Duration) {
        self.now += d;
        self.handle(Event::Tick);
        self.alerting();
    }

    /// One random step: a worker works, a message arrives, an event is delivered, or time passes.
    fn step(&mut self) {
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

    fn offer(&mut self, n: u64) {
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
    fn push(&mut self, first_seq: u64, inputs: &[FrameInput]) -> Result<PushOutcome, SequenceGap> {
        self.pipeline.push_batch(self.now, first_seq, inputs)?;
        self.run_actions();
        Ok(self.acks.pop_front().expect("a push is answered once its commit is"))
    }

    /// A push that may go unanswered: the service died before its commit was answered.
    fn try_push(&mut self, first_seq: u64, inputs: &[FrameInput]) -> Option<PushOutcome> {
        self.pipeline.push_batch(self.now, first_seq, inputs).ok()?;
        self.run_actions();
        self.acks.pop_front()
    }

    /// Runs everything that is pending, in order, advancing time in 100 ms steps, until nothing
    /// moves and the pipeline is normal with nothing unverified (or `limit` passes).
    fn settle(&mut self, limit: Duration) {
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

    fn drill(&mut self, worker: WorkerId, drill: Drill) {
        self.handle(Event::Drill { worker, drill });
    }
}

fn settings(policy: RollbackPolicy) -> PipelineSettings {
    PipelineSettings {
        checkpoint_every: 8,
        persist_every: 8,
        drift_window: 64,
        policy,
        ..PipelineSettings::new("p1")
    }
}

fn assert_nothing_lost(sim: &Sim) {
    let a = sim.pipeline.accounting();
    assert!(a.balanced(), "{a:?}");
    assert_eq!(a.received, sim.inputs_sent);
    assert_eq!(a.unverified + a.in_dlq, 0, "{a:?}");
    assert_eq!(a.received, a.verified_before_start + a.verified_direct + a.replayed_from_dlq, "{a:?}");
}

#[test]
fn a_healthy_pipeline_verifies_every_record_and_keeps_checkpoints() {
    let mut sim = Sim::new(settings(RollbackPolicy::Alert), 1);
    sim.settle(Duration::from_secs(1));
    sim.offer(200);
    sim.settle(Duration::from_secs(10));
    let status = sim.pipeline.status();
    assert_eq!(status.frames_verified, 200);
    assert_eq!(status.mode, Mode::Normal);
    assert_eq!(status.checkpoint.as_ref().map(|c| c.seq), Some(200));
    assert_eq!(sim.alerts_sent, 0);
    assert_nothing_lost(&sim);
}

#[test]
fn a_flip_under_the_alert_policy_waits_for_the_alert_then_heals() {
    let mut sim = Sim::new(settings(RollbackPolicy::Alert), 2);
    sim.offer(50);
    sim.settle(Duration::from_secs(2));
    sim.drill(WorkerId::B, Drill::Fault("flip:ram:0x0010:3".into()));
    sim.offer(5);
    for _ in 0..30 {
        sim.step();
        sim.settle(Duration::from_millis(0));
    }
    for _ in 0..20 {
        sim.work(0);
        sim.work(1);
        sim.deliver(0);
        sim.deliver(1);
    }
    let status = sim.pipeline.status();
    assert!(status.diverged, "{status:?}");
    assert_eq!(status.mode, Mode::ReadOnly);
    assert_eq!(status.phase, "halted");
    // While read-only, new records wait in the dead-letter queue.
    sim.offer(30);
    assert_eq!(sim.pipeline.accounting().in_dlq, 30);
    sim.settle(Duration::from_secs(30));
    assert_eq!(sim.alerts_sent, 1, "the alert fired once");
    let status = sim.pipeline.status();
    assert!(!status.diverged);
    assert_eq!(status.mode, Mode::Normal);
    assert_eq!(status.rollbacks_succeeded, 1);
    assert_eq!(status.incidents[0].suspects, Some(vec![WorkerId::B]), "the referee names B");
    assert_eq!(status.workers[1].restarts, 1, "B was isolated and started again");
    assert_eq!(status.workers[0].restarts, 0);
    assert_eq!(sim.pipeline.accounting().replayed_from_dlq, 30);
    assert_nothing_lost(&sim);
}

#[test]
fn the_immediate_policy_heals_before_the_alert_could_fire() {
    let mut sim = Sim::new(settings(RollbackPolicy::Immediate), 3);
    sim.offer(40);
    sim.settle(Duration::from_secs(2));
    sim.drill(WorkerId::A, Drill::Fault("flip:ram:0x0010:3".into()));
    sim.offer(40);
    sim.settle(Duration::from_secs(5));
    assert_eq!(sim.alerts_sent, 0);
    let status = sim.pipeline.status();
    assert_eq!(status.rollbacks_succeeded, 1);
    assert_eq!(status.incidents[0].suspects, Some(vec![WorkerId::A]));
    assert!(status.incidents[0].healed_after_seconds.unwrap() < 5.0);
    assert_nothing_lost(&sim);
}

#[test]
fn a_stalled_worker_drifts_past_the_threshold_and_the_alert_rolls_back() {
    let mut sim = Sim::new(settings(RollbackPolicy::Alert), 4);
    sim.offer(20);
    sim.settle(Duration::from_secs(1));
    sim.drill(WorkerId::B, Drill::Stall(Duration::from_secs(600)));
    let mut max_drift = 0;
    for _ in 0..200 {
        sim.offer(1);
        sim.settle(Duration::from_millis(0));
        sim.advance(Duration::from_millis(100));
        max_drift = max_drift.max(sim.pipeline.status().drift_records);
    }
    assert_eq!(max_drift, 64, "the drift window holds the running worker");
    sim.settle(Duration::from_secs(5));
    assert_eq!(sim.alerts_sent, 1);
    let status = sim.pipeline.status();
    assert_eq!(status.mode, Mode::Normal);
    assert_eq!(status.drift_records, 0);
    assert_eq!(status.workers[1].restarts, 1, "the laggard was replaced");
    assert_nothing_lost(&sim);
}

#[test]
fn a_crashed_worker_is_noticed_and_replaced() {
    let mut sim = Sim::new(settings(RollbackPolicy::Immediate), 5);
    sim.offer(30);
    sim.settle(Duration::from_secs(1));
    sim.drill(WorkerId::A, Drill::Crash);
    sim.offer(30);
    sim.settle(Duration::from_secs(5));
    let status = sim.pipeline.status();
    assert_eq!(status.incidents[0].kind, "worker_exited");
    assert_eq!(status.workers[0].restarts, 1);
    assert!(status.workers[0].last_exit.as_deref().unwrap().contains("crashed"));
    assert_eq!(status.mode, Mode::Normal);
    assert_nothing_lost(&sim);
}

#[test]
fn a_second_alert_during_a_rollback_is_absorbed_and_resolved_alerts_change_nothing() {
    let mut sim = Sim::new(settings(RollbackPolicy::Alert), 6);
    sim.offer(30);
    sim.settle(Duration::from_secs(1));
    sim.handle(Event::AlertResolved);
    assert_eq!(sim.pipeline.status().mode, Mode::Normal);
    sim.handle(Event::AlertFiring);
    assert_eq!(sim.pipeline.status().phase, "rolling_back");
    sim.handle(Event::AlertFiring);
    sim.settle(Duration::from_secs(5));
    let status = sim.pipeline.status();
    assert_eq!((status.rollbacks_succeeded, status.rollbacks_failed), (1, 0));
    assert_eq!(status.workers[0].restarts + status.workers[1].restarts, 2, "no suspect known: both replaced");
    assert_nothing_lost(&sim);
    // What the log says about it (anes_ops::pipeline::log writes each notice).
    let notices: Vec<Notice> = sim.pipeline.take_notices().collect();
    assert!(notices.contains(&Notice::AlertResolved { mode: Mode::Normal }), "{notices:?}");
    let started =
        Notice::RollbackStarted { trigger: Trigger::Alert, attempt: 1, suspects: WorkerId::BOTH.to_vec() };
    assert_eq!(notices.iter().filter(|n| **n == started).count(), 1, "{notices:?}");
    // The second alert came while step 2 waited for the workers to report they stopped.
    assert!(notices.contains(&Notice::AlertDuringRollback { step: Step::Isolate }), "{notices:?}");
    let steps: Vec<Step> = notices
        .iter()
        .filter_map(|n| if let Notice::StepDone { step, .. } = n { Some(*step) } else { None })
        .collect();
    assert_eq!(steps, Step::ALL);
}

#[test]
fn draining_takes_a_final_verified_checkpoint_and_refuses_new_records() {
    let mut sim = Sim::new(settings(RollbackPolicy::Alert), 7);
    sim.offer(21);
    sim.handle(Event::Drain);
    assert_eq!(sim.pipeline.offer_input(sim.now, FrameInput::default()), Err(Refusal::Stopping));
    sim.settle(Duration::from_secs(5));
    let checkpoint = sim.drained.clone().expect("drained").expect("verified");
    assert_eq!(checkpoint.seq, 21);
    assert!(sim.pipeline.is_drained());
}

#[test]
fn checkpoints_are_stored_every_persist_every_frames_and_the_final_one_always() {
    let mut sim = Sim::new(PipelineSettings { persist_every: 24, ..settings(RollbackPolicy::Alert) }, 12);
    sim.offer(101);
    sim.settle(Duration::from_secs(10));
    // Verified checkpoints every 8 frames; stored: power-on, then one each time 24 frames have passed.
    let stored: Vec<u64> = sim.stored.iter().map(|c| c.seq).collect();
    assert_eq!(stored, [0, 24, 48, 72, 96]);
    assert_eq!(sim.pipeline.status().checkpoint.map(|c| c.seq), Some(96));
    sim.handle(Event::Drain);
    sim.settle(Duration::from_secs(5));
    assert_eq!(sim.stored.last().map(|c| c.seq), Some(101), "the drain's final checkpoint is stored");

    // At most `checkpoint_every`: every verified checkpoint.
    let mut every = Sim::new(PipelineSettings { persist_every: 8, ..settings(RollbackPolicy::Alert) }, 13);
    every.offer(40);
    every.settle(Duration::from_secs(10));
    assert_eq!(every.stored.iter().map(|c| c.seq).collect::<Vec<_>>(), [0, 8, 16, 24, 32, 40]);
}

#[test]
fn pushed_batches_skip_duplicates_and_refuse_gaps() {
    let mut sim = Sim::new(settings(RollbackPolicy::Alert), 8);
    let inputs = [FrameInput::default(); 5];
    let first = sim.push(0, &inputs).unwrap();
    assert_eq!((first.accepted, first.duplicates, first.next_seq), (5, 0, 5));
    let again = sim.push(3, &inputs).unwrap();
    assert_eq!((again.accepted, again.duplicates, again.next_seq), (3, 2, 8));
    assert_eq!(sim.push(9, &inputs), Err(SequenceGap { first_seq: 9, expected: 8 }));
}

/// The record the simulated producer sends as number `seq` (what [`Sim::offer`] sends).
fn sent(seq: u64) -> FrameInput {
    FrameInput::buttons((seq % 7) as u8, 0)
}

mod crash;
mod issue30;
mod recovery;
mod regions;
mod silence;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random interleavings of worker progress, message delivery, time, input and drills: records are
    /// never lost or counted twice, and once the drills stop the pipeline heals by itself.
    #[test]
    fn random_event_orders_never_lose_a_record_and_always_heal(
        seed in 1u64..u64::MAX,
        immediate in any::<bool>(),
        drills in proptest::collection::vec((0u8..4, any::<bool>(), 0u16..400), 0..4),
    ) {
        let policy = if immediate { RollbackPolicy::Immediate } else { RollbackPolicy::Alert };
        let mut sim = Sim::new(settings(policy), seed);
        let mut drills: Vec<_> = drills;
        drills.sort_by_key(|d| d.2);
        let mut next = 0;
        for i in 0..400u16 {
            while next < drills.len() && drills[next].2 == i {
                let (kind, on_b, _) = drills[next];
                let worker = if on_b { WorkerId::B } else { WorkerId::A };
                let drill = match kind {
                    0 => Drill::Fault("flip:ram:0x0010:3".into()),
                    1 => Drill::Fault("stall:7".into()),
                    2 => Drill::Stall(Duration::from_secs(30)),
                    _ => Drill::Crash,
                };
                sim.drill(worker, drill);
                next += 1;
            }
            if sim.random(3) == 0 {
                let n = sim.random(4);
                sim.offer(n);
            }
            sim.step();
            prop_assert!(sim.pipeline.accounting().balanced(), "{:?}", sim.pipeline.accounting());
        }
        // Nothing new goes wrong from here; the alert (or the policy) must bring it back.
        sim.settle(Duration::from_secs(600));
        let status = sim.pipeline.status();
        prop_assert_eq!(status.mode, Mode::Normal, "{:?}", status);
        prop_assert!(!status.diverged);
        let a = sim.pipeline.accounting();
        prop_assert_eq!(a.received, sim.inputs_sent);
        prop_assert_eq!(a.unverified + a.in_dlq, 0);
        prop_assert_eq!(a.received, a.verified_direct + a.replayed_from_dlq, "{:?}", a);
    }
}
