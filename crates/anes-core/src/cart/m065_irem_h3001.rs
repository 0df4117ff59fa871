//! Mapper 65: Irem H3001 (nesdev "INES Mapper 065").
//!
//! - $8000: PRG register 0, the 8 KiB bank at $8000 (or at $C000 in the swapped layout);
//! - $A000: PRG register 1, the 8 KiB bank at $A000;
//! - $9000: bit 7 the PRG layout: 0 register 0 at $8000 and bank $3E at $C000, 1 the reverse;
//!   $E000 always holds bank $3F (the chip drives all six bank lines: on a 256 KiB ROM, the
//!   second-last and last banks);
//! - $9001: mirroring `MM.. ....` (%00 vertical, %10 horizontal, %01 and %11 single-screen page 0);
//! - $9003: bit 7 enables the IRQ counter; a write acknowledges the IRQ;
//! - $9004: copies the reload value into the counter and acknowledges the IRQ;
//! - $9005 / $9006: the reload value's high / low byte;
//! - $B000-$B007: the eight 1 KiB CHR banks.
//!
//! PRG registers 0 and 1 power on as 0 and 1 (games rely on it). The 16-bit counter counts down on
//! every CPU cycle while enabled; the clock that takes it to 0 asserts /IRQ, and it stops there (a
//! counter of 0 neither counts nor asserts). Run lazily like the VRC3's (`m073_vrc3.rs`):
//! [`H3001::catch_up`] in closed form, [`H3001::irq_due_cycle`] names the cycle that asserts /IRQ.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// H3001 registers and IRQ counter.
    pub struct H3001State {
        /// PRG registers 0 and 1.
        pub prg: [u8; 2],
        /// The eight 1 KiB CHR banks.
        pub chr: [u8; 8],
        /// $9000: bit 7 the swapped PRG layout.
        pub prg_layout: u8,
        /// $9001: bits 6-7 mirroring.
        pub mirroring: u8,
        /// $9003: bit 7 IRQ enable.
        pub irq_control: u8,
        /// 1 while /IRQ is asserted.
        pub irq_pending: u8,
        /// IRQ reload value ($9005 high, $9006 low).
        pub irq_reload: u16,
        /// IRQ counter.
        pub irq_counter: u16,
    }
}

const _: () = assert!(core::mem::size_of::<H3001State>() == 18);

const IRQ_ENABLE: u8 = 0x80;

/// H3001 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct H3001 {
    state: H3001State,
    /// The CPU cycle the IRQ counter has been run through. Derived (set by `resync`), not state.
    ticked: u64,
}

impl H3001 {
    /// One CPU cycle of the IRQ counter: the definition [`H3001::catch_up`] must equal.
    #[cfg(test)]
    fn step_cycle(&mut self) {
        let s = &mut self.state;
        if s.irq_control & IRQ_ENABLE != 0 && s.irq_counter != 0 {
            s.irq_counter -= 1;
            if s.irq_counter == 0 {
                s.irq_pending = 1;
            }
        }
    }
}

impl Mapper for H3001 {
    state_in!(state: H3001State, ticked: ticked);

    /// The board in its power-on state (PRG registers 0 and 1 at banks 0 and 1).
    fn new(_config: BoardConfig) -> Self {
        H3001 { state: H3001State { prg: [0, 1], ..H3001State::default() }, ticked: 0 }
    }

    /// A CPU write to $8000-$FFFF on CPU cycle `cpu_cycle`; returns true when the bank map must be
    /// recomputed. The IRQ counter is first run through this cycle.
    fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        self.catch_up(cpu_cycle);
        let s = &mut self.state;
        match (addr & 0xF000, addr & 7) {
            (0x8000, _) => s.prg[0] = value,
            (0xA000, _) => s.prg[1] = value,
            (0xB000, n) => s.chr[usize::from(n)] = value,
            (0x9000, 0) => s.prg_layout = value & 0x80,
            (0x9000, 1) => s.mirroring = value & 0xC0,
            (0x9000, 3) => {
                s.irq_control = value & IRQ_ENABLE;
                s.irq_pending = 0;
                return false;
            }
            (0x9000, 4) => {
                s.irq_counter = s.irq_reload;
                s.irq_pending = 0;
                return false;
            }
            (0x9000, 5) => {
                s.irq_reload = (s.irq_reload & 0x00FF) | u16::from(value) << 8;
                return false;
            }
            (0x9000, 6) => {
                s.irq_reload = (s.irq_reload & 0xFF00) | u16::from(value);
                return false;
            }
            _ => return false,
        }
        true
    }

    /// Runs the IRQ counter over `cycles` CPU cycles, in closed form.
    fn run_cycles(&mut self, cycles: u64) {
        let s = &mut self.state;
        if cycles == 0 || s.irq_control & IRQ_ENABLE == 0 || s.irq_counter == 0 {
            return;
        }
        if cycles >= u64::from(s.irq_counter) {
            s.irq_counter = 0;
            s.irq_pending = 1;
        } else {
            s.irq_counter -= cycles as u16;
        }
    }

    /// CPU cycles to the one whose counter clock asserts /IRQ; `None` when none can.
    fn cycles_to_irq(&self) -> Option<u64> {
        let s = &self.state;
        if s.irq_control & IRQ_ENABLE == 0 || s.irq_counter == 0 {
            return None;
        }
        Some(u64::from(s.irq_counter))
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    fn irq_line(&self) -> bool {
        self.state.irq_pending != 0
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        let (at_8000, at_c000) = if s.prg_layout != 0 { (0x3E, s.prg[0]) } else { (s.prg[0], 0x3E) };
        map.set_prg_8k(0, usize::from(at_8000));
        map.set_prg_8k(1, usize::from(s.prg[1]));
        map.set_prg_8k(2, usize::from(at_c000));
        map.set_prg_8k(3, 0x3F);
        for (window, &bank) in s.chr.iter().enumerate() {
            map.set_chr_1k(window, usize::from(bank));
        }
        map.set_mirroring(match s.mirroring {
            0x00 => Mirroring::Vertical,
            0x80 => Mirroring::Horizontal,
            _ => Mirroring::SingleScreenA,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board() -> H3001 {
        H3001::new(BoardConfig { mapper: 65, submapper: 0, chr_rom_size: 0x40000, battery: false })
    }

    fn load(h: &mut H3001, reload: u16, cycle: u64) {
        h.write_register(0x9005, (reload >> 8) as u8, cycle);
        h.write_register(0x9006, reload as u8, cycle);
        h.write_register(0x9004, 0, cycle);
    }

    #[test]
    fn prg_layouts_chr_and_mirroring() {
        let mut h = board();
        let mut map = MemoryMap::new(0x40000, 0x40000, 0, Mirroring::Vertical);
        h.update_map(&mut map);
        assert_eq!(map.prg, [0, 0x2000, 30 * 0x2000, 31 * 0x2000], "power-on banks 0, 1");
        h.write_register(0x8000, 5, 1);
        h.write_register(0xA000, 9, 1);
        h.write_register(0x9000, 0x80, 1);
        h.write_register(0xB007, 0xC3, 1);
        h.write_register(0x9001, 0x80, 1);
        h.update_map(&mut map);
        assert_eq!(map.prg, [30 * 0x2000, 9 * 0x2000, 5 * 0x2000, 31 * 0x2000], "swapped layout");
        assert_eq!(map.chr[7], 0xC3 * 0x400);
        assert_eq!(map.nametables, [0, 0, 1, 1], "horizontal");
        h.write_register(0x9001, 0x40, 1);
        h.update_map(&mut map);
        assert_eq!(map.nametables, [0; 4], "single-screen page 0");
    }

    #[test]
    fn the_counter_stops_at_zero_after_its_irq() {
        let mut h = board();
        load(&mut h, 100, 10);
        h.write_register(0x9003, 0x80, 10);
        assert_eq!(h.irq_due_cycle(), 110);
        h.catch_up(109);
        assert!(!h.irq_line());
        h.catch_up(110);
        assert!(h.irq_line());
        h.catch_up(100_000);
        assert_eq!(h.state.irq_counter, 0, "stops at 0");
        h.write_register(0x9003, 0x80, 100_001);
        assert!(!h.irq_line(), "$9003 acknowledges");
        assert_eq!(h.irq_due_cycle(), u64::MAX, "0 never asserts again without a reload");
        load(&mut h, 0, 100_002);
        assert_eq!(h.irq_due_cycle(), u64::MAX, "a reload of 0 neither");
    }

    #[test]
    fn closed_form_equals_single_cycles() {
        for reload in [0u16, 1, 2, 255, 256, 0x1234, 0xFFFF] {
            let mut stepped = board();
            load(&mut stepped, reload, 1);
            stepped.write_register(0x9003, 0x80, 2);
            let mut lazy = stepped.clone();
            let due = lazy.irq_due_cycle();
            let mut first_irq = None;
            let mut cycle = 2;
            for chunk in [1u64, 7, 255, 256, 3, 500, 70_000, 1] {
                for _ in 0..chunk {
                    cycle += 1;
                    stepped.step_cycle();
                    if stepped.irq_line() && first_irq.is_none() {
                        first_irq = Some(cycle);
                    }
                }
                lazy.catch_up(cycle);
                assert_eq!(lazy.state, stepped.state, "reload {reload:#X} cycle {cycle}");
            }
            assert_eq!(Some(due).filter(|&d| d != u64::MAX), first_irq, "reload {reload:#X}");
        }
    }
}
