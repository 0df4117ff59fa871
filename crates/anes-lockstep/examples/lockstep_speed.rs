//! Measures emulated frames per second: one instance alone, two in lockstep on one thread, and two
//! in lockstep on two worker threads. `cargo run --release -p anes-lockstep --example lockstep_speed
//! -- [ROM] [FRAMES]` (default: the synthetic test ROM, 3,000 frames).
//!
//! Besides wall-clock speed it prints frames per CPU-second of each instance (process CPU time from
//! `/proc/self/stat`, Linux only): on a busy machine that is the speed an idle core would give.

use std::time::Instant;

use anes_core::NesConfig;
use anes_core::movie::{FrameInput, InputStream};
use anes_lockstep::{Lockstep, LockstepConfig, Machine, NesMachine, RunOutcome, Threading};

/// User + system CPU time of this process in seconds (clock ticks of 1/100 s), if known.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn report(name: &str, frames: u64, instances: u64, wall: f64, cpu: Option<f64>) {
    let per_cpu = cpu.map_or(String::new(), |cpu| {
        format!(", {:>6.0} frames per CPU-second per instance", (frames * instances) as f64 / cpu)
    });
    println!("{name:<24} {:>6.0} frames/s per instance{per_cpu}", frames as f64 / wall);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rom = match args.get(1) {
        Some(path) => std::fs::read(path).expect("read ROM"),
        None => anes_fixtures::tiny_rom(),
    };
    let frames: u64 = args.get(2).map_or(3000, |f| f.parse().expect("FRAMES"));
    let machine = NesMachine::from_ines(&rom, NesConfig::default()).expect("parse ROM");
    let inputs = InputStream::new();

    let mut single = machine.clone();
    let (start, cpu) = (Instant::now(), cpu_seconds());
    for _ in 0..frames {
        single.run_frame(FrameInput::default());
    }
    let cpu = cpu.zip(cpu_seconds()).map(|(before, after)| after - before);
    report("single instance", frames, 1, start.elapsed().as_secs_f64(), cpu);

    for (name, threading) in
        [("same thread", Threading::SameThread), ("two threads", Threading::Threaded { window: 8 })]
    {
        let config = LockstepConfig { threading, ..LockstepConfig::default() };
        let mut lockstep = Lockstep::new(machine.clone(), machine.clone(), config).expect("config");
        let (start, cpu) = (Instant::now(), cpu_seconds());
        let outcome = lockstep.run(&inputs, frames);
        assert_eq!(outcome, RunOutcome::Agreed { frames });
        let cpu = cpu.zip(cpu_seconds()).map(|(before, after)| after - before);
        report(&format!("lockstep, {name}"), frames, 2, start.elapsed().as_secs_f64(), cpu);
    }

    // The same two threads, in runs of 60 frames (as the criterion bench measures): the workers are
    // started for every run.
    let config = LockstepConfig { threading: Threading::Threaded { window: 8 }, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(machine.clone(), machine.clone(), config).expect("config");
    let (start, cpu) = (Instant::now(), cpu_seconds());
    for _ in 0..frames / 60 {
        assert_eq!(lockstep.run(&inputs, 60), RunOutcome::Agreed { frames: 60 });
    }
    let cpu = cpu.zip(cpu_seconds()).map(|(before, after)| after - before);
    report("two threads, 60 a run", frames / 60 * 60, 2, start.elapsed().as_secs_f64(), cpu);
}
