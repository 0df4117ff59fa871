//! The threaded runner: one worker thread per machine, each sending its sync records to the
//! comparator (the calling thread) over a bounded channel, so a worker leads by at most the window.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crossbeam_channel::{Sender, TryRecvError};

use crate::checkpoint::SnapshotBank;
use crate::config::Granularity;
use crate::input::InputSource;
use crate::lockstep::Lockstep;
use crate::machine::Machine;
use crate::outcome::{Progress, RunOutcome};
use crate::side::{Side, SyncRecord};

impl<A: Machine + Send, B: Machine<Input = A::Input> + Send> Lockstep<A, B> {
    /// Runs `frames` more frames on two workers over channels of `window` records, comparing on the
    /// calling thread.
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
        let (tx_a, rx_a) = crossbeam_channel::bounded::<SyncRecord>(window);
        let (tx_b, rx_b) = crossbeam_channel::bounded::<SyncRecord>(window);
        // The comparator sleeps on a doorbell that a worker rings only when its queue holds half a
        // window (or it stops), so it wakes every few records instead of on every one: on two cores
        // a wake-up per frame costs more than the comparison.
        let (bell_tx, bell_rx) = crossbeam_channel::bounded::<()>(1);
        let ring_at = (window / 2).max(1);
        self.start_run();
        let plan = Plan { inputs, granularity: self.config.granularity, checkpoint_every: every, target };
        let (cmp, checkpoints) = (&mut self.cmp, &mut self.ring.verified);
        let agreed = std::thread::scope(|scope| {
            let worker_a = Worker {
                side: &mut self.a,
                bank: &mut self.ring.a,
                plan,
                tx: tx_a,
                bell: Doorbell { tx: bell_tx.clone(), ring_at },
                stop: &stop,
                frames_done: &frames_done[0],
            };
            let worker_b = Worker {
                side: &mut self.b,
                bank: &mut self.ring.b,
                plan,
                tx: tx_b,
                bell: Doorbell { tx: bell_tx, ring_at },
                stop: &stop,
                frames_done: &frames_done[1],
            };
            scope.spawn(move || worker_a.run());
            scope.spawn(move || worker_b.run());
            let mut agreed = true;
            let mut waiting_a: Option<SyncRecord> = None;
            let mut workers_gone = false;
            'run: while cmp.verified_until < target {
                // Compare every pair both workers have published.
                loop {
                    let a = match waiting_a.take().map_or_else(|| rx_a.try_recv(), Ok) {
                        Ok(a) => a,
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => break 'run,
                    };
                    let b = match rx_b.try_recv() {
                        Ok(b) => b,
                        Err(TryRecvError::Empty) => {
                            waiting_a = Some(a);
                            break;
                        }
                        Err(TryRecvError::Disconnected) => break 'run,
                    };
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
            // Dropping the receivers releases a worker blocked on a full channel.
            drop((rx_a, rx_b));
            agreed
        });
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

/// One machine's worker: runs its side to the target, publishing every sync record.
struct Worker<'r, M, S: ?Sized> {
    side: &'r mut Side<M>,
    bank: &'r mut SnapshotBank,
    plan: Plan<'r, S>,
    tx: Sender<SyncRecord>,
    bell: Doorbell,
    /// Set by the comparator when it needs no more records.
    stop: &'r AtomicBool,
    /// Frames this worker completed, for the drift figure.
    frames_done: &'r AtomicU64,
}

impl<M: Machine, S: InputSource<M::Input> + ?Sized> Worker<'_, M, S> {
    /// Runs until the target frame is complete, the comparator stops it or hangs up. Returning drops
    /// the channel and the doorbell, which tells the comparator.
    fn run(self) {
        let Plan { inputs, granularity, checkpoint_every, target } = self.plan;
        while (self.side.frame < target || self.side.in_frame) && !self.stop.load(Ordering::Relaxed) {
            let record = self.side.advance(self.bank, inputs, granularity, checkpoint_every);
            if record.frame_end {
                self.frames_done.store(self.side.frame, Ordering::Relaxed);
            }
            if self.tx.send(record).is_err() {
                break;
            }
            self.bell.ring_if_due(&self.tx);
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
    /// Rings if `queue` holds at least half a window. A bell already ringing stays as it is.
    fn ring_if_due(&self, queue: &Sender<SyncRecord>) {
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
