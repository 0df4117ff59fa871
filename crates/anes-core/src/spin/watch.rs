//! The spin-loop watch's bookkeeping, as plain data: the console holds it, `spin/mod.rs` runs it.

use crate::cpu::CpuState;

/// The watch's bookkeeping. Not state: cleared whenever a path starts.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SpinWatch {
    /// True inside the frame and line paths.
    pub on: bool,
    /// Write cycles and cycles down the full path so far (counted by the bus, `bus/mod.rs`).
    pub effects: u64,
    /// The effects count and the address at the last taken backward branch or jump: where they
    /// are the same at the next one, the turn between had no effects and the machine is compared.
    pub(super) seen: (u64, u16),
    /// The machine at the last such branch or jump, if any since the path started.
    pub(super) turn: Option<Turn>,
    /// Turns skipped since power-on (a diagnostic, see [`Nes::skipped_spin_turns`]).
    pub skipped: u64,
    /// The address of a loop found to repeat neither unchanged nor as a delay (blargg's `sbc #n /
    /// bcs` delays, loops that read and count): not compared again until the path ends. Only ever
    /// a skip the less.
    pub(super) passed_over: u32,
    /// Skips end before this master clock: the end of the line in the line path (which watches
    /// the clock for it after each instruction), `u64::MAX` elsewhere.
    pub clock_limit: u64,
}

/// What a delay loop's one instruction does: X or Y, one down or one up.
#[derive(Debug, Clone, Copy)]
pub(super) struct DelayStep {
    pub on_x: bool,
    pub down: bool,
}

/// The machine as a backward branch or jump left it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Turn {
    /// Address of the branch or jump.
    pub at: u16,
    pub effects: u64,
    pub cycle: u64,
    pub cpu: CpuState,
    pub buses: [u8; 2],
}
