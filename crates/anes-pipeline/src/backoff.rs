//! Retry delays: exponential backoff with full jitter (the delay is uniform between zero and the
//! exponential cap), from a seeded generator so tests replay exactly.

use std::time::Duration;

/// Exponential backoff with full jitter.
#[derive(Debug, Clone)]
pub struct Backoff {
    base: Duration,
    cap: Duration,
    rng: SplitMix64,
    jitter: bool,
}

impl Backoff {
    /// Delays up to `base · 2^attempt`, never above `cap`; `seed` fixes the jitter.
    pub fn new(base: Duration, cap: Duration, seed: u64) -> Backoff {
        Backoff { base, cap, rng: SplitMix64(seed), jitter: true }
    }

    /// The same delays without jitter (`min(cap, base · 2^attempt)` exactly): what a herd of clients
    /// that lost their server together does. For comparison in tests only.
    pub fn without_jitter(mut self) -> Backoff {
        self.jitter = false;
        self
    }

    /// The delay before retry number `attempt` (0 for the first retry).
    pub fn delay(&mut self, attempt: u32) -> Duration {
        let ceiling =
            self.base.saturating_mul(1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX)).min(self.cap);
        let nanos = ceiling.as_nanos().min(u128::from(u64::MAX)) as u64;
        if nanos == 0 {
            return Duration::ZERO;
        }
        if !self.jitter {
            return ceiling;
        }
        Duration::from_nanos(self.rng.next() % (nanos + 1))
    }
}

impl Backoff {
    /// A delay between half of `interval` and `interval`, uniformly: a probe's, which does not grow
    /// with the attempts (many pipelines probing one worker do not probe it at the same instants).
    pub fn probe(&mut self, interval: Duration) -> Duration {
        let nanos = interval.as_nanos().min(u128::from(u64::MAX)) as u64;
        let half = nanos / 2;
        Duration::from_nanos(half + self.rng.next() % (nanos - half + 1))
    }
}

/// A small deterministic generator (SplitMix64): enough for jitter, never for secrets.
#[derive(Debug, Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_stay_under_the_exponential_cap_and_vary() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_secs(5), 7);
        let mut seen = std::collections::BTreeSet::new();
        for attempt in 0..40 {
            let d = b.delay(attempt);
            let cap =
                Duration::from_millis(100).saturating_mul(1 << attempt.min(31)).min(Duration::from_secs(5));
            assert!(d <= cap, "attempt {attempt}: {d:?} > {cap:?}");
            seen.insert(d);
        }
        assert!(seen.len() > 30, "full jitter varies");
        let mut again = Backoff::new(Duration::from_millis(100), Duration::from_secs(5), 7);
        let mut first = Backoff::new(Duration::from_millis(100), Duration::from_secs(5), 7);
        assert_eq!(again.delay(3), first.delay(3), "seeded");
    }
}
