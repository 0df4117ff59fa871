//! Why a shrink could not run (its own module, so the trial runner and the driver both use it without
//! naming each other in a circle).

use thiserror::Error;

use crate::machine::MachineError;
use crate::outcome::{DivergenceKind, LockstepError};

/// Why a shrink could not run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ShrinkError {
    /// The machines agreed over the whole stream: there is nothing to shrink.
    #[error("the machines agreed over all {frames} frames: no divergence to shrink")]
    NoDivergence {
        /// Frames run.
        frames: u64,
    },
    /// The machines were given at different frames: a shrink starts both at the same one.
    #[error("machine A has run {a} frames and machine B {b}: a shrink starts both at the same frame")]
    NotAtOneFrame {
        /// Machine A's frame counter.
        a: u64,
        /// Machine B's frame counter.
        b: u64,
    },
    /// The first run did not show the divergence [`ShrinkConfig::expect`](super::ShrinkConfig::expect) names.
    #[error("expected a {} divergence at the end of frame {}, but {found}", expected.0.name(), expected.1)]
    OtherDivergence {
        /// Kind and frame expected.
        expected: (DivergenceKind, u64),
        /// What the first run saw.
        found: String,
    },
    /// The lockstep runner refused the pair or the fault plan.
    #[error(transparent)]
    Lockstep(#[from] LockstepError),
    /// A machine refused one of its own snapshots.
    #[error("a checkpoint did not restore: {0}")]
    Restore(MachineError),
    /// The final run over the repro from its start did not show the divergence the trials saw:
    /// the machines are not deterministic, or their state hash misses some state.
    #[error(
        "the repro does not reproduce from its start ({found}); the machines are not deterministic or their state hash misses state"
    )]
    ReproLost {
        /// What the final run saw.
        found: String,
    },
}
