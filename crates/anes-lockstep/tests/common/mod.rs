//! Shared helpers of the integration tests.

#![allow(dead_code)]

use std::path::PathBuf;

use anes_core::NesConfig;
use anes_lockstep::testing::check_contract;
use anes_lockstep::{Machine, NesMachine};

/// True under CI: the `CI` environment variable is set to anything but empty, `0` or `false` (CI
/// services set `CI=true`). Under CI a missing conformance folder fails the tests that need it
/// instead of skipping them.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|value| !matches!(value.trim(), "" | "0" | "false"))
}

/// nestest.nes from the shared conformance ROMs, if present (under CI it must be).
pub fn nestest() -> Option<Vec<u8>> {
    let path = conformance_roms()?.join("other/nestest.nes");
    match std::fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(e) if in_ci() => panic!("CI is set and {} cannot be read: {e}", path.display()),
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
    if found.is_none() && in_ci() {
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
