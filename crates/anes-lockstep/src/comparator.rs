//! The comparator: pairs of sync records in; verified frames, verified checkpoints and the first
//! divergence out. It runs on the calling thread in both modes.

use std::sync::Arc;

use anes_core::state::FrameRecord;

use crate::checkpoint::VerifiedCheckpoints;
use crate::outcome::{Divergence, DivergenceKind, Progress};
use crate::side::SyncRecord;
use crate::status::LockstepStatus;

/// What the comparator has established so far.
#[derive(Debug)]
pub(crate) struct Comparator {
    /// Input-stream index of the frame the pairing started at.
    pub start_frame: u64,
    /// Frames before this input index are verified.
    pub verified_until: u64,
    /// Sync points compared (the pairing itself is the first).
    pub sync_points: u64,
    /// Machine A's record at the last verified sync point that ended a frame (or at the start).
    pub last_verified: FrameRecord,
    /// The difference that stopped the run, until a rollback.
    pub divergence: Option<Divergence>,
    /// The live figures, shared with other threads.
    pub status: Arc<LockstepStatus>,
}

impl Comparator {
    /// Compares one pair of sync records; on agreement at a frame end, counts the frame and records
    /// the checkpoint the machines saved there, when one was due.
    #[inline]
    pub(crate) fn compare(
        &mut self,
        a: &SyncRecord,
        b: &SyncRecord,
        checkpoint_every: u64,
        checkpoints: &mut VerifiedCheckpoints,
    ) -> bool {
        self.sync_points += 1;
        self.status.set_sync_points(self.sync_points);
        if a != b {
            let kind = DivergenceKind::between(&a.record, &b.record);
            self.divergence = Some(Divergence {
                kind,
                frame: a.frame.min(b.frame),
                at_frame_end: a.frame_end || b.frame_end,
                sync_point: self.sync_points,
                a: a.record,
                b: b.record,
            });
            self.status.set_diverged(true);
            return false;
        }
        if a.frame_end {
            self.last_verified = a.record;
            self.verified_until = a.frame + 1;
            self.status.set_frames_verified(self.verified_until - self.start_frame);
            if self.verified_until % checkpoint_every == 0 {
                checkpoints.record(self.verified_until, a.record.state_hash, self.sync_points);
            }
        }
        true
    }

    /// Counts `records` pairs of sync records inside frames that were found equal elsewhere (the
    /// threaded runner compares runs of them in place): what [`Comparator::compare`] does for such
    /// a pair, in one step.
    #[inline]
    pub(crate) fn count_agreeing(&mut self, records: u64) {
        if records > 0 {
            self.sync_points += records;
            self.status.set_sync_points(self.sync_points);
        }
    }

    /// The figures reported after a verified frame.
    pub(crate) fn progress(&self) -> Progress {
        Progress {
            frames_verified: self.verified_until - self.start_frame,
            sync_points: self.sync_points,
            drift_frames: self.status.drift_frames(),
        }
    }
}
