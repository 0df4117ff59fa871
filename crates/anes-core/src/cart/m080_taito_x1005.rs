//! Mappers 80 and 207: Taito X1-005 (nesdev "INES Mapper 080", "INES Mapper 207"; the board tracing
//! in the nesdev forum thread "Taito X1-005 and X1-017"). Registers at $7EF0-$7EFF only:
//! - $7EF0 / $7EF1: the 2 KiB CHR banks at $0000 / $0800 (`CCCC CCC.`: the low bit is ignored);
//! - $7EF2-$7EF5: the 1 KiB CHR banks at $1000-$1C00;
//! - $7EF6/$7EF7: mirroring, bit 0 (0 horizontal, 1 vertical);
//! - $7EF8/$7EF9: the internal RAM's enable: $A3 enables it, any other value disables it;
//! - $7EFA/$7EFB, $7EFC/$7EFD, $7EFE/$7EFF: the 8 KiB PRG banks at $8000, $A000, $C000; $E000 holds
//!   the last bank.
//!
//! $7EF6-$7EFF decode in pairs (A0 ignored). The chip's 128 bytes of RAM answer at $7F00-$7F7F and
//! again at $7F80-$7FFF while enabled; everything else in $6000-$7FFF is open bus. The RAM lives in
//! the board's state (like the Namco 163's), read through [`PrgRamRead::BoardRam`].
//!
//! Mapper 207 wires the chip's CHR A17 output to CIRAM A10 instead of the CHR ROM: bit 7 of $7EF0
//! selects the CIRAM page of $2000-$27FF, bit 7 of $7EF1 that of $2800-$2FFF (nametable fetches see
//! those two registers), CHR banks have 7 bits, and $7EF6 does nothing.

use super::map::{BoardConfig, MemoryMap, PRG_RAM_WINDOWS, PrgRamRead};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

/// The X1-005's internal RAM.
pub(super) const X1005_RAM_LEN: usize = 0x80;
/// The value of $7EF8 that enables the RAM.
const RAM_ENABLE: u8 = 0xA3;

crate::layout::state_struct! {
    /// X1-005 registers and internal RAM.
    pub struct X1005State {
        /// $7EF0, $7EF1 (2 KiB banks), $7EF2-$7EF5 (1 KiB banks).
        pub chr: [u8; 6],
        /// $7EFA, $7EFC, $7EFE: the PRG banks at $8000, $A000, $C000.
        pub prg: [u8; 3],
        /// $7EF6: mirroring (bit 0).
        pub mirroring: u8,
        /// $7EF8: the RAM enable ($A3: enabled).
        pub ram_enable: u8,
        /// The 128 bytes of internal RAM, in rows of 16 (arrays up to 32 derive `Default`).
        pub ram: [[u8; 16]; X1005_RAM_LEN / 16],
    }
}

const _: () = assert!(core::mem::size_of::<X1005State>() == 139);

/// X1-005 board (mapper 80), or its mapper-207 wiring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct X1005 {
    state: X1005State,
    /// Mapper 207: CHR bit 7 of $7EF0/$7EF1 drives CIRAM A10.
    nametables_from_chr: bool,
}

impl X1005 {
    /// A CPU read of $7E00-$7FFF (the window that holds the RAM, mapped only while it is enabled).
    fn peek_board_ram_inner(&self, addr: u16, open_bus: u8) -> u8 {
        if addr >= 0x7F00 {
            bytemuck::cast_slice::<_, u8>(&self.state.ram)[usize::from(addr) % X1005_RAM_LEN]
        } else {
            open_bus
        }
    }
}

impl Mapper for X1005 {
    state_in!(state: X1005State);

    /// Its only RAM is the chip's 128 bytes, in the registers' state.
    fn no_prg_ram(&self) -> bool {
        true
    }

    fn peek_board_ram(&self, addr: u16, open_bus: u8) -> u8 {
        self.peek_board_ram_inner(addr, open_bus)
    }

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        X1005 { state: X1005State::default(), nametables_from_chr: config.mapper == 207 }
    }

    /// A CPU write to $4020-$7FFF; returns true when the map must be recomputed.
    fn write_low(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        let s = &mut self.state;
        match addr {
            0x7EF0..=0x7EF5 => s.chr[usize::from(addr - 0x7EF0)] = value,
            0x7EF6..=0x7EF7 => s.mirroring = value,
            0x7EF8..=0x7EF9 => s.ram_enable = value,
            0x7EFA..=0x7EFF => s.prg[usize::from(addr - 0x7EFA) / 2] = value,
            0x7F00..=0x7FFF => {
                if s.ram_enable == RAM_ENABLE {
                    bytemuck::cast_slice_mut::<_, u8>(&mut s.ram)[usize::from(addr) % X1005_RAM_LEN] = value;
                }
                return false;
            }
            _ => return false,
        }
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        for (slot, &bank) in s.prg.iter().enumerate() {
            map.set_prg_8k(slot, usize::from(bank));
        }
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        // Mapper 207: bit 7 drives CIRAM A10, not CHR A17.
        let chr_bits = if self.nametables_from_chr { 0x7F } else { 0xFF };
        for (half, &bank) in s.chr[..2].iter().enumerate() {
            let bank = usize::from(bank & chr_bits & 0xFE);
            map.set_chr_1k(half * 2, bank);
            map.set_chr_1k(half * 2 + 1, bank + 1);
        }
        for (i, &bank) in s.chr[2..].iter().enumerate() {
            map.set_chr_1k(4 + i, usize::from(bank & chr_bits));
        }
        if self.nametables_from_chr {
            let (low, high) = (s.chr[0] >> 7, s.chr[1] >> 7);
            map.nametables = [low, low, high, high];
        } else {
            map.set_mirroring(if s.mirroring & 1 != 0 { Mirroring::Vertical } else { Mirroring::Horizontal });
        }
        for window in 0..PRG_RAM_WINDOWS {
            map.set_prg_ram_window(window, 0, PrgRamRead::OpenBus, false);
        }
        if s.ram_enable == RAM_ENABLE {
            map.set_prg_ram_window(PRG_RAM_WINDOWS - 1, 0, PrgRamRead::BoardRam, false);
        }
        map.low_registers = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(mapper: u16) -> (X1005, MemoryMap) {
        let config = BoardConfig { mapper, submapper: 0, chr_rom_size: 0x40000, battery: false };
        (X1005::new(config), MemoryMap::new(0x20000, 0x40000, 0, Mirroring::Vertical))
    }

    #[test]
    fn registers_pair_from_7ef6_and_the_ram_needs_a3() {
        let (mut x, mut map) = board(80);
        x.write_low(0x7EFB, 5, 0);
        x.write_low(0x7EFC, 6, 0);
        x.write_low(0x7EFF, 7, 0);
        x.write_low(0x7EF0, 0x83, 0);
        x.write_low(0x7EF5, 0xC1, 0);
        x.write_low(0x7EF7, 1, 0);
        x.update_map(&mut map);
        assert_eq!(map.prg, [5 * 0x2000, 6 * 0x2000, 7 * 0x2000, 15 * 0x2000]);
        assert_eq!(map.chr[0..2], [0x82 * 0x400, 0x83 * 0x400]);
        assert_eq!(map.chr[7], 0xC1 * 0x400);
        assert_eq!(map.nametables, [0, 1, 0, 1]);
        x.write_low(0x7F05, 9, 0);
        assert_eq!(x.peek_board_ram(0x7F05, 0), 0, "disabled: the write is lost");
        x.write_low(0x7EF9, RAM_ENABLE, 0);
        x.write_low(0x7F85, 9, 0);
        assert_eq!(x.peek_board_ram(0x7F05, 0x40), 9, "$7F80 mirrors $7F00");
        assert_eq!(x.peek_board_ram(0x7EF5, 0x40), 0x40);
    }

    #[test]
    fn mapper_207_takes_nametables_from_chr_bit_7() {
        let (mut x, mut map) = board(207);
        x.write_low(0x7EF0, 0x85, 0);
        x.write_low(0x7EF1, 0x06, 0);
        x.write_low(0x7EF2, 0x90, 0);
        x.write_low(0x7EF6, 1, 0);
        x.update_map(&mut map);
        assert_eq!(map.nametables, [1, 1, 0, 0]);
        assert_eq!(map.chr[0..4], [4 * 0x400, 5 * 0x400, 6 * 0x400, 7 * 0x400]);
        assert_eq!(map.chr[4], 0x10 * 0x400);
    }
}
