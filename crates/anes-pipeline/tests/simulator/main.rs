//! The pipeline's rules driven by the simulator ([`anes_fixtures::sim::Sim`]) with real consoles:
//! rollback under both policies, the comparison, drift, crashes, draining, checkpoints, pushes,
//! fencing and flow control, silence, regions, and crashes at every action boundary.

use std::time::Duration;

use anes_core::movie::FrameInput;
use anes_fixtures::sim::*;
use anes_fixtures::tiny_rom;
use anes_pipeline::protocol::WorkerCommand;
use anes_pipeline::worker::WorkerId;
use anes_pipeline::*;
use proptest::prelude::*;

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

mod crash;
mod issue30;
mod regions;
mod rollback_backoff;
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
