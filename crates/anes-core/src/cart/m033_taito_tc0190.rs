//! Mapper 33: Taito TC0190 (nesdev "INES Mapper 033"). Registers decoded with mask $A003:
//! - $8000: `.MPP PPPP` the 8 KiB PRG bank at $8000, M mirroring (0 vertical, 1 horizontal);
//! - $8001: the 8 KiB PRG bank at $A000; $C000-$FFFF holds the last two banks;
//! - $8002 / $8003: the 2 KiB CHR banks at $0000 / $0800 (the value counts 2 KiB: no low bit is
//!   dropped, unlike the MMC3's);
//! - $A000-$A003: the 1 KiB CHR banks at $1000-$1C00.
//!
//! No IRQ and no PRG RAM (the TC0690 of mapper 48 adds the IRQ).

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// TC0190 registers.
    pub struct Tc0190State {
        /// $8000 (bank and mirroring bit) and $8001.
        pub prg: [u8; 2],
        /// $8002, $8003 (2 KiB banks), $A000-$A003 (1 KiB banks).
        pub chr: [u8; 6],
    }
}

const _: () = assert!(core::mem::size_of::<Tc0190State>() == 8);

/// TC0190 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tc0190 {
    state: Tc0190State,
}

impl Mapper for Tc0190 {
    state_in!(state: Tc0190State);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Tc0190 { state: Tc0190State::default() }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        let n = usize::from(addr & 3);
        match addr & 0xA003 {
            0x8000 | 0x8001 => self.state.prg[n] = value,
            0x8002 | 0x8003 => self.state.chr[n - 2] = value,
            _ => self.state.chr[n + 2] = value,
        }
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        map.set_prg_8k(0, usize::from(s.prg[0] & 0x3F));
        map.set_prg_8k(1, usize::from(s.prg[1] & 0x3F));
        map.set_prg_8k(2, map.prg_bank_from_end(2));
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        set_taito_chr(map, &s.chr);
        map.set_mirroring(if s.prg[0] & 0x40 != 0 { Mirroring::Horizontal } else { Mirroring::Vertical });
    }
}

/// The TC0190's and TC0690's CHR layout: `chr[0..2]` 2 KiB banks at $0000 and $0800, `chr[2..6]`
/// 1 KiB banks at $1000-$1C00.
pub(super) fn set_taito_chr(map: &mut MemoryMap, chr: &[u8; 6]) {
    for (half, &bank) in chr[..2].iter().enumerate() {
        let bank = usize::from(bank) * 2;
        map.set_chr_1k(half * 2, bank);
        map.set_chr_1k(half * 2 + 1, bank + 1);
    }
    for (i, &bank) in chr[2..].iter().enumerate() {
        map.set_chr_1k(4 + i, usize::from(bank));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_decode_with_mask_a003() {
        let mut board =
            Tc0190::new(BoardConfig { mapper: 33, submapper: 0, chr_rom_size: 0x40000, battery: false });
        let mut map = MemoryMap::new(0x40000, 0x40000, 0, Mirroring::Vertical);
        board.write_register(0x9FFC, 0x45, 0); // $8000: bank 5, horizontal
        board.write_register(0x8001, 0x07, 0);
        board.write_register(0x8002, 0x81, 0); // 2 KiB bank $81: 1 KiB banks $102, $103 (mod 256)
        board.write_register(0xBFFF, 0x33, 0); // $A003
        board.update_map(&mut map);
        assert_eq!(map.prg, [5 * 0x2000, 7 * 0x2000, 30 * 0x2000, 31 * 0x2000]);
        assert_eq!(map.chr[0..2], [2 * 0x400, 3 * 0x400]);
        assert_eq!(map.chr[7], 0x33 * 0x400);
        assert_eq!(map.nametables, [0, 0, 1, 1]);
    }
}
