//! The background: the scroll counters in `v` and the tile fetch pipeline feeding the shift registers
//! (nesdev "PPU scrolling", "PPU rendering").
//!
//! `v` and `t` are laid out as `yyy NN YYYYY XXXXX` (fine Y, nametable, coarse Y, coarse X).

use super::{Ppu, PpuBus, PpuBusPeek, ctrl};

/// Coarse X increment: wraps from 31 to 0 and switches the horizontal nametable.
#[inline(always)]
pub(super) fn increment_coarse_x(v: u16) -> u16 {
    if v & 0x001F == 31 { (v & !0x001F) ^ 0x0400 } else { v + 1 }
}

/// Y increment (dot 256): fine Y, carrying into coarse Y, which wraps from 29 to 0 switching the
/// vertical nametable, or from 31 to 0 without switching (attribute rows used as tiles).
#[inline(always)]
pub(super) fn increment_y(v: u16) -> u16 {
    if v & 0x7000 != 0x7000 {
        return v + 0x1000;
    }
    let v = v & !0x7000;
    let coarse_y = (v >> 5) & 31;
    match coarse_y {
        29 => (v & !0x03E0) ^ 0x0800,
        31 => v & !0x03E0,
        _ => v + 0x0020,
    }
}

/// Dot 257: the horizontal bits (coarse X, horizontal nametable) of `t` into `v`.
#[inline(always)]
pub(super) fn copy_horizontal(v: u16, t: u16) -> u16 {
    (v & !0x041F) | (t & 0x041F)
}

/// Pre-render dots 280-304: the vertical bits (fine Y, coarse Y, vertical nametable) of `t` into `v`.
#[inline(always)]
pub(super) fn copy_vertical(v: u16, t: u16) -> u16 {
    (v & !0x7BE0) | (t & 0x7BE0)
}

/// The nametable byte address for the tile at `v`.
#[inline(always)]
pub(super) fn nametable_address(v: u16) -> u16 {
    0x2000 | (v & 0x0FFF)
}

/// The attribute byte address for the tile at `v`.
#[inline(always)]
pub(super) fn attribute_address(v: u16) -> u16 {
    0x23C0 | (v & 0x0C00) | ((v >> 4) & 0x38) | ((v >> 2) & 0x07)
}

/// The 2-bit palette number of the tile at `v` within its attribute byte.
#[inline(always)]
pub(super) fn attribute_bits(v: u16, attribute: u8) -> u8 {
    let shift = ((v >> 4) & 4) | (v & 2);
    (attribute >> shift) & 3
}

/// Each bit of a byte spread to a byte of its own: byte `i` (from the least significant) holds bit
/// `7 - i`, so pixel `i` of a pattern row (leftmost first) lands in byte `i`.
pub(super) const SPREAD: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut value = 0;
    while value < 256 {
        let mut spread = 0u64;
        let mut i = 0;
        while i < 8 {
            spread |= (((value >> (7 - i)) & 1) as u64) << (8 * i);
            i += 1;
        }
        table[value] = spread;
        value += 1;
    }
    table
};

/// The background palette entries (palette number x 4 + pixel, 0 = transparent) of eight pixels,
/// one byte each, the leftmost in the low byte, from the bytes of the four shifters that show them
/// (low and high pattern planes, low and high palette bits; the leftmost pixel in bit 7).
#[inline(always)]
pub(super) fn background_entries([pattern_lo, pattern_hi, attr_lo, attr_hi]: [u8; 4]) -> u64 {
    const LOW_BITS: u64 = 0x0101_0101_0101_0101;
    let pixels = SPREAD[usize::from(pattern_lo)] | (SPREAD[usize::from(pattern_hi)] << 1);
    let palettes = SPREAD[usize::from(attr_lo)] | (SPREAD[usize::from(attr_hi)] << 1);
    // Transparent pixels keep 0 whatever their palette.
    let opaque = (pixels | pixels >> 1) & LOW_BITS;
    pixels | ((palettes << 2) & (opaque * 0x0C))
}

/// The low bytes of the four background shifters (see [`Ppu::background_shifters`]) after a
/// reload of the latches `[_, attribute, low, high]`: the tile entering. A tile's last seven shifts
/// and the next tile's first shift and reload move the old low bytes up and bring these in below
/// them (every bit shifted in lands in the low byte the reload replaces).
#[inline(always)]
pub(super) fn reloaded_bytes([_, attribute, low, high]: [u8; 4]) -> [u8; 4] {
    let fill = |bit: u8| if attribute & bit != 0 { 0xFF } else { 0 };
    [low, high, fill(1), fill(2)]
}

impl Ppu {
    /// The four background shifters: pattern low and high, attribute low and high.
    #[inline(always)]
    pub(super) fn background_shifters(&self) -> [u16; 4] {
        let r = &self.regs;
        [r.bg_pattern_lo, r.bg_pattern_hi, r.bg_attr_lo, r.bg_attr_hi]
    }

    /// One dot of dots 1-256 or 321-336: shift, reload every 8 dots, and the four two-dot fetches
    /// (nametable, attribute, pattern low, pattern high). The first dot of a fetch drives the address,
    /// the second reads.
    #[inline(always)]
    pub(super) fn background_dot(&mut self, bus: &mut impl PpuBus, dot: u16) {
        // Shifting happens on dots 2-257 and 322-337; reloads on 9, 17, ..., 257 and 329, 337 (dots 257
        // and 337 are in `Ppu::render_dot` and the stretches).
        if dot != 1 && dot != 321 {
            self.shift_background();
            if dot & 7 == 1 {
                self.reload_background_shifters();
            }
        }
        self.background_fetch(bus, dot & 7);
    }

    /// Fetch phase `phase` (the dot number modulo 8) of the tile pipeline: the first dot of each
    /// two-dot fetch drives the address, the second reads.
    #[inline(always)]
    pub(super) fn background_fetch(&mut self, bus: &mut impl PpuBus, phase: u16) {
        let r = &mut self.regs;
        let v = r.v;
        match phase {
            1 => bus.set_address(nametable_address(v)),
            2 => r.nt_latch = bus.read(nametable_address(v)),
            3 => bus.set_address(attribute_address(v)),
            4 => r.at_latch = attribute_bits(v, bus.read(attribute_address(v))),
            5 => bus.set_address(self.background_pattern_address()),
            6 => self.regs.pattern_lo_latch = bus.read(self.background_pattern_address()),
            7 => bus.set_address(self.background_pattern_address() | 8),
            _ => {
                self.regs.pattern_hi_latch = bus.read(self.background_pattern_address() | 8);
                self.regs.v = increment_coarse_x(self.regs.v);
            }
        }
    }

    /// A tile's four fetches (fetch phases 1-7, then 0) where nothing observes them (see
    /// [`PpuBus::fetches_observed`]): the same latches and coarse X increment, without the
    /// address-only dots.
    #[inline(always)]
    pub(super) fn background_fetch_unobserved(&mut self, bus: &impl PpuBusPeek) {
        // The nametable and attribute bytes share a nametable, the two planes a 1 KiB CHR window.
        let v = self.regs.v;
        let (nametable, attribute) = bus.peek_pair(nametable_address(v), attribute_address(v));
        self.regs.nt_latch = nametable;
        self.regs.at_latch = attribute_bits(v, attribute);
        let pattern = self.background_pattern_address();
        (self.regs.pattern_lo_latch, self.regs.pattern_hi_latch) = bus.peek_pair(pattern, pattern | 8);
        self.regs.v = increment_coarse_x(v);
    }

    /// Dots 337-340: two nametable fetches whose data is unused.
    #[inline(always)]
    pub(super) fn unused_nametable_dot(&mut self, bus: &mut impl PpuBus, dot: u16) {
        let addr = nametable_address(self.regs.v);
        if dot & 1 == 1 {
            bus.set_address(addr);
        } else {
            // Unused for the picture, but it is the tile whose pattern address shows at dot 0.
            self.regs.nt_latch = bus.read(addr);
        }
    }

    /// Dots 337-340 where nothing observes the fetches: both reads fetch the same byte.
    #[inline(always)]
    pub(super) fn unused_nametable_unobserved(&mut self, bus: &impl PpuBusPeek) {
        self.regs.nt_latch = bus.peek(nametable_address(self.regs.v));
    }

    /// Dot 0 of a visible line: the idle dot drives the pattern address of the tile fetched at dot 5
    /// (nesdev "PPU rendering", cycle 0), so with the background at $1000 PPU A12 stays high between
    /// the dummy nametable fetches and the next line's first fetches (MMC3 counts no edge there).
    #[inline(always)]
    pub(super) fn idle_dot_address(&mut self, bus: &mut impl PpuBus) {
        bus.set_address(self.background_pattern_address());
    }

    /// Pattern low-plane address of the latched tile at the fine Y of `v`.
    #[inline(always)]
    pub(super) fn background_pattern_address(&self) -> u16 {
        let table = u16::from(self.regs.ctrl & ctrl::BACKGROUND_TABLE) << 8;
        table | (u16::from(self.regs.nt_latch) << 4) | ((self.regs.v >> 12) & 7)
    }

    /// One shift of the four background shifters. What enters at bit 0 is the shifters' serial input
    /// (nesdev "PPU rendering"; AccuracyCoin "BG Serial In"): 0 for the low pattern plane, 1 for the
    /// high one, and the attribute latch's bit for the palette shifters, which a reload has copied
    /// into every bit of their low byte. Continuous rendering never shows these bits (a reload
    /// replaces the low byte before they reach the high byte); shifts without reloads do, when
    /// rendering is toggled off across a reload and back on.
    #[inline(always)]
    pub(super) fn shift_background(&mut self) {
        self.shift_background_by(1);
    }

    /// `n` shifts at once (1 to 15): what `n` calls of [`Ppu::shift_background`] do, serial inputs
    /// included (the attribute shifters repeat their bit 0).
    #[inline(always)]
    pub(super) fn shift_background_by(&mut self, n: u32) {
        let r = &mut self.regs;
        let fill = (1u16 << n) - 1;
        r.bg_pattern_lo <<= n;
        r.bg_pattern_hi = (r.bg_pattern_hi << n) | fill;
        r.bg_attr_lo = (r.bg_attr_lo << n) | if r.bg_attr_lo & 1 != 0 { fill } else { 0 };
        r.bg_attr_hi = (r.bg_attr_hi << n) | if r.bg_attr_hi & 1 != 0 { fill } else { 0 };
    }

    /// The fetched tile enters the low bytes of the shifters.
    #[inline(always)]
    pub(super) fn reload_background_shifters(&mut self) {
        let r = &mut self.regs;
        r.bg_pattern_lo = (r.bg_pattern_lo & 0xFF00) | u16::from(r.pattern_lo_latch);
        r.bg_pattern_hi = (r.bg_pattern_hi & 0xFF00) | u16::from(r.pattern_hi_latch);
        r.bg_attr_lo = (r.bg_attr_lo & 0xFF00) | if r.at_latch & 1 != 0 { 0xFF } else { 0 };
        r.bg_attr_hi = (r.bg_attr_hi & 0xFF00) | if r.at_latch & 2 != 0 { 0xFF } else { 0 };
    }

    /// The 4-bit background palette entry (palette number x 4 + pixel) at the current dot, before
    /// clipping; 0 when the pixel is transparent.
    #[inline(always)]
    pub(super) fn background_pixel(&self) -> u8 {
        let r = &self.regs;
        let bit = 15 - u16::from(r.x & 7);
        let pixel = (((r.bg_pattern_hi >> bit) & 1) << 1) | ((r.bg_pattern_lo >> bit) & 1);
        if pixel == 0 {
            return 0;
        }
        let palette = (((r.bg_attr_hi >> bit) & 1) << 1) | ((r.bg_attr_lo >> bit) & 1);
        (palette << 2 | pixel) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values follow the pseudo-code and bit layout on nesdev "PPU scrolling".

    #[test]
    fn coarse_x_wraps_into_the_next_horizontal_nametable() {
        assert_eq!(increment_coarse_x(0x0000), 0x0001);
        assert_eq!(increment_coarse_x(0x001F), 0x0400);
        assert_eq!(increment_coarse_x(0x041F), 0x0000);
        // Fine Y, coarse Y and the vertical nametable bit are untouched.
        assert_eq!(increment_coarse_x(0x7BFF), 0x7FE0);
    }

    #[test]
    fn y_increment_carries_fine_into_coarse_and_wraps_at_29_and_31() {
        assert_eq!(increment_y(0x0000), 0x1000);
        assert_eq!(increment_y(0x7000), 0x0020);
        // Coarse Y 29 -> 0, switching the vertical nametable.
        assert_eq!(increment_y(0x7000 | (29 << 5)), 0x0800);
        assert_eq!(increment_y(0x7800 | (29 << 5)), 0x0000);
        // Coarse Y 31 -> 0 without switching.
        assert_eq!(increment_y(0x7000 | (31 << 5)), 0x0000);
        // Coarse Y 30 -> 31 (reads attribute bytes as tiles).
        assert_eq!(increment_y(0x7000 | (30 << 5)), 31 << 5);
    }

    #[test]
    fn copies_move_exactly_the_documented_bits() {
        assert_eq!(copy_horizontal(0x0000, 0x7FFF), 0x041F);
        assert_eq!(copy_horizontal(0x7FFF, 0x0000), 0x7BE0);
        assert_eq!(copy_vertical(0x0000, 0x7FFF), 0x7BE0);
        assert_eq!(copy_vertical(0x7FFF, 0x0000), 0x041F);
    }

    #[test]
    fn shifts_without_reloads_bring_in_the_serial_inputs() {
        // AccuracyCoin "BG Serial In": 0 into the low plane, 1 into the high plane, the latched
        // palette bit into the attribute shifters.
        let mut ppu = Ppu::new();
        let r = &mut ppu.regs;
        (r.bg_pattern_lo, r.bg_pattern_hi, r.bg_attr_lo, r.bg_attr_hi) = (0xFFFF, 0x0000, 0x00FF, 0xFF00);
        for _ in 0..12 {
            ppu.shift_background();
        }
        let r = &ppu.regs;
        assert_eq!((r.bg_pattern_lo, r.bg_pattern_hi), (0xF000, 0x0FFF));
        assert_eq!((r.bg_attr_lo, r.bg_attr_hi), (0xFFFF, 0x0000));
    }

    #[test]
    fn shifting_by_n_is_n_single_shifts() {
        let starts = [(0xFFFF, 0x0000, 0x00FF, 0xFF00), (0x1234, 0x8001, 0x7F7E, 0x0101), (0, 0, 1, 0)];
        for (lo, hi, attr_lo, attr_hi) in starts {
            for n in 1..16 {
                let (mut one, mut many) = (Ppu::new(), Ppu::new());
                for ppu in [&mut one, &mut many] {
                    let r = &mut ppu.regs;
                    (r.bg_pattern_lo, r.bg_pattern_hi, r.bg_attr_lo, r.bg_attr_hi) =
                        (lo, hi, attr_lo, attr_hi);
                }
                for _ in 0..n {
                    one.shift_background();
                }
                many.shift_background_by(n);
                let state = |p: &Ppu| {
                    (p.regs.bg_pattern_lo, p.regs.bg_pattern_hi, p.regs.bg_attr_lo, p.regs.bg_attr_hi)
                };
                assert_eq!(
                    state(&many),
                    state(&one),
                    "{n} shifts from {lo:#x} {hi:#x} {attr_lo:#x} {attr_hi:#x}"
                );
            }
        }
    }

    #[test]
    fn a_tile_shift_is_seven_shifts_a_shift_and_a_reload() {
        let mut seed = 0x8F1B_BCDC_BFA5_3E0Bu64;
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let (mut one, mut tile) = (Ppu::new(), Ppu::new());
            for ppu in [&mut one, &mut tile] {
                let r = &mut ppu.regs;
                (r.bg_pattern_lo, r.bg_pattern_hi) = (seed as u16, (seed >> 16) as u16);
                (r.bg_attr_lo, r.bg_attr_hi) = ((seed >> 32) as u16, (seed >> 48) as u16);
                (r.pattern_lo_latch, r.pattern_hi_latch) = ((seed >> 8) as u8, (seed >> 40) as u8);
                r.at_latch = (seed >> 29) as u8 & 3;
            }
            one.shift_background_by(7);
            one.shift_background();
            one.reload_background_shifters();
            let r = &tile.regs;
            let latches = [r.nt_latch, r.at_latch, r.pattern_lo_latch, r.pattern_hi_latch];
            let entering = reloaded_bytes(latches);
            let shifters: [u16; 4] =
                core::array::from_fn(|k| tile.background_shifters()[k] << 8 | u16::from(entering[k]));
            assert_eq!(shifters, one.background_shifters(), "from {seed:#x}");
        }
    }

    #[test]
    fn attribute_address_and_quadrant() {
        // nesdev "PPU scrolling": 0x23C0 | NN | (coarse Y / 4) << 3 | coarse X / 4.
        let v = 0x0C00 | (13 << 5) | 22; // nametable 3, coarse Y 13, coarse X 22
        assert_eq!(attribute_address(v), 0x2FC0 | (3 << 3) | 5);
        // Coarse Y 13 (bit 1 clear), coarse X 22 (bit 1 set): top-right quadrant, bits 2-3.
        assert_eq!(attribute_bits(v, 0b11_10_01_00), 0b01);
        // Coarse Y 14 (bit 1 set), coarse X 1 (bit 1 clear): bottom-left quadrant, bits 4-5.
        assert_eq!(attribute_bits((14 << 5) | 1, 0b11_10_01_00), 0b10);
    }
}
