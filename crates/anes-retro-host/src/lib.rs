//! anes-retro-host: a libretro frontend for the lockstep harness. It loads a libretro core and its
//! content ([`RetroCore`]: system and save folders, core options with their defaults and a way to
//! set them, pixel formats, the log interface, memory maps, RetroPad input, picture and audio
//! capture, savestates), runs it as a lockstep [`anes_lockstep::Machine`] that compares whole frames
//! ([`RetroMachine`]: a frame's hash covers the serialized state, every memory region, the picture
//! and the audio), reads a core's `.info` claims ([`info`]) and audits them ([`audit`]).
//!
//! A core keeps its state in globals, so a process holds one: two instances run in two processes
//! (`anes worker --libretro CORE --content FILE`), and a core that crashes takes only its process.
//! The worker speaks its protocol on its stdout, which the core shares: [`divert_stdout`] moves the
//! protocol to a descriptor of its own first, and what the core prints goes to stderr.
//!
//! The test core (`testcore/anes_test_core.c`, built by this crate's build script in two builds,
//! [`TEST_CORE_A`] and [`TEST_CORE_B`]) misbehaves on request, so the audit's checks can be seen to
//! catch what they claim to.

pub mod audit;
mod error;
pub mod ffi;
mod host;
pub mod info;
mod machine;
pub mod nes_view;
pub mod snapshot;
mod stdout;
mod whole_frames;

pub use error::HostError;
pub use host::{
    CoreOption, HostConfig, LogLine, MAX_CONTENT_LEN, MAX_PORTS, MAX_STATE_LEN, MapRegion, Picture, RetroCore,
};
pub use info::{CoreInfo, InfoError, SavestateLevel};
pub use machine::{RetroMachine, intern, retropad_buttons};
pub use stdout::divert_stdout;

/// The test core's build A (a shared object built with this crate).
pub const TEST_CORE_A: &str = env!("ANES_TEST_CORE_A");
/// The test core's build B: build A, but RAM $30 bit 0 flips every frame from frame 200 on, and RAM
/// $31 bit 0 on every frame Select is held.
pub const TEST_CORE_B: &str = env!("ANES_TEST_CORE_B");
