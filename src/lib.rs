//! anes: a deterministic dual-emulator lockstep harness with a cycle-accurate NES core.
//!
//! This facade re-exports the public API of the workspace's crates: [`core`] (the console) and
//! [`conformance`] (test ROM suites run from a manifest).

pub use anes_conformance as conformance;
pub use anes_core as core;
pub use anes_core::{Cartridge, CpuState, Nes, NesConfig, RomError, RomInfo};
