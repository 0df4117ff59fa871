//! Shared helpers of the integration tests.

#![allow(dead_code)]

use std::path::PathBuf;

use anes_core::NesConfig;
use anes_lockstep::NesMachine;

/// nestest.nes from the shared conformance ROMs, if present.
pub fn nestest() -> Option<Vec<u8>> {
    conformance_roms().and_then(|dir| std::fs::read(dir.join("other/nestest.nes")).ok())
}

/// The conformance ROMs: `$ANES_CONFORMANCE_DIR/roms`, else `shared/conformance/roms` beside the
/// project (or beside any folder above it, for worktrees).
pub fn conformance_roms() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("ANES_CONFORMANCE_DIR") {
        return Some(PathBuf::from(dir).join("roms")).filter(|dir| dir.is_dir());
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("shared/conformance/roms"))
        .find(|dir| dir.is_dir())
}

/// The NES subject if the core keeps the whole [`anes_lockstep::Machine`] contract (snapshots that
/// restore the exact position, replays that repeat); otherwise `None`, with the reason printed, and the
/// test runs on [`anes_lockstep::testing::FakeMachine`] instead.
pub fn nes_subject(test: &str) -> Option<NesMachine> {
    let machine = subject(test);
    match anes_lockstep::testing::check_contract(&machine, 2) {
        Ok(()) => Some(machine),
        Err(violation) => {
            eprintln!(
                "{test}: the NES core breaks the Machine contract ({violation}); running on FakeMachine"
            );
            None
        }
    }
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
            NesMachine::from_ines(&anes_lockstep::testing::tiny_rom(), NesConfig::default()).expect("parses")
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
