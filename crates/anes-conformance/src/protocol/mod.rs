//! Running one ROM under its protocol: loading and checking the file, then each protocol's way of
//! reading the result.

pub(crate) mod accuracycoin;
mod blargg6000;
mod nestest_log;
mod screen;

use anes_core::cart::MAX_ROM_FILE_LEN;
use anes_core::{Cartridge, Nes, Region};

use crate::console::{Console, PowerOn};
use crate::manifest::{Protocol, RomEntry};
use crate::report::{StartPoint, Status, SubTest};

/// How a ROM's run ended, before the runner adds its identity and timing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub status: Status,
    pub code: Option<u8>,
    pub text: String,
    pub subtests: Vec<SubTest>,
    pub start_points: Vec<StartPoint>,
}

impl Outcome {
    pub fn new(status: Status, code: Option<u8>, text: impl Into<String>) -> Outcome {
        Outcome { status, code, text: text.into(), subtests: Vec::new(), start_points: Vec::new() }
    }

    pub fn error(text: impl Into<String>) -> Outcome {
        Outcome::new(Status::Error, None, text)
    }
}

/// Frames run so far; kept outside the run so a panic in the core can still report where it happened.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    pub frames: u64,
}

/// Loads `rom`, checks it against the manifest and runs it on anes under its protocol.
pub(crate) fn run(rom: &RomEntry, progress: &mut Progress) -> Outcome {
    let region = match region_of(rom) {
        Ok(region) => region,
        Err(outcome) => return outcome,
    };
    let config = rom.power_on.unwrap_or_default().config();
    run_on(rom, progress, &|cart, _| Ok(Nes::with_region(cart, config, Some(region))))
}

/// The console region the manifest gives the ROM (`ntsc`, `pal` or `dendy`); the manifest's
/// default is NTSC, whatever the ROM's header says, so a baseline never changes with a header.
pub(crate) fn region_of(rom: &RomEntry) -> Result<Region, Outcome> {
    Region::from_name(&rom.region)
        .ok_or_else(|| Outcome::error(format!("region {:?} is not ntsc, pal or dendy", rom.region)))
}

/// Loads `rom`, checks it against the manifest, powers a console on with `power_on` (given the parsed
/// cartridge and the file's bytes) and runs it under the ROM's protocol.
pub(crate) fn run_on<C: Console>(
    rom: &RomEntry,
    progress: &mut Progress,
    power_on: PowerOn<'_, C>,
) -> Outcome {
    if let Protocol::Unsupported(name) = &rom.protocol {
        return Outcome::error(format!(
            "protocol {name:?} is not supported by this runner (supported: blargg6000, screen, nestest-log, accuracycoin)"
        ));
    }
    if let Err(outcome) = region_of(rom) {
        return outcome;
    }
    let bytes = match anes_fs::read_capped(&rom.file, MAX_ROM_FILE_LEN as u64, "ROM") {
        Ok(bytes) => bytes,
        Err(err) => return Outcome::error(err.to_string()),
    };
    let sha1 = sha1_smol::Sha1::from(&bytes).digest().to_string();
    if sha1 != rom.sha1 {
        return Outcome::error(format!(
            "{}: SHA-1 is {sha1} but the manifest says {}: wrong or damaged file",
            rom.file.display(),
            rom.sha1
        ));
    }
    let cart = match Cartridge::from_ines(&bytes) {
        Ok(cart) => cart,
        Err(err) => return Outcome::error(format!("{}: {err}", rom.file.display())),
    };
    if cart.info().mapper != rom.mapper {
        return Outcome::error(format!(
            "{}: header declares mapper {} but the manifest says {}",
            rom.file.display(),
            cart.info().mapper,
            rom.mapper
        ));
    }
    if rom.protocol == Protocol::AccuracyCoin {
        // Several runs, each from a fresh power-on.
        let power_on =
            || power_on(cart.clone(), &bytes).map_err(|err| format!("{}: {err}", rom.file.display()));
        return accuracycoin::run(&power_on, rom, progress);
    }
    let mut console = match power_on(cart, &bytes) {
        Ok(console) => console,
        Err(err) => return Outcome::error(format!("{}: {err}", rom.file.display())),
    };
    match &rom.protocol {
        Protocol::Blargg6000 => blargg6000::run(&mut console, rom, progress),
        Protocol::Screen => screen::run(&mut console, rom, progress),
        Protocol::NestestLog => match console.as_nes() {
            Some(nes) => nestest_log::run(nes, rom, progress),
            None => Outcome::error("nestest-log compares anes's trace format: not run on this emulator"),
        },
        Protocol::Unsupported(_) | Protocol::AccuracyCoin => unreachable!("handled above"),
    }
}

/// Runs one frame and records it.
fn run_frame(console: &mut impl Console, progress: &mut Progress) {
    progress.frames = console.run_frame();
}

/// A test ROM never executes a JAM opcode on hardware: the emulated program went astray.
fn jammed(pc: u16) -> Outcome {
    Outcome::new(Status::Fail, None, format!("CPU jammed at PC ${pc:04X}"))
}
