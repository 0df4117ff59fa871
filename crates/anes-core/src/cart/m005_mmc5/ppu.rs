//! What the MMC5 does with each PPU read (nesdev "MMC5": scanline detection, CHR mode, ExRAM mode 1,
//! vertical split mode).
//!
//! A rendered line has 170 reads, counted from the first tile fetch at dot 2: 32 tiles of four
//! (nametable, attribute, pattern low, pattern high; screen columns 2-33), eight sprite slots of four
//! (two nametable reads, two pattern reads), the next line's first two tiles (columns 0-1) and two
//! dummy nametable reads. The two dummies and the next line's first read hit one address: that
//! third read in a row starts a line. A read more than three CPU cycles after the one before it is
//! not rendering (a CPU access through $2007, or the first fetch after the PPU was idle).

use super::{IDLE_M2_EDGES, Mmc5};
use crate::cart::mapper::Fetch;

/// Reads in a rendered scanline.
const READS_PER_LINE: u8 = 170;
/// The first read of the sprite slots.
const FIRST_SPRITE_READ: u8 = 128;
/// The first read of the next line's two tiles.
const FIRST_PREFETCH_READ: u8 = 160;
/// The first of the two dummy nametable reads.
const FIRST_DUMMY_READ: u8 = 168;
/// Lines of the split region's 30-row nametable.
const SPLIT_LINES: u16 = 240;

impl Mmc5 {
    /// The PPU reads `addr`: advances the scanline detector and says where the data comes from.
    /// `exram` is the chip's 1 KiB of RAM.
    ///
    /// Split in two for cost: the detector and the common case come first, where every rendered
    /// read comes from the bank map (8x8 sprites, no extended attributes, no split: both CHR sets
    /// resolve to the set written last, which the map shows); the chip picks data itself only in
    /// the other cases (`rendered_fetch`). Reads outside rendering come from the map too: the
    /// map's pattern tables are the set written last.
    #[inline(always)]
    pub fn fetch(&mut self, addr: u16, exram: &[u8]) -> Fetch {
        let addr = addr & 0x3FFF;
        if !self.detect_line(addr) || self.fetches_from_map() {
            return Fetch::Map;
        }
        self.rendered_fetch(addr, exram)
    }

    /// True when every PPU read comes from the bank map, so only the reads' addresses matter to
    /// the chip ([`Mmc5::hear_reads`]).
    #[inline(always)]
    pub fn supplies_no_data(&self) -> bool {
        self.fetches_from_map()
    }

    /// PPU reads of `addrs`, in order, while [`Mmc5::supplies_no_data`]: the scanline detector
    /// hears them, as [`Mmc5::fetch`] would.
    #[inline(always)]
    pub fn hear_reads<const N: usize>(&mut self, addrs: [u16; N]) {
        for addr in addrs {
            self.detect_line(addr & 0x3FFF);
        }
    }

    /// Runs the scanline detector over a PPU read of `addr`; true when the read is part of
    /// rendering.
    #[inline(always)]
    fn detect_line(&mut self, addr: u16) -> bool {
        let s = &mut self.state;
        let rendering = s.idle_m2_edges < IDLE_M2_EDGES && s.ppu_mask & 0x18 != 0;
        let repeated = rendering && addr & 0x3000 == 0x2000 && addr == s.last_fetch_address;
        s.idle_m2_edges = 0;
        s.last_fetch_address = addr;
        let repeats_before = s.fetch_repeats;
        s.fetch_repeats = if repeated { repeats_before.saturating_add(1).min(2) } else { 0 };
        if repeated && repeats_before == 1 {
            self.start_line();
        } else {
            s.fetch_index = if s.fetch_index >= READS_PER_LINE - 1 { 0 } else { s.fetch_index + 1 };
        }
        rendering
    }

    /// True when every rendered read comes from the bank map: 8x8 sprites (both CHR sets are the
    /// set written last), no extended attributes (ExRAM mode 1) and no split (enabled in ExRAM
    /// modes 0 and 1 only).
    #[inline(always)]
    fn fetches_from_map(&self) -> bool {
        let s = &self.state;
        s.ppu_ctrl & 0x20 == 0 && (s.exram_mode >= 2 || (s.exram_mode == 0 && s.split_control & 0x80 == 0))
    }

    /// A rendered read where the chip may supply the data: the CHR set by fetch, extended
    /// attributes, the split.
    #[inline(never)]
    fn rendered_fetch(&mut self, addr: u16, exram: &[u8]) -> Fetch {
        let index = self.state.fetch_index;
        if (FIRST_SPRITE_READ..FIRST_PREFETCH_READ).contains(&index) {
            return if addr < 0x2000 { self.pattern(self.sprite_set(), addr) } else { Fetch::Map };
        }
        if index >= FIRST_DUMMY_READ {
            return Fetch::Map;
        }
        let (column, next_line) = if index < FIRST_SPRITE_READ {
            (index / 4 + 2, false)
        } else {
            ((index - FIRST_PREFETCH_READ) / 4, true)
        };
        if self.in_split(column) {
            return self.split_fetch(index & 3, column, next_line, addr, exram);
        }
        if self.state.exram_mode == 1 {
            return self.extended_fetch(index & 3, addr, exram);
        }
        if addr < 0x2000 { self.pattern(self.background_set(), addr) } else { Fetch::Map }
    }

    /// The first read of a line: the frame starts (counter 0, IRQ acknowledged) or the counter
    /// counts, and raises the IRQ on reaching $5203 (nesdev "MMC5", scanline IRQ: 0 never fires).
    #[cold]
    fn start_line(&mut self) {
        let s = &mut self.state;
        s.fetch_index = 0;
        if s.in_frame == 0 {
            s.in_frame = 1;
            s.scanline = 0;
            s.irq_pending = 0;
        } else {
            s.scanline = s.scanline.wrapping_add(1);
            if s.scanline == s.irq_compare {
                s.irq_pending = 1;
            }
        }
    }

    fn sprites_8x16(&self) -> bool {
        self.state.ppu_ctrl & 0x20 != 0
    }

    /// With 8x16 sprites, sprites use $5120-$5127; with 8x8 sprites both use the set written last.
    fn sprite_set(&self) -> u8 {
        if self.sprites_8x16() { 0 } else { self.state.last_chr_set }
    }

    /// With 8x16 sprites, the background uses $5128-$512B; with 8x8 sprites the set written last.
    fn background_set(&self) -> u8 {
        if self.sprites_8x16() { 1 } else { self.state.last_chr_set }
    }

    fn pattern(&self, set: u8, addr: u16) -> Fetch {
        Fetch::Chr(self.chr_bank(set, addr) * 0x400 + usize::from(addr & 0x3FF))
    }

    /// Tile column `column` (0-33) lies in the split region ($5200; ExRAM modes 0 and 1 only).
    fn in_split(&self, column: u8) -> bool {
        let s = &self.state;
        if s.split_control & 0x80 == 0 || s.exram_mode >= 2 {
            return false;
        }
        let threshold = s.split_control & 0x1F;
        if s.split_control & 0x40 != 0 { column >= threshold } else { column < threshold }
    }

    /// Extended attributes (ExRAM mode 1): the nametable read's ExRAM byte gives the tile's palette
    /// (bits 6-7) and its 4 KiB CHR bank (bits 0-5, with $5130 above them).
    fn extended_fetch(&mut self, phase: u8, addr: u16, exram: &[u8]) -> Fetch {
        let s = &mut self.state;
        match phase {
            0 => {
                s.tile_latch = exram[usize::from(addr) & 0x3FF];
                Fetch::Map
            }
            1 => Fetch::Value((s.tile_latch >> 6) * 0x55),
            _ => {
                let bank = usize::from(s.tile_latch & 0x3F) | usize::from(s.chr_upper & 3) << 6;
                Fetch::Chr(bank * 0x1000 + usize::from(addr & 0x0FFF))
            }
        }
    }

    /// The split region: tiles and attributes from ExRAM as a 32x30 nametable scrolled by $5201,
    /// patterns from the 4 KiB page $5202. `next_line`: the tile belongs to the next line.
    fn split_fetch(&mut self, phase: u8, column: u8, next_line: bool, addr: u16, exram: &[u8]) -> Fetch {
        let s = &mut self.state;
        let line = match (s.in_frame != 0, next_line) {
            (true, false) => u16::from(s.scanline),
            (true, true) => u16::from(s.scanline) + 1,
            (false, _) => 0,
        };
        let y = (u16::from(s.split_scroll) + line) % SPLIT_LINES;
        let (row, column) = (usize::from(y / 8), usize::from(column & 31));
        match phase {
            0 => {
                s.tile_latch = exram[row * 32 + column];
                Fetch::Value(s.tile_latch)
            }
            1 => {
                let attribute = exram[0x3C0 + (row / 4) * 8 + column / 4];
                let shift = (row & 2) << 1 | (column & 2);
                Fetch::Value(((attribute >> shift) & 3) * 0x55)
            }
            _ => Fetch::Chr(
                usize::from(s.split_page) * 0x1000
                    + usize::from(s.tile_latch) * 16
                    + usize::from(y & 7)
                    + usize::from(addr & 8),
            ),
        }
    }
}
