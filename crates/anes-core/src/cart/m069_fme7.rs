//! Mapper 69: Sunsoft FME-7, 5A and 5B (nesdev "Sunsoft FME-7"; the 5B's sound in
//! `m069_sunsoft5b_audio.rs`).
//!
//! $8000-$9FFF selects a command (bits 0-3), $A000-$BFFF writes its parameter:
//! - $0-$7: 1 KiB CHR banks at $0000-$1C00;
//! - $8 `ERBB BBBB`: $6000-$7FFF: with R clear, ROM bank B; with R set, RAM (bank B) while E is
//!   set, open bus while clear;
//! - $9-$B: 8 KiB PRG banks at $8000, $A000, $C000 (6 bits); $E000-$FFFF holds the last bank;
//! - $C: mirroring (0 vertical, 1 horizontal, 2 single-screen page 0, 3 page 1);
//! - $D `C... ...T`: IRQ control: C counts, T lets the count's wrap assert /IRQ; every write
//!   acknowledges the IRQ;
//! - $E, $F: the IRQ counter's low and high bytes (no reload latch: the counter itself).
//!
//! The counter counts down on every CPU cycle while C is set; the decrement from $0000 to $FFFF
//! asserts /IRQ when T is set, and the count goes on from $FFFF. Run lazily like the VRC3's
//! (`m073_vrc3.rs`): [`Fme7::catch_up`] in closed form, equal to single cycles (compared in the
//! tests), and [`Fme7::irq_due_cycle`] names the cycle that asserts /IRQ. The 5B's sound runs with
//! it; boards without the sound chip (FME-7, 5A) ignore $C000-$FFFF the same way, so one board
//! serves all three: its level stays 0 unless a program writes the sound registers.

use super::expansion_audio::ExpansionChip;
use super::m069_sunsoft5b_audio::Sunsoft5bAudio;
use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// FME-7 registers, its IRQ counter and the 5B's sound.
    pub struct Fme7State {
        /// $8000: the command the next parameter write goes to (0-15).
        pub command: u8,
        /// Commands $0-$7: CHR banks.
        pub chr: [u8; 8],
        /// Commands $8-$B: $6000 (with its RAM bits), $8000, $A000, $C000.
        pub prg: [u8; 4],
        /// Command $C: mirroring, bits 0-1.
        pub mirroring: u8,
        /// Command $D: bit 7 counter enable, bit 0 IRQ enable.
        pub irq_control: u8,
        /// 1 while /IRQ is asserted.
        pub irq_pending: u8,
        /// The IRQ counter (commands $E, $F).
        pub irq_counter: u16,
        /// Reserved, always zero (explicit padding).
        pub reserved: u16,
        /// The 5B's sound chip.
        pub audio: Sunsoft5bAudio,
    }
}

const _: () = assert!(core::mem::size_of::<Fme7State>() == 56);

const COUNTER_ENABLE: u8 = 0x80;
const IRQ_ENABLE: u8 = 0x01;
const RAM_SELECT: u8 = 0x40;
const RAM_ENABLE: u8 = 0x80;

/// Sunsoft FME-7 / 5A / 5B board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fme7 {
    state: Fme7State,
    /// The CPU cycle the IRQ counter and the sound have been run through. Derived (set by
    /// `resync`), not state.
    ticked: u64,
}

impl Fme7 {
    /// One CPU cycle of the IRQ counter: the definition [`Fme7::catch_up`] must equal.
    #[cfg(test)]
    fn step_cycle(&mut self) {
        let s = &mut self.state;
        if s.irq_control & COUNTER_ENABLE == 0 {
            return;
        }
        if s.irq_counter == 0 && s.irq_control & IRQ_ENABLE != 0 {
            s.irq_pending = 1;
        }
        s.irq_counter = s.irq_counter.wrapping_sub(1);
    }
}

impl Mapper for Fme7 {
    state_in!(state: Fme7State, ticked: ticked);

    fn expansion_chip(&self) -> Option<ExpansionChip> {
        Some(ExpansionChip::Sunsoft5B)
    }

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Fme7 { state: Fme7State { audio: Sunsoft5bAudio::new(), ..Fme7State::default() }, ticked: 0 }
    }

    /// A CPU write to $8000-$FFFF on CPU cycle `cpu_cycle`; returns true when the bank map must be
    /// recomputed. The IRQ counter and the sound are first run through this cycle.
    fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        self.catch_up(cpu_cycle);
        let s = &mut self.state;
        match addr & 0xE000 {
            0x8000 => s.command = value & 0x0F,
            0xA000 => match s.command {
                0x0..=0x7 => {
                    s.chr[usize::from(s.command)] = value;
                    return true;
                }
                0x8..=0xB => {
                    s.prg[usize::from(s.command - 8)] = value;
                    return true;
                }
                0xC => {
                    s.mirroring = value & 0x03;
                    return true;
                }
                0xD => {
                    s.irq_control = value & (COUNTER_ENABLE | IRQ_ENABLE);
                    s.irq_pending = 0;
                }
                0xE => s.irq_counter = (s.irq_counter & 0xFF00) | u16::from(value),
                _ => s.irq_counter = (s.irq_counter & 0x00FF) | u16::from(value) << 8,
            },
            0xC000 => s.audio.write_select(value),
            _ => s.audio.write_data(value),
        }
        false
    }

    /// Runs the IRQ counter and the sound over `cycles` CPU cycles, in closed form.
    fn run_cycles(&mut self, cycles: u64) {
        if cycles == 0 {
            return;
        }
        self.state.audio.run(cycles);
        let s = &mut self.state;
        if s.irq_control & COUNTER_ENABLE == 0 {
            return;
        }
        // The first wrap comes on the clock that finds $0000: counter + 1 clocks away.
        if cycles > u64::from(s.irq_counter) && s.irq_control & IRQ_ENABLE != 0 {
            s.irq_pending = 1;
        }
        s.irq_counter = s.irq_counter.wrapping_sub(cycles as u16);
    }

    /// CPU cycles to the one whose counter clock asserts /IRQ; `None` when none can.
    fn cycles_to_irq(&self) -> Option<u64> {
        let s = &self.state;
        if s.irq_control != COUNTER_ENABLE | IRQ_ENABLE || s.irq_pending != 0 {
            return None;
        }
        Some(u64::from(s.irq_counter) + 1)
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    fn irq_line(&self) -> bool {
        self.state.irq_pending != 0
    }

    /// The sound DAC's level (0-24573) as of the cycle run through last.
    fn expansion_level(&self) -> i32 {
        i32::from(self.state.audio.level())
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        for (window, &bank) in s.chr.iter().enumerate() {
            map.set_chr_1k(window, usize::from(bank));
        }
        for slot in 0..3 {
            map.set_prg_8k(slot, usize::from(s.prg[slot + 1] & 0x3F));
        }
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        let low = s.prg[0];
        let bank = usize::from(low & 0x3F);
        match (low & RAM_SELECT != 0, low & RAM_ENABLE != 0) {
            (false, _) => map.set_prg_rom_at_6000(bank),
            (true, enabled) => map.set_prg_ram(bank, enabled, enabled),
        }
        map.set_mirroring(Mirroring::from_two_bits(s.mirroring));
    }
}

#[cfg(test)]
mod tests {
    use super::super::map::PrgRamRead;
    use super::*;
    use crate::nes::splitmix64_next as next;

    fn board() -> Fme7 {
        Fme7::new(BoardConfig { mapper: 69, submapper: 0, chr_rom_size: 0x40000, battery: false })
    }

    fn command(fme7: &mut Fme7, command: u8, value: u8, cycle: u64) {
        fme7.write_register(0x8000, command, cycle);
        fme7.write_register(0xA000, value, cycle);
    }

    #[test]
    fn banks_mirroring_and_the_6000_window() {
        let mut fme7 = board();
        let mut map = MemoryMap::new(0x40000, 0x40000, 0x2000, Mirroring::Vertical);
        for n in 0..8 {
            command(&mut fme7, n, 0x10 + n, 1);
        }
        command(&mut fme7, 9, 0xC5, 1); // bits 6-7 are not bank bits
        command(&mut fme7, 0xA, 6, 1);
        command(&mut fme7, 0xB, 7, 1);
        command(&mut fme7, 0xC, 1, 1);
        command(&mut fme7, 8, 3, 1);
        fme7.update_map(&mut map);
        assert_eq!(map.chr.map(|offset| offset / 0x400), core::array::from_fn(|n| 0x10 + n));
        assert_eq!(map.prg.map(|offset| offset / 0x2000), [5, 6, 7, 31]);
        assert_eq!(map.nametables, [0, 0, 1, 1], "horizontal");
        let window = map.prg_ram_window(0x6000);
        assert_eq!((window.read, window.offset, window.writable), (PrgRamRead::Rom, 3 * 0x2000, false));
        command(&mut fme7, 8, RAM_SELECT, 2);
        fme7.update_map(&mut map);
        assert_eq!(map.prg_ram_window(0x7000).read, PrgRamRead::OpenBus, "RAM selected, not enabled");
        command(&mut fme7, 8, RAM_SELECT | RAM_ENABLE, 3);
        fme7.update_map(&mut map);
        assert!(map.prg_ram_window(0x7FFF).writable);
        assert_eq!(map.prg_ram_window(0x7FFF).read, PrgRamRead::Ram);
    }

    #[test]
    fn the_counter_wraps_from_0000_to_the_irq() {
        let mut fme7 = board();
        command(&mut fme7, 0xE, 15, 1);
        command(&mut fme7, 0xF, 0, 1);
        command(&mut fme7, 0xD, COUNTER_ENABLE | IRQ_ENABLE, 2);
        assert_eq!(fme7.irq_due_cycle(), 2 + 16, "15 down to 0, then the wrap");
        fme7.catch_up(17);
        assert!(!fme7.irq_line());
        fme7.catch_up(18);
        assert!(fme7.irq_line());
        assert_eq!(fme7.state.irq_counter, 0xFFFF);
        // Any $D write acknowledges; T clear: the count goes on, no /IRQ at the next wrap.
        command(&mut fme7, 0xD, COUNTER_ENABLE, 20);
        assert!(!fme7.irq_line());
        fme7.catch_up(20 + 0x10000);
        assert!(!fme7.irq_line());
        assert_eq!(fme7.state.irq_counter, 0xFFFF - 2);
        // C clear: the counter holds.
        command(&mut fme7, 0xD, IRQ_ENABLE, 30 + 0x10000);
        assert_eq!(fme7.irq_due_cycle(), u64::MAX);
        fme7.catch_up(100_000);
        assert_eq!(fme7.state.irq_counter, 0xFFFF - 12);
    }

    #[test]
    fn random_writes_and_runs_equal_single_cycles() {
        // Lazy == eager: the lazy counter run only at its writes and at random points, the stepped
        // one every cycle; /IRQ rises exactly at the predicted cycle.
        let mut seed = 0xF3E7_u64;
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
                stepped.ticked = cycle;
                assert_eq!(lazy.state.irq_counter, stepped.state.irq_counter, "cycle {cycle}");
                assert_eq!(lazy.state.irq_pending, stepped.state.irq_pending, "cycle {cycle}");
                if roll < 3 {
                    let value = next(&mut seed) as u8;
                    let (register, value) = match value % 3 {
                        0 => (0xD, value & 0x81 | 0x80),
                        1 => (0xE, value),
                        _ => (0xF, value & 0x03),
                    };
                    for fme7 in [&mut lazy, &mut stepped] {
                        let s = &mut fme7.state;
                        match register {
                            0xD => (s.irq_control, s.irq_pending) = (value, 0),
                            0xE => s.irq_counter = (s.irq_counter & 0xFF00) | u16::from(value),
                            _ => s.irq_counter = (s.irq_counter & 0x00FF) | u16::from(value) << 8,
                        }
                    }
                }
                due = lazy.irq_due_cycle();
            }
        }
        assert!(rises > 200, "only {rises} IRQs: the program must exercise the prediction");
    }
}
