//! Demonstrates the harness catching an injected fault: two consoles run a ROM in lockstep, machine B
//! gets the faults given as spec strings, and the evidence bundle is written to `DIR`.
//! `cargo run -p anes-lockstep --example fault_demo -- [ROM] [DIR] [SPEC]...`
//! (default: the synthetic test ROM, `anes-evidence/fault-demo`, `flip:ram:0x0010:3@500000`; the
//! bundle files in `DIR` are replaced on every run).

use std::path::PathBuf;

use anes_core::NesConfig;
use anes_core::movie::{FrameInput, InputStream};
use anes_lockstep::{FaultPlan, Lockstep, LockstepConfig, NesMachine, RunOutcome};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rom = match args.first().filter(|a| a.as_str() != "-") {
        Some(path) => std::fs::read(path).expect("read ROM"),
        None => anes_fixtures::tiny_rom(),
    };
    let dir = PathBuf::from(args.get(1).map_or("anes-evidence/fault-demo", String::as_str));
    let specs: Vec<&str> = if args.len() > 2 {
        args[2..].iter().map(String::as_str).collect()
    } else {
        vec!["flip:ram:0x0010:3@500000"]
    };
    let faults = FaultPlan::parse(&specs).unwrap_or_else(|e| panic!("{e}"));
    let machine = NesMachine::from_ines(&rom, NesConfig::default()).expect("parse ROM");
    let config = LockstepConfig { checkpoint_every: 10, faults, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(machine.clone(), machine, config).expect("fault plan fits");
    let inputs =
        InputStream::from_frames((0..600u32).map(|i| FrameInput::buttons((i / 9) as u8, 0)).collect());
    match lockstep.run(&inputs, 600) {
        RunOutcome::Agreed { frames } => println!("no divergence in {frames} frames"),
        RunOutcome::Diverged(_) => {
            let evidence = lockstep.evidence().expect("kept");
            println!("{}", evidence.message());
            let html = evidence.write_bundle(&dir).expect("bundle written");
            println!("evidence: {}", html.display());
        }
    }
}
