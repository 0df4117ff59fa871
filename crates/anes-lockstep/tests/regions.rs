//! The region in lockstep runs: both machines of a run are consoles of the region chosen, their frame
//! records have that region's frame length, consoles of two regions never agree, and a snapshot
//! never restores into a console of another region.

use anes_core::movie::{FrameInput, InputStream};
use anes_core::{NesConfig, Region};
use anes_fixtures::tiny_rom;
use anes_lockstep::{Lockstep, LockstepConfig, Machine, MachineError, NesMachine, RunOutcome, Threading};

fn machine(region: Region) -> NesMachine {
    NesMachine::from_ines_with_region(&tiny_rom(), NesConfig::default(), Some(region)).unwrap()
}

/// CPU cycles of `frames` frames, rounded down, from the nesdev wiki's "Cycle reference chart" and
/// "Clock rate": 341 dots a line; NTSC 262 lines, a dot 4 master clocks and a CPU cycle 12 (3 dots
/// per cycle; the odd frame's skipped dot never happens: tiny_rom leaves rendering off); PAL 312
/// lines, 5 and 16 (3.2 dots per cycle); Dendy 312 lines, 5 and 15 (3 dots per cycle).
fn cycles_of_frames(region: Region, frames: u64) -> u64 {
    let (lines, master_per_dot, master_per_cycle) = match region {
        Region::Ntsc => (262, 4, 12),
        Region::Pal => (312, 5, 16),
        Region::Dendy => (312, 5, 15),
    };
    frames * 341 * lines * master_per_dot / master_per_cycle
}

#[test]
fn both_machines_of_a_run_are_of_the_region_chosen_and_run_its_frame_length() {
    let inputs = InputStream::from_frames(vec![FrameInput::default(); 120]);
    for region in Region::ALL {
        for threading in [Threading::SameThread, Threading::Threaded { window: 4 }] {
            let config = LockstepConfig { threading, ..LockstepConfig::default() };
            let mut lockstep = Lockstep::new(machine(region), machine(region), config).unwrap();
            assert_eq!(lockstep.run(&inputs, 20), RunOutcome::Agreed { frames: 20 }, "{region}");
            let start = lockstep.last_verified_record().cpu_cycle;
            assert_eq!(lockstep.run(&inputs, 100), RunOutcome::Agreed { frames: 100 }, "{region}");
            let cycles = lockstep.last_verified_record().cpu_cycle - start;
            // A frame ends at the first instruction boundary after its point: tiny_rom's longest
            // instruction is 4 cycles, so either end may be late by up to 3 (and 1 for rounding).
            let expected = cycles_of_frames(region, 100);
            assert!(
                cycles.abs_diff(expected) <= 4,
                "{region} {threading:?}: {cycles} cycles, expected {expected}"
            );
            assert_eq!(lockstep.machine_a().nes().region(), region);
            assert_eq!(lockstep.machine_b().nes().region(), region);
        }
    }
}

#[test]
fn consoles_of_two_regions_never_agree() {
    let inputs = InputStream::from_frames(vec![FrameInput::default(); 10]);
    for (a, b) in [(Region::Ntsc, Region::Pal), (Region::Pal, Region::Dendy), (Region::Dendy, Region::Ntsc)] {
        let mut lockstep = Lockstep::new(machine(a), machine(b), LockstepConfig::default()).unwrap();
        let RunOutcome::Diverged(divergence) = lockstep.run(&inputs, 10) else {
            panic!("a {a} and a {b} console agreed");
        };
        assert_eq!(divergence.frame, 0, "{a} vs {b}: they differ from power-on");
        let report = lockstep.evidence().expect("evidence of the divergence").report();
        let region = report.fields.iter().find(|f| f.name == "machine.region");
        let region =
            region.unwrap_or_else(|| panic!("{a} vs {b}: machine.region not among {:?}", report.fields));
        assert_eq!((region.a.as_str(), region.b.as_str()), (hex(a), hex(b)));
    }
}

fn hex(region: Region) -> &'static str {
    match region {
        Region::Ntsc => "$00",
        Region::Pal => "$01",
        Region::Dendy => "$02",
    }
}

#[test]
fn a_snapshot_never_restores_into_a_console_of_another_region() {
    for from in Region::ALL {
        let mut source = machine(from);
        for _ in 0..3 {
            source.run_frame(FrameInput::default());
        }
        let mut snapshot = Vec::new();
        source.save_state(&mut snapshot);
        for into in Region::ALL {
            let mut target = machine(into);
            let before = target.state_hash();
            let loaded = target.load_state(&snapshot);
            if from == into {
                assert_eq!(loaded, Ok(()));
                assert_eq!(target.state_hash(), source.state_hash());
            } else {
                let Err(MachineError::Snapshot(message)) = loaded else {
                    panic!("a {from} snapshot restored into a {into} console: {loaded:?}");
                };
                assert!(message.contains(&format!("{from} console")), "{message}");
                assert_eq!(target.state_hash(), before, "a refused snapshot leaves the console as it was");
            }
        }
    }
}
