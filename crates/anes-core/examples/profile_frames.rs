//! Development aid for profiling: runs a ROM for N frames with no input, in the ROM's region or
//! the one named (`ntsc`, `pal`, `dendy`).
//! `cargo run --release -p anes-core --example profile_frames -- ROM [FRAMES] [REGION]`

use anes_core::movie::FrameInput;
use anes_core::region::Region;
use anes_core::{Cartridge, Nes, NesConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rom =
        std::fs::read(args.get(1).expect("usage: profile_frames ROM [FRAMES] [REGION]")).expect("read ROM");
    let frames: u32 = args.get(2).map_or(600, |f| f.parse().expect("FRAMES"));
    let region = args.get(3).map(|name| Region::from_name(name).expect("REGION: ntsc, pal or dendy"));
    let cart = Cartridge::from_ines(&rom).expect("parse ROM");
    let mut nes = Nes::with_region(cart, NesConfig::default(), region);
    let mut last = None;
    for _ in 0..frames {
        last = Some(nes.run_frame(FrameInput::default()));
    }
    println!("{last:?}");
}
