//! One lockstep run as `anes lockstep ROM --input FILE --frames N --granularity G [--threads]` makes it,
//! without the CLI's other crates (for profiling under callgrind): `cargo run --release -p
//! anes-lockstep --example granularity_run -- ROM INPUT FRAMES GRANULARITY [threads]`.

use anes_core::NesConfig;
use anes_core::movie::InputStream;
use anes_lockstep::{Granularity, Lockstep, LockstepConfig, NesMachine, RunOutcome, Threading};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "ROM INPUT FRAMES frame|scanline|instruction [threads]";
    let rom = std::fs::read(args.get(1).expect(usage)).expect("read ROM");
    let inputs = InputStream::from_bytes(&std::fs::read(args.get(2).expect(usage)).expect("read input"))
        .expect("input stream");
    let frames: u64 = args.get(3).expect(usage).parse().expect("FRAMES");
    let (granularity, window) = match args.get(4).map(String::as_str) {
        Some("frame") => (Granularity::Frame, 16),
        Some("scanline") => (Granularity::Scanline, 16 * 262),
        Some("instruction") => (Granularity::Instruction, 16_384),
        _ => panic!("{usage}"),
    };
    let threading = match args.get(5).map(String::as_str) {
        Some("threads") => Threading::Threaded { window },
        _ => Threading::SameThread,
    };
    let machine = NesMachine::from_ines(&rom, NesConfig::default()).expect("parse ROM");
    let config = LockstepConfig { granularity, threading, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(machine.clone(), machine, config).expect("config");
    let outcome = lockstep.run(&inputs, frames);
    assert_eq!(outcome, RunOutcome::Agreed { frames });
    println!("{} sync points, final {:?}", lockstep.sync_points(), lockstep.last_verified_record());
}
