//! Input streams: what the players did, frame by frame.
//!
//! An [`InputStream`] holds one [`FrameInput`] per frame: the buttons held on both controller ports
//! and an optional console command (soft reset, power cycle) applied before the frame runs. It is
//! stored in anes's own compact, versioned, checksummed binary format ([`InputStream::to_bytes`],
//! [`InputStream::from_bytes`]; layout in `docs/state-format.md`) and can be imported from FCEUX
//! `.fm2` movies ([`InputStream::from_fm2`]).
//!
//! A stream is kept run-length encoded in memory as in its file, so its memory follows the number of
//! input changes, never the frame count: a valid file of a few hundred kilobytes may hold four billion
//! frames. [`InputStream::frame`] answers from the runs without allocating.
//!
//! ```
//! use anes_core::movie::{FrameInput, InputStream};
//! use anes_core::input::buttons;
//! let mut stream = InputStream::new();
//! stream.push(FrameInput::buttons(buttons::START, 0));
//! stream.push(FrameInput::default());
//! let bytes = stream.to_bytes();
//! assert_eq!(InputStream::from_bytes(&bytes).unwrap(), stream);
//! ```

mod fm2;
mod format;
mod runs;

pub use fm2::{Fm2Error, Fm2Header};
pub use format::{INPUT_STREAM_MAGIC, INPUT_STREAM_VERSION, InputStreamError, MAX_INPUT_STREAM_LEN};
pub use runs::{Frames, InputRun, InputStream, MAX_FRAMES};

/// A console command applied at the start of a frame, before its input is latched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum ConsoleCommand {
    /// No command: the frame continues from where the last one ended.
    #[default]
    None = 0,
    /// The reset button.
    SoftReset = 1,
    /// Power off and on again (state returns to the machine config's power-on state).
    PowerCycle = 2,
}

impl ConsoleCommand {
    /// Decodes the stored byte; `None` for values no version of the format defines.
    pub const fn from_u8(value: u8) -> Option<ConsoleCommand> {
        match value {
            0 => Some(ConsoleCommand::None),
            1 => Some(ConsoleCommand::SoftReset),
            2 => Some(ConsoleCommand::PowerCycle),
            _ => None,
        }
    }
}

/// Input for one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrameInput {
    /// Buttons held on ports 1 and 2 (bit layout of [`crate::input::buttons`]).
    pub pads: [u8; 2],
    /// Console command applied before the frame.
    pub command: ConsoleCommand,
}

impl FrameInput {
    /// Input with the given buttons and no command.
    pub const fn buttons(port1: u8, port2: u8) -> FrameInput {
        FrameInput { pads: [port1, port2], command: ConsoleCommand::None }
    }
}
