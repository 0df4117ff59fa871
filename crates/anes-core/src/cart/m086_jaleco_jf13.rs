//! Mapper 86: Jaleco JF-13 (nesdev "INES Mapper 086"; Moero!! Pro Yakyuu). One register at
//! $6000-$6FFF, `.CPP ..CC`: bits 4-5 the 32 KiB PRG bank, bits 0-1 and 6 (as bit 2) the 8 KiB
//! CHR bank. $7000-$7FFF starts and stops the board's speech chip (a uPD7756C playing samples that
//! are not in the ROM image): not modelled, those writes change nothing here. No PRG RAM (the
//! registers sit where it would); wired mirroring.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// JF-13 register.
    pub struct Jf13State {
        /// The last value written at $6000-$6FFF.
        pub register: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Jf13State>() == 1);

/// Jaleco JF-13 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Jf13 {
    state: Jf13State,
}

impl Mapper for Jf13 {
    state_in!(state: Jf13State);

    /// The board in its power-on state (the register's is unspecified; 0 here).
    fn new(_config: BoardConfig) -> Self {
        Jf13 { state: Jf13State::default() }
    }

    /// A CPU write to $4020-$7FFF; returns true when the map must be recomputed.
    fn write_low(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        if addr & 0xF000 != 0x6000 {
            return false;
        }
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the register selects.
    fn update_map(&self, map: &mut MemoryMap) {
        let r = usize::from(self.state.register);
        map.set_prg_32k((r >> 4) & 3);
        map.set_chr_8k((r & 3) | ((r >> 4) & 4));
        map.set_prg_ram(0, false, false);
        map.low_registers = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::rom_info::Mirroring;

    #[test]
    fn bit_6_is_the_third_chr_bit_and_7000_is_not_a_bank_register() {
        let mut board =
            Jf13::new(BoardConfig { mapper: 86, submapper: 0, chr_rom_size: 0x10000, battery: false });
        let mut map = MemoryMap::new(0x20000, 0x10000, 0, Mirroring::Vertical);
        assert!(!board.write_low(0x7000, 0x7F, 0));
        assert!(board.write_low(0x6FFF, 0x62, 0));
        board.update_map(&mut map);
        assert_eq!((map.prg[0], map.chr[0]), (2 * 0x8000, 6 * 0x2000));
    }
}
