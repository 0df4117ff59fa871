//! The board enum (static dispatch over the supported mappers) and the bank map every board fills in.
//!
//! Boards keep their registers in Pod state structs; [`MemoryMap`] is the derived cache of byte offsets
//! that the hot paths index with, recomputed by [`Board::update_map`] after every register change and by
//! `Cartridge::rebuild_caches` after a snapshot restore.

use super::expansion_audio::ExpansionChip;
use super::header::{Mirroring, RomInfo};
use super::m000_nrom::Nrom;
use super::m001_sxrom::Sxrom;
use super::m002_uxrom::Uxrom;
use super::m003_cnrom::Cnrom;
use super::m004_txrom::Txrom;
use super::m005_mmc5::Mmc5;
use super::m007_axrom::Axrom;
use super::m009_pxrom::Pxrom;
use super::m010_fxrom::Fxrom;
use super::m011_color_dreams::ColorDreams;
use super::m013_cprom::Cprom;
use super::m016_bandai_fcg::BandaiFcg;
use super::m018_jaleco_ss88006::Ss88006;
use super::m019_namco163::Namco163;
use super::m021_vrc2_vrc4::Vrc;
use super::m024_vrc6::Vrc6;
use super::m028_action53::Action53;
use super::m030_unrom512::Unrom512;
use super::m032_irem_g101::G101;
use super::m033_taito_tc0190::Tc0190;
use super::m034_bnrom_nina001::Mapper34;
use super::m048_taito_tc0690::Tc0690;
use super::m064_rambo1::Rambo1;
use super::m065_irem_h3001::H3001;
use super::m066_gxrom::Gxrom;
use super::m067_sunsoft3::Sunsoft3;
use super::m068_sunsoft4::Sunsoft4;
use super::m069_fme7::Fme7;
use super::m070_bandai::Bandai70;
use super::m071_camerica::Camerica;
use super::m073_vrc3::Vrc3;
use super::m075_vrc1::Vrc1;
use super::m076_namcot3446::Namcot3446;
use super::m078_irem_74hc161::Mapper78;
use super::m079_nina03_06::Nina03;
use super::m080_taito_x1005::X1005;
use super::m082_taito_x1017::X1017;
use super::m085_vrc7::Vrc7;
use super::m086_jaleco_jf13::Jf13;
use super::m087_jaleco_jf05::Mapper87;
use super::m088_namcot3443::Namcot3443;
use super::m089_sunsoft2::Sunsoft2;
use super::m092_jaleco_jf19::Jf19;
use super::m093_sunsoft2_3r::Sunsoft2_3r;
use super::m094_un1rom::Un1rom;
use super::m095_namcot3425::Namcot3425;
use super::m097_irem_tam_s1::TamS1;
use super::m105_nes_event::NesEvent;
use super::m111_gtrom::Gtrom;
use super::m140_jaleco_jf11::Jf11;
use super::m152_bandai::Bandai152;
use super::m154_namcot3453::Namcot3453;
use super::m155_mmc1a::Mmc1a;
use super::m180_unrom_fixed_first::Unrom180;
use super::m184_sunsoft1::Sunsoft1;
use super::m185_cnrom_protected::Cnrom185;
use super::m206_namco108::Dxrom;
use super::m210_namco175_340::Namco175;
use super::m232_quattro::Quattro;
use super::sst39sf_flash::FlashState;

/// PRG ROM is mapped in 8 KiB slots.
pub(super) const PRG_SLOT: usize = 0x2000;
/// CHR is mapped in 1 KiB slots.
pub(super) const CHR_SLOT: usize = 0x400;
/// $6000-$7FFF is mapped in 512-byte windows (the MMC6 enables its RAM by 512-byte halves).
pub(super) const PRG_RAM_WINDOW: usize = 0x200;
/// Windows of $6000-$7FFF.
pub(super) const PRG_RAM_WINDOWS: usize = PRG_SLOT / PRG_RAM_WINDOW;
/// The nametable page ([`MemoryMap::nametables`]) that shows 1 KiB of CHR: the bank in
/// [`MemoryMap::nametable_chr`] (the Sunsoft-4's, VRC6's and Namco 163's ROM nametables).
pub(super) const PAGE_CHR: u8 = 0xFF;
/// [`MemoryMap::nametable_at`] offsets from here on are into the cartridge's `chr` (plus this);
/// below it, into CIRAM.
pub(super) const NAMETABLE_IN_CART: usize = 0x800;

/// What a CPU read of one window of $6000-$7FFF returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PrgRamRead {
    /// Nothing drives the data bus: the read returns open bus.
    OpenBus,
    /// The board drives 0 (the MMC6's unreadable half while its other half is readable).
    Zero,
    /// PRG RAM.
    Ram,
    /// Open bus but for bit 4, the board's serial EEPROM data line ([`MemoryMap::prg_latch`]; the
    /// Bandai LZ93D50's).
    SerialData,
    /// Open bus but for bit 0, the board's 1-bit latch ([`MemoryMap::prg_latch`]; the VRC2's at
    /// $6000-$6FFF on boards without PRG RAM).
    Latch,
    /// PRG ROM, from the window's offset into PRG ROM (the FME-7's ROM banks at $6000).
    Rom,
    /// RAM inside the board's chip, which the board answers (the X1-005's 128 bytes at $7F00).
    BoardRam,
}

/// What one 8 KiB slot of $8000-$FFFF holds (only the MMC5 maps anything but ROM there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PrgSlot {
    /// PRG ROM, at the slot's offset in [`MemoryMap::prg`].
    Rom,
    /// PRG RAM from this byte offset.
    Ram(usize),
    /// RAM selected on a board without any: nothing drives the bus.
    OpenBus,
    /// The flash chip in software ID mode (`sst39sf_flash.rs`): reads return its IDs.
    FlashId,
}

/// One 512-byte window of $6000-$7FFF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PrgRamWindow {
    /// Offset into PRG RAM of the window's first byte (taken modulo the RAM's size on access); into
    /// PRG ROM for [`PrgRamRead::Rom`].
    pub offset: usize,
    /// What reads return.
    pub read: PrgRamRead,
    /// Writes reach PRG RAM.
    pub writable: bool,
}

/// Where each CPU and PPU window currently points: byte offsets into the cartridge's memories.
/// Derived data only: everything here is recomputed from board state and the ROM's geometry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct MemoryMap {
    /// Offsets into PRG ROM for $8000, $A000, $C000, $E000.
    pub prg: [usize; 4],
    /// What $8000, $A000, $C000, $E000 hold: ROM but where the MMC5 maps RAM.
    pub prg_slots: [PrgSlot; 4],
    /// RAM mapped by [`MemoryMap::prg_slots`] takes writes.
    pub prg_ram_writable: bool,
    /// Offsets into CHR (ROM or RAM) for the eight 1 KiB windows of $0000-$1FFF.
    pub chr: [usize; 8],
    /// Nametable page for $2000, $2400, $2800, $2C00: 0-1 CIRAM, 2-3 the cartridge's extra VRAM (on
    /// the MMC5 2 ExRAM, 3 the fill page, 4 a page of zeros), [`PAGE_CHR`] CHR (see
    /// [`MemoryMap::set_nametable_chr`]). Boards set these; the PPU paths read
    /// [`MemoryMap::nametable_at`], derived from them.
    pub nametables: [u8; 4],
    /// Offset in CHR of the 1 KiB bank a [`PAGE_CHR`] nametable shows.
    pub nametable_chr: [usize; 4],
    /// Where each nametable's 1 KiB starts: below [`NAMETABLE_IN_CART`] in CIRAM, else at this
    /// less [`NAMETABLE_IN_CART`] in the cartridge's `chr`. Derived by
    /// [`MemoryMap::resolve_nametables`] after every board update: one compare and one index per
    /// nametable access, whichever memory it is.
    pub nametable_at: [usize; 4],
    /// $6000-$7FFF in 512-byte windows. A window reads or writes RAM only when the board has some.
    pub prg_ram: [PrgRamWindow; PRG_RAM_WINDOWS],
    /// The board has bus conflicts: a register write is ANDed with the ROM byte at that address.
    pub bus_conflicts: bool,
    /// The board watches PPU addresses (MMC3's A12 counter, MMC2/MMC4 latches).
    pub watches_ppu: bool,
    /// PRG ROM size in 8 KiB banks (at least 1).
    pub prg_banks: usize,
    /// CHR size in 1 KiB banks (at least 1).
    pub chr_banks: usize,
    /// PRG RAM size in bytes (0: none).
    pub prg_ram_len: usize,
    /// The header's wired arrangement: four-screen boards ignore mirroring control.
    pub wired_mirroring: Mirroring,
    /// The board has registers below $8000 (at $4020-$7FFF): CPU writes there reach
    /// [`Board::write_low`].
    pub low_registers: bool,
    /// Offset in CHR of the 1 KiB page that reads as the low byte of the PPU address (a disabled
    /// CHR chip: open bus); `None` where the cartridge has none.
    pub chr_open_bus: Option<usize>,
    /// The value of the board's 1-bit latch read through [`PrgRamRead::Latch`] and
    /// [`PrgRamRead::SerialData`] windows (0 or 1).
    pub prg_latch: u8,
}

impl MemoryMap {
    /// A map with everything at bank 0, RAM enabled and the wired mirroring.
    pub fn new(prg_len: usize, chr_len: usize, prg_ram_len: usize, wired_mirroring: Mirroring) -> Self {
        let mut map = MemoryMap {
            prg: [0, PRG_SLOT, 2 * PRG_SLOT, 3 * PRG_SLOT],
            prg_slots: [PrgSlot::Rom; 4],
            prg_ram_writable: false,
            chr: [0; 8],
            nametables: [0; 4],
            nametable_chr: [0; 4],
            nametable_at: [0; 4],
            prg_ram: [PrgRamWindow { offset: 0, read: PrgRamRead::OpenBus, writable: false };
                PRG_RAM_WINDOWS],
            bus_conflicts: false,
            watches_ppu: false,
            prg_banks: (prg_len / PRG_SLOT).max(1),
            chr_banks: (chr_len / CHR_SLOT).max(1),
            prg_ram_len,
            wired_mirroring,
            low_registers: false,
            chr_open_bus: None,
            prg_latch: 0,
        };
        map.set_prg_32k(0);
        map.set_chr_8k(0);
        map.set_mirroring(wired_mirroring);
        map.set_prg_ram(0, true, true);
        map.resolve_nametables();
        map
    }

    /// Shows 1 KiB CHR bank `bank` (modulo the CHR size) at nametable `quadrant` (0-3: $2000 +
    /// quadrant * $400). Writes there go nowhere on CHR ROM.
    #[inline]
    pub fn set_nametable_chr(&mut self, quadrant: usize, bank: usize) {
        self.nametables[quadrant & 3] = PAGE_CHR;
        self.nametable_chr[quadrant & 3] = (bank % self.chr_banks) * CHR_SLOT;
    }

    /// Recomputes [`MemoryMap::nametable_at`] from the pages the board chose.
    pub fn resolve_nametables(&mut self) {
        let extra_vram = NAMETABLE_IN_CART + self.chr_banks * CHR_SLOT;
        for (quadrant, &page) in self.nametables.iter().enumerate() {
            self.nametable_at[quadrant] = match page {
                PAGE_CHR => NAMETABLE_IN_CART + self.nametable_chr[quadrant],
                0 | 1 => usize::from(page) * CHR_SLOT,
                _ => extra_vram + usize::from(page - 2) * CHR_SLOT,
            };
        }
    }

    /// Maps 8 KiB PRG bank `bank` (modulo the ROM size) at slot 0-3 ($8000 + slot * $2000).
    #[inline]
    pub fn set_prg_8k(&mut self, slot: usize, bank: usize) {
        self.prg[slot & 3] = (bank % self.prg_banks) * PRG_SLOT;
    }

    /// Maps 16 KiB PRG bank `bank` at $8000 (`half` 0) or $C000 (`half` 1).
    #[inline]
    pub fn set_prg_16k(&mut self, half: usize, bank: usize) {
        self.set_prg_8k(half * 2, bank * 2);
        self.set_prg_8k(half * 2 + 1, bank * 2 + 1);
    }

    /// Maps 32 KiB PRG bank `bank` at $8000-$FFFF.
    #[inline]
    pub fn set_prg_32k(&mut self, bank: usize) {
        for slot in 0..4 {
            self.set_prg_8k(slot, bank * 4 + slot);
        }
    }

    /// The 8 KiB PRG bank `n` banks from the end (1: the last bank), wrapping for tiny ROMs.
    #[inline]
    pub fn prg_bank_from_end(&self, n: usize) -> usize {
        (self.prg_banks - n % self.prg_banks) % self.prg_banks
    }

    /// Maps 1 KiB CHR bank `bank` (modulo the CHR size) at window 0-7 ($0000 + window * $400).
    #[inline]
    pub fn set_chr_1k(&mut self, window: usize, bank: usize) {
        self.chr[window & 7] = (bank % self.chr_banks) * CHR_SLOT;
    }

    /// Maps 4 KiB CHR bank `bank` at $0000 (`half` 0) or $1000 (`half` 1).
    #[inline]
    pub fn set_chr_4k(&mut self, half: usize, bank: usize) {
        for i in 0..4 {
            self.set_chr_1k(half * 4 + i, bank * 4 + i);
        }
    }

    /// Maps 8 KiB CHR bank `bank` at $0000-$1FFF.
    #[inline]
    pub fn set_chr_8k(&mut self, bank: usize) {
        for i in 0..8 {
            self.set_chr_1k(i, bank * 8 + i);
        }
    }

    /// Disconnects CHR: every pattern table window reads as open bus (the address's low byte), where
    /// the cartridge has that page ([`MemoryMap::chr_open_bus`]); else CHR stays as it was.
    #[inline]
    pub fn set_chr_open_bus(&mut self) {
        if let Some(page) = self.chr_open_bus {
            self.chr = [page; 8];
        }
    }

    /// Selects the nametable arrangement; a four-screen board keeps its own VRAM regardless.
    #[inline]
    pub fn set_mirroring(&mut self, mirroring: Mirroring) {
        let mirroring =
            if self.wired_mirroring == Mirroring::FourScreen { Mirroring::FourScreen } else { mirroring };
        self.nametables = match mirroring {
            Mirroring::Horizontal => [0, 0, 1, 1],
            Mirroring::Vertical => [0, 1, 0, 1],
            Mirroring::SingleScreenA => [0; 4],
            Mirroring::SingleScreenB => [1; 4],
            Mirroring::FourScreen => [0, 1, 2, 3],
        };
    }

    /// Selects the 8 KiB PRG RAM bank at $6000 and whether it can be read and written (RAM smaller
    /// than 8 KiB repeats through $6000-$7FFF).
    #[inline]
    pub fn set_prg_ram(&mut self, bank: usize, readable: bool, writable: bool) {
        let read = if readable { PrgRamRead::Ram } else { PrgRamRead::OpenBus };
        for window in 0..PRG_RAM_WINDOWS {
            self.set_prg_ram_window(window, bank * PRG_SLOT + window * PRG_RAM_WINDOW, read, writable);
        }
    }

    /// Maps the 512-byte window `window` (0-15: $6000 + window * $200) at byte `offset` of PRG RAM.
    /// Without PRG RAM, a window that would read it reads open bus and writes go nowhere.
    #[inline]
    pub fn set_prg_ram_window(&mut self, window: usize, offset: usize, read: PrgRamRead, writable: bool) {
        let present = self.prg_ram_len != 0;
        let read = if read == PrgRamRead::Ram && !present { PrgRamRead::OpenBus } else { read };
        let offset = if present { offset % self.prg_ram_len } else { 0 };
        self.prg_ram[window % PRG_RAM_WINDOWS] = PrgRamWindow { offset, read, writable: present && writable };
    }

    /// Maps 8 KiB PRG ROM bank `bank` (modulo the ROM size) at $6000-$7FFF, read-only.
    #[inline]
    pub fn set_prg_rom_at_6000(&mut self, bank: usize) {
        let start = (bank % self.prg_banks) * PRG_SLOT;
        for (window, entry) in self.prg_ram.iter_mut().enumerate() {
            *entry = PrgRamWindow {
                offset: start + window * PRG_RAM_WINDOW,
                read: PrgRamRead::Rom,
                writable: false,
            };
        }
    }

    /// The window of $6000-$7FFF that holds `addr`.
    #[inline(always)]
    pub fn prg_ram_window(&self, addr: u16) -> PrgRamWindow {
        self.prg_ram[usize::from(addr >> 9) & (PRG_RAM_WINDOWS - 1)]
    }
}

/// Board-independent facts a board needs at construction.
#[derive(Debug, Clone, Copy)]
pub(super) struct BoardConfig {
    /// Mapper number.
    pub mapper: u16,
    /// NES 2.0 submapper.
    pub submapper: u8,
    /// CHR ROM size in bytes (0: CHR RAM); mapper 34 tells its boards apart by it.
    pub chr_rom_size: usize,
    /// The header declares battery-backed memory (mapper 16's LZ93D50 boards: a 24C02 EEPROM).
    pub battery: bool,
}

impl BoardConfig {
    /// The facts taken from a parsed header.
    pub fn from_info(info: &RomInfo) -> Self {
        BoardConfig {
            mapper: info.mapper,
            submapper: info.submapper,
            chr_rom_size: info.chr_rom_size,
            battery: info.battery || info.prg_nvram_size != 0,
        }
    }
}

/// One of the supported boards, with its register state.
// The Bandai variant holds its serial EEPROM's 256 bytes inline: one board per console, built at
// power-on, where a `Box` would allocate at every power cycle (a frame command: `tests/alloc_free.rs`).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Board {
    /// Mapper 0.
    Nrom(Nrom),
    /// Mapper 1 (MMC1).
    Sxrom(Sxrom),
    /// Mapper 2.
    Uxrom(Uxrom),
    /// Mapper 3.
    Cnrom(Cnrom),
    /// Mapper 4 (MMC3, or MMC6 with submapper 1).
    Txrom(Txrom),
    /// Mapper 5 (MMC5).
    Mmc5(Mmc5),
    /// Mapper 7.
    Axrom(Axrom),
    /// Mapper 9 (MMC2).
    Pxrom(Pxrom),
    /// Mapper 10 (MMC4).
    Fxrom(Fxrom),
    /// Mapper 11.
    ColorDreams(ColorDreams),
    /// Mapper 66.
    Gxrom(Gxrom),
    /// Mapper 71.
    Camerica(Camerica),
    /// Mapper 13.
    Cprom(Cprom),
    /// Mappers 21, 22, 23, 25 (VRC2, VRC4).
    Vrc(Vrc),
    /// Mapper 34 (BNROM, NINA-001).
    Mapper34(Mapper34),
    /// Mappers 79 and 113 (NINA-03/06).
    Nina03(Nina03),
    /// Mapper 94 (UN1ROM).
    Un1rom(Un1rom),
    /// Mapper 140 (Jaleco JF-11/JF-14).
    Jf11(Jf11),
    /// Mapper 180 (UNROM, first bank fixed).
    Unrom180(Unrom180),
    /// Mapper 185 (CNROM with copy protection).
    Cnrom185(Cnrom185),
    /// Mapper 232 (Camerica Quattro).
    Quattro(Quattro),
    /// Mappers 24 and 26 (VRC6a, VRC6b).
    Vrc6(Vrc6),
    /// Mapper 73 (VRC3).
    Vrc3(Vrc3),
    /// Mapper 85 (VRC7a, VRC7b).
    Vrc7(Vrc7),
    /// Mapper 75 (VRC1).
    Vrc1(Vrc1),
    /// Mapper 155 (MMC1A).
    Mmc1a(Mmc1a),
    /// Mapper 206 (Namco 108 on DxROM).
    Dxrom(Dxrom),
    /// Mapper 76 (Namco 108 on NAMCOT-3446).
    Namcot3446(Namcot3446),
    /// Mapper 88 (Namco 108 on NAMCOT-3443).
    Namcot3443(Namcot3443),
    /// Mapper 95 (Namco 108 on NAMCOT-3425).
    Namcot3425(Namcot3425),
    /// Mapper 154 (Namco 108 on NAMCOT-3453).
    Namcot3453(Namcot3453),
    /// Mapper 111 (GTROM).
    Gtrom(Gtrom),
    /// Mapper 18 (Jaleco SS 88006).
    Ss88006(Ss88006),
    /// Mapper 65 (Irem H3001).
    H3001(H3001),
    /// Mapper 33 (Taito TC0190).
    Tc0190(Tc0190),
    /// Mapper 48 (Taito TC0690).
    Tc0690(Tc0690),
    /// Mapper 69 (Sunsoft FME-7, 5A, 5B).
    Fme7(Fme7),
    /// Mapper 89 (Sunsoft-2 on the Sunsoft-3 board).
    Sunsoft2(Sunsoft2),
    /// Mapper 93 (Sunsoft-2 on the Sunsoft-3R board).
    Sunsoft2_3r(Sunsoft2_3r),
    /// Mapper 184 (Sunsoft-1).
    Sunsoft1(Sunsoft1),
    /// Mapper 67 (Sunsoft-3).
    Sunsoft3(Sunsoft3),
    /// Mapper 68 (Sunsoft-4).
    Sunsoft4(Sunsoft4),
    /// Mapper 19 (Namco 129/163).
    Namco163(Namco163),
    /// Mapper 210 (Namco 175/340).
    Namco175(Namco175),
    /// Mappers 16, 153, 159 (Bandai FCG-1/2, LZ93D50).
    BandaiFcg(BandaiFcg),
    /// Mapper 70 (Bandai discrete).
    Bandai70(Bandai70),
    /// Mapper 152 (Bandai discrete, one-screen mirroring).
    Bandai152(Bandai152),
    /// Mapper 32 (Irem G-101).
    G101(G101),
    /// Mapper 78 (Irem: Holy Diver, Cosmo Carrier).
    Mapper78(Mapper78),
    /// Mapper 97 (Irem TAM-S1).
    TamS1(TamS1),
    /// Mapper 86 (Jaleco JF-13).
    Jf13(Jf13),
    /// Mapper 87 (Jaleco/Konami CHR latch).
    Mapper87(Mapper87),
    /// Mapper 92 (Jaleco JF-19).
    Jf19(Jf19),
    /// Mapper 30 (UNROM 512).
    Unrom512(Unrom512),
    /// Mapper 28 (Action 53).
    Action53(Action53),
    /// Mapper 64 (Tengen RAMBO-1).
    Rambo1(Rambo1),
    /// Mapper 105 (NES-EVENT).
    NesEvent(NesEvent),
    /// Mappers 80 and 207 (Taito X1-005).
    X1005(X1005),
    /// Mapper 82 (Taito X1-017).
    X1017(X1017),
}

/// Expands to `$body` with `$m` bound to the board inside whichever variant `$board` holds.
macro_rules! each_board {
    ($board:expr, $m:ident => $body:expr) => {
        match $board {
            Board::Nrom($m) => $body,
            Board::Sxrom($m) => $body,
            Board::Uxrom($m) => $body,
            Board::Cnrom($m) => $body,
            Board::Txrom($m) => $body,
            Board::Mmc5($m) => $body,
            Board::Axrom($m) => $body,
            Board::Pxrom($m) => $body,
            Board::Fxrom($m) => $body,
            Board::ColorDreams($m) => $body,
            Board::Gxrom($m) => $body,
            Board::Camerica($m) => $body,
            Board::Cprom($m) => $body,
            Board::Vrc($m) => $body,
            Board::Mapper34($m) => $body,
            Board::Nina03($m) => $body,
            Board::Un1rom($m) => $body,
            Board::Jf11($m) => $body,
            Board::Unrom180($m) => $body,
            Board::Cnrom185($m) => $body,
            Board::Quattro($m) => $body,
            Board::Vrc6($m) => $body,
            Board::Vrc3($m) => $body,
            Board::Vrc7($m) => $body,
            Board::Vrc1($m) => $body,
            Board::Mmc1a($m) => $body,
            Board::Dxrom($m) => $body,
            Board::Namcot3446($m) => $body,
            Board::Namcot3443($m) => $body,
            Board::Namcot3425($m) => $body,
            Board::Namcot3453($m) => $body,
            Board::Gtrom($m) => $body,
            Board::Ss88006($m) => $body,
            Board::H3001($m) => $body,
            Board::Tc0190($m) => $body,
            Board::Tc0690($m) => $body,
            Board::Fme7($m) => $body,
            Board::Sunsoft2($m) => $body,
            Board::Sunsoft2_3r($m) => $body,
            Board::Sunsoft1($m) => $body,
            Board::Sunsoft3($m) => $body,
            Board::Sunsoft4($m) => $body,
            Board::Namco163($m) => $body,
            Board::Namco175($m) => $body,
            Board::BandaiFcg($m) => $body,
            Board::Bandai70($m) => $body,
            Board::Bandai152($m) => $body,
            Board::G101($m) => $body,
            Board::Mapper78($m) => $body,
            Board::TamS1($m) => $body,
            Board::Jf13($m) => $body,
            Board::Mapper87($m) => $body,
            Board::Jf19($m) => $body,
            Board::Unrom512($m) => $body,
            Board::Action53($m) => $body,
            Board::Rambo1($m) => $body,
            Board::NesEvent($m) => $body,
            Board::X1005($m) => $body,
            Board::X1017($m) => $body,
        }
    };
}

impl Board {
    /// The board for a header the parser accepted (`header::is_supported`). Returns `None` for any
    /// other mapper number.
    pub fn new(config: BoardConfig) -> Option<Board> {
        Some(match config.mapper {
            0 => Board::Nrom(Nrom::new(config)),
            1 => Board::Sxrom(Sxrom::new(config)),
            2 => Board::Uxrom(Uxrom::new(config)),
            3 => Board::Cnrom(Cnrom::new(config)),
            4 => Board::Txrom(Txrom::new(config)),
            5 => Board::Mmc5(Mmc5::new(config)),
            7 => Board::Axrom(Axrom::new(config)),
            9 => Board::Pxrom(Pxrom::new(config)),
            10 => Board::Fxrom(Fxrom::new(config)),
            11 => Board::ColorDreams(ColorDreams::new(config)),
            66 => Board::Gxrom(Gxrom::new(config)),
            71 => Board::Camerica(Camerica::new(config)),
            13 => Board::Cprom(Cprom::new(config)),
            21 | 22 | 23 | 25 => Board::Vrc(Vrc::new(config)),
            34 => Board::Mapper34(Mapper34::new(config)),
            79 | 113 => Board::Nina03(Nina03::new(config)),
            94 => Board::Un1rom(Un1rom::new(config)),
            140 => Board::Jf11(Jf11::new(config)),
            180 => Board::Unrom180(Unrom180::new(config)),
            185 => Board::Cnrom185(Cnrom185::new(config)),
            232 => Board::Quattro(Quattro::new(config)),
            24 | 26 => Board::Vrc6(Vrc6::new(config)),
            73 => Board::Vrc3(Vrc3::new(config)),
            85 => Board::Vrc7(Vrc7::new(config)),
            75 => Board::Vrc1(Vrc1::new(config)),
            // One variant for the MMC3 family keeps the A12 paths, run at every PPU fetch, one test
            // of the discriminant (as variants of their own, 118 and 119 cost the MMC3 demo 4.6% more
            // host instructions); `Txrom` holds the board's CHR wiring.
            118 | 119 => Board::Txrom(Txrom::new(config)),
            155 => Board::Mmc1a(Mmc1a::new(config)),
            206 => Board::Dxrom(Dxrom::new(config)),
            76 => Board::Namcot3446(Namcot3446::new(config)),
            88 => Board::Namcot3443(Namcot3443::new(config)),
            95 => Board::Namcot3425(Namcot3425::new(config)),
            154 => Board::Namcot3453(Namcot3453::new(config)),
            111 => Board::Gtrom(Gtrom::new(config)),
            18 => Board::Ss88006(Ss88006::new(config)),
            65 => Board::H3001(H3001::new(config)),
            33 => Board::Tc0190(Tc0190::new(config)),
            48 => Board::Tc0690(Tc0690::new(config)),
            69 => Board::Fme7(Fme7::new(config)),
            89 => Board::Sunsoft2(Sunsoft2::new(config)),
            93 => Board::Sunsoft2_3r(Sunsoft2_3r::new(config)),
            184 => Board::Sunsoft1(Sunsoft1::new(config)),
            67 => Board::Sunsoft3(Sunsoft3::new(config)),
            68 => Board::Sunsoft4(Sunsoft4::new(config)),
            19 => Board::Namco163(Namco163::new(config)),
            210 => Board::Namco175(Namco175::new(config)),
            16 | 153 | 159 => Board::BandaiFcg(BandaiFcg::new(config)),
            70 => Board::Bandai70(Bandai70::new(config)),
            152 => Board::Bandai152(Bandai152::new(config)),
            32 => Board::G101(G101::new(config)),
            78 => Board::Mapper78(Mapper78::new(config)),
            97 => Board::TamS1(TamS1::new(config)),
            86 => Board::Jf13(Jf13::new(config)),
            87 => Board::Mapper87(Mapper87::new(config)),
            92 => Board::Jf19(Jf19::new(config)),
            30 => Board::Unrom512(Unrom512::new(config)),
            28 => Board::Action53(Action53::new(config)),
            64 => Board::Rambo1(Rambo1::new(config)),
            105 => Board::NesEvent(NesEvent::new(config)),
            80 | 207 => Board::X1005(X1005::new(config)),
            82 => Board::X1017(X1017::new(config)),
            _ => return None,
        })
    }

    /// Applies what the header says beyond [`BoardConfig`] (UNROM 512's nametable and battery bits);
    /// called after every [`Board::new`].
    pub fn configure(&mut self, info: &RomInfo) {
        if let Board::Unrom512(m) = self {
            m.configure(info);
        }
    }

    /// True when the board's PRG is a flash chip the game can write (UNROM 512's self-flashable
    /// wiring, GTROM): its PRG ROM is then state.
    pub fn has_flash(&self) -> bool {
        match self {
            Board::Unrom512(m) => m.has_flash(),
            Board::Gtrom(_) => true,
            _ => false,
        }
    }

    /// True when a CPU write to `addr` ($8000-$FFFF) reaches the flash chip.
    pub fn flash_port(&self, addr: u16) -> bool {
        match self {
            Board::Unrom512(m) => m.flash_port(addr),
            Board::Gtrom(_) => true,
            _ => false,
        }
    }

    /// The flash chip's command state, on the boards with one.
    pub fn flash_mut(&mut self) -> Option<&mut FlashState> {
        match self {
            Board::Unrom512(m) if m.has_flash() => Some(m.flash_mut()),
            Board::Gtrom(m) => Some(m.flash_mut()),
            _ => None,
        }
    }

    /// Recomputes every window of `map` from the board's registers.
    pub fn update_map(&self, map: &mut MemoryMap) {
        each_board!(self, m => m.update_map(map))
    }

    /// A CPU write to $8000-$FFFF (after any bus conflict). Returns true when the map must be updated.
    #[inline]
    pub fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        match self {
            Board::Nrom(_) => false,
            Board::Sxrom(m) => m.write_register(addr, value, cpu_cycle),
            Board::Uxrom(m) => m.write_register(value),
            Board::Cnrom(m) => m.write_register(value),
            Board::Txrom(m) => m.write_register(addr, value),
            // No registers at $8000-$FFFF: writes there reach RAM the slots map (`Cartridge`).
            Board::Mmc5(_) => false,
            Board::Axrom(m) => m.write_register(value),
            Board::Pxrom(m) => m.write_register(addr, value),
            Board::Fxrom(m) => m.write_register(addr, value),
            Board::ColorDreams(m) => m.write_register(value),
            Board::Gxrom(m) => m.write_register(value),
            Board::Camerica(m) => m.write_register(addr, value),
            Board::Cprom(m) => m.write_register(value),
            Board::Vrc(m) => m.write_register(addr, value, cpu_cycle),
            Board::Mapper34(m) => m.write_register(value),
            Board::Nina03(_) | Board::Jf11(_) => false,
            Board::Un1rom(m) => m.write_register(value),
            Board::Unrom180(m) => m.write_register(value),
            Board::Cnrom185(m) => m.write_register(value),
            Board::Quattro(m) => m.write_register(addr, value),
            Board::Vrc6(m) => m.write_register(addr, value, cpu_cycle),
            Board::Vrc3(m) => m.write_register(addr, value, cpu_cycle),
            Board::Vrc7(m) => m.write_register(addr, value, cpu_cycle),
            Board::Vrc1(m) => m.write_register(addr, value),
            Board::Mmc1a(m) => m.mmc1.write_register(addr, value, cpu_cycle),
            Board::Dxrom(Dxrom { chip: m })
            | Board::Namcot3446(Namcot3446 { chip: m })
            | Board::Namcot3443(Namcot3443 { chip: m }) => m.write_register(addr, value),
            Board::Namcot3425(m) => m.chip_mut().write_register(addr, value),
            Board::Namcot3453(m) => m.write_register(addr, value),
            Board::Ss88006(m) => m.write_register(addr, value, cpu_cycle),
            Board::H3001(m) => m.write_register(addr, value, cpu_cycle),
            Board::Tc0190(m) => m.write_register(addr, value),
            Board::Tc0690(m) => m.write_register(addr, value),
            Board::Fme7(m) => m.write_register(addr, value, cpu_cycle),
            Board::Sunsoft2(m) => m.write_register(value),
            Board::Sunsoft2_3r(m) => m.write_register(value),
            Board::Sunsoft1(_) => false,
            Board::Sunsoft3(m) => m.write_register(addr, value, cpu_cycle),
            Board::Sunsoft4(m) => m.write_register(addr, value),
            Board::Namco163(m) => m.write_register(addr, value, cpu_cycle),
            Board::Namco175(m) => m.write_register(addr, value),
            Board::BandaiFcg(m) => m.write_register(addr, value, cpu_cycle),
            Board::Bandai70(m) => m.write_register(value),
            Board::Bandai152(m) => m.write_register(value),
            Board::Gtrom(_) | Board::Jf13(_) | Board::Mapper87(_) => false,
            Board::G101(m) => m.write_register(addr, value),
            Board::Mapper78(m) => m.write_register(value),
            Board::TamS1(m) => m.write_register(addr, value),
            Board::Jf19(m) => m.write_register(value),
            Board::Unrom512(m) => m.write_register(addr, value),
            Board::Action53(m) => m.write_register(value),
            Board::Rambo1(m) => m.write_register(addr, value),
            Board::NesEvent(m) => m.write_register(addr, value, cpu_cycle),
            // Registers only at $7EF0-$7EFF.
            Board::X1005(_) | Board::X1017(_) => false,
        }
    }

    /// A CPU write to $4020-$7FFF on a board with registers there ([`MemoryMap::low_registers`]).
    /// Returns true when the map must be updated.
    /// Returns true when the map must be updated. A board's CPU-cycle counter is first run through
    /// `cpu_cycle`.
    pub fn write_low(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        match self {
            Board::BandaiFcg(m) => m.write_low(addr, value, cpu_cycle),
            Board::Vrc(m) => m.write_low(addr, value),
            Board::Mapper34(m) => m.write_low(addr, value),
            Board::Nina03(m) => m.write_low(addr, value),
            Board::Jf11(m) => m.write_low(addr, value),
            Board::Mmc5(m) => m.write_low(addr, value, cpu_cycle),
            Board::Gtrom(m) => m.write_low(addr, value),
            Board::Sunsoft1(m) => m.write_low(addr, value),
            Board::Namco163(m) => m.write_low(addr, value),
            Board::Jf13(m) => m.write_low(addr, value),
            Board::Mapper87(m) => m.write_low(addr, value),
            Board::Action53(m) => m.write_low(addr, value),
            Board::X1005(m) => m.write_low(addr, value),
            Board::X1017(m) => m.write_low(addr, value),
            _ => false,
        }
    }

    /// Runs a board's CPU-cycle IRQ counter and sound chip, for the boards that have them, through CPU
    /// cycle `cpu_cycle`.
    /// Runs a board's CPU-cycle counters and sound chip through CPU cycle `cpu_cycle` (the VRC IRQ,
    /// the VRC3's, the VRC6's sound, the Bandai FCG's IRQ).
    pub fn catch_up(&mut self, cpu_cycle: u64) {
        match self {
            Board::Vrc(m) => m.catch_up(cpu_cycle),
            Board::Vrc6(m) => m.catch_up(cpu_cycle),
            Board::Vrc3(m) => m.catch_up(cpu_cycle),
            Board::Vrc7(m) => m.catch_up(cpu_cycle),
            Board::Mmc5(m) => m.catch_up(cpu_cycle),
            Board::Ss88006(m) => m.catch_up(cpu_cycle),
            Board::H3001(m) => m.catch_up(cpu_cycle),
            Board::Fme7(m) => m.catch_up(cpu_cycle),
            Board::Sunsoft3(m) => m.catch_up(cpu_cycle),
            Board::Namco163(m) => m.catch_up(cpu_cycle),
            Board::BandaiFcg(m) => m.catch_up(cpu_cycle),
            Board::NesEvent(m) => m.catch_up(cpu_cycle),
            _ => {}
        }
    }

    /// The CPU cycle a board's CPU-cycle counters have run through; 0 for a board without them.
    pub fn ticked(&self) -> u64 {
        match self {
            Board::Vrc(m) => m.ticked(),
            Board::Vrc6(m) => m.ticked(),
            Board::Vrc3(m) => m.ticked(),
            Board::Vrc7(m) => m.ticked(),
            Board::Mmc5(m) => m.ticked(),
            Board::Ss88006(m) => m.ticked(),
            Board::H3001(m) => m.ticked(),
            Board::Fme7(m) => m.ticked(),
            Board::Sunsoft3(m) => m.ticked(),
            Board::Namco163(m) => m.ticked(),
            Board::BandaiFcg(m) => m.ticked(),
            Board::NesEvent(m) => m.ticked(),
            _ => 0,
        }
    }

    /// Declares a board's CPU-cycle counters current at `cpu_cycle` (power-on, restore).
    pub fn resync(&mut self, cpu_cycle: u64) {
        match self {
            Board::Vrc(m) => m.resync(cpu_cycle),
            Board::Vrc6(m) => m.resync(cpu_cycle),
            Board::Vrc3(m) => m.resync(cpu_cycle),
            Board::Vrc7(m) => m.resync(cpu_cycle),
            Board::Mmc5(m) => m.resync(cpu_cycle),
            Board::Ss88006(m) => m.resync(cpu_cycle),
            Board::H3001(m) => m.resync(cpu_cycle),
            Board::Fme7(m) => m.resync(cpu_cycle),
            Board::Sunsoft3(m) => m.resync(cpu_cycle),
            Board::Namco163(m) => m.resync(cpu_cycle),
            Board::BandaiFcg(m) => m.resync(cpu_cycle),
            Board::NesEvent(m) => m.resync(cpu_cycle),
            _ => {}
        }
    }

    /// The CPU cycle at which the board's CPU-cycle counter asserts /IRQ unless a write intervenes;
    /// `u64::MAX` for boards without one, or when it cannot.
    pub fn irq_due_cycle(&self) -> u64 {
        match self {
            Board::Vrc(m) => m.irq_due_cycle(),
            Board::Vrc6(m) => m.irq_due_cycle(),
            Board::Vrc3(m) => m.irq_due_cycle(),
            Board::Vrc7(m) => m.irq_due_cycle(),
            Board::Mmc5(m) => m.irq_due_cycle(),
            Board::Ss88006(m) => m.irq_due_cycle(),
            Board::H3001(m) => m.irq_due_cycle(),
            Board::Fme7(m) => m.irq_due_cycle(),
            Board::Sunsoft3(m) => m.irq_due_cycle(),
            Board::Namco163(m) => m.irq_due_cycle(),
            Board::BandaiFcg(m) => m.irq_due_cycle(),
            Board::NesEvent(m) => m.irq_due_cycle(),
            _ => u64::MAX,
        }
    }

    /// The board's sound chip (`expansion_audio.rs`), if it has one.
    pub fn expansion_chip(&self) -> Option<ExpansionChip> {
        match self {
            Board::Vrc6(_) => Some(ExpansionChip::Vrc6),
            Board::Vrc7(_) => Some(ExpansionChip::Vrc7),
            Board::Mmc5(_) => Some(ExpansionChip::Mmc5),
            Board::Fme7(_) => Some(ExpansionChip::Sunsoft5B),
            Board::Namco163(m) => m.expansion_chip(),
            _ => None,
        }
    }

    /// The sound chip's DAC level as of the cycle the board was run through (0 without a chip).
    pub fn expansion_level(&self) -> i32 {
        match self {
            Board::Vrc6(m) => m.expansion_level(),
            Board::Vrc7(m) => m.expansion_level(),
            Board::Mmc5(m) => m.expansion_level(),
            Board::Fme7(m) => m.expansion_level(),
            Board::Namco163(m) => m.expansion_level(),
            _ => 0,
        }
    }

    /// The PPU put `addr` on its bus (`read`: and read from it). Returns true when the map must be
    /// updated. Only called when [`MemoryMap::watches_ppu`] is set.
    #[inline]
    pub fn observe_ppu(&mut self, addr: u16, read: bool) -> bool {
        match self {
            Board::Txrom(m) => {
                m.observe_ppu_address(addr);
                false
            }
            Board::Tc0690(m) => {
                m.observe_ppu_address(addr);
                false
            }
            Board::Rambo1(m) => {
                m.observe_ppu_address(addr);
                false
            }
            Board::Pxrom(m) if read => m.observe_ppu_read(addr),
            Board::Fxrom(m) if read => m.observe_ppu_read(addr),
            _ => false,
        }
    }

    /// True when the board sees of the PPU's accesses only the changes of A12, and its M2 edges
    /// matter only in their order against those changes: the MMC3 (its filter counts edges while
    /// A12 stays low, and a rise after enough of them clocks the counter).
    #[inline(always)]
    pub fn sees_only_a12(&self) -> bool {
        matches!(self, Board::Txrom(_))
    }

    /// The level of PPU A12 the board saw last, where it watches A12 (true = high).
    #[inline(always)]
    pub fn a12_high(&self) -> bool {
        match self {
            Board::Txrom(m) => m.a12_high(),
            _ => false,
        }
    }

    /// `edges` CPU cycles (M2) began, with no PPU access between them.
    #[inline(always)]
    pub fn cpu_cycles(&mut self, edges: u64) {
        match self {
            Board::Txrom(m) => m.cpu_cycles(edges),
            Board::Mmc5(m) => m.cpu_cycles(edges),
            Board::Tc0690(m) => m.cpu_cycles(edges),
            Board::Rambo1(m) => m.cpu_cycles(edges),
            _ => {}
        }
    }

    /// True when the board counts M2 edges against the PPU's accesses (the MMC3's A12 filter, the
    /// MMC5's idle detection, the TC0690's and RAMBO-1's filters and IRQ delays).
    pub fn counts_m2_edges(&self) -> bool {
        matches!(self, Board::Txrom(_) | Board::Mmc5(_) | Board::Tc0690(_) | Board::Rambo1(_))
    }

    /// True when the lazy PPU schedule cannot predict the board's /IRQ, so the console runs the eager
    /// one: the TC0690's and RAMBO-1's IRQs rise M2 edges after the A12 clock that the prediction
    /// covers.
    pub fn needs_eager_ppu(&self) -> bool {
        matches!(self, Board::Tc0690(_) | Board::Rambo1(_))
    }

    /// PPU A12 counter clocks before the board's /IRQ could be asserted (`u32::MAX`: not by the PPU).
    pub fn a12_clocks_before_irq(&self) -> u32 {
        match self {
            Board::Txrom(m) => m.a12_clocks_before_irq(),
            _ => u32::MAX,
        }
    }

    /// M2 edges the A12 counter has seen since A12 fell, `None` while A12 is high; for boards without
    /// such a counter, as if A12 had been low for long.
    pub fn a12_low_m2_edges(&self) -> Option<u8> {
        match self {
            Board::Txrom(m) => m.a12_low_m2_edges(),
            _ => Some(u8::MAX),
        }
    }

    /// The board's /IRQ output (true = asserted); `None` for the boards that have none.
    pub fn irq_output(&self) -> Option<bool> {
        match self {
            Board::Txrom(m) => Some(m.irq_line()),
            Board::Vrc(m) => Some(m.irq_line()),
            Board::Vrc6(m) => Some(m.irq_line()),
            Board::Vrc3(m) => Some(m.irq_line()),
            Board::Vrc7(m) => Some(m.irq_line()),
            Board::Fme7(m) => Some(m.irq_line()),
            Board::Sunsoft3(m) => Some(m.irq_line()),
            Board::Mmc5(m) => Some(m.irq_line()),
            Board::Ss88006(m) => Some(m.irq_line()),
            Board::H3001(m) => Some(m.irq_line()),
            Board::Tc0690(m) => Some(m.irq_line()),
            Board::Namco163(m) => Some(m.irq_line()),
            Board::BandaiFcg(m) => Some(m.irq_line()),
            Board::Rambo1(m) => Some(m.irq_line()),
            Board::NesEvent(m) => Some(m.irq_line()),
            _ => None,
        }
    }

    /// The board's register state as bytes.
    pub fn state_bytes(&self) -> &[u8] {
        each_board!(self, m => m.state_bytes())
    }

    /// The board's register state as mutable bytes (for snapshot restore; call `update_map` after).
    pub fn state_bytes_mut(&mut self) -> &mut [u8] {
        each_board!(self, m => m.state_bytes_mut())
    }
}
