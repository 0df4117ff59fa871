//! Mapper 10: MMC4 on FxROM boards (nesdev "MMC4"). $A000 selects the 16 KiB PRG bank at $8000; the
//! last 16 KiB are fixed at $C000; 8 KiB of PRG RAM. Latch 0 flips on reads anywhere in the rows
//! $0FD8-$0FDF / $0FE8-$0FEF. The CHR latches, registers and state are shared with the MMC2
//! (`latch_chr`).

use super::latch_chr::{LatchChip, LatchChrBoard};
use super::map::MemoryMap;

/// The MMC4's own behaviour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Mmc4;

impl LatchChip for Mmc4 {
    const WIDE_LOW_LATCH: bool = true;

    fn map_prg(prg_bank: u8, map: &mut MemoryMap) {
        map.set_prg_16k(0, usize::from(prg_bank));
        map.set_prg_8k(2, map.prg_bank_from_end(2));
        map.set_prg_8k(3, map.prg_bank_from_end(1));
    }
}

/// MMC4 board.
pub(super) type Fxrom = LatchChrBoard<Mmc4>;
