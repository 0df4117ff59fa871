//! Measures emulated frames per second: one instance alone, two in lockstep on one thread, and two
//! in lockstep on two worker threads. `cargo run --release -p anes-lockstep --example lockstep_speed
//! -- [ROM] [FRAMES]` (default: the synthetic test ROM, 3,000 frames).

use std::time::Instant;

use anes_core::NesConfig;
use anes_core::movie::{FrameInput, InputStream};
use anes_lockstep::{Lockstep, LockstepConfig, Machine, NesMachine, RunOutcome, Threading};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rom = match args.get(1) {
        Some(path) => std::fs::read(path).expect("read ROM"),
        None => anes_lockstep::testing::tiny_rom(),
    };
    let frames: u64 = args.get(2).map_or(3000, |f| f.parse().expect("FRAMES"));
    let machine = NesMachine::from_ines(&rom, NesConfig::default()).expect("parse ROM");
    let inputs = InputStream::new();

    let mut single = machine.clone();
    let start = Instant::now();
    for _ in 0..frames {
        single.run_frame(FrameInput::default());
    }
    let fps_single = frames as f64 / start.elapsed().as_secs_f64();
    println!("single instance:        {fps_single:>9.0} frames/s");

    for (name, threading) in
        [("same thread", Threading::SameThread), ("two threads", Threading::Threaded { window: 8 })]
    {
        let config = LockstepConfig { threading, ..LockstepConfig::default() };
        let mut lockstep = Lockstep::new(machine.clone(), machine.clone(), config).expect("config");
        let start = Instant::now();
        let outcome = lockstep.run(&inputs, frames);
        assert_eq!(outcome, RunOutcome::Agreed { frames });
        let fps = frames as f64 / start.elapsed().as_secs_f64();
        println!("lockstep, {name}:  {fps:>9.0} frames/s per instance");
    }
}
