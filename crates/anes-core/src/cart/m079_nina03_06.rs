//! Mappers 79 and 113: AVE NINA-03 / NINA-06 (nesdev "INES Mapper 079", "INES Mapper 113"). One
//! register, written at $4100-$5FFF where address bit 8 is set (mask $E100 = $4100):
//! - mapper 79: bit 3 selects the 32 KiB PRG bank, bits 0-2 the 8 KiB CHR bank; wired mirroring;
//! - mapper 113 (the HES boards' wiring of the same chips): bits 3-5 the 32 KiB PRG bank, bits 0-2
//!   and bit 6 (as bit 3) the 8 KiB CHR bank, bit 7 the mirroring (0 horizontal, 1 vertical).

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// NINA-03/06 register.
    pub struct Nina03State {
        /// The last value written to the register.
        pub register: u8,
        /// Mapper 113: 1 once the register was written (until then the mirroring is the header's).
        pub written: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Nina03State>() == 2);

/// NINA-03/06 board (mapper 79), or its mapper 113 wiring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Nina03 {
    state: Nina03State,
    /// Mapper 113's wiring.
    hes: bool,
}

impl Mapper for Nina03 {
    state_in!(state: Nina03State);

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        Nina03 { state: Nina03State::default(), hes: config.mapper == 113 }
    }

    /// A CPU write to $4020-$7FFF; returns true when the map must be recomputed.
    fn write_low(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        if addr & 0xE100 != 0x4100 {
            return false;
        }
        self.state.register = value;
        self.state.written = 1;
        true
    }

    /// Points every window of `map` at the banks the register selects.
    fn update_map(&self, map: &mut MemoryMap) {
        let r = usize::from(self.state.register);
        if self.hes {
            map.set_prg_32k((r >> 3) & 7);
            map.set_chr_8k((r & 7) | (r >> 3) & 8);
            if self.state.written != 0 {
                map.set_mirroring(if r & 0x80 != 0 { Mirroring::Vertical } else { Mirroring::Horizontal });
            }
        } else {
            map.set_prg_32k((r >> 3) & 1);
            map.set_chr_8k(r & 7);
        }
        map.low_registers = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_register_answers_where_a8_is_set() {
        for mapper in [79, 113] {
            let mut board =
                Nina03::new(BoardConfig { mapper, submapper: 0, chr_rom_size: 0x10000, battery: false });
            for addr in [0x4020u16, 0x4000 | 0x00FF, 0x4200, 0x6100, 0x7100, 0x5E00] {
                assert!(!board.write_low(addr, 0xFF, 0), "{mapper}: {addr:#06X}");
            }
            for addr in [0x4100u16, 0x41FF, 0x4300, 0x5100, 0x5FFF] {
                assert!(board.write_low(addr, 0, 0), "{mapper}: {addr:#06X}");
            }
        }
    }

    #[test]
    fn bits_select_prg_chr_and_mirroring() {
        let mut map = MemoryMap::new(0x40000, 0x20000, 0, Mirroring::Horizontal);
        let mut nina =
            Nina03::new(BoardConfig { mapper: 79, submapper: 0, chr_rom_size: 0x10000, battery: false });
        nina.write_low(0x4100, 0x0D, 0);
        nina.update_map(&mut map);
        assert_eq!((map.prg[0], map.chr[0]), (0x8000, 5 * 0x2000));
        let mut hes =
            Nina03::new(BoardConfig { mapper: 113, submapper: 0, chr_rom_size: 0x20000, battery: false });
        hes.update_map(&mut map);
        assert_eq!(map.nametables, [0, 0, 1, 1], "the header's mirroring until the first write");
        hes.write_low(0x4100, 0b1110_1101, 0);
        hes.update_map(&mut map);
        assert_eq!((map.prg[0], map.chr[0]), (5 * 0x8000, 13 * 0x2000));
        assert_eq!(map.nametables, [0, 1, 0, 1]);
    }
}
