//! Mapper 30: UNROM 512 (nesdev "UNROM 512"; RetroUSB, InfiniteNESLives, Broke Studio). One register,
//! `MCCP PPPP`: bits 0-4 the 16 KiB PRG bank at $8000 ($C000 holds the last), bits 5-6 the 8 KiB
//! bank of its 32 KiB of CHR RAM, bit 7 the one-screen page where the nametables are wired for it.
//!
//! Nametables, from the header's byte 6 (bit 3, bit 0): (0, 0) horizontal, (0, 1) vertical, (1, 0)
//! one-screen, the page chosen by bit 7, (1, 1) four screens (the cartridge's own VRAM).
//!
//! The register answers at $8000-$FFFF, except on the self-flashable board (the header's battery
//! bit, where submapper 2 does not forbid it), where it answers at $C000-$FFFF only and writes to
//! $8000-$BFFF go to the flash chip (`sst39sf_flash.rs`) at chip address bank × 16 KiB + A13-A0:
//! its $5555 is $9555 with an odd bank, its $2AAA $AAAA with an even one. The flash is the battery
//! save (`Cartridge::battery_ram`). Bus conflicts by submapper: 0 present unless the battery bit is
//! set, 1 and 4 none, 2 present. Submapper 4's LED register drives no output.
//!
//! Not modelled (FIXME): submapper 3 (mapper-controlled horizontal or vertical arrangement) is
//! refused by the parser.

use super::map::{BoardConfig, MemoryMap, PrgSlot};
use super::mapper::{Mapper, state_in};
use super::rom_info::{Mirroring, RomInfo};
use super::sst39sf_flash::FlashState;

/// UNROM 512's CHR RAM where an iNES 1.0 header cannot say (its boards carry 8, 16 or 32 KiB).
pub(super) const UNROM512_CHR_RAM_LEN: usize = 0x8000;

crate::layout::state_struct! {
    /// UNROM 512 register and flash chip.
    pub struct Unrom512State {
        /// The last value written to the register (after any bus conflict).
        pub register: u8,
        /// The flash chip's command state; not part of the state bytes of a board without a
        /// writable flash (see `Unrom512::state_bytes`).
        pub flash: FlashState,
    }
}

const _: () = assert!(core::mem::size_of::<Unrom512State>() == 3);

/// How the board's nametables are wired (header byte 6 bits 3 and 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Nametables {
    /// Horizontal or vertical, by solder pad.
    Wired(Mirroring),
    /// One-screen, the page chosen by the register's bit 7.
    OneScreen,
    /// Four screens in the cartridge's VRAM.
    FourScreen,
}

/// UNROM 512 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unrom512 {
    state: Unrom512State,
    nametables: Nametables,
    /// The self-flashable wiring: the register at $C000-$FFFF only.
    flashable: bool,
    bus_conflicts: bool,
}

impl Mapper for Unrom512 {
    state_in!(state: Unrom512State);

    /// Submapper 3 (Mega Man II, 30th Anniversary Edition) switches between horizontal and
    /// vertical by a register bit this board does not model.
    fn supports(_mapper: u16, submapper: u8) -> bool {
        submapper != 3
    }

    /// The board in its power-on state, wired from the submapper; [`Unrom512::configure`] applies
    /// the header's nametable and battery bits.
    fn new(config: BoardConfig) -> Self {
        Unrom512 {
            state: Unrom512State::default(),
            nametables: Nametables::Wired(Mirroring::Horizontal),
            flashable: false,
            bus_conflicts: config.submapper != 1 && config.submapper != 4,
        }
    }

    /// Wires the board as the header says: its nametable bits and its battery bit (the
    /// self-flashable board).
    fn configure(&mut self, info: &RomInfo) {
        self.nametables = match (info.mirroring, info.mirroring_bit) {
            (Mirroring::FourScreen, false) => Nametables::OneScreen,
            (Mirroring::FourScreen, true) => Nametables::FourScreen,
            (wired, _) => Nametables::Wired(wired),
        };
        self.flashable = info.battery && info.submapper != 2;
        self.bus_conflicts = match info.submapper {
            0 => !info.battery,
            2 => true,
            _ => false,
        };
    }

    /// A CPU write to $8000-$FFFF (after any bus conflict); returns true when the map must be
    /// recomputed.
    #[inline]
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        if self.flash_port(addr) {
            // The flash chip's (`Cartridge` hands it these writes first).
            return false;
        }
        self.state.register = value;
        true
    }

    /// True when the board's PRG is a flash chip the game can write.
    fn has_flash(&self) -> bool {
        self.flashable
    }

    /// True when a CPU write to `addr` ($8000-$FFFF) reaches the flash chip.
    fn flash_port(&self, addr: u16) -> bool {
        self.flashable && addr < 0xC000
    }

    /// The flash chip's command state.
    fn flash_mut(&mut self) -> Option<&mut FlashState> {
        self.flashable.then_some(&mut self.state.flash)
    }

    /// Points every window of `map` at the banks the register selects.
    fn update_map(&self, map: &mut MemoryMap) {
        let r = self.state.register;
        map.set_prg_16k(0, usize::from(r & 0x1F));
        map.set_prg_16k(1, map.prg_bank_from_end(2) / 2);
        map.set_chr_8k(usize::from(r >> 5) & 3);
        match self.nametables {
            Nametables::Wired(wired) => map.set_mirroring(wired),
            Nametables::FourScreen => map.set_mirroring(Mirroring::FourScreen),
            // Set directly: the header's four-screen bit names this wiring, not four screens.
            Nametables::OneScreen => map.nametables = [r >> 7; 4],
        }
        map.bus_conflicts = self.bus_conflicts;
        // In software ID mode every read of the chip returns its IDs.
        map.prg_slots = [if self.state.flash.id_mode() { PrgSlot::FlashId } else { PrgSlot::Rom }; 4];
    }

    /// The register state as bytes: the register alone on a board without a writable flash (its
    /// state as before the flash was modelled), the flash chip's command state too on the
    /// self-flashable one.
    fn state_bytes(&self) -> &[u8] {
        let bytes = bytemuck::bytes_of(&self.state);
        if self.flashable { bytes } else { &bytes[..1] }
    }

    /// The register state as mutable bytes (snapshot restore), as [`Unrom512::state_bytes`].
    fn state_bytes_mut(&mut self) -> &mut [u8] {
        let flashable = self.flashable;
        let bytes = bytemuck::bytes_of_mut(&mut self.state);
        if flashable { bytes } else { &mut bytes[..1] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::map::PRG_SLOT;

    #[test]
    fn the_register_selects_prg_chr_and_the_one_screen_page() {
        let mut board =
            Unrom512::new(BoardConfig { mapper: 30, submapper: 1, chr_rom_size: 0, battery: false });
        board.nametables = Nametables::OneScreen;
        let mut map = MemoryMap::new(0x80000, 0x8000, 0, Mirroring::FourScreen);
        assert!(board.write_register(0x8000, 0xDD, 0));
        board.update_map(&mut map);
        assert_eq!(map.prg.map(|o| o / PRG_SLOT), [58, 59, 62, 63]);
        assert_eq!((map.chr[0], map.nametables), (2 * 0x2000, [1; 4]));
        assert!(!map.bus_conflicts, "submapper 1");
        board.flashable = true;
        assert!(!board.write_register(0xBFFF, 0x00, 0), "the flash chip's port");
        assert!(board.write_register(0xC000, 0x01, 0));
    }
}
