//! The checkpoint ring: the verified checkpoints (one every K frames, the newest N kept) and both
//! machines' snapshot buffers, all allocated by [`CheckpointRing::new`].
//!
//! Each machine saves checkpoint number `seq` into buffer `seq % buffers` of its own
//! [`SnapshotBank`] when it finishes a frame whose index is a multiple of K; the comparator records
//! the checkpoint as verified when both machines' records at that frame end agree. The banks hold
//! more buffers than checkpoints are kept, so a machine running ahead (threaded mode) never
//! overwrites a verified checkpoint that is still kept.

use std::collections::VecDeque;

use anes_core::state::StateHash;

use crate::machine::{Machine, MachineError};

/// Snapshot buffers per machine at most.
pub(crate) const MAX_SNAPSHOT_BUFFERS: usize = 4096;

/// A verified checkpoint: both machines' snapshots numbered `seq` had this state hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CheckpointMeta {
    /// Snapshot number in both banks.
    pub seq: u64,
    /// Input-stream index of the next frame to run from it.
    pub frame: u64,
    /// The state hash both machines had.
    pub state_hash: StateHash,
    /// Ordinal of the sync point a run from this checkpoint continues after: the n-th sync record
    /// either machine produces from it is compared as sync point `sync_point + n`.
    pub sync_point: u64,
}

/// One machine's snapshot buffers, preallocated to its snapshot size.
#[derive(Debug)]
pub(crate) struct SnapshotBank {
    buffers: Vec<Vec<u8>>,
    /// Number of the last checkpoint this machine saved.
    saved_seq: u64,
}

impl SnapshotBank {
    fn new(count: usize, snapshot_len: usize) -> SnapshotBank {
        SnapshotBank { buffers: (0..count).map(|_| Vec::with_capacity(snapshot_len)).collect(), saved_seq: 0 }
    }

    fn index(&self, seq: u64) -> usize {
        (seq % self.buffers.len() as u64) as usize
    }

    /// Saves `machine` as checkpoint number `seq`.
    fn save<M: Machine + ?Sized>(&mut self, seq: u64, machine: &M) {
        self.saved_seq = seq;
        let index = self.index(seq);
        machine.save_state(&mut self.buffers[index]);
    }

    /// Saves `machine` as the next checkpoint (allocation-free: the buffer has the snapshot's size).
    pub(crate) fn save_next<M: Machine + ?Sized>(&mut self, machine: &M) {
        self.save(self.saved_seq + 1, machine);
    }

    /// The bytes of checkpoint number `seq` (meaningful while it has not been overwritten).
    pub(crate) fn get(&self, seq: u64) -> &[u8] {
        &self.buffers[self.index(seq)]
    }
}

/// The verified checkpoints, oldest first, at most `kept` of them.
#[derive(Debug)]
pub(crate) struct VerifiedCheckpoints {
    list: VecDeque<CheckpointMeta>,
    kept: usize,
    /// Number of the last checkpoint recorded as verified.
    seq: u64,
}

impl VerifiedCheckpoints {
    /// Records the checkpoint both machines saved at the end of the frame before `frame` as verified.
    pub(crate) fn record(&mut self, frame: u64, state_hash: StateHash, sync_point: u64) {
        self.seq += 1;
        self.push(CheckpointMeta { seq: self.seq, frame, state_hash, sync_point });
    }

    fn push(&mut self, meta: CheckpointMeta) {
        if self.list.len() == self.kept {
            self.list.pop_front();
        }
        self.list.push_back(meta);
    }

    /// The newest verified checkpoint.
    pub(crate) fn newest(&self) -> Option<CheckpointMeta> {
        self.list.back().copied()
    }

    /// Input-stream indexes of the checkpoints kept, oldest first.
    pub(crate) fn frames(&self) -> impl Iterator<Item = u64> + '_ {
        self.list.iter().map(|c| c.frame)
    }
}

/// The verified checkpoints and both machines' snapshot buffers.
#[derive(Debug)]
pub(crate) struct CheckpointRing {
    /// What the comparator verified.
    pub verified: VerifiedCheckpoints,
    /// Machine A's snapshots.
    pub a: SnapshotBank,
    /// Machine B's snapshots.
    pub b: SnapshotBank,
}

impl CheckpointRing {
    /// A ring keeping `kept` verified checkpoints, with `in_flight` more buffers per machine for
    /// checkpoints saved but not yet verified. `None` when that is more than
    /// [`MAX_SNAPSHOT_BUFFERS`] buffers per machine.
    pub(crate) fn new(kept: usize, in_flight: usize, snapshot_len: (usize, usize)) -> Option<CheckpointRing> {
        let buffers = kept.checked_add(in_flight).filter(|&n| n <= MAX_SNAPSHOT_BUFFERS)?;
        Some(CheckpointRing {
            verified: VerifiedCheckpoints { list: VecDeque::with_capacity(kept), kept, seq: 0 },
            a: SnapshotBank::new(buffers, snapshot_len.0),
            b: SnapshotBank::new(buffers, snapshot_len.1),
        })
    }

    /// Saves both machines as checkpoint 0, where the pairing starts.
    pub(crate) fn save_start<A: Machine + ?Sized, B: Machine + ?Sized>(&mut self, a: &A, b: &B) {
        self.a.save(0, a);
        self.b.save(0, b);
    }

    /// Records checkpoint 0 as verified (the machines agreed when paired, at sync point 1).
    pub(crate) fn verify_start(&mut self, frame: u64, state_hash: StateHash) {
        self.verified.push(CheckpointMeta { seq: 0, frame, state_hash, sync_point: 1 });
    }

    /// Both machines' snapshots of `checkpoint`.
    pub(crate) fn snapshots(&self, checkpoint: &CheckpointMeta) -> (&[u8], &[u8]) {
        (self.a.get(checkpoint.seq), self.b.get(checkpoint.seq))
    }

    /// Loads the newest verified checkpoint into both machines and checks that both have its state
    /// hash. On success the banks continue numbering after it and the checkpoint now continues after
    /// sync point `sync_point`; on failure the checkpoint is discarded (the machines are then in an
    /// unspecified state, to be restored from an older one).
    pub(crate) fn restore_newest<A: Machine + ?Sized, B: Machine + ?Sized>(
        &mut self,
        a: &mut A,
        b: &mut B,
        sync_point: u64,
    ) -> Option<Result<CheckpointMeta, MachineError>> {
        let checkpoint = self.verified.newest()?;
        let (snapshot_a, snapshot_b) = self.snapshots(&checkpoint);
        let loaded = a.load_state(snapshot_a).and_then(|()| b.load_state(snapshot_b)).and_then(|()| {
            if a.state_hash() == checkpoint.state_hash && b.state_hash() == checkpoint.state_hash {
                Ok(())
            } else {
                Err(MachineError::Snapshot("restored state does not have the recorded hash".into()))
            }
        });
        Some(match loaded {
            Ok(()) => {
                self.a.saved_seq = checkpoint.seq;
                self.b.saved_seq = checkpoint.seq;
                self.verified.seq = checkpoint.seq;
                let newest = self.verified.list.back_mut().expect("the checkpoint just restored");
                newest.sync_point = sync_point;
                Ok(*newest)
            }
            Err(e) => {
                self.verified.list.pop_back();
                Err(e)
            }
        })
    }

    /// Flips the last byte of B's snapshot of the `which`-th kept checkpoint.
    #[cfg(test)]
    pub(crate) fn corrupt_for_test(&mut self, which: usize) {
        let index = self.b.index(self.verified.list[which].seq);
        let buffer = &mut self.b.buffers[index];
        let last = buffer.len() - 1;
        buffer[last] ^= 1;
    }
}
