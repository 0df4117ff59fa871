//! One libretro core in this process, with nothing around it: `retro_run` for N frames, timed. The
//! denominator of the overhead figure in docs/LIBRETRO.md (two `anes worker --libretro` processes
//! in lockstep against this).
//!
//! `cargo run --release -p anes-retro-host --example bare_core -- CORE.so CONTENT [FRAMES]`

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anes_retro_host::{HostConfig, RetroCore};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(core), Some(content)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: bare_core CORE.so CONTENT [FRAMES]");
        return ExitCode::from(2);
    };
    let frames: u64 = match args.get(3).map(|f| f.parse()) {
        None => 5_000,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("FRAMES: {e}");
            return ExitCode::from(2);
        }
    };
    let mut core = match RetroCore::load(Path::new(core), Path::new(content), &HostConfig::default()) {
        Ok(core) => core,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let started = Instant::now();
    for _ in 0..frames {
        core.run_frame();
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{} frames of {} in {seconds:.3} s: {:.0} frames/s",
        frames,
        core.name(),
        frames as f64 / seconds
    );
    ExitCode::SUCCESS
}
