//! Loading a ROM file given on the command line.

use std::path::Path;

use anes_core::{Cartridge, Nes, NesConfig, PpuCatchUp};
use anyhow::Context;

use crate::limited_read;

/// Reads and parses the iNES file at `path` and powers a console on with it. Errors name the file.
pub fn power_on(path: &Path) -> anyhow::Result<Nes> {
    let bytes = limited_read::read_limited(path, limited_read::ROM)?;
    let cart = Cartridge::from_ines(&bytes).with_context(|| path.display().to_string())?;
    Ok(Nes::new(cart, NesConfig::default()))
}

/// How the PPU keeps up with the CPU (`--ppu`): both give bit-identical machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum PpuSchedule {
    /// Only where the CPU could observe it, in stretches (the default).
    #[default]
    Lazy,
    /// At every point of every CPU cycle, one dot at a time (the reference).
    Eager,
}

impl From<PpuSchedule> for PpuCatchUp {
    fn from(schedule: PpuSchedule) -> PpuCatchUp {
        match schedule {
            PpuSchedule::Lazy => PpuCatchUp::Lazy,
            PpuSchedule::Eager => PpuCatchUp::Eager,
        }
    }
}
