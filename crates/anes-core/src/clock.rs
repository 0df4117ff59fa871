//! Units of time. One monotonic `u64` master clock drives everything; it is never rebased, so a stored
//! value never depends on when it was stored.
//!
//! NTSC: one CPU cycle is 12 master clocks, one PPU dot is 4 master clocks (3 dots per CPU cycle).

/// Master clocks per CPU cycle (NTSC 2A03 divides the 21.477 MHz crystal by 12).
pub const MASTER_PER_CPU_CYCLE: u64 = 12;
/// Master clocks per PPU dot (NTSC 2C02 divides by 4).
pub const MASTER_PER_DOT: u64 = 4;

/// A count of master-clock ticks since power-on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct MasterClock(pub u64);

/// A count of CPU cycles since power-on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct CpuCycle(pub u64);
