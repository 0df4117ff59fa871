//! Mapper 34: BNROM and NINA-001 (nesdev "INES Mapper 034", "BNROM", "NINA-001"), two boards under
//! one number, told apart by the NES 2.0 submapper (1 NINA-001, 2 BNROM) or, without one, by CHR
//! size: NINA-001 has CHR ROM larger than 8 KiB, BNROM 8 KiB of CHR RAM (or ROM).
//! - BNROM: a write to $8000-$FFFF selects the 32 KiB PRG bank (bus conflicts); CHR fixed.
//! - NINA-001: $7FFD bit 0 selects the 32 KiB PRG bank, $7FFE the 4 KiB CHR bank at $0000, $7FFF the
//!   one at $1000 (bits 0-3); the writes also reach the 8 KiB of PRG RAM at $6000-$7FFF.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// BNROM / NINA-001 registers.
    pub struct Mapper34State {
        /// 32 KiB PRG bank.
        pub prg_bank: u8,
        /// NINA-001: 4 KiB CHR banks at $0000 and $1000.
        pub chr_banks: [u8; 2],
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Mapper34State>() == 4);

/// BNROM or NINA-001 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mapper34 {
    state: Mapper34State,
    nina001: bool,
}

impl Mapper for Mapper34 {
    state_in!(state: Mapper34State);

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        let nina001 = match config.submapper {
            1 => true,
            2 => false,
            _ => config.chr_rom_size > 0x2000,
        };
        Mapper34 { state: Mapper34State { chr_banks: [0, 1], ..Mapper34State::default() }, nina001 }
    }

    /// A CPU write to $8000-$FFFF; returns true when the map must be recomputed.
    #[inline]
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        if self.nina001 {
            return false;
        }
        self.state.prg_bank = value;
        true
    }

    /// A CPU write to $4020-$7FFF (NINA-001's registers); returns true when the map must be recomputed.
    fn write_low(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        if !self.nina001 {
            return false;
        }
        match addr {
            0x7FFD => self.state.prg_bank = value & 1,
            0x7FFE => self.state.chr_banks[0] = value & 0x0F,
            0x7FFF => self.state.chr_banks[1] = value & 0x0F,
            _ => return false,
        }
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_32k(usize::from(self.state.prg_bank));
        if self.nina001 {
            map.set_chr_4k(0, usize::from(self.state.chr_banks[0]));
            map.set_chr_4k(1, usize::from(self.state.chr_banks[1]));
        } else {
            map.set_chr_8k(0);
            // BNROM (nesdev "BNROM"): the register is a 74HC377 behind the ROM's data bus.
            map.bus_conflicts = true;
        }
        map.low_registers = self.nina001;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::rom_info::Mirroring;

    #[test]
    fn submapper_or_chr_size_picks_the_board() {
        let pick = |submapper, chr_rom_size| {
            Mapper34::new(BoardConfig { mapper: 34, submapper, chr_rom_size, battery: false }).nina001
        };
        assert!(pick(1, 0x2000));
        assert!(!pick(2, 0x10000));
        assert!(pick(0, 0x10000), "more than 8 KiB of CHR ROM: NINA-001");
        assert!(!pick(0, 0x2000) && !pick(0, 0), "8 KiB of CHR ROM or CHR RAM: BNROM");
    }

    #[test]
    fn nina001_registers_at_7ffd_7fff() {
        let mut board =
            Mapper34::new(BoardConfig { mapper: 34, submapper: 1, chr_rom_size: 0x10000, battery: false });
        let mut map = MemoryMap::new(0x10000, 0x10000, 0x2000, Mirroring::Horizontal);
        assert!(!board.write_register(0x8000, 1, 0), "$8000-$FFFF is not a register on NINA-001");
        board.write_low(0x7FFD, 0xFF, 0);
        board.write_low(0x7FFE, 0x13, 0);
        board.write_low(0x7FFF, 0x0E, 0);
        assert!(!board.write_low(0x7FFC, 0x55, 0));
        board.update_map(&mut map);
        assert_eq!(map.prg[0], 0x8000);
        assert_eq!(map.chr[0], 3 * 0x1000);
        assert_eq!(map.chr[4], 14 * 0x1000);
        assert!(!map.bus_conflicts && map.low_registers);
    }
}
