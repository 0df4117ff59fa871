//! The checkpoint writer: a thread that owns a pipeline's [`CheckpointStore`] and writes its verified
//! checkpoints off the pipeline's hot path. The pipeline hands over a checkpoint and carries on; when
//! the store is slower than checkpoints arrive, only the newest waiting one is written (latest wins), so
//! nothing queues up without bound.
//!
//! A store that fails is retried with exponential backoff and full jitter ([`Backoff`]), reconnecting
//! before each retry; each retry counts in `anes_retries_total{operation="store"}`, and a write given up
//! after its last attempt in `anes_retry_give_ups_total{operation="store"}` (the next checkpoint tries
//! afresh). A write refused by the fencing rule ends the writer: it reports [`WriterEvent::Fenced`] and
//! writes nothing more.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{CheckpointHeader, CheckpointStore, HeldEpoch, Persisted, StoreError};
use crate::backoff::Backoff;
use crate::metrics::StoreMetrics;

/// A verified checkpoint to write.
#[derive(Debug, Clone)]
pub struct PendingCheckpoint {
    /// Sequence number of the next record.
    pub frame: u64,
    /// CPU cycle at the boundary.
    pub cpu_cycle: u64,
    /// The state hash both workers agreed on at `frame`.
    pub state_hash: [u8; 32],
    /// The console snapshot at `frame`, shared with the pipeline's checkpoint ring.
    pub snapshot: Arc<Vec<u8>>,
}

/// Retry settings of a writer.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Delay ceiling of the first retry (doubling after each).
    pub base: Duration,
    /// Largest delay ceiling.
    pub cap: Duration,
    /// Attempts of one write (the first included) before it is given up.
    pub attempts: u32,
    /// Jitter seed. The service replaces the configuration's with one drawn from the operating
    /// system's entropy per process and pipeline (`service::jitter_seed`): a shared constant made
    /// every writer that lost its store retry at the same instants. Tests keep a fixed one.
    pub seed: u64,
    /// Full jitter (always, except to show the herd in a test).
    pub jitter: bool,
}

impl Default for RetryPolicy {
    /// 2 s base, 30 s cap, 10 attempts (up to three minutes of retrying), full jitter. The base spreads
    /// the first retries of a herd: 50 writers that lost their server together retry within 2 s, about
    /// 2.5 per 100 ms (with a 1 s base, a 100 ms window holds more than a fifth of them a third of the
    /// time).
    fn default() -> RetryPolicy {
        RetryPolicy {
            base: Duration::from_secs(2),
            cap: Duration::from_secs(30),
            attempts: 10,
            seed: 0x5707e,
            jitter: true,
        }
    }
}

impl RetryPolicy {
    fn backoff(&self) -> Backoff {
        let backoff = Backoff::new(self.base, self.cap, self.seed);
        if self.jitter { backoff } else { backoff.without_jitter() }
    }
}

/// What a writer reports.
#[derive(Debug, Clone)]
pub enum WriterEvent {
    /// The epoch the writer writes with (after its takeover or a bump).
    Epoch(u64),
    /// A checkpoint is stored.
    Persisted(Persisted),
    /// A write failed and will be retried after `delay`.
    Retrying {
        /// Retry number, from 0.
        attempt: u32,
        /// Sleep before it.
        delay: Duration,
        /// The store's error for this attempt.
        error: String,
    },
    /// About to reconnect and retry (the moment of the retry).
    Reconnecting {
        /// Retry number, from 0.
        attempt: u32,
    },
    /// A write was given up after its last attempt.
    GaveUp {
        /// The checkpoint's frame.
        frame: u64,
        /// The last error.
        error: String,
    },
    /// What the store holds about the pipeline is damaged (its epoch is not a number, or at its
    /// maximum). Nothing more is written.
    Damaged {
        /// The error, for people.
        message: String,
    },
    /// The store refused a write by the fencing rule: another writer took over. Nothing more is written.
    Fenced {
        /// This writer's epoch.
        writer: u64,
        /// The store's.
        current: u64,
        /// The error, for people.
        message: String,
    },
}

#[derive(Debug, Default)]
struct Slot {
    pending: Option<PendingCheckpoint>,
    bump: bool,
    closing: bool,
    /// No one waits for the writer any more (dropped, or `finish` timed out): a write retrying stops.
    abandoned: bool,
    /// Set by the thread when it has nothing left to do after `closing`.
    done: bool,
    fenced: bool,
}

type Notify = Box<dyn Fn(WriterEvent) + Send>;

/// A pipeline's checkpoint writer thread.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use anes_ops::store::{CheckpointStore, FsStore};
/// use anes_ops::store::writer::{CheckpointWriter, PendingCheckpoint, RetryPolicy, WriterEvent};
/// let dir = std::env::temp_dir().join(format!("anes-doc-writer-{}", std::process::id()));
/// let mut store = FsStore::open(&dir, "p1", 4).unwrap();
/// let epoch = store.bump_epoch().unwrap();
/// let events = Arc::new(Mutex::new(Vec::new()));
/// let seen = Arc::clone(&events);
/// let writer = CheckpointWriter::start("p1", Box::new(store), anes_ops::store::HeldEpoch::new(epoch), RetryPolicy::default(),
///     anes_ops::metrics::StoreMetrics::detached(), Box::new(move |e| seen.lock().unwrap().push(e)));
/// writer.submit(PendingCheckpoint { frame: 60, cpu_cycle: 1, state_hash: [0; 32], snapshot: Arc::new(vec![1; 64]) });
/// assert!(writer.finish(std::time::Duration::from_secs(10)));
/// assert!(events.lock().unwrap().iter().any(|e| matches!(e, WriterEvent::Persisted(p) if p.frame == 60)));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct CheckpointWriter {
    shared: Arc<(Mutex<Slot>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for CheckpointWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointWriter").finish_non_exhaustive()
    }
}

impl CheckpointWriter {
    /// Starts the thread writing to `store` with the epoch `held` (obtained by the caller's takeover,
    /// shared with the pipeline's journal: a rollback's new epoch replaces it there too).
    pub fn start(
        pipeline: &str,
        store: Box<dyn CheckpointStore>,
        held: HeldEpoch,
        retry: RetryPolicy,
        metrics: StoreMetrics,
        notify: Notify,
    ) -> CheckpointWriter {
        let shared = Arc::new((Mutex::new(Slot::default()), Condvar::new()));
        metrics.epoch.set(held.get().min(i64::MAX as u64) as i64);
        let mut thread = Thread {
            pipeline: pipeline.to_string(),
            store,
            held,
            retry,
            backoff: retry.backoff(),
            metrics,
            notify,
            shared: Arc::clone(&shared),
        };
        let handle = std::thread::Builder::new()
            .name(format!("store-{pipeline}"))
            .spawn(move || thread.run())
            .expect("spawning the checkpoint writer thread");
        CheckpointWriter { shared, thread: Some(handle) }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.shared.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands over a checkpoint; it replaces one still waiting. Never blocks on the store.
    pub fn submit(&self, checkpoint: PendingCheckpoint) {
        let mut slot = self.slot();
        if slot.fenced || slot.closing {
            return;
        }
        slot.pending = Some(checkpoint);
        self.shared.1.notify_all();
    }

    /// Asks for a new epoch (a rollback): later writes carry it. Refused, and the writer fenced, when
    /// another writer took the pipeline over meanwhile ([`CheckpointStore::advance_epoch`]).
    pub fn bump_epoch(&self) {
        let mut slot = self.slot();
        slot.bump = true;
        self.shared.1.notify_all();
    }

    /// True once a write was refused by the fencing rule.
    pub fn is_fenced(&self) -> bool {
        self.slot().fenced
    }

    /// Writes what is waiting, then stops the thread; true when that finished within `timeout` (else
    /// the thread is left to end by itself).
    pub fn finish(mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        {
            let mut slot = self.slot();
            slot.closing = true;
            self.shared.1.notify_all();
            while !slot.done {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    slot.abandoned = true;
                    self.shared.1.notify_all();
                    return false;
                }
                slot = self.shared.1.wait_timeout(slot, left).unwrap_or_else(|p| p.into_inner()).0;
            }
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        true
    }
}

impl Drop for CheckpointWriter {
    fn drop(&mut self) {
        let mut slot = self.slot();
        slot.closing = true;
        slot.abandoned = true;
        slot.pending = None;
        self.shared.1.notify_all();
    }
}

struct Thread {
    pipeline: String,
    store: Box<dyn CheckpointStore>,
    held: HeldEpoch,
    retry: RetryPolicy,
    backoff: Backoff,
    metrics: StoreMetrics,
    notify: Notify,
    shared: Arc<(Mutex<Slot>, Condvar)>,
}

enum Work {
    Bump,
    Write(PendingCheckpoint),
}

impl Thread {
    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.shared.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn next(&self) -> Option<Work> {
        let mut slot = self.slot();
        loop {
            if slot.fenced {
                return None;
            }
            if slot.bump {
                slot.bump = false;
                return Some(Work::Bump);
            }
            if let Some(c) = slot.pending.take() {
                return Some(Work::Write(c));
            }
            if slot.closing {
                return None;
            }
            slot = self.shared.1.wait(slot).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn run(&mut self) {
        while let Some(work) = self.next() {
            match work {
                Work::Bump => self.bump(),
                Work::Write(c) => self.write(c),
            }
        }
        let mut slot = self.slot();
        slot.done = true;
        self.shared.1.notify_all();
    }

    /// Sleeps `delay`; false when the writer was abandoned meanwhile. A writer that is only closing
    /// keeps retrying: its last write is the final checkpoint, which `finish` waits for (a store that
    /// restarts during a shutdown still gets it).
    fn sleep(&self, delay: Duration) -> bool {
        let deadline = Instant::now() + delay;
        let mut slot = self.slot();
        loop {
            if slot.abandoned {
                return false;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            slot = self.shared.1.wait_timeout(slot, left).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    /// One failed attempt: counts it and sleeps before the next; false when the operation is given up.
    fn retry_after(&mut self, attempt: u32, error: &StoreError) -> bool {
        if attempt + 1 >= self.retry.attempts {
            self.metrics.give_ups.inc();
            return false;
        }
        let delay = self.backoff.delay(attempt);
        self.metrics.retries.inc();
        tracing::warn!(pipeline = %self.pipeline, attempt, delay_seconds = delay.as_secs_f64(), error = %error, "checkpoint store failed; retrying with backoff");
        (self.notify)(WriterEvent::Retrying { attempt, delay, error: error.to_string() });
        if !self.sleep(delay) {
            return false;
        }
        (self.notify)(WriterEvent::Reconnecting { attempt });
        let _ = self.store.reconnect();
        true
    }

    /// The store refused this writer by the fencing rule: it writes nothing more, and says so.
    fn fenced(&mut self, e: &StoreError) {
        let (writer, current) = match *e {
            StoreError::Fenced { writer, current, .. } | StoreError::EpochAhead { writer, current, .. } => {
                (writer, current)
            }
            _ => (self.held.get(), 0),
        };
        tracing::error!(pipeline = %self.pipeline, writer, current, error = %e, "fenced: another writer took the pipeline over; this service writes no more checkpoints for it");
        self.slot().fenced = true;
        (self.notify)(WriterEvent::Fenced { writer, current, message: e.to_string() });
    }

    /// The store's record of the pipeline is damaged: it writes nothing more, and says so.
    fn damaged(&mut self, e: &StoreError) {
        tracing::error!(pipeline = %self.pipeline, error = %e, "the store's record of the pipeline is damaged; this service writes no more checkpoints for it");
        self.slot().fenced = true;
        (self.notify)(WriterEvent::Damaged { message: e.to_string() });
    }

    /// A rollback's new epoch: only while this writer's epoch is still the store's (a writer that was
    /// taken over must not take the pipeline back by bumping past its successor).
    fn bump(&mut self) {
        let mut attempt = 0;
        loop {
            // Held while the store moves it: the journal never appends with the epoch being left.
            let mut held = self.held.lock();
            let from = *held;
            let result = self.store.advance_epoch(from);
            if let Ok(epoch) = result {
                *held = epoch;
            }
            drop(held);
            match result {
                Ok(epoch) => {
                    tracing::info!(pipeline = %self.pipeline, from, to = epoch, "store epoch bumped");
                    self.metrics.epoch.set(epoch.min(i64::MAX as u64) as i64);
                    (self.notify)(WriterEvent::Epoch(epoch));
                    return;
                }
                Err(e) if e.is_fenced() => return self.fenced(&e),
                Err(e @ StoreError::Damaged(_)) => return self.damaged(&e),
                Err(e) if e.is_retryable() && self.retry_after(attempt, &e) => attempt += 1,
                Err(e) => {
                    tracing::error!(pipeline = %self.pipeline, error = %e, "bumping the store epoch failed; writes keep the old epoch");
                    return;
                }
            }
        }
    }

    fn write(&mut self, mut checkpoint: PendingCheckpoint) {
        let mut attempt = 0;
        loop {
            let header = CheckpointHeader::for_payload(
                &self.pipeline,
                self.held.get(),
                checkpoint.frame,
                checkpoint.cpu_cycle,
                checkpoint.state_hash,
                &checkpoint.snapshot,
            );
            let started = Instant::now();
            let result = self.store.put(&header, &mut checkpoint.snapshot.as_slice());
            match result {
                Ok(persisted) => {
                    self.metrics.write_seconds.observe(started.elapsed().as_secs_f64());
                    self.metrics.writes_ok.inc();
                    tracing::debug!(pipeline = %self.pipeline, frame = persisted.frame, epoch = persisted.epoch, "checkpoint stored");
                    (self.notify)(WriterEvent::Persisted(persisted));
                    return;
                }
                Err(e) if e.is_fenced() => {
                    self.metrics.writes_fenced.inc();
                    return self.fenced(&e);
                }
                Err(e @ StoreError::Damaged(_)) => {
                    self.metrics.writes_invalid.inc();
                    return self.damaged(&e);
                }
                Err(e) if e.is_retryable() => {
                    if !self.retry_after(attempt, &e) {
                        self.metrics.writes_gave_up.inc();
                        tracing::error!(pipeline = %self.pipeline, frame = checkpoint.frame, attempts = attempt + 1, error = %e, "checkpoint write given up; the next checkpoint tries again");
                        (self.notify)(WriterEvent::GaveUp { frame: checkpoint.frame, error: e.to_string() });
                        return;
                    }
                    attempt += 1;
                    // A newer checkpoint that arrived meanwhile replaces this one.
                    if let Some(newer) = self.slot().pending.take() {
                        checkpoint = newer;
                    }
                }
                Err(e) => {
                    self.metrics.writes_invalid.inc();
                    tracing::error!(pipeline = %self.pipeline, frame = checkpoint.frame, error = %e, "checkpoint refused by the store");
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;
    use crate::store::{FsStore, Loaded};

    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "anes-writer-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn checkpoint(frame: u64) -> PendingCheckpoint {
        PendingCheckpoint {
            frame,
            cpu_cycle: frame,
            state_hash: [1; 32],
            snapshot: Arc::new(vec![frame as u8; 512]),
        }
    }

    /// An old primary that rolls back after a takeover, before it wrote anything, must not bump the
    /// epoch past its successor's (that would fence the successor and let the old one write again).
    #[test]
    fn a_taken_over_writer_cannot_take_the_pipeline_back_with_a_rollback() {
        let dir = temp_dir("takeback");
        let mut first = FsStore::open(&dir, "p", 4).unwrap();
        let e_old = first.bump_epoch().unwrap();
        let events = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&events);
        let old = CheckpointWriter::start(
            "p",
            Box::new(first),
            HeldEpoch::new(e_old),
            RetryPolicy::default(),
            StoreMetrics::detached(),
            Box::new(move |e| seen.lock().unwrap().push(e)),
        );
        // Its own rollback while it is current: the next epoch.
        old.bump_epoch();
        old.submit(checkpoint(60));
        let deadline = Instant::now() + Duration::from_secs(10);
        while !events.lock().unwrap().iter().any(|e| matches!(e, WriterEvent::Persisted(p) if p.frame == 60))
        {
            assert!(Instant::now() < deadline, "{:?}", events.lock().unwrap());
            std::thread::sleep(Duration::from_millis(5));
        }
        let e_mine = e_old + 1;
        assert!(events.lock().unwrap().iter().any(|e| matches!(e, WriterEvent::Epoch(n) if *n == e_mine)));
        // Another service takes over; the old one rolls back before its next write.
        let mut successor = FsStore::open(&dir, "p", 4).unwrap();
        let e_new = successor.bump_epoch().unwrap();
        assert_eq!(e_new, e_mine + 1);
        old.bump_epoch();
        old.submit(checkpoint(120));
        assert!(old.finish(Duration::from_secs(10)));
        let events = events.lock().unwrap();
        let fenced: Vec<_> = events.iter().filter(|e| matches!(e, WriterEvent::Fenced { .. })).collect();
        assert!(
            matches!(fenced.as_slice(), [WriterEvent::Fenced { writer, current, .. }] if *writer == e_mine && *current == e_new),
            "{events:?}"
        );
        assert!(
            !events.iter().any(|e| matches!(e, WriterEvent::Persisted(p) if p.frame == 120)),
            "{events:?}"
        );
        assert_eq!(successor.current_epoch().unwrap(), e_new, "the successor still owns the pipeline");
        let payload = vec![7u8; 64];
        let header = CheckpointHeader::for_payload("p", e_new, 180, 0, [0; 32], &payload);
        successor.put(&header, &mut payload.as_slice()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A store that refuses the first `failures` writes as unavailable (a server restarting).
    #[derive(Debug)]
    struct Restarting {
        inner: FsStore,
        failures: u32,
    }

    impl CheckpointStore for Restarting {
        fn backend(&self) -> &'static str {
            "restarting"
        }
        fn bump_epoch(&mut self) -> Result<u64, StoreError> {
            self.inner.bump_epoch()
        }
        fn advance_epoch(&mut self, held: u64) -> Result<u64, StoreError> {
            self.inner.advance_epoch(held)
        }
        fn current_epoch(&mut self) -> Result<u64, StoreError> {
            self.inner.current_epoch()
        }
        fn put(
            &mut self,
            header: &CheckpointHeader,
            payload: &mut dyn Read,
        ) -> Result<Persisted, StoreError> {
            if self.failures > 0 {
                self.failures -= 1;
                return Err(StoreError::Unavailable {
                    backend: "restarting",
                    reason: "the database system is starting up".into(),
                });
            }
            self.inner.put(header, payload)
        }
        fn load(&mut self) -> Result<Loaded, StoreError> {
            self.inner.load()
        }
    }

    /// The history checker's PostgreSQL round 254: the store restarted just before a shutdown, the
    /// final checkpoint's first write failed, and the closing writer gave it up at once (stored:
    /// false) though the server was back within a second. A closing writer retries it for as long as
    /// `finish` waits.
    #[test]
    fn the_final_checkpoint_is_retried_while_finish_waits() {
        let dir = temp_dir("final-retry");
        let mut inner = FsStore::open(&dir, "p", 4).unwrap();
        let epoch = inner.bump_epoch().unwrap();
        let events = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&events);
        let writer = CheckpointWriter::start(
            "p",
            Box::new(Restarting { inner, failures: 2 }),
            HeldEpoch::new(epoch),
            RetryPolicy::default(),
            StoreMetrics::detached(),
            Box::new(move |e| seen.lock().unwrap().push(e)),
        );
        writer.submit(checkpoint(118));
        assert!(writer.finish(Duration::from_secs(10)));
        let events = events.lock().unwrap();
        assert!(
            events.iter().any(|e| matches!(e, WriterEvent::Persisted(p) if p.frame == 118)),
            "{events:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
