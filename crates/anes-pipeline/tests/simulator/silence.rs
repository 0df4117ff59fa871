//! Workers that go quiet or cannot be reached (issue 25's network faults, in the simulator): a worker
//! that owes records and says nothing for the step timeout is isolated and replaced, an idle one is
//! left alone, and attempts that cannot reach a worker retry until it is back instead of giving up.

use super::*;

fn quick_timeout(policy: RollbackPolicy) -> PipelineSettings {
    PipelineSettings { step_timeout: Duration::from_secs(5), ..settings(policy) }
}

#[test]
fn a_worker_silent_past_the_step_timeout_is_isolated_and_replaced() {
    let mut sim = Sim::new(quick_timeout(RollbackPolicy::Alert), 21);
    sim.offer(20);
    sim.settle(Duration::from_secs(1));
    // B stops answering (alive, its connection open: what a partition looks like from here).
    sim.drill(WorkerId::B, Drill::Stall(Duration::from_secs(600)));
    sim.settle(Duration::from_millis(0));
    let start = sim.now;
    let mut isolated_after = None;
    while sim.now - start < Duration::from_secs(8) {
        sim.offer(1);
        sim.settle(Duration::from_millis(0));
        sim.advance(Duration::from_millis(100));
        if isolated_after.is_none() && !sim.pipeline.status().incidents.is_empty() {
            isolated_after = Some(sim.now - start);
        }
    }
    let after = isolated_after.expect("the silent worker was isolated");
    // Silent from its last reply (the stall's acknowledgement, at `start`) for the step timeout, give
    // or take the 100 ms ticks and the first record it was sent after that.
    assert!(
        after >= Duration::from_secs(5) && after <= Duration::from_millis(5300),
        "isolated after {after:?}"
    );
    sim.settle(Duration::from_secs(10));
    let status = sim.pipeline.status();
    assert_eq!(status.incidents[0].kind, "worker_silent", "{:?}", status.incidents);
    assert_eq!(status.incidents[0].suspects, Some(vec![WorkerId::B]));
    assert_eq!((status.workers[0].restarts, status.workers[1].restarts), (0, 1), "B alone was replaced");
    assert_eq!(status.mode, Mode::Normal);
    assert_eq!(sim.alerts_sent, 0, "healed before the drift alert's 10 s");
    assert_nothing_lost(&sim);
}

#[test]
fn a_quiet_worker_that_owes_nothing_is_not_silent() {
    let mut sim = Sim::new(quick_timeout(RollbackPolicy::Alert), 22);
    sim.offer(20);
    sim.settle(Duration::from_secs(1));
    sim.drill(WorkerId::B, Drill::Stall(Duration::from_secs(600)));
    sim.settle(Duration::from_millis(0));
    // No input for a minute: nothing is owed, so nothing is wrong.
    for _ in 0..600 {
        sim.advance(Duration::from_millis(100));
    }
    let status = sim.pipeline.status();
    assert!(status.incidents.is_empty(), "{:?}", status.incidents);
    assert_eq!(status.mode, Mode::Normal);
}

#[test]
fn attempts_that_cannot_reach_a_worker_retry_past_max_attempts_until_it_is_back() {
    let mut sim = Sim::new(quick_timeout(RollbackPolicy::Immediate), 23);
    sim.offer(30);
    sim.settle(Duration::from_secs(1));
    // A dies and its host cannot be reached for ten minutes (a partition).
    sim.unreachable[0] = true;
    sim.drill(WorkerId::A, Drill::Crash);
    for _ in 0..6000 {
        sim.offer(1);
        sim.settle(Duration::from_millis(0));
        sim.advance(Duration::from_millis(100));
        assert_ne!(sim.pipeline.status().phase, "gave_up", "gave up on an unreachable worker");
    }
    let status = sim.pipeline.status();
    let max_attempts = u64::from(quick_timeout(RollbackPolicy::Immediate).max_attempts);
    // Probed every 500 ms, capped by nothing: ten minutes of them, none a failed rollback.
    let probes = sim.pipeline.counters().reconnect_probes;
    assert!(probes > 2 * max_attempts, "{probes} probes");
    assert_eq!(status.rollbacks_failed, 0, "{status:?}");
    assert_eq!(status.mode, Mode::ReadOnly);
    assert!(status.accounting.in_dlq > 5000, "{:?}", status.accounting);
    // A is back: the next probe (every 500 ms while unreachable) restores and replays.
    sim.unreachable[0] = false;
    sim.settle(Duration::from_secs(60));
    let status = sim.pipeline.status();
    assert_eq!(status.mode, Mode::Normal, "{status:?}");
    assert_nothing_lost(&sim);
}

#[test]
fn attempts_that_reach_a_failing_worker_give_up_after_max_attempts_the_unreachable_ones_not_counted() {
    let settings = quick_timeout(RollbackPolicy::Immediate);
    let max_attempts = u64::from(settings.max_attempts);
    let mut sim = Sim::new(settings, 24);
    sim.offer(30);
    sim.settle(Duration::from_secs(1));
    // B cannot be reached for the first attempts, then is reached and crashes every time it loads.
    sim.unreachable[1] = true;
    sim.drill(WorkerId::B, Drill::Crash);
    while sim.pipeline.counters().reconnect_probes < 2 {
        sim.settle(Duration::from_millis(0));
        sim.advance(Duration::from_millis(100));
    }
    sim.unreachable[1] = false;
    sim.dies_after_load[1] = true;
    for _ in 0..3000 {
        sim.settle(Duration::from_millis(0));
        sim.advance(Duration::from_millis(100));
    }
    let status = sim.pipeline.status();
    assert_eq!(status.phase, "gave_up", "{status:?}");
    // The unreachable attempts were probes; only the max_attempts that reached B failed.
    assert_eq!(status.rollbacks_failed, max_attempts, "{status:?}");
}
