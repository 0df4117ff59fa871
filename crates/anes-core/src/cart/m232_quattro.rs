//! Mapper 232: Camerica/Codemasters BF9096, the Quattro multicarts (nesdev "INES Mapper 232"). A
//! write to $8000-$BFFF selects the 64 KiB block (bits 3-4; on the Aladdin Deck Enhancer, NES 2.0
//! submapper 1, bits 4 and 3 swapped), a write to $C000-$FFFF the 16 KiB bank within it (bits 0-1)
//! at $8000; $C000 holds the block's last bank. 8 KiB CHR RAM, wired mirroring.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// BF9096 registers.
    pub struct QuattroState {
        /// 64 KiB block (0-3).
        pub block: u8,
        /// 16 KiB bank within the block at $8000 (0-3).
        pub bank: u8,
    }
}

const _: () = assert!(core::mem::size_of::<QuattroState>() == 2);

/// BF9096 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Quattro {
    state: QuattroState,
    /// Aladdin Deck Enhancer: the block bits are swapped.
    aladdin: bool,
}

impl Mapper for Quattro {
    state_in!(state: QuattroState);

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        Quattro { state: QuattroState::default(), aladdin: config.submapper == 1 }
    }

    /// A CPU write to $8000-$FFFF; returns true when the map must be recomputed.
    #[inline]
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        if addr < 0xC000 {
            self.state.block =
                if self.aladdin { (value >> 4) & 1 | (value >> 2) & 2 } else { (value >> 3) & 3 };
        } else {
            self.state.bank = value & 3;
        }
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let block = usize::from(self.state.block & 3) * 4;
        map.set_prg_16k(0, block | usize::from(self.state.bank & 3));
        map.set_prg_16k(1, block | 3);
        map.set_chr_8k(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::rom_info::Mirroring;

    #[test]
    fn block_and_bank_select_16k_banks() {
        let mut map = MemoryMap::new(0x40000, 0x2000, 0, Mirroring::Vertical);
        for (submapper, block_value, block) in
            [(0u8, 0x10u8, 2usize), (0, 0x08, 1), (1, 0x10, 1), (1, 0x08, 2)]
        {
            let mut board =
                Quattro::new(BoardConfig { mapper: 232, submapper, chr_rom_size: 0, battery: false });
            board.write_register(0x8000, block_value, 0);
            board.write_register(0xC000, 0xFE, 0);
            board.update_map(&mut map);
            let bank = (block * 4 + 2) * 0x4000;
            let last = (block * 4 + 3) * 0x4000;
            assert_eq!(map.prg, [bank, bank + 0x2000, last, last + 0x2000], "{submapper} {block_value:#X}");
        }
    }
}
