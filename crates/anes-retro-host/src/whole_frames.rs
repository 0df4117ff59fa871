//! What the two machines of this crate that run whole frames ([`crate::RetroMachine`] and
//! [`crate::nes_view::NesView`]) report besides their hash.

use anes_core::state::{FrameRecord, StateHash};
use anes_lockstep::Probe;

/// The record of a machine that runs whole frames: its frames completed stand for the clock, it has
/// no raster position.
pub(crate) fn frame_record(frame: u64, state_hash: StateHash) -> FrameRecord {
    FrameRecord { frame, cpu_cycle: frame, ppu_scanline: 0, ppu_dot: 0, state_hash }
}

/// The probe of such a machine: the frame counter as its clock.
pub(crate) fn frame_probe(frame: u64) -> Probe {
    Probe { cpu_cycle: frame, ..Probe::default() }
}
