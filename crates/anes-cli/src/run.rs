//! `anes run`: run a ROM headless, optionally from a snapshot and with an input stream, and report
//! where the machine stopped; save a snapshot, a screenshot, and peeked memory.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anes_core::PowerOnProfile;
use anes_core::movie::InputStream;
use anes_core::ppu::rgb::frame_to_rgb;
use anes_core::ppu::{PICTURE_HEIGHT, PICTURE_WIDTH};
use anyhow::{Context, bail};
use serde::Serialize;

use crate::bundled::DEMO_INPUT;
use crate::input_file::read_input_with_region;
use crate::rom::{RegionArg, Schedule};
use crate::{limited_read, output, rom};

/// `anes run --help`'s closing lines.
const AFTER_HELP: &str = "\
Prints where the machine stopped: the last frame record (frame, CPU cycle, PPU scanline and dot, \
blake3 state hash), the PC and whether the CPU jammed.

Examples:
  # The bundled demo ROM over the first 600 frames of its input stream
  anes run
  # Frame 300 of the demo with no button pressed, as a PNG (the picture in docs/EMBEDDING.md)
  anes run roms/demo/demo.nes --frames 300 --screenshot frame-300.png
  # Save the state after 600 frames, resume from it for 600 more and read 16 bytes at $0400, as JSON
  anes run roms/demo/demo.nes --input roms/demo/demo.input --frames 600 --save-state a.snap
  anes run roms/demo/demo.nes --input roms/demo/demo.input --load-state a.snap --frames 600 --peek 0x0400:16 --json
  # A PAL console
  anes run roms/demo/demo.nes --region pal --frames 500";

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// The iNES ROM file, at most 16 MiB (default: the bundled demo ROM and its input stream).
    rom: Option<PathBuf>,
    /// Frames to run.
    #[arg(long, default_value_t = 600)]
    frames: u64,
    /// Input stream: anes's binary format or an FCEUX .fm2 movie (at most 64 MiB). Frame i of the
    /// machine takes frame i of the stream (after --load-state, the stream continues where the
    /// snapshot was taken).
    #[arg(long)]
    input: Option<PathBuf>,
    /// Start from this snapshot (taken with --save-state on the same ROM; at most 16 MiB).
    #[arg(long)]
    load_state: Option<PathBuf>,
    /// Write a snapshot of the final state here.
    #[arg(long)]
    save_state: Option<PathBuf>,
    /// Write the last frame as a 256x240 PNG here.
    #[arg(long)]
    screenshot: Option<PathBuf>,
    /// Read CPU memory at the end, without side effects: ADDR[:LEN], ADDR in hex (0x optional),
    /// LEN in decimal or 0x-hex (default 1). Repeatable.
    #[arg(long, value_parser = parse_peek)]
    peek: Vec<(u16, u32)>,
    /// PPU schedule: lazy (the default) or eager (the slower reference; the results are identical).
    #[arg(long, value_enum, default_value_t = Schedule::Lazy)]
    ppu: Schedule,
    /// APU schedule: lazy (the default) or eager (the slower reference; the results are identical).
    #[arg(long, value_enum, default_value_t = Schedule::Lazy)]
    apu: Schedule,
    /// The console: ntsc, pal or dendy. Default: a .fm2 movie's palFlag 1 means pal, else the ROM's
    /// NES 2.0 header (byte 12), else ntsc.
    #[arg(long, value_enum)]
    region: Option<RegionArg>,
    /// The power-on profile (a --load-state snapshot carries its own).
    #[arg(long, value_name = "PROFILE", default_value = "default", long_help = rom::POWER_ON_HELP)]
    power_on: PowerOnProfile,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

fn parse_peek(spec: &str) -> Result<(u16, u32), String> {
    let (addr, len) = spec.split_once(':').unwrap_or((spec, "1"));
    let addr_digits = addr.trim_start_matches("0x").trim_start_matches("0X");
    let addr = u16::from_str_radix(addr_digits, 16)
        .map_err(|_| format!("address {addr:?} is not a hex number 0000-FFFF (e.g. 0x0400)"))?;
    let len = match len.strip_prefix("0x").or_else(|| len.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => len.parse(),
    }
    .map_err(|_| format!("length {len:?} is not a number (decimal, or hex with 0x)"))?;
    if len == 0 || len > 0x10000 {
        return Err(format!("length {len} is not 1-65536"));
    }
    Ok((addr, len))
}

/// Where the machine stopped: the last FrameRecord plus context.
#[derive(Debug, Serialize)]
struct Stop {
    rom: String,
    region: &'static str,
    /// The profile the machine powered on with (`snapshot` when a restored snapshot's config is none
    /// of the one asked for).
    power_on: String,
    /// Its choices, as the machine state holds them.
    power_on_choices: String,
    frame: u64,
    cpu_cycle: u64,
    ppu_scanline: u16,
    ppu_dot: u16,
    state_hash: String,
    pc: u16,
    jammed: bool,
    peek: serde_json::Map<String, serde_json::Value>,
}

pub fn main(args: &Args) -> anyhow::Result<ExitCode> {
    // Refused before the frames run, not after them.
    for path in args.save_state.iter().chain(&args.screenshot) {
        anes_fs::check_output(path)?;
    }
    let (input, movie_region) = match (&args.input, &args.rom) {
        (Some(path), _) => read_input_with_region(path)?,
        (None, None) => (InputStream::from_bytes(DEMO_INPUT).context("the bundled demo input stream")?, None),
        (None, Some(_)) => (InputStream::new(), None),
    };
    let region = args.region.map(Into::into).or(movie_region);
    let (mut nes, rom_name) = match &args.rom {
        Some(path) => (rom::power_on(path, region, args.power_on.config())?, path.display().to_string()),
        None => {
            (rom::power_on_bundled_demo(region, args.power_on.config())?, "the bundled demo ROM".to_string())
        }
    };
    nes.set_ppu_catch_up(args.ppu.into());
    nes.set_apu_catch_up(args.apu.into());
    if let Some(path) = &args.load_state {
        let bytes = limited_read::read_limited(path, limited_read::SNAPSHOT)?;
        nes.load_state(&bytes).with_context(|| format!("{}: snapshot refused", path.display()))?;
    }
    let progress = output::progress_bar(args.frames, args.json);
    for i in 0..args.frames {
        let index = usize::try_from(nes.frame()).unwrap_or(usize::MAX);
        // `run_frame` without its record: only the last frame's is reported, and hashing the state
        // after every frame cost up to 4% of it (the MMC5's 64 KiB of PRG RAM).
        nes.begin_frame(input.frame(index));
        nes.run_until_frame_end();
        if i % 64 == 0 {
            progress.set_position(i);
        }
    }
    progress.finish_and_clear();
    let record = nes.frame_record();
    if let Some(path) = &args.save_state {
        let mut snapshot = Vec::with_capacity(nes.snapshot_len());
        nes.save_state(&mut snapshot);
        anes_fs::write_output(path, &snapshot)?;
    }
    if let Some(path) = &args.screenshot {
        write_png(path, nes.ppu().frame_buffer())?;
    }
    let mut peek = serde_json::Map::new();
    for &(addr, len) in &args.peek {
        let bytes: Vec<u8> = (0..len).map(|i| nes.peek(addr.wrapping_add(i as u16))).collect();
        let bytes = anes_core::hex::to_hex(&bytes);
        peek.insert(format!("0x{addr:04x}"), bytes.into());
    }
    let stop = Stop {
        rom: rom_name,
        region: nes.region().name(),
        power_on: if nes.config() == args.power_on.config() {
            args.power_on.to_string()
        } else {
            "snapshot".to_string()
        },
        power_on_choices: nes.config().to_string(),
        frame: record.frame,
        cpu_cycle: record.cpu_cycle,
        ppu_scanline: record.ppu_scanline,
        ppu_dot: record.ppu_dot,
        state_hash: record.state_hash.to_string(),
        pc: nes.cpu().pc,
        jammed: nes.is_jammed(),
        peek,
    };
    let mut out = output::stdout();
    if args.json {
        output::write_json(&mut out, &stop)?;
    } else {
        writeln!(out, "rom         {}", stop.rom)?;
        writeln!(out, "region      {}", stop.region)?;
        writeln!(out, "power-on    {} ({})", stop.power_on, stop.power_on_choices)?;
        writeln!(out, "frame       {}", stop.frame)?;
        writeln!(out, "cpu cycle   {}", stop.cpu_cycle)?;
        writeln!(out, "ppu         scanline {}, dot {}", stop.ppu_scanline, stop.ppu_dot)?;
        writeln!(out, "pc          ${:04X}", stop.pc)?;
        writeln!(out, "jammed      {}", if stop.jammed { "yes" } else { "no" })?;
        writeln!(out, "state hash  {}", stop.state_hash)?;
        for (addr, bytes) in &stop.peek {
            writeln!(out, "peek {addr} {}", bytes.as_str().unwrap_or_default())?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Writes a frame buffer (palette indices + emphasis) as an RGB PNG.
pub fn write_png(path: &std::path::Path, frame: &[u16]) -> anyhow::Result<()> {
    if frame.len() != PICTURE_WIDTH * PICTURE_HEIGHT {
        bail!("internal: frame buffer has {} pixels", frame.len());
    }
    let mut rgb = vec![0u8; frame.len() * 3];
    frame_to_rgb(frame, &mut rgb);
    let mut encoded = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut encoded, PICTURE_WIDTH as u32, PICTURE_HEIGHT as u32);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().context("PNG encoder")?;
        writer.write_image_data(&rgb).context("PNG encoder")?;
    }
    Ok(anes_fs::write_output(path, &encoded)?)
}
