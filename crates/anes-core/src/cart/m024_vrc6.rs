//! Mappers 24 and 26: Konami VRC6 (nesdev "VRC6"), VRC6a (mapper 24) and VRC6b (26, the chip's A0
//! and A1 wired to CPU A1 and A0: $x001 and $x002 trade places).
//!
//! Registers, by address bits 12-15 and the chip's select (A1 A0):
//! - $8000: 16 KiB PRG bank at $8000 (4 bits); $C000: 8 KiB PRG bank at $C000 (5 bits); $E000-$FFFF
//!   holds the last bank;
//! - $9000-$9003, $A000-$A002, $B000-$B002: sound (`m024_vrc6_audio.rs`);
//! - $B003 `W.PN MMDD`: PRG RAM enable (W), the PPU banking mode (DD), mirroring (MM) and the CHR A10
//!   rule (P), below;
//! - $D000-$D003, $E000-$E003: CHR registers R0-R7;
//! - $F000 IRQ latch, $F001 IRQ control, $F002 IRQ acknowledge: the VRC IRQ (`vrc_irq.rs`).
//!
//! Pattern tables by mode DD: 0: eight 1 KiB banks R0-R7; 1: four 2 KiB regions R0-R3; 2 and 3: 1 KiB
//! banks R0-R3 at $0000-$0FFF and 2 KiB regions R4, R5 at $1000-$1FFF. In a 2 KiB region, with P set
//! the bank's A10 is the PPU's (banks R & ~1 and R | 1), with P clear the register's (bank R twice).
//! Nametables: each quadrant takes a CHR register, by $B003 & 7: R6 R6 R7 R7 in modes 0, 6, 7,
//! R4 R5 R6 R7 in modes 1 and 5, R6 R7 R6 R7 in modes 2, 3 and 4. With P set, the register's bit 0
//! is replaced by $B003 & $0F: 0 or 7 PPU A10, 3 or 4 PPU A11, 8 or $F 0, $B or $C 1 (so $20/$27
//! is vertical, $23/$24 horizontal, $28/$2F and $2B/$2C single-screen, the values the games
//! write); otherwise it stays. N clear: that bit is CIRAM A10. N set: the nametable is the 1 KiB
//! CHR ROM bank the (substituted) register selects; writes there go nowhere (nesdev "VRC6",
//! confirmed by the register dumps on its talk page).

use super::expansion_audio::ExpansionChip;
use super::m024_vrc6_audio::Vrc6Audio;
use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;
use super::vrc_irq::VrcIrq;

crate::layout::state_struct! {
    /// VRC6 registers, its IRQ counter and its sound.
    pub struct Vrc6State {
        /// $8000 (16 KiB bank) and $C000 (8 KiB bank).
        pub prg: [u8; 2],
        /// CHR registers R0-R7.
        pub chr: [u8; 8],
        /// $B003: PRG RAM enable, PPU banking mode and mirroring.
        pub ppu_banking: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
        /// The VRC IRQ counter.
        pub irq: VrcIrq,
        /// The sound chip.
        pub audio: Vrc6Audio,
    }
}

const _: () = assert!(core::mem::size_of::<Vrc6State>() == 40);

const PRG_RAM_ENABLE: u8 = 0x80;
const CHR_A10_FROM_PPU: u8 = 0x20;
const NAMETABLES_FROM_CHR: u8 = 0x10;

/// VRC6a or VRC6b board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Vrc6 {
    state: Vrc6State,
    /// VRC6b: CPU A0 and A1 reach the chip's A1 and A0.
    swapped_selects: bool,
    /// The CPU cycle the IRQ counter and the sound have been run through. Derived (set by
    /// `resync`), not state: every public entry point of the console catches them up.
    ticked: u64,
}

impl Vrc6 {
    /// The chip's register select (0-3) for CPU address `addr`.
    #[inline]
    fn select(&self, addr: u16) -> u8 {
        let select = (addr & 3) as u8;
        if self.swapped_selects { (select >> 1) | (select & 1) << 1 } else { select }
    }
}

impl Mapper for Vrc6 {
    state_in!(state: Vrc6State, ticked: ticked);

    fn expansion_chip(&self) -> Option<ExpansionChip> {
        Some(ExpansionChip::Vrc6)
    }

    /// The board in its power-on state. `Board::new` calls this only for mappers 24 and 26.
    fn new(config: BoardConfig) -> Self {
        Vrc6 {
            state: Vrc6State { irq: VrcIrq::new(), ..Vrc6State::default() },
            swapped_selects: config.mapper == 26,
            ticked: 0,
        }
    }

    /// A CPU write to $8000-$FFFF on CPU cycle `cpu_cycle`; returns true when the bank map must be
    /// recomputed. The IRQ counter and the sound are first run through this cycle.
    fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        self.catch_up(cpu_cycle);
        let select = self.select(addr);
        let s = &mut self.state;
        match (addr & 0xF000, select) {
            (0x8000, _) => s.prg[0] = value & 0x0F,
            (0xB000, 3) => s.ppu_banking = value,
            (0x9000..=0xB000, _) => {
                s.audio.write(((addr >> 12) - 9) as u8, select, value);
                return false;
            }
            (0xC000, _) => s.prg[1] = value & 0x1F,
            (0xD000 | 0xE000, _) => s.chr[usize::from((addr >> 12) - 0xD) * 4 + usize::from(select)] = value,
            (_, 0) => s.irq.write_latch(value),
            (_, 1) => s.irq.write_control(value),
            (_, 2) => s.irq.acknowledge(),
            _ => {}
        }
        matches!(addr & 0xF000, 0x8000 | 0xB000 | 0xC000 | 0xD000 | 0xE000)
    }

    /// Runs the IRQ counter and the sound over `cycles` CPU cycles, in closed form.
    fn run_cycles(&mut self, cycles: u64) {
        self.state.irq.run(cycles);
        self.state.audio.run(cycles);
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

    /// The sound DAC's level (0-61) as of the cycle run through last.
    fn expansion_level(&self) -> i32 {
        i32::from(self.state.audio.level())
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        map.set_prg_16k(0, usize::from(s.prg[0]));
        map.set_prg_8k(2, usize::from(s.prg[1]));
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        let r = |n: usize| usize::from(s.chr[n]);
        let a10_from_ppu = s.ppu_banking & CHR_A10_FROM_PPU != 0;
        // A 2 KiB region of register `n` at 1 KiB windows `window` and `window + 1`.
        let region = |map: &mut MemoryMap, window: usize, n: usize| {
            let (first, second) = if a10_from_ppu { (r(n) & !1, r(n) | 1) } else { (r(n), r(n)) };
            map.set_chr_1k(window, first);
            map.set_chr_1k(window + 1, second);
        };
        match s.ppu_banking & 3 {
            0 => (0..8).for_each(|window| map.set_chr_1k(window, r(window))),
            1 => (0..4).for_each(|n| region(map, n * 2, n)),
            _ => {
                (0..4).for_each(|window| map.set_chr_1k(window, r(window)));
                region(map, 4, 4);
                region(map, 6, 5);
            }
        }
        let registers = match s.ppu_banking & 7 {
            0 | 6 | 7 => [6, 6, 7, 7],
            1 | 5 => [4, 5, 6, 7],
            _ => [6, 7, 6, 7],
        };
        // Bit 0 of each quadrant's bank: a PPU address line or a constant where P says so.
        let a10 = |quadrant: usize| -> Option<u8> {
            if !a10_from_ppu {
                return None;
            }
            match s.ppu_banking & 0x0F {
                0 | 7 => Some(quadrant as u8 & 1),
                3 | 4 => Some(quadrant as u8 >> 1),
                8 | 0xF => Some(0),
                0xB | 0xC => Some(1),
                _ => None,
            }
        };
        let banks: [u8; 4] = core::array::from_fn(|quadrant| {
            let register = s.chr[registers[quadrant]];
            a10(quadrant).map_or(register, |bit| (register & !1) | bit)
        });
        if s.ppu_banking & NAMETABLES_FROM_CHR != 0 {
            for (quadrant, &bank) in banks.iter().enumerate() {
                map.set_nametable_chr(quadrant, usize::from(bank));
            }
        } else if map.wired_mirroring == Mirroring::FourScreen {
            map.set_mirroring(Mirroring::FourScreen);
        } else {
            map.nametables = banks.map(|bank| bank & 1);
        }
        let ram = s.ppu_banking & PRG_RAM_ENABLE != 0;
        map.set_prg_ram(0, ram, ram);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(mapper: u16) -> Vrc6 {
        Vrc6::new(BoardConfig { mapper, submapper: 0, chr_rom_size: 0x40000, battery: false })
    }

    fn map() -> MemoryMap {
        MemoryMap::new(0x40000, 0x40000, 0x2000, Mirroring::Vertical)
    }

    #[test]
    fn prg_banks_and_the_vrc6b_select_swap() {
        for mapper in [24, 26] {
            let mut vrc6 = board(mapper);
            let mut map = map();
            vrc6.write_register(0x8000, 5, 1);
            vrc6.write_register(0xC003, 9, 2);
            vrc6.update_map(&mut map);
            assert_eq!(map.prg, [10 * 0x2000, 11 * 0x2000, 9 * 0x2000, 31 * 0x2000], "mapper {mapper}");
            // CHR R1 is $D001 on the VRC6a, $D002 on the VRC6b (nesdev "VRC6").
            let r1 = if mapper == 24 { 0xD001 } else { 0xD002 };
            vrc6.write_register(r1, 0x42, 3);
            vrc6.update_map(&mut map);
            assert_eq!(map.chr[1], 0x42 * 0x400, "mapper {mapper}");
        }
    }

    #[test]
    fn ppu_banking_modes_and_mirroring() {
        let mut vrc6 = board(24);
        let mut map = map();
        for (n, addr) in
            [0xD000, 0xD001, 0xD002, 0xD003, 0xE000, 0xE001, 0xE002, 0xE003].into_iter().enumerate()
        {
            vrc6.write_register(addr, 0x10 + n as u8 * 2 + 1, 1);
        }
        let banks = |map: &MemoryMap| map.chr.map(|offset| offset / 0x400);
        // $B003 = $20 + mode, P set: 2 KiB regions take R & ~1 and R | 1.
        for (b003, chr, nametables) in [
            (0x20, [0x11, 0x13, 0x15, 0x17, 0x19, 0x1B, 0x1D, 0x1F], [0, 1, 0, 1]),
            (0x25, [0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17], [1, 1, 1, 1]),
            (0x26, [0x11, 0x13, 0x15, 0x17, 0x18, 0x19, 0x1A, 0x1B], [1, 1, 1, 1]),
            (0x24, [0x11, 0x13, 0x15, 0x17, 0x19, 0x1B, 0x1D, 0x1F], [0, 0, 1, 1]),
            (0x28, [0x11, 0x13, 0x15, 0x17, 0x19, 0x1B, 0x1D, 0x1F], [0, 0, 0, 0]),
            (0x2C, [0x11, 0x13, 0x15, 0x17, 0x19, 0x1B, 0x1D, 0x1F], [1, 1, 1, 1]),
            // P clear: a 2 KiB region shows bank R twice.
            (0x01, [0x11, 0x11, 0x13, 0x13, 0x15, 0x15, 0x17, 0x17], [1, 1, 1, 1]),
        ] {
            vrc6.write_register(0xB003, b003, 2);
            vrc6.update_map(&mut map);
            assert_eq!(banks(&map), chr.map(|bank| bank as usize), "$B003 = {b003:#04X}");
            assert_eq!(map.nametables, nametables, "$B003 = {b003:#04X}");
        }
        // CIRAM A10 from the registers' bit 0: R6 R6 R7 R7 in mode 0.
        vrc6.write_register(0xE002, 0x20, 3);
        vrc6.write_register(0xB003, 0x00, 4);
        vrc6.update_map(&mut map);
        assert_eq!(map.nametables, [0, 0, 1, 1]);
    }

    #[test]
    fn n_set_shows_chr_rom_banks_as_on_the_talk_pages_register_dumps() {
        // nesdev "Talk:VRC6": R0-R7 = $81 $88 $90 $99 $A0 $A9 $B1 $B8, the banks read at
        // $2000/$2400/$2800/$2C00 with $B003 = $10-$14 (P clear: the whole register).
        let mut vrc6 = board(24);
        let mut map = map();
        let registers = [0x81, 0x88, 0x90, 0x99, 0xA0, 0xA9, 0xB1, 0xB8];
        for (n, addr) in
            [0xD000, 0xD001, 0xD002, 0xD003, 0xE000, 0xE001, 0xE002, 0xE003].into_iter().enumerate()
        {
            vrc6.write_register(addr, registers[n], 1);
        }
        let shown = |vrc6: &Vrc6, map: &mut MemoryMap| {
            vrc6.update_map(map);
            assert_eq!(map.nametables, [super::super::map::PAGE_CHR; 4]);
            map.nametable_chr.map(|offset| offset / 0x400)
        };
        for (b003, banks) in [
            (0x10, [0xB1, 0xB1, 0xB8, 0xB8]),
            (0x11, [0xA0, 0xA9, 0xB1, 0xB8]),
            (0x12, [0xB1, 0xB8, 0xB1, 0xB8]),
            (0x14, [0xB1, 0xB8, 0xB1, 0xB8]),
        ] {
            vrc6.write_register(0xB003, b003, 2);
            assert_eq!(shown(&vrc6, &mut map), banks, "$B003 = {b003:#04X}");
        }
        // P set, R6 = $71, R7 = $78 (nesdev "User talk:Natt/VRC6 Musings", the dumps for $23, $27,
        // $2B, $2F): bit 0 from PPU A11, PPU A10, 1, 0.
        vrc6.write_register(0xE002, 0x71, 3);
        vrc6.write_register(0xE003, 0x78, 3);
        for (b003, banks) in [
            (0x33, [0x70, 0x78, 0x71, 0x79]),
            (0x37, [0x70, 0x71, 0x78, 0x79]),
            (0x3B, [0x71, 0x79, 0x71, 0x79]),
            (0x3F, [0x70, 0x70, 0x78, 0x78]),
        ] {
            vrc6.write_register(0xB003, b003, 4);
            assert_eq!(shown(&vrc6, &mut map), banks, "$B003 = {b003:#04X}");
        }
        // N clear again: CIRAM pages from the same bits.
        vrc6.write_register(0xB003, 0x23, 5);
        vrc6.update_map(&mut map);
        assert_eq!(map.nametables, [0, 0, 1, 1]);
    }

    #[test]
    fn prg_ram_follows_b003_bit_7() {
        let mut vrc6 = board(24);
        let mut map = map();
        vrc6.update_map(&mut map);
        assert!(!map.prg_ram_window(0x6000).writable);
        vrc6.write_register(0xB003, 0xA0, 1);
        vrc6.update_map(&mut map);
        assert!(map.prg_ram_window(0x7FFF).writable);
    }

    #[test]
    fn irq_registers_reach_the_vrc_counter() {
        // VRC6b: $F001 and $F002 trade places, so control is $F002 there.
        for (mapper, control, ack) in [(24, 0xF001, 0xF002), (26, 0xF002, 0xF001)] {
            let mut vrc6 = board(mapper);
            vrc6.write_register(0xF000, 0xFB, 1);
            vrc6.write_register(control, 0x06, 2); // E and cycle mode
            assert_eq!(vrc6.irq_due_cycle(), 2 + 5, "mapper {mapper}");
            vrc6.catch_up(7);
            assert!(vrc6.irq_line());
            vrc6.write_register(ack, 0, 8);
            assert!(!vrc6.irq_line());
        }
    }

    #[test]
    fn sound_registers_reach_the_chip_and_run_with_the_board() {
        let mut vrc6 = board(26);
        // VRC6b: pulse 1's period high is $9001.
        vrc6.write_register(0x9000, 0x8F, 1);
        assert_eq!(vrc6.expansion_level(), 0, "disabled");
        vrc6.write_register(0x9001, 0x80, 2);
        assert_eq!(vrc6.expansion_level(), 15, "mode: the volume");
        vrc6.write_register(0xB000, 0x08, 3);
        vrc6.write_register(0xB001, 0x80, 4);
        // Period 0: the saw clocks every cycle; 2 clocks add the rate 8, top 5 bits 1.
        vrc6.catch_up(6);
        assert_eq!(vrc6.expansion_level(), 16);
    }
}
