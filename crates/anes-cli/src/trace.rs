//! `anes trace`: the CPU trace of a ROM in nestest.log's format.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anes_core::harness::Harness;

use crate::{output, rom};

/// `anes trace --help`'s closing lines.
const AFTER_HELP: &str = "\
Examples:
  # The demo ROM's first 20 instructions from its reset vector
  anes trace roms/demo/demo.nes --instructions 20
  # nestest in its automation mode (from ../shared/conformance beside the repository): this is
  # nestest.log, line for line
  anes trace ../shared/conformance/roms/other/nestest.nes --start-pc C000 --instructions 8991";

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// The iNES ROM file (at most 16 MiB).
    rom: PathBuf,
    /// Start here instead of at the reset vector (hex, e.g. C000 for nestest's automation mode).
    #[arg(long, value_parser = parse_hex_u16)]
    start_pc: Option<u16>,
    /// Instructions to trace.
    #[arg(long, default_value_t = 100)]
    instructions: u64,
    /// The console: ntsc, pal or dendy (default: the ROM's NES 2.0 header, else ntsc).
    #[arg(long, value_enum)]
    region: Option<rom::RegionArg>,
}

pub fn main(args: &Args) -> anyhow::Result<ExitCode> {
    let mut nes = rom::power_on(&args.rom, args.region.map(Into::into), anes_core::NesConfig::default())?;
    if let Some(pc) = args.start_pc {
        nes.set_pc(pc);
    }
    let mut out = output::stdout();
    let mut line = String::with_capacity(96);
    for _ in 0..args.instructions {
        line.clear();
        anes_core::cpu::trace_line(&nes, &mut line);
        writeln!(out, "{line}")?;
        nes.step_instruction();
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Parses `C000`, `$C000` or `0xC000`.
fn parse_hex_u16(text: &str) -> Result<u16, String> {
    let digits = text.strip_prefix('$').or_else(|| text.strip_prefix("0x")).unwrap_or(text);
    u16::from_str_radix(digits, 16).map_err(|_| format!("{text:?} is not a 16-bit hex address such as C000"))
}

#[cfg(test)]
mod tests {
    use super::parse_hex_u16;

    #[test]
    fn parses_hex_addresses_with_or_without_prefix() {
        assert_eq!(parse_hex_u16("C000"), Ok(0xC000));
        assert_eq!(parse_hex_u16("$c000"), Ok(0xC000));
        assert_eq!(parse_hex_u16("0x8000"), Ok(0x8000));
        assert!(parse_hex_u16("10000").is_err());
        assert!(parse_hex_u16("G").is_err());
    }
}
