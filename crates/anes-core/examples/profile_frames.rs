//! Development aid for profiling: runs a ROM for N frames with no input.
//! `cargo run --release -p anes-core --example profile_frames -- ROM [FRAMES]`

use anes_core::movie::FrameInput;
use anes_core::{Cartridge, Nes, NesConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rom = std::fs::read(args.get(1).expect("usage: profile_frames ROM [FRAMES]")).expect("read ROM");
    let frames: u32 = args.get(2).map_or(600, |f| f.parse().expect("FRAMES"));
    let mut nes = Nes::new(Cartridge::from_ines(&rom).expect("parse ROM"), NesConfig::default());
    let mut last = None;
    for _ in 0..frames {
        last = Some(nes.run_frame(FrameInput::default()));
    }
    println!("{last:?}");
}
