//! anes-core: a cycle-accurate, deterministic NES (the NTSC 2A03 + 2C02, the PAL 2A07 + 2C07 and the
//! Dendy) with no I/O, no clock and no globals, so any number of consoles can run side by side in one
//! process and agree bit for bit.
//!
//! The CPU drives time: every bus access is one CPU cycle, by the end of which the PPU is owed the dots
//! up to the master clock (paid lazily, where the CPU could notice: [`PpuCatchUp`]) and the APU and the
//! cartridge see the cycle. See `docs/ARCHITECTURE.md`.
//!
//! ```
//! use anes_core::input::buttons;
//! use anes_core::movie::FrameInput;
//! use anes_core::{Cartridge, Nes, NesConfig};
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes");
//! let bytes = std::fs::read(path)?;
//! let mut nes = Nes::new(Cartridge::from_ines(&bytes)?, NesConfig::default());
//! nes.set_audio_sample_rate(Some(48_000));
//! let mut audio = vec![0.0f32; 4096];
//! let mut state = Vec::new();
//! for frame in 0..60 {
//!     let start = if frame == 30 { buttons::START } else { 0 };
//!     let record = nes.run_frame(FrameInput::buttons(start, 0));
//!     let samples = nes.drain_audio(&mut audio); // mono f32 at 48 kHz
//!     assert!(samples < audio.len());
//!     if frame == 40 {
//!         nes.save_state(&mut state);
//!     }
//!     assert_eq!(record.frame, frame + 1);
//! }
//! let at_60 = nes.state_hash();
//! nes.load_state(&state)?;
//! for _ in 41..60 {
//!     nes.run_frame(FrameInput::default());
//! }
//! assert_eq!(nes.state_hash(), at_60, "the same frames from the same state");
//! let picture: &[u16] = nes.ppu().frame_buffer(); // 256x240: palette index and emphasis bits
//! assert_eq!(picture.len(), anes_core::ppu::PICTURE_WIDTH * anes_core::ppu::PICTURE_HEIGHT);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! An embedder's program needs `use anes::prelude::*;` of the facade crate `anes` (pictures in
//! RGBA, stereo audio at any rate: `docs/EMBEDDING.md`); the hooks of test and lockstep harnesses
//! are in [`harness`].

// State sections are hashed and snapshotted as their structs' bytes (`state/sections.rs`), which are
// the little-endian layout `docs/state-format.md` gives only on a little-endian host: a big-endian
// build would hash alike no machine of another host's, so there is none.
#[cfg(not(target_endian = "little"))]
compile_error!(
    "anes-core's state hashes and snapshots are little-endian byte for byte: a big-endian target is not supported"
);

pub mod apu;
pub mod bus;
pub mod cart;
pub mod clock;
pub mod cpu;
pub mod harness;
pub mod hex;
mod host;
pub mod input;
mod layout;
pub mod movie;
mod nes;
pub mod power_on;
pub mod ppu;
pub mod region;
mod spin;
pub mod state;

pub use apu::ApuCatchUp;
pub use bus::PpuCatchUp;
pub use cart::{
    BatteryRamError, Cartridge, GameGenieCode, HeaderRegion, Mirroring, Mmc3Revision, RomError, RomInfo,
};
pub use cpu::CpuState;
pub use nes::Nes;
pub use power_on::{
    NesConfig, PaletteInit, PowerOnError, PowerOnProfile, PpuWarmUp, RamInit, VblankAtPowerOn,
};
pub use region::Region;
pub use state::{FrameRecord, Section, StateHash};

/// The emulation epoch: bumped by every intended change of emulated behaviour (a timing fix, a new
/// state field, a new hashed layout), in the same commit that re-blesses the golden records. Two
/// builds of one epoch must produce the same frame records for the same ROM and inputs, so a canary
/// that differs from its baseline within an epoch is a regression; across epochs a difference is the
/// expected change (`anes canary` tells which).
///
/// History: 1, the state and hash layout of snapshot format 1 with the state hash domain "anes state
/// hash v2". 2, the accuracy work of issue 13: SH* with DMA, the 2A03's internal data bus, register
/// activation and joypad timing, the APU frame counter's $4015 read timing, the DMC's delayed enable
/// and DMA aborts, OAMDATA writes while rendering, PPUSTATUS's sprite flags and OAMDATA sampled as
/// the read ends (new bus, APU, input and PPU state fields, section versions 2-3). 3, PPUMASK's
/// rendering enable reaching the PPU's pipeline 3 dots after the write, the background shifters'
/// serial input, and the sprite output units through forced blank (the PPU's former reserved byte
/// holds the units' state while rendering is off). 4, OAM corruption after rendering is disabled on
/// a rendering line, and the pre-render line's sprite fetches loading stale secondary OAM for
/// scanline 0, with the odd-frame skip moving each unit's first pixel to x = 0 (PPU section version
/// 3: the owed corruption, the units' first pixels and 5 reserved bytes); the OAM bus after sprite
/// evaluation has seen every sprite (secondary OAM at its address; m back to 0 after the overflow
/// sprite's bytes). 6, the 2C07's forced OAM refresh (OAMADDR counting through PAL VBlank lines
/// 265-310): PAL consoles only. 7, the MMC5's sound (its state grew from 82 to 98 bytes, so every
/// MMC5 record's state hash changed): mapper 5 only. 8, the flash of UNROM 512 (battery bit) and
/// GTROM programmed by the game, the flash as the PRG RAM section and the flash command state in
/// theirs: those two boards only. 9, the VRC4's `$9002` bit 0 PRG RAM
/// enable (disabled at power-on) and its `$9000` selects 1 and 3 setting nothing, and mapper 93's
/// CHR RAM disable bit: mappers 21/23/25 (VRC4) and 93 only. 10, a $4015 write that disables the
/// DMC on the cycle its timer fires empties the sample (bit 4 of $4015) after the ordinary 3 or 2
/// cycles while the DMA begun there is still held to the longer delay (the DMC's `length_clear_delay`,
/// a former reserved byte): no golden record moved. 11, power-on as a choice (issue 49): the
/// default powers on with PPUSTATUS clear and without the PPU's warm-up (writes taken at once), and
/// the machine section holds the palette, OAM, VBlank and warm-up choices in four former reserved
/// bytes: every record's state hash changed from frame 0. 12, a PPUDATA read outside rendering
/// fills the read buffer a few dots late as one while rendering does (a read on the next cycle
/// returns the old buffer: blargg's double_2007_read), the byte held in the PPU's data pins (PPU
/// section version 5): every record's state hash changed from frame 1 (the version is hashed); the
/// records of the ROMs that read PPUDATA with rendering off (most board ROMs, dma_collide) would
/// have changed without it, their cycles and positions did not. Also in 12: the reset button
/// resets the frame counter's sequence, so the old sequence no longer runs on (to its interrupt
/// flag) until the rewrite of $4017 restarts it: no record moved (no golden run presses reset). 13,
/// the identity covers the header's wiring (mapper, submapper, mirroring, battery, RAM sizes, a
/// trainer; `Cartridge::wiring`), which changed what the machine does without changing its hash:
/// every record's state hash changed (the identity is hashed), no cycle or position.
pub const EMULATION_EPOCH: u32 = 13;
