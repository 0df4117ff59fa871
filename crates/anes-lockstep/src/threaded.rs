//! The threaded runner: one worker thread per machine, each handing its sync records to the
//! comparator (the calling thread) in batches over a bounded channel, so a worker leads by at most
//! about the window.
//!
//! Batches, not single records: at instruction granularity a frame has thousands of sync points, and
//! a channel operation (and a wake-up every few records) per sync point cost more than the
//! comparison. The batch vectors are recycled through a return channel and kept by the runner
//! between runs, so a run allocates none after the first.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crossbeam_channel::{Receiver, Sender, TryRecvError};

use crate::batch::{Batch, BatchPlan, BatchReader, LaggingSync};
use crate::checkpoint::SnapshotBank;
use crate::config::Granularity;
use crate::input::InputSource;
use crate::lockstep::Lockstep;
use crate::machine::Machine;
use crate::outcome::{Progress, RunOutcome};
use crate::side::{Side, SyncRecord};

/// The comparator's side of one worker: the batch it is reading and where.
struct Inbox {
    rx: Receiver<Batch>,
    recycle: Sender<Batch>,
    current: Batch,
    reader: BatchReader,
}

/// The worker hung up and left nothing more.
struct Gone;

impl Inbox {
    /// True when a record handed over is still to be read (a new batch is taken when the current
    /// one was read).
    fn has_pending(&mut self) -> Result<bool, Gone> {
        if self.reader.at_end(&self.current) {
            match self.rx.try_recv() {
                Ok(batch) => {
                    let mut read = std::mem::replace(&mut self.current, batch);
                    read.clear();
                    // The return channel has room for every batch of this worker.
                    let _ = self.recycle.try_send(read);
                    self.reader.restart();
                }
                Err(TryRecvError::Empty) => return Ok(false),
                Err(TryRecvError::Disconnected) => return Err(Gone),
            }
        }
        Ok(true)
    }

    /// The lagging records from the next one up to the next whole one or the batch's end.
    fn lagging_run(&self) -> &[LaggingSync] {
        self.reader.lagging_run(&self.current)
    }

    fn skip(&mut self, records: usize) {
        self.reader.skip(records);
    }

    /// True when the current batch was read to its end.
    fn at_end(&self) -> bool {
        self.reader.at_end(&self.current)
    }

    fn take(&mut self) -> SyncRecord {
        self.reader.take(&self.current)
    }
}

impl<A: Machine + Send, B: Machine<Input = A::Input> + Send> Lockstep<A, B> {
    /// Runs `frames` more frames on two workers over channels of about `window` records, comparing on
    /// the calling thread.
    pub(crate) fn run_threaded<S: InputSource<A::Input> + Sync + ?Sized>(
        &mut self,
        inputs: &S,
        frames: u64,
        window: usize,
        progress: &mut dyn FnMut(Progress),
    ) -> RunOutcome {
        if let Some(outcome) = self.already_diverged(inputs) {
            return outcome;
        }
        let target = self.cmp.verified_until.saturating_add(frames);
        let every = self.config.checkpoint_every;
        let stop = AtomicBool::new(false);
        let frames_done = [AtomicU64::new(self.a.frame), AtomicU64::new(self.b.frame)];
        let batches = BatchPlan::new(window);
        let (tx_a, rx_a) = crossbeam_channel::bounded::<Batch>(batches.channel_batches);
        let (tx_b, rx_b) = crossbeam_channel::bounded::<Batch>(batches.channel_batches);
        // Empty batch vectors on their way back to each worker, from the runner's pool first.
        let (recycle_tx_a, recycle_rx_a) = crossbeam_channel::bounded::<Batch>(batches.batches_per_worker());
        let (recycle_tx_b, recycle_rx_b) = crossbeam_channel::bounded::<Batch>(batches.batches_per_worker());
        for recycle in [&recycle_tx_a, &recycle_tx_b] {
            while !recycle.is_full()
                && let Some(batch) = self.batch_pool.pop()
            {
                let _ = recycle.try_send(batch);
            }
        }
        // The comparator sleeps on a doorbell that a worker rings only when its queue holds half a
        // channel (or it stops), so it wakes every few batches instead of on every one.
        let (bell_tx, bell_rx) = crossbeam_channel::bounded::<()>(1);
        let ring_at = (batches.channel_batches / 2).max(1);
        self.start_run();
        let plan = Plan { inputs, granularity: self.config.granularity, checkpoint_every: every, target };
        let (cmp, checkpoints, pool) = (&mut self.cmp, &mut self.ring.verified, &mut self.batch_pool);
        let mut inbox_a = Inbox {
            rx: rx_a,
            recycle: recycle_tx_a.clone(),
            current: Batch::default(),
            reader: BatchReader::new(self.a.frame),
        };
        let mut inbox_b = Inbox {
            rx: rx_b,
            recycle: recycle_tx_b.clone(),
            current: Batch::default(),
            reader: BatchReader::new(self.b.frame),
        };
        let agreed = std::thread::scope(|scope| {
            let worker_a = Worker {
                side: &mut self.a,
                bank: &mut self.ring.a,
                plan,
                out: Outbox {
                    tx: tx_a,
                    fresh: recycle_rx_a.clone(),
                    returned: recycle_tx_a,
                    batch_len: batches.batch_len,
                },
                bell: Doorbell { tx: bell_tx.clone(), ring_at },
                stop: &stop,
                frames_done: &frames_done[0],
            };
            let worker_b = Worker {
                side: &mut self.b,
                bank: &mut self.ring.b,
                plan,
                out: Outbox {
                    tx: tx_b,
                    fresh: recycle_rx_b.clone(),
                    returned: recycle_tx_b,
                    batch_len: batches.batch_len,
                },
                bell: Doorbell { tx: bell_tx, ring_at },
                stop: &stop,
                frames_done: &frames_done[1],
            };
            scope.spawn(move || worker_a.run());
            scope.spawn(move || worker_b.run());
            let mut agreed = true;
            let mut workers_gone = false;
            'run: while cmp.verified_until < target {
                // Compare every pair both workers have handed over.
                loop {
                    match (inbox_a.has_pending(), inbox_b.has_pending()) {
                        (Ok(true), Ok(true)) => {}
                        (Err(Gone), _) | (_, Err(Gone)) => break 'run,
                        _ => break,
                    }
                    // Equal lagging records inside a frame only count (instruction granularity
                    // hands over thousands a frame): the run of them in one go, read in place.
                    let (a, b) = (inbox_a.lagging_run(), inbox_b.lagging_run());
                    let both = a.len().min(b.len());
                    let alike = a[..both].iter().zip(&b[..both]).position(|(a, b)| a != b).unwrap_or(both);
                    inbox_a.skip(alike);
                    inbox_b.skip(alike);
                    cmp.count_agreeing(alike as u64);
                    if alike == both && (inbox_a.at_end() || inbox_b.at_end()) {
                        // A run ended with its batch: the rest comes in the next.
                        continue;
                    }
                    // A difference, or a whole record on either side (a frame's end): the pair
                    // goes to the comparator.
                    let (a, b) = (inbox_a.take(), inbox_b.take());
                    if !cmp.compare(&a, &b, every, checkpoints) {
                        agreed = false;
                        break 'run;
                    }
                    if a.frame_end {
                        let lead = frames_done[0]
                            .load(Ordering::Relaxed)
                            .max(frames_done[1].load(Ordering::Relaxed));
                        cmp.status.set_drift_frames(lead.saturating_sub(cmp.verified_until));
                        progress(cmp.progress());
                    }
                    if cmp.verified_until >= target {
                        break 'run;
                    }
                }
                if workers_gone {
                    break;
                }
                // Both workers gone: one last pass over what they left.
                workers_gone = bell_rx.recv().is_err();
            }
            stop.store(true, Ordering::Relaxed);
            // Receive until each worker has hung up: a worker blocked on a full channel gets room, sees
            // the stop and returns; its batches go back to the pool.
            for inbox in [&inbox_a, &inbox_b] {
                pool.extend(inbox.rx.iter());
            }
            agreed
        });
        for (inbox, recycled) in [(inbox_a, recycle_rx_a), (inbox_b, recycle_rx_b)] {
            // (An inbox that never received keeps the unallocated vector it started with.)
            pool.extend(
                std::iter::once(inbox.current).chain(recycled.try_iter()).filter(Batch::is_allocated),
            );
        }
        for batch in pool.iter_mut() {
            batch.clear();
        }
        self.cmp.status.set_drift_frames(0);
        debug_assert_eq!(agreed, self.cmp.divergence.is_none());
        // The workers may have run past the last sync point compared.
        self.end_run(inputs, frames, false)
    }
}

/// What both workers run: the same inputs, sync points and checkpoints, up to the same frame.
struct Plan<'i, S: ?Sized> {
    inputs: &'i S,
    granularity: Granularity,
    checkpoint_every: u64,
    /// Input-stream index of the frame to stop before.
    target: u64,
}

// Manual impls: a derive would ask `S: Copy`, and the plan only holds a reference to it.
impl<S: ?Sized> Clone for Plan<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S: ?Sized> Copy for Plan<'_, S> {}

/// One machine's worker: runs its side to the target, handing over every sync record.
struct Worker<'r, M, S: ?Sized> {
    side: &'r mut Side<M>,
    bank: &'r mut SnapshotBank,
    plan: Plan<'r, S>,
    out: Outbox,
    bell: Doorbell,
    /// Set by the comparator when it needs no more records.
    stop: &'r AtomicBool,
    /// Frames this worker completed, for the drift figure.
    frames_done: &'r AtomicU64,
}

/// A worker's side of its channel: full batches go out, empty ones come back.
struct Outbox {
    tx: Sender<Batch>,
    /// Empty batches to fill (the comparator's returns and the runner's pool).
    fresh: Receiver<Batch>,
    /// Where an unused empty batch goes back at the end.
    returned: Sender<Batch>,
    batch_len: usize,
}

impl Outbox {
    fn empty_batch(&self) -> Batch {
        // A new vector only while fewer than the plan's batches exist (the first run).
        self.fresh.try_recv().unwrap_or_else(|_| Batch::with_capacity(self.batch_len))
    }
}

impl<M: Machine, S: InputSource<M::Input> + ?Sized> Worker<'_, M, S> {
    /// Runs until the target frame is complete, the comparator stops it or hangs up, then hands over
    /// its last records. Returning drops the channel and the doorbell, which tells the comparator.
    fn run(self) {
        let Plan { inputs, granularity, checkpoint_every, target } = self.plan;
        let mut batch = self.out.empty_batch();
        let by_line = granularity == Granularity::Scanline;
        while (self.side.frame < target || self.side.in_frame) && !self.stop.load(Ordering::Relaxed) {
            if self.side.lags_inside_frame(granularity) {
                // The common step at instruction and scanline granularity, without next_sync's
                // choices: inside the frame, its digest and cycle only, until the batch is full or
                // the frame ends (the checks above once a batch).
                loop {
                    match self.side.step_lagging_in_frame(by_line) {
                        Some((digest, cpu_cycle)) => {
                            batch.push_lagging(LaggingSync { digest, cpu_cycle });
                            if batch.len() == self.out.batch_len {
                                break;
                            }
                        }
                        None => {
                            let record = self.side.lagging_frame_end();
                            self.side.save_if_due(&record, self.bank, checkpoint_every);
                            self.frames_done.store(self.side.frame, Ordering::Relaxed);
                            batch.push_whole(record);
                            break;
                        }
                    }
                }
            } else {
                let record = self.side.advance(self.bank, inputs, granularity, checkpoint_every);
                if record.frame_end {
                    self.frames_done.store(self.side.frame, Ordering::Relaxed);
                }
                batch.push_whole(record);
            }
            if batch.len() == self.out.batch_len {
                let full = std::mem::replace(&mut batch, self.out.empty_batch());
                if self.out.tx.send(full).is_err() {
                    return;
                }
                self.bell.ring_if_due(&self.out.tx);
            }
        }
        if batch.is_empty() {
            let _ = self.out.returned.try_send(batch);
        } else {
            let _ = self.out.tx.send(batch);
        }
    }
}

/// A worker's side of the comparator's doorbell. Dropping it (the worker returning or unwinding)
/// rings, so the comparator never sleeps through a worker's end.
struct Doorbell {
    tx: Sender<()>,
    ring_at: usize,
}

impl Doorbell {
    /// Rings if `queue` holds at least half a channel. A bell already ringing stays as it is.
    fn ring_if_due(&self, queue: &Sender<Batch>) {
        if queue.len() >= self.ring_at {
            let _ = self.tx.try_send(());
        }
    }
}

impl Drop for Doorbell {
    fn drop(&mut self) {
        let _ = self.tx.try_send(());
    }
}
