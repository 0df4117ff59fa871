//! Mappers 21, 22, 23 and 25: Konami VRC2 and VRC4 (nesdev "VRC2 and VRC4", "VRC IRQ").
//!
//! One chip family on boards that wire different CPU address lines to the chip's two register
//! select inputs (called A0 and A1 here, as the chip sees them). Per board, with the NES 2.0
//! submapper that names it:
//!
//! | board | chip A0 | chip A1 | mapper.submapper |
//! |---|---|---|---|
//! | VRC4a | A1 | A2 | 21.1 |
//! | VRC4c | A6 | A7 | 21.2 |
//! | VRC2a | A1 | A0 | 22.0 (CHR bank numbers shifted right by one) |
//! | VRC4f | A0 | A1 | 23.1 |
//! | VRC4e | A2 | A3 | 23.2 |
//! | VRC2b | A0 | A1 | 23.3 |
//! | VRC4b | A1 | A0 | 25.1 |
//! | VRC4d | A3 | A2 | 25.2 |
//! | VRC2c | A1 | A0 | 25.3 |
//!
//! Without a submapper (iNES 1.0, or NES 2.0 submapper 0) the board is a VRC4 whose select inputs
//! see the OR of both candidate lines (21: A1|A6 and A2|A7; 23: A0|A2 and A1|A3; 25: A1|A3 and
//! A0|A2), as the wiki's "INES Mapper 023" page recommends: every game of those mapper numbers
//! writes its registers at addresses where the other wiring's lines are 0. Mapper 22 is only VRC2a.
//!
//! Registers, by address bits 12-15 and the chip's select inputs (A1 A0):
//! - $8000: 8 KiB PRG bank at $8000 (VRC4 swap mode: at $C000);
//! - $9000: VRC2 mirroring (bit 0: 0 vertical, 1 horizontal; all four selects); VRC4 select 0:
//!   mirroring (0 vertical, 1 horizontal, 2 single-screen page 0, 3 page 1), select 2: bit 1 PRG
//!   swap mode (1: the second-last bank at $8000 and the $8000 register's bank at $C000), bit 0
//!   the PRG RAM enable (0: $6000-$7FFF open bus, writes lost; so at power-on); selects 1 and 3
//!   set neither (3 is the external select strobe, unconnected on these boards);
//! - $A000: 8 KiB PRG bank at $A000; $C000 and $E000 hold the second-last and last banks;
//! - $B000-$E003: eight 1 KiB CHR banks, two registers each (select 0 or 2: low nibble, 1 or 3:
//!   high nibble, 4 bits on the VRC2, 5 on the VRC4); $B000-$B003 banks 0-1, $C000 banks 2-3, ...;
//! - VRC4 $F000: IRQ latch low nibble (select 0), high nibble (1), control (2), acknowledge (3).
//!
//! The VRC4 IRQ is the VRC IRQ counter of `vrc_irq.rs`, run lazily: [`Vrc::catch_up`] advances it
//! in closed form and [`Vrc::irq_due_cycle`] names the cycle that asserts /IRQ.
//!
//! On a VRC2 board without PRG RAM (most of them; NES 2.0 headers say so), $6000-$6FFF holds the
//! chip's 1-bit latch, what is left of its unused Microwire interface: a write keeps bit 0, a read
//! returns it in bit 0 with open bus above, and $7000-$7FFF is open bus ("VRC2 and VRC4",
//! "Microwire interface"; Contra (J) and Ganbare Goemon 2 check it at start).

use super::map::{BoardConfig, MemoryMap, PRG_RAM_WINDOW, PRG_RAM_WINDOWS, PrgRamRead};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;
use super::vrc_irq::VrcIrq;

crate::layout::state_struct! {
    /// VRC2 and VRC4 registers and the VRC4's IRQ counter.
    pub struct VrcState {
        /// PRG bank registers for $8000 (or $C000 in swap mode) and $A000.
        pub prg: [u8; 2],
        /// Low nibbles of the eight 1 KiB CHR bank registers.
        pub chr_low: [u8; 8],
        /// High nibbles (VRC4: 5 bits) of the CHR bank registers.
        pub chr_high: [u8; 8],
        /// $9000: mirroring (VRC2: bit 0; VRC4: bits 0-1).
        pub mirroring: u8,
        /// VRC4 $9002: bit 1 PRG swap mode, bit 0 PRG RAM enable.
        pub prg_mode: u8,
        /// VRC4 IRQ counter (same bytes as the former flat fields: latch, control, counter,
        /// pending, prescaler).
        pub irq: VrcIrq,
        /// VRC2 without PRG RAM: the 1-bit latch at $6000-$6FFF (bit 0).
        pub latch: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
    }
}

const _: () = assert!(core::mem::size_of::<VrcState>() == 28);

/// Which CPU address lines feed the chip's select inputs A0 and A1: each a mask of lines ORed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Wiring {
    a0: u16,
    a1: u16,
}

/// The chip on the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chip {
    Vrc2,
    Vrc4,
}

/// VRC2 or VRC4 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Vrc {
    state: VrcState,
    chip: Chip,
    wiring: Wiring,
    /// VRC2a: CHR bank registers select 1 KiB banks by their bits 1-7.
    chr_shift: u8,
    /// The CPU cycle the IRQ counter has been run through. Derived (set by `resync`), not state:
    /// every public entry point of the console catches the counter up to the current cycle.
    irq_ticked: u64,
}

const A0: u16 = 1 << 0;
const A1: u16 = 1 << 1;
const A2: u16 = 1 << 2;
const A3: u16 = 1 << 3;
const A6: u16 = 1 << 6;
const A7: u16 = 1 << 7;

impl Vrc {
    /// The chip's register select (0-3) for CPU address `addr`.
    #[inline]
    fn select(&self, addr: u16) -> u8 {
        u8::from(addr & self.wiring.a0 != 0) | u8::from(addr & self.wiring.a1 != 0) << 1
    }
}

impl Mapper for Vrc {
    state_in!(state: VrcState, ticked: irq_ticked);

    /// The board in its power-on state. `Board::new` calls this only for mappers 21, 22, 23, 25.
    fn new(config: BoardConfig) -> Self {
        let (chip, wiring, chr_shift) = match (config.mapper, config.submapper) {
            (21, 1) => (Chip::Vrc4, Wiring { a0: A1, a1: A2 }, 0),
            (21, 2) => (Chip::Vrc4, Wiring { a0: A6, a1: A7 }, 0),
            (21, _) => (Chip::Vrc4, Wiring { a0: A1 | A6, a1: A2 | A7 }, 0),
            (22, _) => (Chip::Vrc2, Wiring { a0: A1, a1: A0 }, 1),
            (23, 1) => (Chip::Vrc4, Wiring { a0: A0, a1: A1 }, 0),
            (23, 2) => (Chip::Vrc4, Wiring { a0: A2, a1: A3 }, 0),
            (23, 3) => (Chip::Vrc2, Wiring { a0: A0, a1: A1 }, 0),
            (23, _) => (Chip::Vrc4, Wiring { a0: A0 | A2, a1: A1 | A3 }, 0),
            (25, 1) => (Chip::Vrc4, Wiring { a0: A1, a1: A0 }, 0),
            (25, 2) => (Chip::Vrc4, Wiring { a0: A3, a1: A2 }, 0),
            (25, 3) => (Chip::Vrc2, Wiring { a0: A1, a1: A0 }, 0),
            _ => (Chip::Vrc4, Wiring { a0: A1 | A3, a1: A0 | A2 }, 0),
        };
        Vrc {
            state: VrcState { irq: VrcIrq::new(), ..VrcState::default() },
            chip,
            wiring,
            chr_shift,
            irq_ticked: 0,
        }
    }

    /// A CPU write to $8000-$FFFF on CPU cycle `cpu_cycle`; returns true when the bank map must be
    /// recomputed. The IRQ counter is first run through this cycle.
    fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        self.catch_up(cpu_cycle);
        let select = self.select(addr);
        let vrc4 = self.chip == Chip::Vrc4;
        let s = &mut self.state;
        match addr & 0xF000 {
            0x8000 => s.prg[0] = value & 0x1F,
            0xA000 => s.prg[1] = value & 0x1F,
            0x9000 if !vrc4 => s.mirroring = value & 1,
            0x9000 => match select {
                0 => s.mirroring = value & 3,
                2 => s.prg_mode = value & 0x03,
                // Select 1 decodes nothing; select 3 is the external select strobe, unconnected.
                _ => return false,
            },
            0xB000..=0xE000 => {
                let bank = usize::from((addr >> 12) - 0xB) * 2 + usize::from(select >> 1);
                if select & 1 == 0 {
                    s.chr_low[bank] = value & 0x0F;
                } else {
                    s.chr_high[bank] = value & if vrc4 { 0x1F } else { 0x0F };
                }
            }
            _ if !vrc4 => return false,
            _ => {
                match select {
                    0 => s.irq.write_latch_low(value),
                    1 => s.irq.write_latch_high(value),
                    2 => s.irq.write_control(value),
                    _ => s.irq.acknowledge(),
                }
                return false;
            }
        }
        true
    }

    /// A CPU write to $4020-$7FFF, which reaches the board only where `update_map` set
    /// `low_registers`: a VRC2 without PRG RAM, whose latch answers at $6000-$6FFF.
    fn write_low(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        if !(0x6000..0x7000).contains(&addr) {
            return false;
        }
        self.state.latch = value & 1;
        true
    }

    /// Runs the IRQ counter over `cycles` CPU cycles, in closed form.
    fn run_cycles(&mut self, cycles: u64) {
        self.state.irq.run(cycles);
    }

    /// CPU cycles to the one whose counter clock asserts /IRQ, counted from the cycle run through last;
    /// `None` when no cycle can (disabled, or already asserted: only a write changes it then).
    fn cycles_to_irq(&self) -> Option<u64> {
        self.state.irq.cycles_to_irq()
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    fn irq_line(&self) -> bool {
        self.state.irq.line()
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        let second_last = map.prg_bank_from_end(2);
        let selected = usize::from(s.prg[0]);
        let swapped = self.chip == Chip::Vrc4 && s.prg_mode & 0x02 != 0;
        let (slot0, slot2) = if swapped { (second_last, selected) } else { (selected, second_last) };
        map.set_prg_8k(0, slot0);
        map.set_prg_8k(1, usize::from(s.prg[1]));
        map.set_prg_8k(2, slot2);
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        for window in 0..8 {
            let register = usize::from(s.chr_high[window]) << 4 | usize::from(s.chr_low[window]);
            map.set_chr_1k(window, register >> self.chr_shift);
        }
        map.set_mirroring(match self.chip {
            // The VRC2 has one bit.
            Chip::Vrc2 if s.mirroring & 1 == 0 => Mirroring::Vertical,
            Chip::Vrc2 => Mirroring::Horizontal,
            Chip::Vrc4 => Mirroring::from_two_bits(s.mirroring),
        });
        if self.chip == Chip::Vrc2 && map.prg_ram_len == 0 {
            // $6000-$6FFF: the latch; $7000-$7FFF: open bus.
            for window in 0..PRG_RAM_WINDOWS {
                let read = if window < PRG_RAM_WINDOWS / 2 { PrgRamRead::Latch } else { PrgRamRead::OpenBus };
                map.set_prg_ram_window(window, window * PRG_RAM_WINDOW, read, false);
            }
            map.prg_latch = self.state.latch & 1;
            map.low_registers = true;
        } else {
            let enabled = self.chip == Chip::Vrc2 || s.prg_mode & 0x01 != 0;
            map.set_prg_ram(0, enabled, enabled);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::vrc_irq::{IRQ_CYCLE_MODE, IRQ_ENABLE};

    fn board(mapper: u16, submapper: u8) -> Vrc {
        Vrc::new(BoardConfig { mapper, submapper, chr_rom_size: 0x20000, battery: false })
    }

    #[test]
    fn each_wiring_selects_registers_at_its_documented_addresses() {
        // The register table of nesdev "VRC2 and VRC4": the addresses of selects 0, 1, 2, 3.
        let cases: [(u16, u8, [u16; 4]); 9] = [
            (21, 1, [0, 2, 4, 6]),
            (21, 2, [0, 0x40, 0x80, 0xC0]),
            (22, 0, [0, 2, 1, 3]),
            (23, 1, [0, 1, 2, 3]),
            (23, 2, [0, 4, 8, 0xC]),
            (23, 3, [0, 1, 2, 3]),
            (25, 1, [0, 2, 1, 3]),
            (25, 2, [0, 8, 4, 0xC]),
            (25, 3, [0, 2, 1, 3]),
        ];
        for (mapper, submapper, offsets) in cases {
            let vrc = board(mapper, submapper);
            for (select, offset) in offsets.into_iter().enumerate() {
                assert_eq!(vrc.select(0xB000 | offset), select as u8, "{mapper}.{submapper} +{offset:#X}");
            }
        }
        // Without a submapper both wirings of the mapper number decode.
        for (mapper, offsets) in [
            (21, [[0, 2, 4, 6], [0, 0x40, 0x80, 0xC0]]),
            (23, [[0, 1, 2, 3], [0, 4, 8, 0xC]]),
            (25, [[0, 2, 1, 3], [0, 8, 4, 0xC]]),
        ] {
            let vrc = board(mapper, 0);
            for wiring in offsets {
                for (select, offset) in wiring.into_iter().enumerate() {
                    assert_eq!(vrc.select(0xF000 | offset), select as u8, "{mapper}.0 +{offset:#X}");
                }
            }
        }
    }

    #[test]
    fn vrc2a_selects_chr_banks_by_bits_1_to_7() {
        let mut vrc = board(22, 0);
        let mut map = MemoryMap::new(0x20000, 0x40000, 0, Mirroring::Vertical);
        // VRC2a: $B001 is select 2 (CHR bank 1 low nibble), $B003 select 3 (its high nibble).
        vrc.write_register(0xB001, 0x07, 1);
        vrc.write_register(0xB003, 0x0C, 2);
        vrc.update_map(&mut map);
        assert_eq!(map.chr[1], (0xC7 >> 1) * 0x400);
        let mut vrc = board(23, 3);
        vrc.write_register(0xB002, 0x07, 1);
        vrc.write_register(0xB003, 0x0C, 2);
        vrc.update_map(&mut map);
        assert_eq!(map.chr[1], 0xC7 * 0x400);
    }

    #[test]
    fn vrc4_swap_mode_and_mirroring() {
        let mut vrc = board(21, 1);
        let mut map = MemoryMap::new(32 * 0x2000, 0x2000, 0x2000, Mirroring::Vertical);
        vrc.write_register(0x8000, 5, 1);
        vrc.write_register(0xA000, 7, 2);
        vrc.update_map(&mut map);
        assert_eq!(map.prg, [5 * 0x2000, 7 * 0x2000, 30 * 0x2000, 31 * 0x2000]);
        assert_eq!(map.prg_ram[0].read, PrgRamRead::OpenBus, "PRG RAM disabled at power-on");
        vrc.write_register(0x9004, 2, 3);
        vrc.update_map(&mut map);
        assert_eq!(map.prg, [30 * 0x2000, 7 * 0x2000, 5 * 0x2000, 31 * 0x2000]);
        assert!(!map.prg_ram[15].writable);
        vrc.write_register(0x9004, 3, 3);
        vrc.write_register(0x9006, 0, 3); // select 3: neither swap mode nor RAM enable
        vrc.write_register(0x9002, 1, 3); // select 1: not the mirroring register
        vrc.update_map(&mut map);
        assert_eq!(map.prg[0], 30 * 0x2000);
        assert_eq!((map.prg_ram[15].read, map.prg_ram[15].writable), (PrgRamRead::Ram, true));
        assert_eq!(map.nametables, [0, 1, 0, 1]);
        for (value, nametables) in [(0, [0, 1, 0, 1]), (1, [0, 0, 1, 1]), (2, [0; 4]), (3, [1; 4])] {
            vrc.write_register(0x9000, value, 4);
            vrc.update_map(&mut map);
            assert_eq!(map.nametables, nametables, "$9000 = {value}");
        }
        // The VRC2 has neither swap mode nor single-screen mirroring.
        let mut vrc2 = board(23, 3);
        vrc2.write_register(0x9002, 2, 1);
        vrc2.write_register(0x8000, 5, 2);
        vrc2.update_map(&mut map);
        assert_eq!(map.prg[0], 5 * 0x2000);
        assert_eq!(map.nametables, [0, 1, 0, 1], "bit 0 of 2: vertical");
    }

    /// A VRC4e with the IRQ set up by `writes` at cycles 1, 2, ... (selects: $F000, $F004, $F008,
    /// $F00C).
    fn vrc4_with(writes: &[(u16, u8)]) -> Vrc {
        let mut vrc = board(23, 2);
        for (i, &(addr, value)) in writes.iter().enumerate() {
            vrc.write_register(addr, value, i as u64 + 1);
        }
        vrc
    }

    #[test]
    fn scanline_mode_clocks_every_114_114_113_cycles() {
        // Latch $FE: the counter reloads to $FE, so the first IRQ is 2 prescaler wraps away.
        let mut vrc = vrc4_with(&[(0xF000, 0x0E), (0xF004, 0x0F), (0xF008, IRQ_ENABLE)]);
        let start = 3;
        assert_eq!(vrc.irq_due_cycle(), start + 114 + 114);
        vrc.catch_up(start + 114 + 113);
        assert!(!vrc.irq_line());
        vrc.catch_up(start + 228);
        assert!(vrc.irq_line());
        assert_eq!(vrc.state.irq.counter, 0xFE, "reloaded from the latch");
    }

    #[test]
    fn cycle_mode_clocks_every_cycle_and_acknowledge_copies_a_to_e() {
        let mut vrc = vrc4_with(&[(0xF000, 0x0B), (0xF004, 0x0F), (0xF008, IRQ_ENABLE | IRQ_CYCLE_MODE)]);
        assert_eq!(vrc.irq_due_cycle(), 3 + 5, "$FB, $FC, $FD, $FE, $FF, then the IRQ");
        vrc.catch_up(8);
        assert!(vrc.irq_line());
        // Acknowledge with A clear: IRQ off and E cleared, the counter stops.
        vrc.write_register(0xF00C, 0, 9);
        assert!(!vrc.irq_line());
        assert_eq!(vrc.irq_due_cycle(), u64::MAX);
        let counter = vrc.state.irq.counter;
        vrc.catch_up(1000);
        assert_eq!(vrc.state.irq.counter, counter);
    }
}
