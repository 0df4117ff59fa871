//! A machine's frame record as `report.json` and the localization reports show it.

use anes_core::state::FrameRecord;
use serde::Serialize;

/// A machine's record at a sync point, for JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordJson {
    /// Frames completed.
    pub frame: u64,
    /// CPU cycle.
    pub cpu_cycle: u64,
    /// PPU scanline.
    pub scanline: u16,
    /// PPU dot.
    pub dot: u16,
    /// State hash, hex.
    pub state_hash: String,
}

impl From<&FrameRecord> for RecordJson {
    fn from(r: &FrameRecord) -> RecordJson {
        RecordJson {
            frame: r.frame,
            cpu_cycle: r.cpu_cycle,
            scanline: r.ppu_scanline,
            dot: r.ppu_dot,
            state_hash: r.state_hash.to_string(),
        }
    }
}
