//! Rollback netplay for the anes core with [GGRS](https://docs.rs/ggrs): an adapter that answers
//! GGRS's requests with a [`Console`].
//!
//! - Inputs are plain old data: a [`PlayerInput`] is one controller's buttons and a console button
//!   (reset, power), two bytes on the wire.
//! - Saving writes a console snapshot (Game Genie codes included) into the buffer the cell already
//!   holds, so steady-state saving reuses GGRS's ring of states instead of allocating.
//! - The checksum is the machine's blake3 state hash (its first 16 bytes): two peers agree on it
//!   exactly when their machines are identical, byte for byte, identity included.
//! - Loading restores the snapshot; advancing runs one frame with player `i`'s input on port `i`.
//!
//! ```
//! use anes_frontend::Console;
//! use anes_ggrs::{AnesConfig, PlayerInput, RollbackConsole};
//! use ggrs::SessionBuilder;
//! # let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap();
//! let console = Console::with_config(&rom, Default::default(), None)?;
//! let mut game = RollbackConsole::new(console);
//! // Forced rollbacks every frame: each frame GGRS loads the state of 4 frames ago, re-runs those
//! // frames and compares the checksums.
//! let mut session = SessionBuilder::<AnesConfig>::new()
//!     .with_num_players(2)?
//!     .with_check_distance(4)
//!     .start_synctest_session()?;
//! for frame in 0..60u8 {
//!     session.add_local_input(0, PlayerInput { buttons: frame & 0x81, command: 0 })?;
//!     session.add_local_input(1, PlayerInput::default())?;
//!     game.handle_requests(session.advance_frame()?)?;
//! }
//! assert_eq!(game.frames_advanced(), 60 + 4 * (60 - 5));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use anes_frontend::anes_core::movie::{ConsoleCommand, FrameInput};
use anes_frontend::anes_core::state::StateHash;
use anes_frontend::{Console, ConsoleStateError};
use ggrs::{Frame, GameStateCell, GgrsRequest, InputStatus, PredictRepeatLast};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// One player's input for one frame: the buttons held on their controller
/// ([`anes_frontend::anes_core::input::buttons`]) and a console button (reset, power), which any
/// player may press: the frame's command is the first player's non-zero one.
#[repr(C)]
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    bytemuck::Pod,
    bytemuck::Zeroable,
    Serialize,
    Deserialize,
)]
pub struct PlayerInput {
    /// The buttons, one bit each.
    pub buttons: u8,
    /// A [`ConsoleCommand`] as its byte (0 none, 1 reset, 2 power cycle). Other values, which no peer of
    /// this version sends, are ignored by every peer alike.
    pub command: u8,
}

impl PlayerInput {
    /// Player `port`'s part of a frame of an input stream: that pad's buttons, and the console
    /// command on player 0.
    pub fn from_frame(frame: FrameInput, port: usize) -> PlayerInput {
        let command = if port == 0 { frame.command as u8 } else { 0 };
        PlayerInput { buttons: frame.pads[port & 1], command }
    }
}

/// The GGRS configuration for an anes console: [`PlayerInput`]s, console snapshots as the state,
/// UDP socket addresses for peers.
#[derive(Debug)]
pub struct AnesConfig;

impl ggrs::Config for AnesConfig {
    type Input = PlayerInput;
    type InputPredictor = PredictRepeatLast;
    type State = Vec<u8>;
    type Address = std::net::SocketAddr;
}

/// Why a request could not be fulfilled.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RollbackError {
    /// GGRS asked to load a cell that holds no state.
    #[error("GGRS asked to load frame {frame}, but its cell holds no saved state")]
    EmptyCell {
        /// The frame asked for.
        frame: Frame,
    },
    /// The console refused a snapshot.
    #[error("loading frame {frame}: {source}")]
    Load {
        /// The frame asked for.
        frame: Frame,
        /// Why the console refused it.
        source: ConsoleStateError,
    },
    /// The console is not at the frame GGRS names (a request was skipped or answered twice).
    #[error("GGRS names frame {ggrs} but the console is at session frame {console}")]
    FrameMismatch {
        /// The frame in the request.
        ggrs: Frame,
        /// The console's frame, counted from the session's start.
        console: u64,
    },
    /// More players than the console has ports.
    #[error("{players} players; an NES has two controller ports")]
    Players {
        /// Players in the request.
        players: usize,
    },
}

/// The checksum GGRS compares: the first 16 bytes of the blake3 state hash.
pub fn checksum(hash: StateHash) -> u128 {
    u128::from_le_bytes(hash.0[..16].try_into().expect("16 bytes"))
}

/// A console that answers GGRS requests.
#[derive(Debug)]
pub struct RollbackConsole {
    console: Console,
    /// The console's frame counter when the session started (GGRS frame 0).
    start_frame: u64,
    /// Frames run, re-simulated ones included.
    frames_advanced: u64,
    /// States loaded (rollbacks).
    loads: u64,
}

impl RollbackConsole {
    /// Wraps a console; its current frame is the session's frame 0.
    pub fn new(console: Console) -> RollbackConsole {
        let start_frame = console.nes().frame();
        RollbackConsole { console, start_frame, frames_advanced: 0, loads: 0 }
    }

    /// Fulfils GGRS's requests in order.
    pub fn handle_requests(&mut self, requests: Vec<GgrsRequest<AnesConfig>>) -> Result<(), RollbackError> {
        for request in requests {
            match request {
                GgrsRequest::SaveGameState { cell, frame } => self.save(&cell, frame)?,
                GgrsRequest::LoadGameState { cell, frame } => self.load(&cell, frame)?,
                GgrsRequest::AdvanceFrame { inputs } => self.advance(&inputs)?,
            }
        }
        Ok(())
    }

    /// Saves the console into `cell`, reusing the buffer the cell holds, with its checksum.
    pub fn save(&mut self, cell: &GameStateCell<Vec<u8>>, frame: Frame) -> Result<(), RollbackError> {
        self.check_frame(frame)?;
        // The cell's previous state is overwritten anyway: take its buffer to write into.
        let mut buffer =
            cell.data().map(|mut old| std::mem::take(old.as_mut_dangerous())).unwrap_or_default();
        buffer.resize(self.console.snapshot_len(), 0);
        self.console.save_state_into(&mut buffer).expect("the buffer has the snapshot's size");
        cell.save(frame, Some(buffer), Some(checksum(self.console.state_hash())));
        Ok(())
    }

    /// Restores the state in `cell`.
    pub fn load(&mut self, cell: &GameStateCell<Vec<u8>>, frame: Frame) -> Result<(), RollbackError> {
        let state = cell.data().ok_or(RollbackError::EmptyCell { frame })?;
        self.console.load_state(&state).map_err(|source| RollbackError::Load { frame, source })?;
        drop(state);
        self.loads += 1;
        self.check_frame(frame)
    }

    /// Runs one frame: player `i`'s buttons on port `i`, the first console command any player
    /// pressed; a disconnected player presses nothing.
    pub fn advance(&mut self, inputs: &[(PlayerInput, InputStatus)]) -> Result<(), RollbackError> {
        if inputs.len() > 2 {
            return Err(RollbackError::Players { players: inputs.len() });
        }
        let mut frame = FrameInput::default();
        for (pad, (input, status)) in frame.pads.iter_mut().zip(inputs) {
            if *status != InputStatus::Disconnected {
                *pad = input.buttons;
                if frame.command == ConsoleCommand::None {
                    frame.command = ConsoleCommand::from_u8(input.command).unwrap_or(ConsoleCommand::None);
                }
            }
        }
        self.console.run_frame(frame);
        self.frames_advanced += 1;
        Ok(())
    }

    fn check_frame(&self, frame: Frame) -> Result<(), RollbackError> {
        let console = self.console.nes().frame() - self.start_frame;
        if u64::try_from(frame).ok() != Some(console) {
            return Err(RollbackError::FrameMismatch { ggrs: frame, console });
        }
        Ok(())
    }

    /// The console.
    pub fn console(&self) -> &Console {
        &self.console
    }

    /// The console, mutable (for presenting its picture and audio; changing its state outside
    /// GGRS's requests desynchronizes the peers).
    pub fn console_mut(&mut self) -> &mut Console {
        &mut self.console
    }

    /// Frames run so far, re-simulated ones included.
    pub fn frames_advanced(&self) -> u64 {
        self.frames_advanced
    }

    /// States loaded so far (rollbacks).
    pub fn loads(&self) -> u64 {
        self.loads
    }
}
