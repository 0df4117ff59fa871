//! Mapper 85: Konami VRC7 (nesdev "VRC7"), on two boards that wire a different CPU address line
//! to the chip's register select: VRC7b (85.1, A3: the second register of a page at $x008; Tiny
//! Toon Adventures 2) and VRC7a (85.2, A4: at $x010; Lagrange Point). Without a submapper the
//! select sees A3 | A4, as the wiki recommends: each game writes with the other line clear.
//!
//! Registers, by address bits 12-15 and the select (first, second):
//! - $8000 / $8008|$8010: 8 KiB PRG banks at $8000 and $A000 (6 bits); $9000: the bank at $C000;
//!   $E000-$FFFF holds the last bank;
//! - $9010 and $9030 (A4 and A5, on both boards): the sound's address and data ports
//!   (`m085_vrc7_audio.rs`);
//! - $A000-$D008|$D010: eight 1 KiB CHR banks, two per page;
//! - $E000 `RS.. ..MM`: PRG RAM enable R, sound reset S (while set the sound is held silent in its
//!   power-on state and ignores writes), mirroring M (0 vertical, 1 horizontal, 2 single-screen
//!   page 0, 3 page 1);
//! - $E008|$E010 IRQ latch, $F000 IRQ control, $F008|$F010 IRQ acknowledge: the VRC IRQ
//!   (`vrc_irq.rs`).
//!
//! The IRQ counter and the sound run lazily, caught up in closed form at register writes and at
//! the console's catch-up points, like the VRC6's.

use super::expansion_audio::ExpansionChip;
use super::m085_vrc7_audio::Vrc7Audio;
use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;
use super::vrc_irq::VrcIrq;

crate::layout::state_struct! {
    /// VRC7 registers, its IRQ counter and its sound.
    pub struct Vrc7State {
        /// PRG banks at $8000, $A000 and $C000.
        pub prg: [u8; 3],
        /// $E000: PRG RAM enable, sound reset, mirroring.
        pub control: u8,
        /// CHR registers 0-7.
        pub chr: [u8; 8],
        /// The VRC IRQ counter.
        pub irq: VrcIrq,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 2],
        /// The FM sound.
        pub audio: Vrc7Audio,
    }
}

const _: () = assert!(core::mem::size_of::<Vrc7State>() == 188);

const PRG_RAM_ENABLE: u8 = 0x80;
const SOUND_RESET: u8 = 0x40;

/// VRC7a or VRC7b board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Vrc7 {
    state: Vrc7State,
    /// The CPU address lines ORed into the register select (A3, A4 or both).
    select_lines: u16,
    /// The CPU cycle the IRQ counter and the sound have been run through. Derived (set by
    /// `resync`), not state: every public entry point of the console catches them up.
    ticked: u64,
}

impl Mapper for Vrc7 {
    state_in!(state: Vrc7State, ticked: ticked);

    fn expansion_chip(&self) -> Option<ExpansionChip> {
        Some(ExpansionChip::Vrc7)
    }

    /// The board in its power-on state. `Board::new` calls this only for mapper 85.
    fn new(config: BoardConfig) -> Self {
        let select_lines = match config.submapper {
            1 => 0x0008,
            2 => 0x0010,
            _ => 0x0018,
        };
        Vrc7 {
            state: Vrc7State { irq: VrcIrq::new(), audio: Vrc7Audio::new(), ..Vrc7State::default() },
            select_lines,
            ticked: 0,
        }
    }

    /// A CPU write to $8000-$FFFF on CPU cycle `cpu_cycle`; returns true when the bank map must be
    /// recomputed. The IRQ counter and the sound are first run through this cycle.
    fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        self.catch_up(cpu_cycle);
        let second = addr & self.select_lines != 0;
        let s = &mut self.state;
        match (addr & 0xF000, second) {
            (0x8000, false) => s.prg[0] = value & 0x3F,
            (0x8000, true) => s.prg[1] = value & 0x3F,
            (0x9000, _) => {
                let sound_on = s.control & SOUND_RESET == 0;
                match addr & 0x0030 {
                    0x0010 if sound_on => s.audio.write_address(value),
                    0x0030 if sound_on => s.audio.write_data(value),
                    0x0000 if !second => {
                        s.prg[2] = value & 0x3F;
                        return true;
                    }
                    _ => {}
                }
                return false;
            }
            (0xA000..=0xD000, _) => s.chr[usize::from((addr >> 12) - 0xA) * 2 + usize::from(second)] = value,
            (0xE000, false) => {
                s.control = value;
                if value & SOUND_RESET != 0 {
                    s.audio = Vrc7Audio::new();
                }
            }
            (0xE000, true) => {
                s.irq.write_latch(value);
                return false;
            }
            (_, false) => {
                s.irq.write_control(value);
                return false;
            }
            (_, true) => {
                s.irq.acknowledge();
                return false;
            }
        }
        true
    }

    /// Runs the IRQ counter and the sound over `cycles` CPU cycles.
    fn run_cycles(&mut self, cycles: u64) {
        self.state.irq.run(cycles);
        if self.state.control & SOUND_RESET == 0 {
            self.state.audio.run(cycles);
        }
    }

    /// CPU cycles to the one whose counter clock asserts /IRQ; `None` when none can.
    fn cycles_to_irq(&self) -> Option<u64> {
        self.state.irq.cycles_to_irq()
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    fn irq_line(&self) -> bool {
        self.state.irq.line()
    }

    /// The sound's output level as of the cycle run through last (+/-24,576).
    fn expansion_level(&self) -> i32 {
        self.state.audio.level()
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        for (slot, &bank) in s.prg.iter().enumerate() {
            map.set_prg_8k(slot, usize::from(bank));
        }
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        for (window, &bank) in s.chr.iter().enumerate() {
            map.set_chr_1k(window, usize::from(bank));
        }
        map.set_mirroring(Mirroring::from_two_bits(s.control));
        let ram = s.control & PRG_RAM_ENABLE != 0;
        map.set_prg_ram(0, ram, ram);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(submapper: u8) -> Vrc7 {
        Vrc7::new(BoardConfig { mapper: 85, submapper, chr_rom_size: 0x40000, battery: false })
    }

    fn map() -> MemoryMap {
        MemoryMap::new(0x80000, 0x40000, 0x2000, Mirroring::Vertical)
    }

    #[test]
    fn each_wiring_decodes_its_select_line() {
        // (submapper, second register's offset, the other board's offset that must not reach it)
        for (submapper, second, other) in
            [(1, 0x08, Some(0x10)), (2, 0x10, Some(0x08)), (0, 0x08, None), (0, 0x10, None)]
        {
            let mut vrc7 = board(submapper);
            let mut map = map();
            vrc7.write_register(0x8000, 5, 1);
            vrc7.write_register(0x8000 | second, 9, 2);
            vrc7.write_register(0x9000, 63, 3);
            vrc7.write_register(0xA000 | second, 0x42, 4);
            vrc7.write_register(0xD000 | second, 0xFF, 5);
            vrc7.update_map(&mut map);
            assert_eq!(map.prg, [5 * 0x2000, 9 * 0x2000, 63 * 0x2000, 63 * 0x2000], "85.{submapper}");
            assert_eq!((map.chr[1], map.chr[7]), (0x42 * 0x400, 0xFF * 0x400), "85.{submapper}");
            if let Some(other) = other {
                vrc7.write_register(0x8000 | other, 7, 6);
                vrc7.update_map(&mut map);
                assert_eq!(map.prg[0], 7 * 0x2000, "85.{submapper}: +{other:#X} is the first register");
            }
        }
    }

    #[test]
    fn control_sets_mirroring_prg_ram_and_holds_the_sound_in_reset() {
        let mut vrc7 = board(2);
        let mut map = map();
        for (value, nametables) in [(0, [0, 1, 0, 1]), (1, [0, 0, 1, 1]), (2, [0; 4]), (3, [1; 4])] {
            vrc7.write_register(0xE000, value, 1);
            vrc7.update_map(&mut map);
            assert_eq!(map.nametables, nametables, "$E000 = {value}");
            assert!(!map.prg_ram_window(0x6000).writable);
        }
        vrc7.write_register(0xE000, 0x80, 2);
        vrc7.update_map(&mut map);
        assert!(map.prg_ram_window(0x7FFF).writable);
        // A note, then the reset bit: silent, and writes are ignored until it clears.
        for (register, value) in [(0x30, 0x30), (0x10, 0x20), (0x20, 0x19)] {
            vrc7.write_register(0x9010, register, 3);
            vrc7.write_register(0x9030, value, 4);
        }
        vrc7.catch_up(40_000);
        assert_ne!(vrc7.state.audio, Vrc7Audio::new());
        vrc7.write_register(0xE000, 0x40, 40_001);
        vrc7.write_register(0x9010, 0x30, 40_002);
        vrc7.write_register(0x9030, 0x3F, 40_003);
        vrc7.catch_up(80_000);
        assert_eq!(vrc7.state.audio, Vrc7Audio::new());
        assert_eq!(vrc7.expansion_level(), 0);
    }

    #[test]
    fn irq_registers_reach_the_vrc_counter() {
        for (submapper, second) in [(1, 0x08), (2, 0x10)] {
            let mut vrc7 = board(submapper);
            vrc7.write_register(0xE000 | second, 0xFB, 1);
            vrc7.write_register(0xF000, 0x06, 2); // E and cycle mode
            assert_eq!(vrc7.irq_due_cycle(), 2 + 5, "85.{submapper}");
            vrc7.catch_up(7);
            assert!(vrc7.irq_line());
            vrc7.write_register(0xF000 | second, 0, 8);
            assert!(!vrc7.irq_line());
        }
    }
}
