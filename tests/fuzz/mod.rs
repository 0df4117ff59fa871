//! The fuzzing harness of `tests/fuzz_parsers.rs`: a global allocator that measures each case's peak
//! heap use, a per-case time limit, the proptest configuration, and the mutations of valid inputs.
#![allow(unsafe_code)]

pub mod mutate;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use proptest::test_runner::{Config, RngSeed, TestCaseError};

/// Cases per property unless `ANES_FUZZ_CASES` says otherwise: enough for CI to run every property
/// in a few seconds.
const DEFAULT_CASES: u32 = 512;
/// The seed unless `ANES_FUZZ_SEED` gives one (a number, or `random`): CI runs the same cases every
/// time, so a red run can be repeated.
const DEFAULT_SEED: u64 = 0x616E_6573_6675_7A7A;
/// The most one case may take. Loose: a case normally takes microseconds to a few milliseconds, so
/// only a runaway loop or an allocation of gigabytes gets near it.
pub const CASE_TIME_LIMIT: Duration = Duration::from_secs(1);

/// The proptest configuration of every fuzz property.
pub fn config() -> Config {
    let cases = std::env::var("ANES_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(DEFAULT_CASES);
    let seed = match std::env::var("ANES_FUZZ_SEED").ok().as_deref() {
        None => DEFAULT_SEED,
        Some("random") => {
            let nanos =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            let seed = nanos.as_nanos() as u64;
            eprintln!("fuzz seed {seed} (ANES_FUZZ_SEED={seed} repeats this run)");
            seed
        }
        Some(text) => text.parse().expect("ANES_FUZZ_SEED is a number or `random`"),
    };
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        // The seed reproduces a failure; no regression files are written into the source tree.
        failure_persistence: None,
        max_shrink_iters: 512,
        ..Config::default()
    }
}

/// Counts the live heap bytes of each thread and the most it reached, forwarding every call to the
/// system allocator. Counters are per thread so parallel tests do not disturb each other.
struct PeakAllocator;

thread_local! {
    static LIVE_BYTES: Cell<isize> = const { Cell::new(0) };
    static PEAK_BYTES: Cell<isize> = const { Cell::new(0) };
}

fn account(delta: isize) {
    let _ = LIVE_BYTES.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK_BYTES.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is forwarded unchanged to the system allocator; the bookkeeping only touches
// const-initialised thread-locals without destructors, which never allocate.
unsafe impl GlobalAlloc for PeakAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        account(layout.size() as isize);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        account(layout.size() as isize);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        account(-(layout.size() as isize));
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted as the moment both blocks may exist, as when a vector grows by copying.
        account(new_size as isize);
        account(-(layout.size() as isize));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: PeakAllocator = PeakAllocator;

/// What one piece of work cost.
#[derive(Debug, Clone, Copy)]
pub struct Cost {
    /// The most heap it held at once, beyond what its thread held when it started.
    pub peak_bytes: usize,
    /// Wall time.
    pub elapsed: Duration,
}

/// Runs `work` on a thread of its own and measures it; fails the case when it is still running after
/// [`CASE_TIME_LIMIT`] (the runaway thread is left behind: the test is failing anyway).
pub fn measured<R: Send + 'static>(
    what: &str,
    work: impl FnOnce() -> R + Send + 'static,
) -> Result<(R, Cost), TestCaseError> {
    measured_for(what, CASE_TIME_LIMIT, work)
}

/// [`measured`] with another bound: for work that emulates frames (power-on clears up to megabytes of
/// RAM a header declares, and the first digest reads them), which a loaded machine can stretch past
/// [`CASE_TIME_LIMIT`] without anything running away.
pub fn measured_for<R: Send + 'static>(
    what: &str,
    limit: Duration,
    work: impl FnOnce() -> R + Send + 'static,
) -> Result<(R, Cost), TestCaseError> {
    let (done, result) = mpsc::channel();
    std::thread::spawn(move || {
        let start = LIVE_BYTES.with(Cell::get);
        PEAK_BYTES.with(|peak| peak.set(start));
        let began = Instant::now();
        let value = work();
        let elapsed = began.elapsed();
        let peak_bytes = (PEAK_BYTES.with(Cell::get) - start).max(0) as usize;
        let _ = done.send((value, Cost { peak_bytes, elapsed }));
    });
    match result.recv_timeout(limit) {
        Ok(outcome) => Ok(outcome),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            Err(TestCaseError::fail(format!("{what} still running after {limit:?}")))
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(TestCaseError::fail(format!("{what} panicked"))),
    }
}

/// Fails the case when `cost` held more heap than `limit` bytes, or took longer than the time limit.
pub fn within(what: &str, cost: Cost, input_len: usize, limit: usize) -> Result<(), TestCaseError> {
    if cost.peak_bytes > limit {
        return Err(TestCaseError::fail(format!(
            "{what} held {} bytes of heap for a {input_len}-byte input (limit {limit})",
            cost.peak_bytes
        )));
    }
    if cost.elapsed > CASE_TIME_LIMIT {
        return Err(TestCaseError::fail(format!("{what} took {:?}", cost.elapsed)));
    }
    Ok(())
}
