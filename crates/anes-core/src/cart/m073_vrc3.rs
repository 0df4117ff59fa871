//! Mapper 73: Konami VRC3 (nesdev "VRC3").
//!
//! - $8000, $9000, $A000, $B000: IRQ latch bits 0-3, 4-7, 8-11, 12-15;
//! - $C000: IRQ control `.... .MEA` (M: 8-bit mode, E: enable, A: enable after acknowledge); a write
//!   acknowledges the IRQ and, with E set, reloads the counter from the latch;
//! - $D000: IRQ acknowledge, copying A to E;
//! - $F000: 16 KiB PRG bank at $8000 (3 bits); $C000-$FFFF holds the last bank. CHR is 8 KiB of RAM,
//!   PRG RAM sits at $6000.
//!
//! The IRQ counter counts up on every CPU cycle while enabled. In 16-bit mode a clock of $FFFF
//! reloads it from the latch and asserts /IRQ; in 8-bit mode only the low byte counts, and a clock of
//! a low byte of $FF reloads it from the latch's low byte and asserts /IRQ, the high byte untouched.
//! Run lazily like the VRC IRQ (`vrc_irq.rs`): [`Vrc3::catch_up`] in closed form, equal to single
//! cycles (compared in the tests), and [`Vrc3::irq_due_cycle`] names the cycle that asserts /IRQ.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// VRC3 registers and IRQ counter.
    pub struct Vrc3State {
        /// IRQ reload value.
        pub irq_latch: u16,
        /// IRQ counter.
        pub irq_counter: u16,
        /// $C000: bit 0 A, bit 1 E, bit 2 M (8-bit mode).
        pub irq_control: u8,
        /// 1 while /IRQ is asserted.
        pub irq_pending: u8,
        /// $F000: the 16 KiB PRG bank at $8000.
        pub prg: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Vrc3State>() == 8);

const ENABLE_AFTER_ACK: u8 = 0x01;
const ENABLE: u8 = 0x02;
const EIGHT_BIT: u8 = 0x04;

/// VRC3 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Vrc3 {
    state: Vrc3State,
    /// The CPU cycle the IRQ counter has been run through. Derived (set by `resync`), not state.
    ticked: u64,
}

impl Vrc3 {
    /// The bits of the counter that count: all 16, or the low 8 in 8-bit mode.
    fn counting_mask(&self) -> u16 {
        if self.state.irq_control & EIGHT_BIT != 0 { 0x00FF } else { 0xFFFF }
    }

    /// One CPU cycle of the IRQ counter: the definition [`Vrc3::catch_up`] must equal.
    #[cfg(test)]
    fn step_cycle(&mut self) {
        if self.state.irq_control & ENABLE == 0 {
            return;
        }
        let mask = self.counting_mask();
        let s = &mut self.state;
        if s.irq_counter & mask == mask {
            s.irq_counter = (s.irq_counter & !mask) | (s.irq_latch & mask);
            s.irq_pending = 1;
        } else {
            s.irq_counter += 1;
        }
    }
}

impl Mapper for Vrc3 {
    state_in!(state: Vrc3State, ticked: ticked);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Vrc3 { state: Vrc3State::default(), ticked: 0 }
    }

    /// A CPU write to $8000-$FFFF on CPU cycle `cpu_cycle`; returns true when the bank map must be
    /// recomputed. The IRQ counter is first run through this cycle.
    fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        self.catch_up(cpu_cycle);
        let s = &mut self.state;
        match addr & 0xF000 {
            0x8000..=0xB000 => {
                let shift = ((addr >> 12) - 8) * 4;
                s.irq_latch = (s.irq_latch & !(0x0F << shift)) | u16::from(value & 0x0F) << shift;
            }
            0xC000 => {
                s.irq_control = value & 0x07;
                s.irq_pending = 0;
                if value & ENABLE != 0 {
                    s.irq_counter = s.irq_latch;
                }
            }
            0xD000 => {
                s.irq_pending = 0;
                let enable = if s.irq_control & ENABLE_AFTER_ACK != 0 { ENABLE } else { 0 };
                s.irq_control = (s.irq_control & !ENABLE) | enable;
            }
            0xF000 => {
                s.prg = value & 0x07;
                return true;
            }
            _ => {}
        }
        false
    }

    /// Runs the IRQ counter over `cycles` CPU cycles, in closed form.
    fn run_cycles(&mut self, cycles: u64) {
        if cycles == 0 || self.state.irq_control & ENABLE == 0 {
            return;
        }
        let mask = self.counting_mask();
        let s = &mut self.state;
        let counting = u64::from(s.irq_counter & mask);
        let to_overflow = u64::from(mask) + 1 - counting;
        let counting = if cycles < to_overflow {
            counting + cycles
        } else {
            s.irq_pending = 1;
            // After the overflow the counter runs from the latch, overflowing every span less latch.
            let reload = u64::from(s.irq_latch & mask);
            reload + (cycles - to_overflow) % (u64::from(mask) + 1 - reload)
        };
        s.irq_counter = (s.irq_counter & !mask) | counting as u16;
    }

    /// CPU cycles to the one whose counter clock asserts /IRQ; `None` when none can.
    fn cycles_to_irq(&self) -> Option<u64> {
        let s = &self.state;
        if s.irq_control & ENABLE == 0 || s.irq_pending != 0 {
            return None;
        }
        let mask = self.counting_mask();
        let clocks = u64::from(mask) + 1 - u64::from(s.irq_counter & mask);
        Some(clocks)
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    fn irq_line(&self) -> bool {
        self.state.irq_pending != 0
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_16k(0, usize::from(self.state.prg));
        let last_16k = map.prg_bank_from_end(2) / 2;
        map.set_prg_16k(1, last_16k);
        map.set_chr_8k(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board() -> Vrc3 {
        Vrc3::new(BoardConfig { mapper: 73, submapper: 0, chr_rom_size: 0, battery: false })
    }

    /// Writes the 16-bit latch through its four nibble registers at cycle `cycle`.
    fn set_latch(vrc3: &mut Vrc3, latch: u16, cycle: u64) {
        for (n, addr) in [0x8000, 0x9000, 0xA000, 0xB000].into_iter().enumerate() {
            vrc3.write_register(addr, (latch >> (4 * n)) as u8, cycle);
        }
    }

    #[test]
    fn prg_bank_and_fixed_last_bank() {
        let mut vrc3 = board();
        let mut map = MemoryMap::new(0x20000, 0x2000, 0x2000, super::super::rom_info::Mirroring::Vertical);
        vrc3.write_register(0xF000, 0x0B, 1);
        vrc3.update_map(&mut map);
        assert_eq!(map.prg, [6 * 0x2000, 7 * 0x2000, 14 * 0x2000, 15 * 0x2000], "3 bits: bank 3");
    }

    #[test]
    fn sixteen_and_eight_bit_modes_count_to_the_documented_cycle() {
        // 16-bit, latch $FFF0: 16 clocks to the IRQ; the counter reloads to $FFF0.
        let mut vrc3 = board();
        set_latch(&mut vrc3, 0xFFF0, 1);
        vrc3.write_register(0xC000, ENABLE, 2);
        assert_eq!(vrc3.irq_due_cycle(), 2 + 16);
        vrc3.catch_up(17);
        assert!(!vrc3.irq_line());
        vrc3.catch_up(18);
        assert!(vrc3.irq_line());
        assert_eq!(vrc3.state.irq_counter, 0xFFF0);
        // 8-bit, latch $12F0: the low byte counts 16 clocks; the high byte stays as it was ($12).
        let mut vrc3 = board();
        set_latch(&mut vrc3, 0x12F0, 1);
        vrc3.write_register(0xC000, ENABLE | EIGHT_BIT, 2);
        assert_eq!(vrc3.irq_due_cycle(), 2 + 16);
        vrc3.catch_up(18 + 5);
        assert!(vrc3.irq_line());
        assert_eq!(vrc3.state.irq_counter, 0x12F0 + 5);
        // Acknowledge with A clear: the counter stops.
        vrc3.write_register(0xD000, 0, 40);
        assert!(!vrc3.irq_line());
        assert_eq!(vrc3.irq_due_cycle(), u64::MAX);
    }

    #[test]
    fn closed_form_equals_single_cycles() {
        for (latch, control) in [
            (0x0000, ENABLE),
            (0xFF00, ENABLE | ENABLE_AFTER_ACK),
            (0xFFFF, ENABLE),
            (0x34F7, ENABLE | EIGHT_BIT),
            (0x0000, ENABLE | EIGHT_BIT),
        ] {
            let mut stepped = board();
            set_latch(&mut stepped, latch, 1);
            stepped.write_register(0xC000, control, 2);
            let mut lazy = stepped.clone();
            let due = lazy.irq_due_cycle();
            let mut first_irq = None;
            let mut cycle = 2;
            for chunk in [1u64, 7, 255, 256, 3, 500, 70_000, 1, 131_072] {
                for _ in 0..chunk {
                    cycle += 1;
                    stepped.step_cycle();
                    if stepped.irq_line() && first_irq.is_none() {
                        first_irq = Some(cycle);
                    }
                }
                lazy.catch_up(cycle);
                assert_eq!(lazy.state, stepped.state, "latch {latch:#X} control {control:#X} cycle {cycle}");
            }
            assert_eq!(Some(due), first_irq, "latch {latch:#X} control {control:#X}");
        }
    }
}
