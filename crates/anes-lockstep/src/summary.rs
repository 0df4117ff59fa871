//! The closing summary of a lockstep run, as `anes lockstep --json` prints it.

use serde::Serialize;

use crate::evidence::Report;
use crate::fate::FaultOutcome;

/// What a run achieved. `divergence` is `None` when the machines agreed throughout.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Frames both machines agreed on.
    pub frames_verified: u64,
    /// Sync points compared.
    pub sync_points: u64,
    /// Emulated frames per second of each machine, wall clock, localization included.
    pub fps_per_instance: f64,
    /// Machine A's state hash at the end of the last verified frame (hex).
    pub final_state_hash: String,
    /// The localized finding, if the machines diverged.
    pub divergence: Option<Report>,
    /// Every injected fault, in the order given, with its fate.
    pub faults: Vec<FaultOutcome>,
    /// The folder the evidence bundle of the divergence went to (its `report.html` is the page to
    /// open); `None` without a divergence.
    pub evidence: Option<String>,
}
