//! Mapper 18: Jaleco SS 88006 (nesdev "INES Mapper 018").
//!
//! The chip sees only A0-A1, A12-A14 and D0-D3, so every 8-bit register is written in two nibbles at
//! a pair of addresses (low nibble at the even one):
//! - $8000/$8001, $8002/$8003, $9000/$9001: the 8 KiB PRG banks at $8000, $A000, $C000 (6 bits);
//!   $E000-$FFFF holds the last bank;
//! - $9002: PRG RAM `.... ..WR` (R: chip enable, W: write enable);
//! - $A000/$A001 ... $D002/$D003: the eight 1 KiB CHR banks, in address order;
//! - $E000-$E003: the IRQ reload value, bits 0-3 up to 12-15;
//! - $F000: reloads the counter from the reload value and acknowledges the IRQ;
//! - $F001: IRQ control `.... SSSE` (E: count; S: counter width, bit 3: 4 bits, else bit 2: 8 bits,
//!   else bit 1: 12 bits, else 16), also an acknowledge;
//! - $F002: mirroring (0 horizontal, 1 vertical, 2 single-screen page 0, 3 page 1);
//! - $F003: the µPD7756 speech chip some boards carry (not emulated: its writes are ignored).
//!
//! The IRQ counter counts down on every CPU cycle while enabled, only in its low 4, 8, 12 or 16
//! bits; the bits above hold. A clock that finds the counting bits all 0 wraps them to all 1s and
//! asserts /IRQ: from a counting part of `n`, the IRQ comes on the `n + 1`-th clock. Run lazily like
//! the VRC3's (`m073_vrc3.rs`): [`Ss88006::catch_up`] in closed form, equal to single cycles
//! (compared in the tests), and [`Ss88006::irq_due_cycle`] names the cycle that asserts /IRQ.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// SS 88006 registers and IRQ counter.
    pub struct Ss88006State {
        /// The 8 KiB PRG banks at $8000, $A000, $C000.
        pub prg: [u8; 3],
        /// The eight 1 KiB CHR banks.
        pub chr: [u8; 8],
        /// $9002: bit 0 PRG RAM enable, bit 1 write enable.
        pub prg_ram_control: u8,
        /// $F002: mirroring (0-3).
        pub mirroring: u8,
        /// $F001: bit 0 enable, bits 1-3 the counter width.
        pub irq_control: u8,
        /// 1 while /IRQ is asserted.
        pub irq_pending: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
        /// IRQ reload value ($E000-$E003).
        pub irq_reload: u16,
        /// IRQ counter.
        pub irq_counter: u16,
    }
}

const _: () = assert!(core::mem::size_of::<Ss88006State>() == 20);

const IRQ_ENABLE: u8 = 0x01;
const RAM_ENABLE: u8 = 0x01;
const RAM_WRITE: u8 = 0x02;

/// SS 88006 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ss88006 {
    state: Ss88006State,
    /// The CPU cycle the IRQ counter has been run through. Derived (set by `resync`), not state.
    ticked: u64,
}

impl Ss88006 {
    /// The bits of the counter that count (the others hold).
    fn counting_mask(&self) -> u16 {
        let control = self.state.irq_control;
        if control & 0x08 != 0 {
            0x000F
        } else if control & 0x04 != 0 {
            0x00FF
        } else if control & 0x02 != 0 {
            0x0FFF
        } else {
            0xFFFF
        }
    }

    /// One CPU cycle of the IRQ counter: the definition [`Ss88006::catch_up`] must equal.
    #[cfg(test)]
    fn step_cycle(&mut self) {
        if self.state.irq_control & IRQ_ENABLE == 0 {
            return;
        }
        let mask = self.counting_mask();
        let s = &mut self.state;
        if s.irq_counter & mask == 0 {
            s.irq_counter |= mask;
            s.irq_pending = 1;
        } else {
            s.irq_counter -= 1;
        }
    }
}

impl Mapper for Ss88006 {
    state_in!(state: Ss88006State, ticked: ticked);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Ss88006 { state: Ss88006State::default(), ticked: 0 }
    }

    /// A CPU write to $8000-$FFFF on CPU cycle `cpu_cycle`; returns true when the bank map must be
    /// recomputed. The IRQ counter is first run through this cycle.
    fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        self.catch_up(cpu_cycle);
        let s = &mut self.state;
        let nibble = value & 0x0F;
        // A0 picks the nibble of a pair, A1 the pair within a 4 KiB page.
        let high = addr & 1 != 0;
        let pair = usize::from((addr >> 1) & 1);
        let set = |register: &mut u8| {
            *register = if high { (*register & 0x0F) | nibble << 4 } else { (*register & 0xF0) | nibble };
        };
        match (addr & 0xF000, addr & 3) {
            (0x8000, _) => set(&mut s.prg[pair]),
            (0x9000, 0 | 1) => set(&mut s.prg[2]),
            (0x9000, 2) => s.prg_ram_control = value & 0x03,
            (0xA000..=0xD000, _) => set(&mut s.chr[usize::from((addr >> 12) - 0xA) * 2 + pair]),
            (0xE000, n) => {
                let shift = n * 4;
                s.irq_reload = (s.irq_reload & !(0x0F << shift)) | u16::from(nibble) << shift;
                return false;
            }
            (0xF000, 0) => {
                s.irq_counter = s.irq_reload;
                s.irq_pending = 0;
                return false;
            }
            (0xF000, 1) => {
                s.irq_control = value & 0x0F;
                s.irq_pending = 0;
                return false;
            }
            (0xF000, 2) => s.mirroring = value & 0x03,
            _ => return false,
        }
        true
    }

    /// Runs the IRQ counter over `cycles` CPU cycles, in closed form.
    fn run_cycles(&mut self, cycles: u64) {
        if cycles == 0 || self.state.irq_control & IRQ_ENABLE == 0 {
            return;
        }
        let mask = self.counting_mask();
        let s = &mut self.state;
        let counting = u64::from(s.irq_counter & mask);
        let counting = if cycles <= counting {
            counting - cycles
        } else {
            s.irq_pending = 1;
            // The clock after 0 wraps to the mask; from there a full span of mask + 1 clocks repeats.
            u64::from(mask) - (cycles - counting - 1) % (u64::from(mask) + 1)
        };
        s.irq_counter = (s.irq_counter & !mask) | counting as u16;
    }

    /// CPU cycles to the one whose counter clock asserts /IRQ; `None` when none can.
    fn cycles_to_irq(&self) -> Option<u64> {
        let s = &self.state;
        if s.irq_control & IRQ_ENABLE == 0 || s.irq_pending != 0 {
            return None;
        }
        let clocks = u64::from(s.irq_counter & self.counting_mask()) + 1;
        Some(clocks)
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    fn irq_line(&self) -> bool {
        self.state.irq_pending != 0
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        for (slot, &bank) in s.prg.iter().enumerate() {
            map.set_prg_8k(slot, usize::from(bank & 0x3F));
        }
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        for (window, &bank) in s.chr.iter().enumerate() {
            map.set_chr_1k(window, usize::from(bank));
        }
        map.set_mirroring(match s.mirroring {
            0 => Mirroring::Horizontal,
            1 => Mirroring::Vertical,
            2 => Mirroring::SingleScreenA,
            _ => Mirroring::SingleScreenB,
        });
        let enabled = s.prg_ram_control & RAM_ENABLE != 0;
        map.set_prg_ram(0, enabled, enabled && s.prg_ram_control & RAM_WRITE != 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::map::PrgRamRead;

    fn board() -> Ss88006 {
        Ss88006::new(BoardConfig { mapper: 18, submapper: 0, chr_rom_size: 0x40000, battery: false })
    }

    /// Writes the 16-bit reload value through its four nibble registers, then reloads the counter.
    fn load(ss: &mut Ss88006, reload: u16, cycle: u64) {
        for n in 0..4u16 {
            ss.write_register(0xE000 + n, (reload >> (4 * n)) as u8, cycle);
        }
        ss.write_register(0xF000, 0, cycle);
    }

    #[test]
    fn nibble_pairs_select_prg_chr_and_ram() {
        let mut ss = board();
        let mut map = MemoryMap::new(0x80000, 0x40000, 0x2000, Mirroring::Vertical);
        for (addr, value) in [(0x8000, 0x1A), (0x8001, 0xF3), (0x8003, 0x02), (0x9000, 0x05), (0x9001, 0x01)]
        {
            ss.write_register(addr, value, 1);
        }
        for window in 0..8u16 {
            let base = 0xA000 + (window / 2) * 0x1000 + (window % 2) * 2;
            ss.write_register(base, window as u8 + 1, 1);
            ss.write_register(base + 1, 0x0F, 1);
        }
        ss.write_register(0xF002, 3, 1);
        ss.write_register(0x9002, 1, 1);
        ss.update_map(&mut map);
        assert_eq!(map.prg, [0x3A * 0x2000, 0x20 * 0x2000, 0x15 * 0x2000, 63 * 0x2000], "high nibble 2 bits");
        for window in 0..8 {
            assert_eq!(map.chr[window], (0xF1 + window) % 256 * 0x400, "CHR window {window}");
        }
        assert_eq!(map.nametables, [1; 4], "single-screen page 1");
        let window = map.prg_ram_window(0x6000);
        assert_eq!((window.read, window.writable), (PrgRamRead::Ram, false), "enabled, write-protected");
    }

    #[test]
    fn each_width_counts_to_the_documented_cycle() {
        // Reload $1234: 16-bit counts $1234, 12-bit $234, 8-bit $34, 4-bit 4; the IRQ on the n + 1-th
        // clock, the held bits unchanged.
        for (control, counted) in [(0x01, 0x1234u64), (0x03, 0x234), (0x05, 0x34), (0x09, 4), (0x0F, 4)] {
            let mut ss = board();
            load(&mut ss, 0x1234, 10);
            ss.write_register(0xF001, control, 10);
            assert_eq!(ss.irq_due_cycle(), 10 + counted + 1, "control {control:#X}");
            ss.catch_up(10 + counted);
            assert!(!ss.irq_line());
            ss.catch_up(10 + counted + 1);
            assert!(ss.irq_line());
            let mask = ss.counting_mask();
            assert_eq!(ss.state.irq_counter, (0x1234 & !mask) | mask, "control {control:#X}");
        }
        // $F000 and $F001 acknowledge; disabled, the counter holds.
        let mut ss = board();
        load(&mut ss, 0, 1);
        ss.write_register(0xF001, 1, 1);
        ss.catch_up(2);
        assert!(ss.irq_line());
        ss.write_register(0xF001, 0, 3);
        assert!(!ss.irq_line());
        let held = ss.state.irq_counter;
        ss.catch_up(1000);
        assert_eq!(ss.state.irq_counter, held);
        assert_eq!(ss.irq_due_cycle(), u64::MAX);
    }

    #[test]
    fn closed_form_equals_single_cycles() {
        for (reload, control) in
            [(0x0000, 0x01), (0x0003, 0x09), (0xFFFF, 0x01), (0x12F7, 0x05), (0xA005, 0x03), (0x0000, 0x09)]
        {
            let mut stepped = board();
            load(&mut stepped, reload, 1);
            stepped.write_register(0xF001, control, 2);
            let mut lazy = stepped.clone();
            let due = lazy.irq_due_cycle();
            let mut first_irq = None;
            let mut cycle = 2;
            for chunk in [1u64, 7, 15, 16, 255, 256, 3, 500, 70_000, 1, 131_072] {
                for _ in 0..chunk {
                    cycle += 1;
                    stepped.step_cycle();
                    if stepped.irq_line() && first_irq.is_none() {
                        first_irq = Some(cycle);
                    }
                }
                lazy.catch_up(cycle);
                assert_eq!(
                    lazy.state, stepped.state,
                    "reload {reload:#X} control {control:#X} cycle {cycle}"
                );
            }
            assert_eq!(Some(due), first_irq, "reload {reload:#X} control {control:#X}");
        }
    }
}
