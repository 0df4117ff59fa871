//! Mapper 111: GTROM / Cheapocabra (nesdev "GTROM"). One write-only register at $5000-$5FFF and
//! $7000-$7FFF (mask $D000), `grnc pppp`: bits 0-3 the 32 KiB PRG bank, bit 4 (c) the 8 KiB CHR RAM
//! bank at $0000-$1FFF, bit 5 (n) the 8 KiB of nametable RAM at $2000-$3EFF (four screens, no
//! CIRAM), bits 6-7 the red and green LEDs (not modelled: no output). The board's 32 KiB of RAM is
//! the cartridge's CHR RAM (the two pattern banks) followed by its nametable RAM (the two pages, 8 KiB
//! each: pages 2-9 of `MemoryMap::nametables`, of which the four screens use the first 4 KiB).
//!
//! The PRG is a flash chip the game can program (`sst39sf_flash.rs`): every CPU write to $8000-$FFFF
//! goes to it, at chip address bank × 32 KiB + A14-A0 (its $5555 is $D555, its $2AAA $AAAA, in any
//! bank). The flash is the battery save (`Cartridge::battery_ram`), whatever the header's battery bit.
//!
//! Not modelled (FIXME): the upper 4 KiB of each nametable page ($3000-$3EFF, scratch RAM on the
//! board) mirrors $2000-$2EFF here, as the PPU hands the cartridge nametable addresses modulo 4 KiB;
//! a CPU read of the register's addresses latches open bus into it.

use super::map::{BoardConfig, MemoryMap, PrgSlot};
use super::mapper::{Mapper, state_in};
use super::sst39sf_flash::FlashState;

/// The board's nametable RAM: two pages of 8 KiB.
pub(super) const GTROM_NAMETABLE_RAM_LEN: usize = 0x4000;
/// Its pattern RAM: two 8 KiB banks.
pub(super) const GTROM_CHR_RAM_LEN: usize = 0x4000;

crate::layout::state_struct! {
    /// GTROM register and flash chip.
    pub struct GtromState {
        /// The last value written at $5000-$5FFF or $7000-$7FFF.
        pub register: u8,
        /// The flash chip's command state.
        pub flash: FlashState,
    }
}

const _: () = assert!(core::mem::size_of::<GtromState>() == 3);

/// GTROM board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gtrom {
    state: GtromState,
}

impl Mapper for Gtrom {
    state_in!(state: GtromState);

    /// The board in its power-on state (the register's is unspecified; 0 here).
    fn new(_config: BoardConfig) -> Self {
        Gtrom { state: GtromState::default() }
    }

    /// A CPU write to $4020-$7FFF; returns true when the map must be recomputed.
    fn write_low(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        if addr & 0xD000 != 0x5000 {
            return false;
        }
        self.state.register = value;
        true
    }

    /// The flash chip's command state.
    fn flash_mut(&mut self) -> Option<&mut FlashState> {
        Some(&mut self.state.flash)
    }

    /// Its PRG is the flash chip, and every write to $8000-$FFFF reaches it.
    fn has_flash(&self) -> bool {
        true
    }

    fn flash_port(&self, _addr: u16) -> bool {
        true
    }

    /// Points every window of `map` at the banks the register selects.
    fn update_map(&self, map: &mut MemoryMap) {
        let r = self.state.register;
        map.set_prg_32k(usize::from(r & 0x0F));
        map.set_chr_8k(usize::from(r >> 4) & 1);
        let first = 2 + 8 * ((r >> 5) & 1);
        map.nametables = [first, first + 1, first + 2, first + 3];
        // No PRG RAM: the register answers at $7000-$7FFF, nothing at $6000-$6FFF.
        map.set_prg_ram(0, false, false);
        map.low_registers = true;
        // In software ID mode every read of the chip returns its IDs.
        map.prg_slots = [if self.state.flash.id_mode() { PrgSlot::FlashId } else { PrgSlot::Rom }; 4];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::map::{CHR_SLOT, PRG_SLOT};
    use crate::cart::rom_info::Mirroring;

    #[test]
    fn one_register_at_5000_and_7000_selects_everything() {
        let mut board =
            Gtrom::new(BoardConfig { mapper: 111, submapper: 0, chr_rom_size: 0, battery: false });
        let mut map = MemoryMap::new(0x80000, GTROM_CHR_RAM_LEN, 0, Mirroring::FourScreen);
        assert!(!board.write_low(0x6000, 0xFF, 0), "$6000 is not decoded");
        assert!(!board.write_low(0x4100, 0xFF, 0));
        assert!(board.write_low(0x7FFF, 0x3A, 0));
        board.update_map(&mut map);
        assert_eq!(map.prg[0] / PRG_SLOT, 40, "32 KiB bank 10");
        assert_eq!(map.chr[0] / CHR_SLOT, 8, "8 KiB bank 1");
        assert_eq!(map.nametables, [10, 11, 12, 13], "nametable page 1");
        assert!(board.write_low(0x5000, 0xC0, 0));
        board.update_map(&mut map);
        assert_eq!((map.prg[3] / PRG_SLOT, map.chr[7] / CHR_SLOT, map.nametables), (3, 7, [2, 3, 4, 5]));
    }
}
