//! Shared helpers of the integration tests.

#![allow(dead_code)]

use std::path::PathBuf;

use anes_core::NesConfig;
use anes_core::harness::Harness;
use anes_lockstep::check_contract;
use anes_lockstep::{Machine, NesMachine};

/// nestest.nes from the shared conformance ROMs, if present (under CI it must be).
pub fn nestest() -> Option<Vec<u8>> {
    let path = conformance_roms()?.join("other/nestest.nes");
    match std::fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(e) if anes_fs::ci_is_set() => panic!("CI is set and {} cannot be read: {e}", path.display()),
        Err(_) => None,
    }
}

/// The conformance ROMs: `$ANES_CONFORMANCE_DIR/roms`, else `shared/conformance/roms` beside the
/// project (or beside any folder above it, for worktrees). `None` when missing, except under CI,
/// where a missing folder panics naming every place looked in.
pub fn conformance_roms() -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var_os("ANES_CONFORMANCE_DIR") {
        Some(dir) => vec![PathBuf::from(dir).join("roms")],
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .map(|dir| dir.join("shared/conformance/roms"))
            .collect(),
    };
    let found = candidates.iter().find(|dir| dir.is_dir()).cloned();
    if found.is_none() && anes_fs::ci_is_set() {
        let looked: Vec<String> = candidates.iter().map(|dir| dir.display().to_string()).collect();
        panic!(
            "CI is set and the conformance ROMs are missing: looked in {} (set ANES_CONFORMANCE_DIR to the folder holding roms/)",
            looked.join(", ")
        );
    }
    found
}

/// The NES subject ([`subject`]), after checking that the core keeps the whole
/// [`anes_lockstep::Machine`] contract (snapshots that restore the exact position, replays that
/// repeat). A broken contract fails the test.
pub fn nes_subject(test: &str) -> NesMachine {
    keeping_contract(subject(test))
}

/// `machine`, if it keeps the [`Machine`] contract; panics with the violation if it does not. The
/// runner's promises hold only for machines that keep it, so a test never carries on without it.
pub fn keeping_contract<M: Machine + Clone>(machine: M) -> M {
    if let Err(violation) = check_contract(&machine, 2) {
        panic!("the machine breaks the Machine contract: {violation}");
    }
    machine
}

/// A machine running nestest in automation mode (PC = $C000: all CPU tests back to back, a busy mix of
/// loads, stores, stack and flag work), or, without the conformance ROMs, the synthetic test ROM.
pub fn subject(test: &str) -> NesMachine {
    match nestest() {
        Some(rom) => {
            let mut machine = NesMachine::from_ines(&rom, NesConfig::default()).expect("nestest parses");
            machine.nes_mut().set_pc(0xC000);
            machine
        }
        None => {
            eprintln!(
                "{test}: shared/conformance/roms/other/nestest.nes not present; using the synthetic test ROM"
            );
            NesMachine::from_ines(&anes_fixtures::tiny_rom(), NesConfig::default()).expect("parses")
        }
    }
}

/// splitmix64: a seeded generator, so every run of a test draws the same faults.
#[derive(Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Flips of the 64-bit master and PPU clocks are drawn from their low bits: a high bit moves time by
/// years, and the machine would take that long (correctly) to reach its next sync point.
pub const CLOCK_BITS: usize = 20;

/// A random state bit to flip: a section with state, a byte of it, a bit (clocks: low bits only), a
/// CPU cycle in `start_cycle + 1 ..= start_cycle + cycle_span`, and the field's name.
pub struct DrawnFlip {
    pub section: usize,
    pub offset: usize,
    pub bit: u8,
    pub cpu_cycle: u64,
    pub name: String,
}

/// Draws a [`DrawnFlip`] of `machine`'s state (the fault campaigns share it).
pub fn draw_flip<M: Machine>(rng: &mut Rng, machine: &M, start_cycle: u64, cycle_span: u64) -> DrawnFlip {
    let sections: Vec<usize> =
        (0..machine.section_count()).filter(|&s| !machine.section_bytes(s).is_empty()).collect();
    loop {
        let section = sections[rng.below(sections.len() as u64) as usize];
        let offset = rng.below(machine.section_bytes(section).len() as u64) as usize;
        let bit = rng.below(8) as u8;
        let mut name = String::new();
        machine.field_name(section, offset, &mut name);
        if name == "bus.master_clock" || name == "bus.ppu_clock" {
            let mut first = offset;
            let mut other = String::new();
            while first > 0 {
                other.clear();
                machine.field_name(section, first - 1, &mut other);
                if other != name {
                    break;
                }
                first -= 1;
            }
            if (offset - first) * 8 + usize::from(bit) >= CLOCK_BITS {
                continue;
            }
        }
        let cpu_cycle = start_cycle + 1 + rng.below(cycle_span);
        return DrawnFlip { section, offset, bit, cpu_cycle, name };
    }
}
