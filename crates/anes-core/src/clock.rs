//! Units of time. One monotonic `u64` master clock drives everything; it is never rebased, so a stored
//! value never depends on when it was stored. The clocks are plain `u64` fields of the bus state
//! (`BusState::master_clock`, `cpu_cycle`, `ppu_clock`) named by their unit; their arithmetic stays in
//! `bus/mod.rs` and these ratios.
//!
//! NTSC: one CPU cycle is 12 master clocks, one PPU dot is 4 master clocks (3 dots per CPU cycle).

/// Master clocks per CPU cycle (NTSC 2A03 divides the 21.477 MHz crystal by 12).
pub const MASTER_PER_CPU_CYCLE: u64 = 12;
/// Master clocks per PPU dot (NTSC 2C02 divides by 4).
pub const MASTER_PER_DOT: u64 = 4;

/// The largest master clock a machine may start from (a snapshot with a later clock is refused):
/// 2^60 master clocks are about 1,700 years of emulated time, and from there the clock would need
/// over 25,000 more years to wrap, so no clock, cycle or frame counter ever does.
pub const MAX_MASTER_CLOCK: u64 = 1 << 60;

/// DMA "get" (read) cycles are the odd-numbered CPU cycles, counted from 1 at power-on; "put" (write)
/// cycles the even ones. The APU's frame counter uses the same phase.
pub const fn is_get_cycle(cpu_cycle: u64) -> bool {
    cpu_cycle & 1 == 1
}
