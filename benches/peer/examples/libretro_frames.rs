//! Runs a ROM for a number of frames in a libretro core through the peer group's host, with no
//! input, and prints where it stopped. Made to be measured:
//! `valgrind --tool=cachegrind --cache-sim=no target/release/examples/libretro_frames CORE ROM N`
//! for two values of N gives the core's host instructions per emulated frame
//! (`benches/peer/instructions-per-frame.sh`).
//!
//! `cargo run --profile bench --manifest-path benches/peer/Cargo.toml --example libretro_frames --
//! /usr/lib/x86_64-linux-gnu/libretro/nestopia_libretro.so roms/demo/demo.nes 600`
//!
//! The core runs with the settings of the peer group's Nestopia (`nestopia::config`); any other core
//! ignores those options.

use std::path::PathBuf;
use std::process::ExitCode;

use anes_peer_bench::libretro::LibretroHost;
use anes_peer_bench::nestopia;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [core, rom, frames] = args.as_slice() else {
        eprintln!("usage: libretro_frames CORE ROM FRAMES");
        return ExitCode::from(2);
    };
    let Ok(frames) = frames.parse::<u64>() else {
        eprintln!("libretro_frames: FRAMES must be a whole number, got {frames:?}");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(rom) {
        Ok(bytes) => bytes,
        Err(err) => {
            eprintln!("libretro_frames: {rom}: {err}");
            return ExitCode::from(2);
        }
    };
    let mut host = match LibretroHost::new(&PathBuf::from(core), &bytes, &nestopia::config()) {
        Ok(host) => host,
        Err(err) => {
            eprintln!("libretro_frames: {err}");
            return ExitCode::FAILURE;
        }
    };
    for _ in 0..frames {
        host.run_frame();
    }
    let ram = host.system_ram().unwrap_or_default();
    // FNV-1a over system RAM: a cheap fingerprint to see two runs agree.
    let ram_hash =
        ram.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    println!(
        "{}: {} frames of {rom}, {} pictures, {} audio frames, system RAM {} bytes (FNV-1a {ram_hash:016x})",
        host.core_name(),
        host.frames(),
        host.pictures(),
        host.audio_frames(),
        ram.len()
    );
    ExitCode::SUCCESS
}
