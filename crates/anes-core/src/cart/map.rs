//! The bank map every board fills in, and the facts a board is built from: shared by all boards,
//! so a leaf.
//!
//! Boards keep their registers in Pod state structs; [`MemoryMap`] is the derived cache of byte offsets
//! that the hot paths index with, recomputed by the board's `update_map` after every register change
//! and by `Cartridge::rebuild_caches` after a snapshot restore.

use super::rom_info::{Mirroring, RomInfo};

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
