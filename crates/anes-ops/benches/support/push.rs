//! Shared by the operations benches: feeding a push pipeline one batch and waiting until its workers
//! verified it, and the median of interleaved rounds.

use std::time::{Duration, Instant};

use anes_core::movie::FrameInput;
use anes_ops::metrics::Metrics;
use anes_ops::service::{Control, PipelineHandle};

/// One batch pushed and verified: when the pipeline answered (its input journaled) and when the
/// last record was verified, both from the push.
#[derive(Debug, Clone, Copy)]
pub struct Pushed {
    pub next_seq: u64,
    pub accepted_after: Duration,
    pub verified_after: Duration,
}

/// Pushes `inputs` as records `first_seq..` to the pipeline behind `handle` and waits (at most 120 s)
/// until `metrics` counts them verified (see [`wait_verified`]).
pub fn push_and_wait(
    handle: &PipelineHandle,
    metrics: &Metrics,
    first_seq: u64,
    inputs: Vec<FrameInput>,
) -> Pushed {
    let started = Instant::now();
    let frames = inputs.len() as u64;
    let (reply, answer) = tokio::sync::oneshot::channel();
    handle.control.send(Control::Push { first_seq, inputs, reply }).expect("the pipeline runs");
    let outcome = answer.blocking_recv().expect("an answer").expect("no sequence gap");
    assert_eq!(outcome.accepted, frames, "the pipeline took the whole batch: {outcome:?}");
    let accepted_after = started.elapsed();
    wait_verified(metrics, &handle.id, outcome.next_seq - frames, outcome.next_seq, started);
    Pushed { next_seq: outcome.next_seq, accepted_after, verified_after: started.elapsed() }
}

/// Waits (at most 120 s from `started`) until `metrics` counts `target` records of pipeline `id`
/// verified; `from` were verified at `started`.
///
/// The wait must not cost the pipeline what it measures: polling every millisecond wakes this thread
/// about 600 times in a 600-frame batch, and on two cores each wake-up takes a core from a worker. So
/// it sleeps most of the time the remaining records should take at the rate seen so far, then polls:
/// a few dozen wake-ups per batch, and at most about a quarter of a millisecond late.
pub fn wait_verified(metrics: &Metrics, id: &str, from: u64, target: u64, started: Instant) {
    let deadline = started + Duration::from_secs(120);
    loop {
        let verified = metrics.frames_verified(id);
        if verified >= target {
            return;
        }
        assert!(Instant::now() < deadline, "{} records not verified within 120 s", target - from);
        let done = verified.saturating_sub(from);
        let left = target - verified;
        let nap = if done == 0 {
            Duration::from_millis(1)
        } else {
            // Three quarters of the estimated remainder, never under a quarter of a millisecond (by
            // then the last records are running and a core is free for this thread).
            let per_record = started.elapsed() / u32::try_from(done).unwrap_or(u32::MAX);
            (per_record * u32::try_from(left).unwrap_or(u32::MAX) * 3 / 4).max(Duration::from_micros(250))
        };
        std::thread::sleep(nap);
    }
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

/// CPU time this process has used so far (every thread, finished ones included), from
/// `CLOCK_PROCESS_CPUTIME_ID`: what a round costs in work, which a loaded machine does not inflate the
/// way it inflates wall time. Nanosecond resolution (`/proc/self/stat` counts 10 ms ticks, more than
/// 1% of a round).
#[allow(unsafe_code)] // One libc call; std has no process CPU clock.
pub fn process_cpu_time() -> Option<Duration> {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid, writable timespec for the duration of the call.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    (status == 0).then(|| Duration::new(now.tv_sec as u64, now.tv_nsec as u32))
}
