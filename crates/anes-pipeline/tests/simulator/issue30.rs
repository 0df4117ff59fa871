//! Regression tests of issue 30's findings: received and refused counts under a full disk, fencing,
//! stalls, drift incidents and the drift gauge during a replay.

use anes_pipeline::storage::{CommitFailure, JournalSink};

use super::*;

/// The journal of a full disk: every commit fails while `failing` is set.
#[derive(Debug)]
struct FailingJournal {
    failing: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl JournalSink for FailingJournal {
    fn append(&mut self, _seq: u64, _input: FrameInput) {}
    fn commit(&mut self) -> Result<(), CommitFailure> {
        if self.failing.load(std::sync::atomic::Ordering::Relaxed) {
            Err(CommitFailure { store: None, message: "seg-0.ajnl: No space left on device".into() })
        } else {
            Ok(())
        }
    }
    fn release_before(&mut self, _seq: u64) {}
}

/// Advances the clock until intake takes records again after a failed commit's backoff (at most
/// the store's default cap, 30 s).
fn wait_out_the_journal_backoff(sim: &mut Sim) {
    let start = sim.now;
    while sim.pipeline.room() == 0 {
        assert!(sim.now - start <= Duration::from_secs(30), "the backoff ends within its cap");
        sim.advance(Duration::from_millis(100));
    }
}

/// Issue 30, item 4: with the disk full, `anes_records_received_total` counted the records it then
/// dropped (53,200 received against 5,200 accepted), and the refused counter counted every re-offer
/// of the same record by a replay.
#[test]
fn received_counts_what_was_stored_and_a_record_offered_again_is_refused_once() {
    let failing = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let storage = Box::new(FailingJournal { failing: std::sync::Arc::clone(&failing) });
    let mut sim = Sim::with_storage(Pipeline::new(settings(RollbackPolicy::Alert)), storage, 21);
    sim.settle(Duration::from_secs(1));
    // A replay offers records 0..10, the commit fails, it takes them back and offers them again
    // once the backoff has passed.
    for _ in 0..3 {
        wait_out_the_journal_backoff(&mut sim);
        for seq in 0..10 {
            sim.pipeline.offer_input(sim.now, sent(seq)).unwrap();
        }
        sim.pipeline.commit_input();
        sim.run_actions();
        assert_eq!(sim.pipeline.accounting().received, 0, "the ten records were dropped");
    }
    assert_eq!(sim.pipeline.counters().records_received, 0, "nothing was stored");
    assert_eq!(sim.pipeline.counters().refused_storage, 10, "ten records refused, each counted once");
    failing.store(false, std::sync::atomic::Ordering::Relaxed);
    wait_out_the_journal_backoff(&mut sim);
    sim.offer(10);
    sim.settle(Duration::from_secs(5));
    assert_eq!(sim.pipeline.counters().records_received, 10);
    assert_nothing_lost(&sim);

    // A producer that outruns the backlog: a refused batch counts every record it did not take,
    // and resending the same records counts none of them again.
    let mut sim = Sim::with_pipeline(
        Pipeline::new(PipelineSettings { backlog_capacity: 16, ..settings(RollbackPolicy::Alert) }),
        22,
    );
    sim.settle(Duration::from_secs(1));
    let batch: Vec<FrameInput> = (0..40).map(sent).collect();
    let first = sim.push(0, &batch).unwrap();
    assert_eq!((first.accepted, first.next_seq), (16, 16));
    assert_eq!(first.refused, Some(Refusal::BacklogFull { capacity: 16 }));
    assert_eq!(sim.pipeline.counters().refused_backlog, 24);
    let again = sim.push(16, &batch[16..]).unwrap();
    assert_eq!(again.accepted, 0);
    assert_eq!(sim.pipeline.counters().refused_backlog, 24, "a resent record is not refused twice");
    assert_eq!(sim.pipeline.counters().records_received, 16);
}

/// Issue 30, item 3: a fenced pipeline stops taking records and says so in its mode, readiness,
/// metrics and status; a store whose epoch fell below ours lost its data, which is not a takeover.
#[test]
fn a_fenced_pipeline_takes_nothing_and_a_store_that_lost_its_data_is_not_a_takeover() {
    let mut sim = Sim::with_pipeline(Pipeline::new(settings(RollbackPolicy::Alert)), 23);
    sim.offer(20);
    sim.settle(Duration::from_secs(2));
    sim.handle(Event::Store(StoreEvent::Fenced { writer: 1, current: 2 }));
    let status = sim.pipeline.status();
    assert_eq!(status.mode, Mode::Fenced);
    assert_eq!(status.fence, Some(Fence::TakenOver { ours: 1, current: 2 }));
    assert_eq!(status.store.fenced_by_epoch, Some(2));
    assert!(status.not_ready.as_deref().is_some_and(|r| r.contains("another service took")), "{status:?}");
    assert_eq!(sim.pipeline.room(), 0, "a source that offers what fits offers nothing");
    assert_eq!(sim.pipeline.counters().mode, Mode::Fenced);
    for _ in 0..1000 {
        assert_eq!(sim.pipeline.offer_input(sim.now, sent(20)), Err(Refusal::Fenced { current: 2 }));
    }
    assert_eq!(sim.pipeline.counters().refused_fenced, 1, "one record, offered 1,000 times");
    // It stopped on purpose: not a stall, however long it waits.
    sim.pipeline.expect_input(true);
    for _ in 0..30 {
        sim.advance(Duration::from_secs(1));
    }
    assert!(!sim.pipeline.is_stalled());
    assert_eq!(sim.persisted, sim.stored.len() as u32);
    let stored = sim.stored.len();
    sim.handle(Event::Drain);
    sim.settle(Duration::from_secs(5));
    assert_eq!(sim.stored.len(), stored, "a fenced pipeline hands no checkpoint to the store");
    let mut sim = Sim::with_pipeline(Pipeline::new(settings(RollbackPolicy::Alert)), 24);
    sim.offer(20);
    sim.settle(Duration::from_secs(2));
    // redis-server restarted without persistence: the epoch key is gone, the store says 0.
    sim.handle(Event::Store(StoreEvent::Fenced { writer: 3, current: 0 }));
    let status = sim.pipeline.status();
    assert_eq!(status.mode, Mode::Fenced);
    assert_eq!(status.fence, Some(Fence::StoreLost { ours: 3, current: 0 }));
    assert_eq!((status.store.fenced_by_epoch, status.store.lost_at_epoch), (None, Some(0)));
    assert!(
        status.not_ready.as_deref().is_some_and(|r| r.contains("lost the pipeline's data")),
        "{status:?}"
    );
    let refusal = sim.pipeline.offer_input(sim.now, sent(20)).unwrap_err();
    assert_eq!(refusal, Refusal::StoreLost { current: 0, ours: 3 });
    assert!(!refusal.to_string().contains("took this pipeline over"), "{refusal}");
    assert_eq!((sim.pipeline.counters().refused_store_lost, sim.pipeline.counters().refused_fenced), (1, 0));
}

/// Issue 30, item 1: a pipeline that should make progress and does not is stalled, visibly (status,
/// readiness, `anes_pipeline_stalled`), whether its source stopped producing or its workers stopped
/// working; an idle push pipeline is not stalled and its checkpoint does not age.
#[test]
fn no_progress_while_work_waits_is_a_stall_and_idleness_is_not() {
    let mut sim = Sim::with_pipeline(Pipeline::new(settings(RollbackPolicy::Alert)), 25);
    sim.offer(16);
    sim.settle(Duration::from_secs(2));
    assert_eq!(sim.pipeline.status().checkpoint.map(|c| c.seq), Some(16));
    // Idle for a minute with nothing expected: neither stalled nor an ageing checkpoint.
    for _ in 0..60 {
        sim.advance(Duration::from_secs(1));
    }
    let status = sim.pipeline.status();
    assert!(!status.stalled && status.not_ready.is_none(), "{status:?}");
    assert!(status.checkpoint.as_ref().unwrap().age_seconds < 1.0, "{status:?}");
    assert!(sim.pipeline.counters().checkpoint_age < 1.0, "{}", sim.pipeline.counters().checkpoint_age);

    // A replay that should be producing and is not (the restart bug of item 1).
    sim.pipeline.expect_input(true);
    for _ in 0..9 {
        sim.advance(Duration::from_secs(1));
    }
    assert!(!sim.pipeline.is_stalled(), "not before the stall timeout");
    sim.advance(Duration::from_secs(2));
    let status = sim.pipeline.status();
    assert!(status.stalled, "{status:?}");
    assert!(status.not_ready.as_deref().is_some_and(|r| r.starts_with("stalled")), "{status:?}");
    assert_eq!(sim.pipeline.counters().stalled, 1);
    assert_eq!(status.mode, Mode::Normal, "the mode alone did not show it");
    sim.offer(4);
    sim.settle(Duration::from_secs(2));
    assert!(!sim.pipeline.is_stalled());
    assert_eq!(sim.pipeline.counters().stalled, 0);
    sim.pipeline.expect_input(false);

    // Both workers hang: no drift, no divergence, so the design's alert stays quiet; the stall shows.
    sim.drill(WorkerId::A, Drill::Stall(Duration::from_secs(600)));
    sim.drill(WorkerId::B, Drill::Stall(Duration::from_secs(600)));
    sim.settle(Duration::from_millis(0));
    sim.offer(10);
    for _ in 0..120 {
        sim.settle(Duration::from_millis(0));
        sim.advance(Duration::from_millis(100));
    }
    let status = sim.pipeline.status();
    assert_eq!((status.drift_records, status.diverged, sim.alerts_sent), (0, false, 0), "{status:?}");
    assert!(status.stalled, "{status:?}");
    assert_eq!(sim.pipeline.counters().stalled, 1);
}

/// Issue 30, item 5: a rollback the drift alert started is an incident like a divergence's, naming
/// the worker that fell behind, with its outcome.
#[test]
fn a_rollback_the_drift_alert_started_is_an_incident_naming_the_laggard() {
    let mut sim = Sim::new(settings(RollbackPolicy::Alert), 26);
    sim.offer(20);
    sim.settle(Duration::from_secs(1));
    sim.drill(WorkerId::B, Drill::Stall(Duration::from_secs(600)));
    for _ in 0..200 {
        sim.offer(1);
        sim.settle(Duration::from_millis(0));
        sim.advance(Duration::from_millis(100));
    }
    sim.settle(Duration::from_secs(5));
    assert_eq!(sim.alerts_sent, 1);
    let status = sim.pipeline.status();
    assert_eq!(status.rollbacks_succeeded, 1);
    let incident = status.incidents.first().expect("the rollback is an incident");
    assert_eq!(incident.kind, "drift", "{incident:?}");
    assert_eq!(incident.suspects, Some(vec![WorkerId::B]));
    assert!(
        incident.message.contains("worker b is ") && incident.message.contains(" records behind worker a"),
        "{incident:?}"
    );
    assert_eq!(incident.rollback.as_deref(), Some("success"));
    assert!(incident.healed_after_seconds.is_some());
    assert_nothing_lost(&sim);
}

/// Issue 30, item 9: a dead-letter queue replay feeds a backlog as fast as the workers go; the drift
/// gauge must not sit above the alert's threshold for it (it reached the drift window, 90-120).
#[test]
fn a_dlq_replay_cannot_hold_the_drift_gauge_above_the_alert_threshold() {
    let mut sim = Sim::with_pipeline(Pipeline::new(settings(RollbackPolicy::Immediate)), 27);
    sim.offer(40);
    sim.settle(Duration::from_secs(2));
    sim.drill(WorkerId::B, Drill::Fault("flip:ram:0x0010:3".into()));
    sim.offer(5);
    let mut steps = 0;
    while sim.pipeline.mode() == Mode::Normal {
        sim.step();
        steps += 1;
        assert!(steps < 100_000, "no divergence");
    }
    sim.offer(300);
    assert!(sim.pipeline.accounting().in_dlq >= 300);
    // Until the queue's records are in the log: the restore verified, the pipeline normal again at
    // once, with the replayed records still to run.
    while sim.pipeline.accounting().in_dlq > 0 || sim.pipeline.mode() != Mode::Normal {
        sim.step();
        steps += 1;
        assert!(steps < 200_000, "the rollback never reached the replay");
    }
    assert!(sim.pipeline.accounting().unverified >= 300, "{:?}", sim.pipeline.accounting());
    // Worker A gets the CPU, B waits: A runs ahead as far as the replay lets it.
    let mut max_drift = 0;
    for _ in 0..2000 {
        sim.work(0);
        sim.deliver(0);
        max_drift = max_drift.max(sim.pipeline.counters().drift);
    }
    assert!(max_drift > 0, "A ran ahead");
    assert!(max_drift <= ALERT_DRIFT_THRESHOLD as i64, "the replay alone drifted {max_drift}");
    sim.inputs_sent = sim.pipeline.accounting().received;
    sim.settle(Duration::from_secs(30));
    assert_eq!(sim.pipeline.mode(), Mode::Normal);
    assert_nothing_lost(&sim);
}
