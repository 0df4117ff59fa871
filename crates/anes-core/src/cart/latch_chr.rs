//! The CHR latch board shared by the MMC2 (mapper 9, `m009_pxrom`) and the MMC4 (mapper 10,
//! `m010_fxrom`), nesdev "MMC2" and "MMC4".
//!
//! Each 4 KiB CHR half has two bank registers ($B000/$C000 for $0000, $D000/$E000 for $1000) and a
//! latch choosing between them. The latch flips when the PPU reads the last row of tile $FD or $FE:
//! $1FD8-$1FDF / $1FE8-$1FEF for the upper half on both chips; for the lower half $0FD8 / $0FE8 on the
//! MMC2 and the whole rows $0FD8-$0FDF / $0FE8-$0FEF on the MMC4. The read that triggers the latch
//! still sees the old bank; the switch takes effect for the next fetch. $F000 bit 0 selects mirroring
//! (0 vertical, 1 horizontal). $A000 selects a PRG bank, whose size and place are the chip's own.

use core::marker::PhantomData;

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// MMC2/MMC4 registers and latches.
    pub struct LatchChrState {
        /// $A000: PRG bank (8 KiB on the MMC2, 16 KiB on the MMC4).
        pub prg_bank: u8,
        /// $B000: 4 KiB CHR bank at $0000 while latch 0 is $FD.
        pub chr_fd0: u8,
        /// $C000: 4 KiB CHR bank at $0000 while latch 0 is $FE.
        pub chr_fe0: u8,
        /// $D000: 4 KiB CHR bank at $1000 while latch 1 is $FD.
        pub chr_fd1: u8,
        /// $E000: 4 KiB CHR bank at $1000 while latch 1 is $FE.
        pub chr_fe1: u8,
        /// $F000 bit 0: 0 vertical, 1 horizontal.
        pub mirroring: u8,
        /// Latch 0: 0 = $FD, 1 = $FE.
        pub latch0: u8,
        /// Latch 1: 0 = $FD, 1 = $FE.
        pub latch1: u8,
    }
}

const _: () = assert!(core::mem::size_of::<LatchChrState>() == 8);

/// What sets the two chips apart: where PRG goes and which reads trigger latch 0.
pub(super) trait LatchChip {
    /// Latch 0 answers the whole rows $0FD8-$0FDF / $0FE8-$0FEF (MMC4), not only $0FD8 / $0FE8 (MMC2).
    const WIDE_LOW_LATCH: bool;

    /// Points the PRG windows of `map` at the banks the $A000 register selects.
    fn map_prg(prg_bank: u8, map: &mut MemoryMap);
}

/// A board built around either chip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LatchChrBoard<Chip> {
    state: LatchChrState,
    chip: PhantomData<Chip>,
}

impl<Chip: LatchChip> Mapper for LatchChrBoard<Chip> {
    state_in!(state: LatchChrState);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        LatchChrBoard { state: LatchChrState::default(), chip: PhantomData }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed. Both chips
    /// keep four PRG bank bits.
    #[inline]
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        let state = &mut self.state;
        match addr & 0xF000 {
            0xA000 => state.prg_bank = value & 0x0F,
            0xB000 => state.chr_fd0 = value & 0x1F,
            0xC000 => state.chr_fe0 = value & 0x1F,
            0xD000 => state.chr_fd1 = value & 0x1F,
            0xE000 => state.chr_fe1 = value & 0x1F,
            0xF000 => state.mirroring = value & 1,
            _ => return false,
        }
        true
    }

    /// A PPU read of `addr`; returns true when a latch flipped.
    #[inline]
    fn observe_ppu(&mut self, addr: u16, read: bool) -> bool {
        if !read {
            return false;
        }
        let addr = addr & 0x3FFF;
        // Cheap filter: only the rows of tiles $FD and $FE in either pattern table matter.
        if addr >= 0x2000 || !matches!(addr & 0x0FF0, 0x0FD0 | 0x0FE0) || addr & 0x0F < 8 {
            return false;
        }
        let value = u8::from(addr & 0x0FF0 == 0x0FE0);
        let latch = if addr & 0x1000 != 0 {
            &mut self.state.latch1
        } else if Chip::WIDE_LOW_LATCH || addr & 0x0F == 8 {
            &mut self.state.latch0
        } else {
            return false;
        };
        let changed = *latch != value;
        *latch = value;
        changed
    }

    /// Points every window of `map` at the banks the registers and latches select.
    fn update_map(&self, map: &mut MemoryMap) {
        let state = &self.state;
        Chip::map_prg(state.prg_bank, map);
        let low = if state.latch0 == 0 { state.chr_fd0 } else { state.chr_fe0 };
        let high = if state.latch1 == 0 { state.chr_fd1 } else { state.chr_fe1 };
        map.set_chr_4k(0, usize::from(low));
        map.set_chr_4k(1, usize::from(high));
        map.set_mirroring(if state.mirroring & 1 == 0 { Mirroring::Vertical } else { Mirroring::Horizontal });
        map.watches_ppu = true;
    }

    /// The register state as mutable bytes (snapshot restore).
    fn state_bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::bytes_of_mut(&mut self.state)
    }
}
