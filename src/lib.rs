//! anes: a deterministic dual-emulator lockstep harness with a cycle-accurate NES core.
//!
//! The console has two faces:
//!
//! - the embedder's, for a program that runs games: [`prelude`] (`use anes::prelude::*;`) has what
//!   one needs to load a ROM, press buttons, run frames, take the picture in RGBA8888, XRGB8888 or
//!   RGB565, the audio, save and load states, compare state hashes and run two consoles in
//!   lockstep. `docs/EMBEDDING.md` walks through it;
//! - the harness's, for tests and the lockstep runner: [`harness`] (fault injection, lagging steps,
//!   `set_pc`), methods of a trait so they stay off the console's own surface.
//!
//! The workspace's crates are here whole: [`nes`] (the core: [`Nes`] and its chips, state, movies),
//! [`frontend`] (the [`frontend::Console`] a frontend drives, palettes, resampling, timing),
//! [`lockstep`] (two machines compared at every sync point, divergences localized to the
//! instruction and field, verified checkpoints and rollback) and [`conformance`] (test ROM suites
//! from a manifest).
//!
//! ```
//! use anes::prelude::*;
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
pub use anes_core as nes;
pub use anes_core::harness;
pub use anes_core::{Cartridge, CpuState, FrameRecord, Nes, NesConfig, RomError, RomInfo, StateHash};
pub use anes_frontend as frontend;
pub use anes_lockstep as lockstep;

pub mod prelude {
    //! The embedder's names, for `use anes::prelude::*;` (see `docs/EMBEDDING.md`).
    //!
    //! [`Console`] is the console as a program running games drives it: ROM bytes in, frames run
    //! with [`FrameInput`], the picture through a [`Palette`] in a [`PixelFormat`], stereo audio,
    //! snapshots in fixed-size buffers, the [`StateHash`]. [`Nes`] is the bare machine under it, and
    //! [`Lockstep`] runs two machines ([`NesMachine`]) over one [`InputStream`] and stops at the
    //! first difference.

    pub use anes_core::input::{NoSuchPort, buttons};
    pub use anes_core::movie::{ConsoleCommand, FrameInput, InputStream};
    pub use anes_core::ppu::{PICTURE_HEIGHT, PICTURE_WIDTH};
    pub use anes_core::state::{FrameRecord, SnapshotError, StateHash};
    pub use anes_core::{Cartridge, Nes, NesConfig, PowerOnProfile, Region, RomError};
    pub use anes_frontend::{
        Console, ConsoleError, ConsoleStateError, FRAMES_PER_SECOND, Overscan, Palette, PixelFormat,
        machine_snapshot,
    };
    pub use anes_lockstep::{Lockstep, LockstepConfig, NesMachine, RunOutcome};
}

/// The guide `docs/EMBEDDING.md`, whose Rust examples run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../docs/EMBEDDING.md")]
struct EmbeddingGuide;
