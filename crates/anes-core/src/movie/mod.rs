//! Input streams: what the players did, frame by frame.
//!
//! An [`InputStream`] holds one [`FrameInput`] per frame: the buttons held on both controller ports
//! and an optional console command (soft reset, power cycle) applied before the frame runs. It is
//! stored in anes's own compact, versioned, checksummed binary format ([`InputStream::to_bytes`],
//! [`InputStream::from_bytes`]; layout in `docs/state-format.md`) and can be imported from FCEUX
//! `.fm2` movies ([`InputStream::from_fm2`]).
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

pub use fm2::Fm2Error;
pub use format::{INPUT_STREAM_MAGIC, INPUT_STREAM_VERSION, InputStreamError};

/// A console command applied at the start of a frame, before its input is latched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Command {
    /// Nothing.
    #[default]
    None = 0,
    /// The reset button.
    SoftReset = 1,
    /// Power off and on again (state returns to the machine config's power-on state).
    PowerCycle = 2,
}

impl Command {
    /// Decodes the stored byte; `None` for values no version of the format defines.
    pub const fn from_u8(value: u8) -> Option<Command> {
        match value {
            0 => Some(Command::None),
            1 => Some(Command::SoftReset),
            2 => Some(Command::PowerCycle),
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
    pub command: Command,
}

impl FrameInput {
    /// Input with the given buttons and no command.
    pub const fn buttons(port1: u8, port2: u8) -> FrameInput {
        FrameInput { pads: [port1, port2], command: Command::None }
    }
}

/// A sequence of per-frame inputs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InputStream {
    frames: Vec<FrameInput>,
}

impl InputStream {
    /// An empty stream.
    pub fn new() -> InputStream {
        InputStream::default()
    }

    /// A stream of the given frames.
    pub fn from_frames(frames: Vec<FrameInput>) -> InputStream {
        InputStream { frames }
    }

    /// Appends a frame.
    pub fn push(&mut self, frame: FrameInput) {
        self.frames.push(frame);
    }

    /// The frames.
    pub fn frames(&self) -> &[FrameInput] {
        &self.frames
    }

    /// Number of frames.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// True when the stream has no frames.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Input for frame `index`; past the end, no buttons (a stream ends with the controllers released).
    pub fn frame(&self, index: usize) -> FrameInput {
        self.frames.get(index).copied().unwrap_or_default()
    }
}
