//! What a run reports: how it ended, the divergence that stopped it, its progress, and why creating
//! a Lockstep or rolling it back failed.

use anes_core::state::StateHash;
use thiserror::Error;

use crate::schedule::FaultPlanError;
pub use anes_machine::{Divergence, DivergenceKind};

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    /// Every frame asked for was verified.
    Agreed {
        /// Frames verified by this call.
        frames: u64,
    },
    /// The machines diverged (or already had, before this call): nothing after the last verified frame
    /// counts as verified. The evidence is in [`crate::Lockstep::evidence`].
    Diverged(Box<Divergence>),
}

/// Progress of a run, reported once per verified frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Frames verified since the Lockstep was created.
    pub frames_verified: u64,
    /// Sync points compared.
    pub sync_points: u64,
    /// Lead of the leading machine over the comparator, in frames.
    pub drift_frames: u64,
}

/// Why a Lockstep could not be created.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LockstepError {
    /// The fault plan does not fit machine B.
    #[error(transparent)]
    FaultPlan(#[from] FaultPlanError),
    /// A configuration value is out of range.
    #[error("invalid lockstep configuration: {0}")]
    Config(&'static str),
}

/// Why a rollback failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RollbackError {
    /// No verified checkpoint is left (all failed verification, or none was ever taken).
    #[error("no verified checkpoint to roll back to ({discarded} failed verification and were discarded)")]
    NoVerifiedCheckpoint {
        /// Checkpoints discarded during this attempt.
        discarded: usize,
    },
}

/// What a successful rollback did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rollback {
    /// Input-stream index of the frame the machines resume at.
    pub frame: u64,
    /// The state hash both machines were verified to have.
    pub state_hash: StateHash,
    /// Newer checkpoints that failed verification and were discarded.
    pub discarded: usize,
}
