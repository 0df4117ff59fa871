//! Shared by the operations benches: feeding a push pipeline one batch and waiting until its workers
//! verified it, and the median of interleaved rounds.

use std::time::{Duration, Instant};

use anes_core::movie::FrameInput;
use anes_ops::metrics::Metrics;
use anes_ops::runtime::{Control, PipelineHandle};

/// Pushes `inputs` as records `first_seq..` to the pipeline behind `handle` and waits (at most 120 s)
/// until `metrics` counts them verified; returns the next sequence number and the time taken.
pub fn push_and_wait(
    handle: &PipelineHandle,
    metrics: &Metrics,
    first_seq: u64,
    inputs: Vec<FrameInput>,
) -> (u64, Duration) {
    let started = Instant::now();
    let frames = inputs.len() as u64;
    let (reply, answer) = tokio::sync::oneshot::channel();
    handle.control.send(Control::Push { first_seq, inputs, reply }).expect("the pipeline runs");
    let outcome = answer.blocking_recv().expect("an answer").expect("no sequence gap");
    assert_eq!(outcome.accepted, frames, "the pipeline took the whole batch: {outcome:?}");
    let deadline = started + Duration::from_secs(120);
    while metrics.frames_verified(&handle.id) < outcome.next_seq {
        assert!(Instant::now() < deadline, "{frames} frames not verified within 120 s");
        // 1 ms: at most 0.1% of a batch late, and few wake-ups to count as the pipeline's CPU time.
        std::thread::sleep(Duration::from_millis(1));
    }
    (outcome.next_seq, started.elapsed())
}

/// The median of `samples` (sorted in place).
pub fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Rounds of interleaved measurement (`ANES_BENCH_ROUNDS`, default `default`), or `None` when
/// criterion only lists or tests the benchmarks.
pub fn interleaved_rounds(default: usize) -> Option<usize> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--test" || a == "--list") {
        return None;
    }
    Some(std::env::var("ANES_BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(default).max(1))
}

/// CPU time this process has used so far (user + system, every thread, finished ones included), from
/// `/proc/self/stat`: what a round costs in work, which a loaded machine does not inflate the way it
/// inflates wall time. `None` where `/proc` is not there.
pub fn process_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces, so split after its closing parenthesis):
    // state is field 3, utime field 14 and stime field 15, in clock ticks (USER_HZ, 100 on Linux).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}
