//! The rollback's retries wait with full jitter under ceilings that start at the base (0.5 s, as
//! docs/OPERATIONS.md says) and double per attempt up to the cap.

use super::*;

/// The delays before the retries of one incident whose every attempt reaches a worker that then
/// dies, by the attempt that failed (1 first).
fn retry_delays(seed: u64, max_attempts: u32) -> Vec<(u32, Duration)> {
    let base = settings(RollbackPolicy::Immediate);
    let mut settings = PipelineSettings { max_attempts, ..base };
    settings.retry.2 = seed;
    let mut sim = Sim::new(settings, 31);
    sim.offer(30);
    sim.settle(Duration::from_secs(1));
    sim.dies_after_load[1] = true;
    sim.drill(WorkerId::B, Drill::Crash);
    let mut delays = Vec::new();
    for _ in 0..2000 {
        sim.settle(Duration::from_millis(0));
        sim.advance(Duration::from_millis(10));
        delays.extend(sim.pipeline.take_notices().filter_map(|n| match n {
            Notice::RollbackRetrying { attempt, retry_in, .. } => Some((attempt, retry_in)),
            _ => None,
        }));
        if sim.pipeline.status().phase == "gave_up" {
            return delays;
        }
    }
    panic!("seed {seed}: the incident never gave up; retries so far {delays:?}");
}

/// The auditor's log: the first retry waited 0.968 s, above the documented 0.5 s base: attempt 1
/// was passed to the backoff as retry number 1, whose ceiling is twice the base.
#[test]
fn the_first_retry_s_ceiling_is_the_base_and_each_next_one_doubles() {
    let base = PipelineSettings::new("p").retry.0;
    assert_eq!(base, Duration::from_millis(500), "docs/OPERATIONS.md: 0.5 s base");
    let ceilings = [base, base * 2, base * 4, base * 8];
    let mut longest = [Duration::ZERO; 4];
    for seed in 0..16 {
        let delays = retry_delays(seed, 5);
        let attempts: Vec<u32> = delays.iter().map(|d| d.0).collect();
        assert_eq!(attempts, [1, 2, 3, 4], "seed {seed}: four retries before the fifth attempt gives up");
        for (i, (_, delay)) in delays.into_iter().enumerate() {
            assert!(delay <= ceilings[i], "seed {seed}, retry {}: {delay:?} above {:?}", i + 1, ceilings[i]);
            longest[i] = longest[i].max(delay);
        }
    }
    // Full jitter over sixteen seeds reaches past the previous ceiling: the ceilings do grow.
    for i in 1..4 {
        assert!(longest[i] > ceilings[i - 1], "retry {}: longest {:?}", i + 1, longest[i]);
    }
}
