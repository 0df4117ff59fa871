//! anes: a deterministic dual-emulator lockstep harness with a cycle-accurate NES core.
//!
//! This facade re-exports the public API of the workspace's crates: [`core`] (the console),
//! [`lockstep`] (two machines compared at every sync point, divergences localized to the instruction
//! and field, verified checkpoints and rollback) and [`conformance`] (test ROM suites from a manifest).
//!
//! ```
//! use anes::core::movie::FrameInput;
//! use anes::core::{Cartridge, Nes, NesConfig};
//!
//! // A 16 KiB NROM cartridge whose program is an endless loop at $C000.
//! let mut rom = vec![0x4E, 0x45, 0x53, 0x1A, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
//! let mut prg = vec![0xEA; 0x4000];
//! prg[..3].copy_from_slice(&[0x4C, 0x00, 0xC0]); // JMP $C000
//! prg[0x3FFC..0x3FFE].copy_from_slice(&[0x00, 0xC0]); // reset vector
//! rom.extend_from_slice(&prg);
//! rom.extend_from_slice(&[0; 0x2000]);
//!
//! let mut a = Nes::new(Cartridge::from_ines(&rom)?, NesConfig::default());
//! let mut b = Nes::new(Cartridge::from_ines(&rom)?, NesConfig::default());
//! for _ in 0..3 {
//!     assert_eq!(a.run_frame(FrameInput::default()), b.run_frame(FrameInput::default()));
//! }
//! # Ok::<(), anes::RomError>(())
//! ```

pub use anes_conformance as conformance;
pub use anes_core as core;
pub use anes_core::{Cartridge, CpuState, FrameRecord, Nes, NesConfig, RomError, RomInfo, StateHash};
pub use anes_lockstep as lockstep;
