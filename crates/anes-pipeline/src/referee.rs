//! The referee: a third console replays the last verified checkpoint with the inputs since, and the
//! workers whose record of the divergent frame differs from its own are the suspects.

use anes_core::NesConfig;
use anes_core::state::FrameRecord;
use anes_machine::{Machine, NesMachine};
use thiserror::Error;

use crate::Investigation;
use crate::worker::WorkerId;

/// Why the referee could not run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RefereeError {
    /// There is no verified checkpoint to replay from.
    #[error("no verified checkpoint to replay from")]
    NoCheckpoint,
    /// The ROM or the checkpoint was refused by a fresh console.
    #[error("the referee console refused {what}: {message}")]
    Refused {
        /// The ROM or the checkpoint.
        what: &'static str,
        /// The console's error.
        message: String,
    },
}

/// A fresh console at `snapshot`.
pub fn console(rom: &[u8], snapshot: &[u8]) -> Result<NesMachine, RefereeError> {
    let mut machine = NesMachine::from_ines(rom, NesConfig::default())
        .map_err(|e| RefereeError::Refused { what: "the ROM", message: e.to_string() })?;
    machine
        .load_state(snapshot)
        .map_err(|e| RefereeError::Refused { what: "the checkpoint", message: e.to_string() })?;
    Ok(machine)
}

/// The suspects of `investigation` and the referee's own record of the divergent frame. No suspect
/// when neither worker differs from it (the divergence does not reproduce from the checkpoint).
pub fn referee(
    rom: &[u8],
    investigation: &Investigation,
) -> Result<(Vec<WorkerId>, FrameRecord), RefereeError> {
    let checkpoint = investigation.checkpoint.as_ref().ok_or(RefereeError::NoCheckpoint)?;
    let mut machine = console(rom, &checkpoint.snapshot)?;
    let mut record = machine.record();
    for input in &investigation.inputs {
        record = machine.run_frame(*input);
    }
    let suspects =
        WorkerId::BOTH.into_iter().filter(|w| investigation.records[w.index()] != record).collect();
    Ok((suspects, record))
}
