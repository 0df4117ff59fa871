//! Live figures of a run, readable from any thread while it runs (the operations layer exports them as
//! metrics: drift as `worker_drift_offset_records`, divergence as `worker_state_divergence_flag`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Shared, lock-free status of a [`crate::Lockstep`]. Get it with [`crate::Lockstep::status`].
#[derive(Debug, Default)]
pub struct LockstepStatus {
    frames_verified: AtomicU64,
    sync_points: AtomicU64,
    drift_frames: AtomicU64,
    diverged: AtomicBool,
    rollbacks: AtomicU64,
}

impl LockstepStatus {
    /// Frames both machines agreed on since the run's start (falls back after a rollback).
    pub fn frames_verified(&self) -> u64 {
        self.frames_verified.load(Ordering::Relaxed)
    }

    /// Sync points compared so far.
    pub fn sync_points(&self) -> u64 {
        self.sync_points.load(Ordering::Relaxed)
    }

    /// How many frames the leading machine is ahead of the comparator (always 0 on one thread).
    pub fn drift_frames(&self) -> u64 {
        self.drift_frames.load(Ordering::Relaxed)
    }

    /// True from a divergence until a successful rollback.
    pub fn is_diverged(&self) -> bool {
        self.diverged.load(Ordering::Relaxed)
    }

    /// Successful rollbacks so far.
    pub fn rollbacks(&self) -> u64 {
        self.rollbacks.load(Ordering::Relaxed)
    }

    pub(crate) fn set_frames_verified(&self, frames: u64) {
        self.frames_verified.store(frames, Ordering::Relaxed);
    }

    pub(crate) fn set_sync_points(&self, points: u64) {
        self.sync_points.store(points, Ordering::Relaxed);
    }

    pub(crate) fn set_drift_frames(&self, frames: u64) {
        self.drift_frames.store(frames, Ordering::Relaxed);
    }

    pub(crate) fn set_diverged(&self, diverged: bool) {
        self.diverged.store(diverged, Ordering::Relaxed);
    }

    pub(crate) fn count_rollback(&self) {
        self.rollbacks.fetch_add(1, Ordering::Relaxed);
    }
}
