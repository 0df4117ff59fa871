//! Mapper 9: MMC2 on PxROM boards (nesdev "MMC2"). $A000 selects the 8 KiB PRG bank at $8000; the last
//! three 8 KiB banks are fixed at $A000-$FFFF. Latch 0 flips on reads of $0FD8 and $0FE8 only. The CHR
//! latches, registers and state are shared with the MMC4 (`latch_chr`).

use super::latch_chr::{LatchChip, LatchChrBoard};
use super::map::MemoryMap;

/// The MMC2's own behaviour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Mmc2;

impl LatchChip for Mmc2 {
    const WIDE_LOW_LATCH: bool = false;

    fn map_prg(prg_bank: u8, map: &mut MemoryMap) {
        map.set_prg_8k(0, usize::from(prg_bank));
        map.set_prg_8k(1, map.prg_bank_from_end(3));
        map.set_prg_8k(2, map.prg_bank_from_end(2));
        map.set_prg_8k(3, map.prg_bank_from_end(1));
    }
}

/// MMC2 board.
pub(super) type Pxrom = LatchChrBoard<Mmc2>;
