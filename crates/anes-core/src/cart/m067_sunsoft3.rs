//! Mapper 67: Sunsoft-3 (nesdev "INES Mapper 067"). Registers by address bits 11-15 ($x800 with
//! bit 11 set; $8000 with it clear):
//! - $8800, $9800, $A800, $B800: 2 KiB CHR banks at $0000, $0800, $1000, $1800;
//! - $C800: the IRQ counter, written twice: high byte, then low byte;
//! - $D800 `...E ....`: IRQ counting enable; resets the $C800 write toggle;
//! - $E800: mirroring (0 vertical, 1 horizontal, 2 single-screen page 0, 3 page 1);
//! - $F800: the 16 KiB PRG bank at $8000; $C000-$FFFF holds the last bank;
//! - $8000 (bit 11 clear): acknowledges the IRQ.
//!
//! While enabled, the counter counts down on every CPU cycle; the decrement from $0000 asserts
//! /IRQ, leaves $FFFF and clears the enable (it counts again only after a $D800 write). Run lazily
//! like the FME-7's (`m069_fme7.rs`): [`Sunsoft3::catch_up`] in closed form, equal to single cycles
//! (compared in the tests), [`Sunsoft3::irq_due_cycle`] the cycle that asserts /IRQ. PRG RAM at
//! $6000 where the header declares it.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// Sunsoft-3 registers and IRQ counter.
    pub struct Sunsoft3State {
        /// 2 KiB CHR banks at $0000, $0800, $1000, $1800.
        pub chr: [u8; 4],
        /// $F800: the 16 KiB PRG bank at $8000.
        pub prg: u8,
        /// $E800: mirroring, bits 0-1.
        pub mirroring: u8,
        /// The IRQ counter.
        pub irq_counter: u16,
        /// 1 while the counter counts ($D800 bit 4; cleared by the wrap).
        pub irq_enable: u8,
        /// 1 while /IRQ is asserted.
        pub irq_pending: u8,
        /// 1 when the next $C800 write is the low byte.
        pub irq_toggle: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Sunsoft3State>() == 12);

/// Sunsoft-3 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sunsoft3 {
    state: Sunsoft3State,
    /// The CPU cycle the IRQ counter has been run through. Derived (set by `resync`), not state.
    ticked: u64,
}

impl Sunsoft3 {
    /// One CPU cycle of the IRQ counter: the definition [`Sunsoft3::catch_up`] must equal.
    #[cfg(test)]
    fn step_cycle(&mut self) {
        let s = &mut self.state;
        if s.irq_enable == 0 {
            return;
        }
        if s.irq_counter == 0 {
            (s.irq_counter, s.irq_pending, s.irq_enable) = (0xFFFF, 1, 0);
        } else {
            s.irq_counter -= 1;
        }
    }
}

impl Mapper for Sunsoft3 {
    state_in!(state: Sunsoft3State, ticked: ticked);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Sunsoft3 { state: Sunsoft3State::default(), ticked: 0 }
    }

    /// A CPU write to $8000-$FFFF on CPU cycle `cpu_cycle`; returns true when the bank map must be
    /// recomputed. The IRQ counter is first run through this cycle.
    fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        self.catch_up(cpu_cycle);
        let s = &mut self.state;
        if addr & 0x0800 == 0 {
            if addr & 0xF000 == 0x8000 {
                s.irq_pending = 0;
            }
            return false;
        }
        match addr & 0xF000 {
            0x8000..=0xB000 => s.chr[usize::from((addr >> 12) - 8)] = value,
            0xC000 => {
                s.irq_counter = if s.irq_toggle == 0 {
                    (s.irq_counter & 0x00FF) | u16::from(value) << 8
                } else {
                    (s.irq_counter & 0xFF00) | u16::from(value)
                };
                s.irq_toggle ^= 1;
                return false;
            }
            0xD000 => {
                s.irq_enable = (value >> 4) & 1;
                s.irq_toggle = 0;
                return false;
            }
            0xE000 => s.mirroring = value & 3,
            _ => s.prg = value,
        }
        true
    }

    /// Runs the IRQ counter over `cycles` CPU cycles, in closed form.
    fn run_cycles(&mut self, cycles: u64) {
        let s = &mut self.state;
        if cycles == 0 || s.irq_enable == 0 {
            return;
        }
        if cycles > u64::from(s.irq_counter) {
            (s.irq_counter, s.irq_pending, s.irq_enable) = (0xFFFF, 1, 0);
        } else {
            s.irq_counter -= cycles as u16;
        }
    }

    /// CPU cycles to the one whose counter clock asserts /IRQ; `None` when none can.
    fn cycles_to_irq(&self) -> Option<u64> {
        let s = &self.state;
        if s.irq_enable == 0 || s.irq_pending != 0 {
            return None;
        }
        Some(u64::from(s.irq_counter) + 1)
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    fn irq_line(&self) -> bool {
        self.state.irq_pending != 0
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        map.set_prg_16k(0, usize::from(s.prg));
        let last_16k = map.prg_bank_from_end(2) / 2;
        map.set_prg_16k(1, last_16k);
        for (region, &bank) in s.chr.iter().enumerate() {
            map.set_chr_1k(region * 2, usize::from(bank) * 2);
            map.set_chr_1k(region * 2 + 1, usize::from(bank) * 2 + 1);
        }
        map.set_mirroring(Mirroring::from_two_bits(s.mirroring));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nes::splitmix64_next as next;

    fn board() -> Sunsoft3 {
        Sunsoft3::new(BoardConfig { mapper: 67, submapper: 0, chr_rom_size: 0x20000, battery: false })
    }

    #[test]
    fn the_counter_loads_high_then_low_and_stops_at_the_wrap() {
        let mut s3 = board();
        s3.write_register(0xC800, 0x01, 1);
        s3.write_register(0xC800, 0x02, 1);
        assert_eq!(s3.state.irq_counter, 0x0102);
        s3.write_register(0xC800, 0x00, 1); // high byte again
        s3.write_register(0xD800, 0x00, 1); // toggle reset: the next write is the high byte
        s3.write_register(0xC800, 0x00, 1);
        s3.write_register(0xC800, 0x0F, 1);
        s3.write_register(0xD800, 0x10, 2);
        assert_eq!(s3.irq_due_cycle(), 2 + 16);
        s3.catch_up(17);
        assert!(!s3.irq_line());
        s3.catch_up(18);
        assert!(s3.irq_line());
        assert_eq!((s3.state.irq_counter, s3.state.irq_enable), (0xFFFF, 0), "stopped at $FFFF");
        s3.catch_up(100_000);
        assert_eq!(s3.state.irq_counter, 0xFFFF);
        s3.write_register(0x8000, 0, 100_001); // acknowledge
        assert!(!s3.irq_line());
        assert!(!s3.write_register(0xF000, 0, 100_002), "bit 11 clear, not $8000: nothing");
    }

    #[test]
    fn random_writes_and_runs_equal_single_cycles() {
        let mut seed = 0x5303_u64;
        let mut lazy = board();
        let mut stepped = board();
        let mut due = u64::MAX;
        let mut rises = 0;
        for cycle in 1..2_000_000u64 {
            let was = stepped.irq_line();
            stepped.step_cycle();
            if !was && stepped.irq_line() {
                assert_eq!(due, cycle, "the predicted cycle of /IRQ");
                rises += 1;
            }
            let roll = next(&mut seed) % 1000;
            if roll < 10 {
                lazy.catch_up(cycle);
                assert_eq!(lazy.state, stepped.state, "cycle {cycle}");
                if roll < 4 {
                    let r = next(&mut seed);
                    let (addr, value) = match r % 4 {
                        0 => (0xC800, (r >> 8) as u8 & 0x03),
                        1 => (0xC800, (r >> 8) as u8),
                        2 => (0xD800, 0x10),
                        _ => (0x8000, 0),
                    };
                    lazy.write_register(addr, value, cycle);
                    stepped.ticked = cycle;
                    stepped.write_register(addr, value, cycle);
                }
                due = lazy.irq_due_cycle();
            }
        }
        assert!(rises > 200, "only {rises} IRQs: the program must exercise the prediction");
    }
}
