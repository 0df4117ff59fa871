//! `anes run`: run a ROM headless and report where the machine stopped.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;

use crate::{output, rom};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The iNES ROM file.
    rom: PathBuf,
    /// Frames to run (stops at once if the CPU jams).
    #[arg(long, default_value_t = 600)]
    frames: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Where the machine stopped.
#[derive(Debug, Serialize)]
struct Stop {
    rom: String,
    frames: u64,
    cpu_cycle: u64,
    master_clock: u64,
    pc: u16,
    scanline: u16,
    dot: u16,
    jammed: bool,
}

pub fn main(args: &Args) -> anyhow::Result<ExitCode> {
    let mut nes = rom::power_on(&args.rom)?;
    // Instruction by instruction, so a jam is reported where it happened.
    while nes.frames_completed() < args.frames && !nes.is_jammed() {
        nes.step_instruction();
    }
    let (scanline, dot) = nes.ppu_position();
    let stop = Stop {
        rom: args.rom.display().to_string(),
        frames: nes.frames_completed(),
        cpu_cycle: nes.cpu_cycle(),
        master_clock: nes.master_clock(),
        pc: nes.cpu().pc,
        scanline,
        dot,
        jammed: nes.is_jammed(),
    };
    let mut out = output::stdout();
    if args.json {
        output::write_json(&mut out, &stop)?;
    } else {
        writeln!(out, "rom        {}", stop.rom)?;
        writeln!(out, "frame      {}", stop.frames)?;
        writeln!(out, "cpu cycle  {}", stop.cpu_cycle)?;
        writeln!(out, "pc         ${:04X}", stop.pc)?;
        writeln!(out, "ppu        scanline {}, dot {}", stop.scanline, stop.dot)?;
        writeln!(out, "jammed     {}", if stop.jammed { "yes" } else { "no" })?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
