//! Loading a ROM file given on the command line.

use std::path::Path;

use anes_core::{ApuCatchUp, Cartridge, Nes, NesConfig, PpuCatchUp, Region};
use anyhow::Context;

use crate::bundled::DEMO_ROM;
use crate::limited_read;

/// Reads and parses the iNES file at `path` and powers a console on with it, of `region` (`None`: the
/// ROM header's, NTSC when it does not say), with `config`. Errors name the file.
pub fn power_on(path: &Path, region: Option<Region>, config: NesConfig) -> anyhow::Result<Nes> {
    let bytes = limited_read::read_limited(path, limited_read::ROM)?;
    let cart = Cartridge::from_ines(&bytes).with_context(|| path.display().to_string())?;
    Ok(Nes::with_region(cart, config, region))
}

/// Powers a console on with the bundled demo ROM, as [`power_on`] does with a file.
pub fn power_on_bundled_demo(region: Option<Region>, config: NesConfig) -> anyhow::Result<Nes> {
    let cart = Cartridge::from_ines(DEMO_ROM).context("the bundled demo ROM")?;
    Ok(Nes::with_region(cart, config, region))
}

/// What `--power-on` says about the profiles (clap's help text for it).
pub const POWER_ON_HELP: &str = "The power-on profile: default (PPUSTATUS clear, no PPU warm-up), vblank-set, warm-up, \
quick-power-cycle (both: the least forgiving), console-palette, ram-ff, phase-1, phase-2, phase-3, or random:SEED \
(every choice drawn from SEED). See docs/USING-LOCKSTEP.md.";

/// The console's region on the command line (`--region`): overrides the ROM header and a movie's
/// `palFlag`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RegionArg {
    /// NTSC NES / Famicom (60.0988 Hz).
    Ntsc,
    /// PAL NES (50.0070 Hz).
    Pal,
    /// Dendy famiclone (50.0070 Hz, NTSC-like CPU timing).
    Dendy,
}

impl From<RegionArg> for Region {
    fn from(region: RegionArg) -> Region {
        match region {
            RegionArg::Ntsc => Region::Ntsc,
            RegionArg::Pal => Region::Pal,
            RegionArg::Dendy => Region::Dendy,
        }
    }
}

/// How a lazily run chip keeps up with the CPU (`--ppu`, `--apu`): both give bit-identical machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Schedule {
    /// Only where the CPU could observe it, owed time in bulk (the default).
    #[default]
    Lazy,
    /// At every point of every CPU cycle (the reference).
    Eager,
}

impl From<Schedule> for PpuCatchUp {
    fn from(schedule: Schedule) -> PpuCatchUp {
        match schedule {
            Schedule::Lazy => PpuCatchUp::Lazy,
            Schedule::Eager => PpuCatchUp::Eager,
        }
    }
}

impl From<Schedule> for ApuCatchUp {
    fn from(schedule: Schedule) -> ApuCatchUp {
        match schedule {
            Schedule::Lazy => ApuCatchUp::Lazy,
            Schedule::Eager => ApuCatchUp::Eager,
        }
    }
}
