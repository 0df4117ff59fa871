//! Sprites: secondary OAM clear and evaluation (dots 1-256 of visible lines), pattern fetches into the
//! eight output units (dots 257-320), and the units' pixel output (nesdev "PPU sprite evaluation",
//! "PPU rendering", "PPU OAM").

use super::{Ppu, PpuBus, PpuBusPeek, ctrl, status};

/// Bits of [`Ppu::sprite_pixel`]'s result besides the 4-bit palette entry.
pub(super) mod sprite_pixel {
    /// The sprite is behind the background (attribute bit 5).
    pub const BEHIND: u8 = 0x20;
    /// The pixel comes from output unit 0.
    pub const UNIT_0: u8 = 0x40;
}

impl Ppu {
    #[inline(always)]
    fn sprite_height(&self) -> u16 {
        if self.regs.ctrl & ctrl::SPRITE_16 != 0 { 16 } else { 8 }
    }

    /// One dot of dots 1-256 of a visible line: clear secondary OAM (1-64), then evaluate (65-256):
    /// odd dots read primary OAM at OAMADDR, even dots write secondary OAM or, once it holds 8
    /// sprites, read it instead and look for an overflow.
    #[inline(always)]
    pub(super) fn sprite_evaluation_dot(&mut self, dot: u16) {
        if dot <= 64 {
            // The clear reads as $FF on the OAM bus ($2004 returns $FF during 1-64).
            self.regs.oam_bus = 0xFF;
            if dot & 1 == 0 {
                self.secondary_oam[usize::from(dot / 2 - 1)] = 0xFF;
            }
            return;
        }
        if dot == 65 {
            self.start_evaluation();
        }
        if dot & 1 == 1 {
            self.regs.oam_bus = self.oam[usize::from(self.regs.oam_addr)];
        } else {
            self.evaluation_write(dot);
        }
    }

    /// Dot 65: evaluation starts with secondary OAM empty and sprite 0 not found.
    #[inline(always)]
    fn start_evaluation(&mut self) {
        let r = &mut self.regs;
        r.eval_secondary_addr = 0;
        r.eval_copy_left = 0;
        r.eval_done = 0;
        r.eval_sprite_0 = 0;
    }

    /// Dots `first..first + 8` (`first` = 1, 9, ..., 249) of sprite evaluation: exactly eight calls of
    /// [`Ppu::sprite_evaluation_dot`].
    #[inline(always)]
    pub(super) fn sprite_evaluation_tile(&mut self, first: u16) {
        if first + 7 <= 64 {
            // Clearing secondary OAM: the even dots of the tile write bytes (first + 1) / 2 - 1 onwards.
            self.regs.oam_bus = 0xFF;
            let start = usize::from(first / 2);
            self.secondary_oam[start..start + 4].fill(0xFF);
            return;
        }
        if first == 65 {
            self.start_evaluation();
        } else if self.regs.eval_done != 0 {
            // Every sprite seen: the four steps only move n (see `evaluation_write`), so the OAM
            // bus ends with the last byte read, or secondary OAM's first when it is full.
            let r = &mut self.regs;
            let last_read = r.oam_addr.wrapping_add(12);
            r.oam_addr = r.oam_addr.wrapping_add(16);
            r.oam_bus = if r.eval_secondary_addr >= 32 {
                self.secondary_oam[0]
            } else {
                self.oam[usize::from(last_read)]
            };
            return;
        }
        for step in 0..4 {
            // An odd dot reads primary OAM, the even dot after it acts on the byte.
            self.regs.oam_bus = self.oam[usize::from(self.regs.oam_addr)];
            self.evaluation_write(first + 2 * step + 1);
        }
    }

    /// True if any loaded output unit has a pixel in columns `x..x + 8`.
    #[inline(always)]
    pub(super) fn sprite_in_columns(&self, x: u16) -> bool {
        let r = &self.regs;
        let count = usize::from(r.sprite_count).min(8);
        r.sprite_x[..count].iter().any(|&sprite_x| (x + 7).wrapping_sub(u16::from(sprite_x)) < 15)
    }

    /// The even-dot half of an evaluation step, acting on the byte read on the odd dot before.
    #[inline(always)]
    fn evaluation_write(&mut self, dot: u16) {
        let height = self.sprite_height();
        let scanline = self.regs.scanline;
        let r = &mut self.regs;
        let value = r.oam_bus;
        let in_range = scanline.wrapping_sub(u16::from(value)) < height;
        if r.eval_done != 0 {
            // Step 4: n keeps incrementing; the copy of OAM[n][0] fails.
            r.oam_addr = r.oam_addr.wrapping_add(4);
            if r.eval_secondary_addr >= 32 {
                r.oam_bus = self.secondary_oam[0];
            }
            return;
        }
        let secondary_addr = usize::from(r.eval_secondary_addr);
        if secondary_addr < 32 {
            // Fewer than 8 sprites so far: the byte is written whether in range or not; only an
            // in-range sprite advances the secondary OAM pointer.
            self.secondary_oam[secondary_addr] = value;
            if r.eval_copy_left != 0 {
                r.eval_copy_left -= 1;
                r.eval_secondary_addr += 1;
                Self::advance_oam_byte(r);
            } else if in_range {
                if dot == 66 {
                    r.eval_sprite_0 = 1;
                }
                r.eval_copy_left = 3;
                r.eval_secondary_addr += 1;
                Self::advance_oam_byte(r);
            } else {
                Self::advance_oam_sprite(r);
            }
        } else {
            // Secondary OAM full: writes turn into reads of it.
            if r.eval_copy_left != 0 {
                r.eval_copy_left -= 1;
                Self::advance_oam_byte(r);
                if r.eval_copy_left == 0 {
                    r.eval_done = 1;
                }
            } else if in_range {
                r.set_sprite_flag(status::SPRITE_OVERFLOW, dot);
                r.eval_copy_left = 3;
                Self::advance_oam_byte(r);
            } else {
                // The hardware bug: n and m both increment (m without carry into n), so the next
                // "Y" read is a tile, attribute or X byte of the next sprite.
                let carry = r.oam_addr >= 0xFC;
                r.oam_addr = (r.oam_addr.wrapping_add(4) & 0xFC) | (r.oam_addr.wrapping_add(1) & 3);
                if carry {
                    r.eval_done = 1;
                }
            }
            r.oam_bus = self.secondary_oam[0];
        }
    }

    /// m += 1, carrying into n; all 64 sprites seen when n wraps.
    #[inline(always)]
    fn advance_oam_byte(r: &mut super::PpuRegs) {
        let (next, wrapped) = r.oam_addr.overflowing_add(1);
        r.oam_addr = next;
        if wrapped {
            r.eval_done = 1;
        }
    }

    /// n += 1 (m unchanged); all 64 sprites seen when n wraps.
    #[inline(always)]
    fn advance_oam_sprite(r: &mut super::PpuRegs) {
        let (next, wrapped) = r.oam_addr.overflowing_add(4);
        r.oam_addr = next;
        if wrapped {
            r.eval_done = 1;
        }
    }

    /// Dot 257: the units about to be loaded serve the next scanline; the pre-render line evaluates
    /// nothing, so scanline 0 never shows sprites.
    #[inline(always)]
    pub(super) fn start_sprite_fetches(&mut self, pre_render: bool) {
        let r = &mut self.regs;
        if pre_render {
            r.sprite_count = 0;
            r.sprite_0_in_unit_0 = 0;
        } else {
            r.sprite_count = r.eval_secondary_addr.min(32).div_ceil(4);
            r.sprite_0_in_unit_0 = r.eval_sprite_0;
        }
    }

    /// One dot of 257-320: eight slots of 8 dots, each a garbage nametable fetch, a garbage nametable
    /// fetch (attribute slot), pattern low, pattern high. Empty slots read secondary OAM's $FF bytes
    /// and fetch tile $FF, so mappers see the same A12 pattern as on hardware.
    #[inline(always)]
    pub(super) fn sprite_fetch_dot(&mut self, bus: &mut impl PpuBus, dot: u16) {
        let index = dot - 257;
        let slot = usize::from(index >> 3);
        let phase = index & 7;
        // The OAM bus shows Y, tile, attribute, then X for the rest of the slot.
        self.regs.oam_bus = self.secondary_oam[slot * 4 + usize::from(phase.min(3))];
        self.sprite_fetch(bus, slot, phase);
    }

    /// Phase `phase` (0-7) of the fetches of sprite slot `slot` (0-7).
    #[inline(always)]
    pub(super) fn sprite_fetch(&mut self, bus: &mut impl PpuBus, slot: usize, phase: u16) {
        let base = slot * 4;
        match phase {
            0 | 2 => bus.set_address(0x2000 | (self.regs.v & 0x0FFF)),
            1 => {
                bus.read(0x2000 | (self.regs.v & 0x0FFF));
            }
            3 => {
                bus.read(0x2000 | (self.regs.v & 0x0FFF));
                self.regs.sprite_attr[slot] = self.secondary_oam[base + 2];
                self.regs.sprite_x[slot] = self.secondary_oam[base + 3];
            }
            4 => bus.set_address(self.sprite_pattern_address(base)),
            5 => {
                let data = bus.read(self.sprite_pattern_address(base));
                self.regs.sprite_pattern_lo[slot] = self.unit_pattern(slot, data);
            }
            6 => bus.set_address(self.sprite_pattern_address(base) | 8),
            _ => {
                let data = bus.read(self.sprite_pattern_address(base) | 8);
                self.regs.sprite_pattern_hi[slot] = self.unit_pattern(slot, data);
            }
        }
    }

    /// The eight dots of sprite slot `slot` where nothing observes the fetches (see
    /// [`PpuBus::fetches_observed`]): the unit's latches and pattern bytes, without the address-only
    /// dots and the garbage nametable reads, whose data is unused.
    #[inline(always)]
    pub(super) fn sprite_fetch_unobserved(&mut self, bus: &impl PpuBusPeek, slot: usize) {
        let base = slot * 4;
        self.regs.sprite_attr[slot] = self.secondary_oam[base + 2];
        self.regs.sprite_x[slot] = self.secondary_oam[base + 3];
        let pattern = self.sprite_pattern_address(base);
        let (lo, hi) = bus.peek_pair(pattern, pattern | 8);
        self.regs.sprite_pattern_lo[slot] = self.unit_pattern(slot, lo);
        self.regs.sprite_pattern_hi[slot] = self.unit_pattern(slot, hi);
    }

    /// A fetched pattern byte as the unit holds it: flipped for horizontal flip, empty for a slot
    /// beyond the sprites found.
    #[inline(always)]
    fn unit_pattern(&self, slot: usize, data: u8) -> u8 {
        if slot >= usize::from(self.regs.sprite_count) {
            0
        } else if self.regs.sprite_attr[slot] & 0x40 != 0 {
            data.reverse_bits()
        } else {
            data
        }
    }

    /// Low-plane pattern address of the sprite in secondary OAM at `base`, for the row of the next
    /// scanline it covers (nesdev "PPU OAM": byte 1 bit 0 picks the table of 8x16 sprites).
    #[inline(always)]
    fn sprite_pattern_address(&self, base: usize) -> u16 {
        let y = self.secondary_oam[base];
        let tile = self.secondary_oam[base + 1];
        let attr = self.secondary_oam[base + 2];
        let row = self.regs.scanline.wrapping_sub(u16::from(y));
        if self.regs.ctrl & ctrl::SPRITE_16 != 0 {
            let mut row = row & 15;
            if attr & 0x80 != 0 {
                row = 15 - row;
            }
            let table = u16::from(tile & 1) << 12;
            let tile = u16::from(tile & 0xFE) + (row >> 3);
            table | (tile << 4) | (row & 7)
        } else {
            let mut row = row & 7;
            if attr & 0x80 != 0 {
                row = 7 - row;
            }
            let table = u16::from(self.regs.ctrl & ctrl::SPRITE_TABLE) << 9;
            table | (u16::from(tile) << 4) | row
        }
    }

    /// The frontmost opaque sprite pixel at `x`: palette number x 4 + pixel (bits 0-3) plus the
    /// [`sprite_pixel`] flags; 0 when every unit is transparent there.
    #[inline(always)]
    pub(super) fn sprite_pixel(&self, x: u16) -> u8 {
        let r = &self.regs;
        let count = usize::from(r.sprite_count).min(8);
        for slot in 0..count {
            let offset = x.wrapping_sub(u16::from(r.sprite_x[slot]));
            if offset < 8 {
                let bit = 7 - offset;
                let pixel = (((r.sprite_pattern_hi[slot] >> bit) & 1) << 1)
                    | ((r.sprite_pattern_lo[slot] >> bit) & 1);
                if pixel != 0 {
                    let attr = r.sprite_attr[slot];
                    let unit_0 =
                        if slot == 0 && r.sprite_0_in_unit_0 != 0 { sprite_pixel::UNIT_0 } else { 0 };
                    return ((attr & 3) << 2) | pixel | (attr & sprite_pixel::BEHIND) | unit_0;
                }
            }
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_bus::FlatBus;
    use super::super::{Ppu, status};

    /// A PPU with rendering on, `oam` loaded, run up to `scanline`, dot `dot` of the second frame.
    fn run_to(oam: [u8; 256], mask: u8, bus: &mut FlatBus, scanline: u16, dot: u16) -> Ppu {
        let mut ppu = Ppu::new();
        ppu.regs.reset_warmup = 0;
        ppu.regs.status = 0;
        ppu.regs.mask = mask;
        ppu.oam = oam;
        // Through the first pre-render line, then to the position.
        while ppu.scanline() != 0 || ppu.dot() != 0 {
            ppu.tick_dot(bus);
        }
        while ppu.scanline() != scanline || ppu.dot() != dot {
            ppu.tick_dot(bus);
        }
        ppu
    }

    /// OAM with every byte $C8 (Y = 200: off every line below) and sprites 0-7 at Y = 10.
    fn eight_on_line_10() -> [u8; 256] {
        let mut oam = [200; 256];
        for sprite in 0..8 {
            oam[sprite * 4] = 10;
        }
        oam
    }

    #[test]
    fn nine_sprites_on_a_line_set_overflow_eight_do_not() {
        let mut bus = FlatBus::new();
        let ppu = run_to(eight_on_line_10(), 0x18, &mut bus, 11, 0);
        assert_eq!(ppu.regs.visible_status() & status::SPRITE_OVERFLOW, 0);
        let mut oam = eight_on_line_10();
        oam[8 * 4] = 5; // in range on line 10 too (lines 5-12)
        let ppu = run_to(oam, 0x18, &mut bus, 11, 0);
        assert_ne!(ppu.regs.visible_status() & status::SPRITE_OVERFLOW, 0);
        // Cleared at dot 1 of the pre-render line.
        let mut ppu = ppu;
        while ppu.scanline() != 261 || ppu.dot() != 2 {
            ppu.tick_dot(&mut bus);
        }
        assert_eq!(ppu.regs.visible_status() & status::SPRITE_OVERFLOW, 0);
    }

    #[test]
    fn overflow_search_walks_diagonally_after_eight_sprites() {
        // nesdev "PPU sprite evaluation": once 8 sprites are found, an out-of-range "Y" increments
        // both n and m, so the next byte examined is sprite 9's tile index.
        let mut bus = FlatBus::new();
        let mut oam = eight_on_line_10();
        oam[9 * 4 + 1] = 10; // sprite 9's tile byte looks in range: false positive
        let ppu = run_to(oam, 0x18, &mut bus, 11, 0);
        assert_ne!(ppu.regs.visible_status() & status::SPRITE_OVERFLOW, 0);

        let mut oam = eight_on_line_10();
        oam[9 * 4] = 10; // sprite 9 really is on the line, but its Y is never examined
        let ppu = run_to(oam, 0x18, &mut bus, 11, 0);
        assert_eq!(ppu.regs.visible_status() & status::SPRITE_OVERFLOW, 0);
    }

    #[test]
    fn evaluation_copies_in_range_sprites_to_secondary_oam() {
        let mut bus = FlatBus::new();
        let mut oam = [0xF0; 256];
        oam[5 * 4..5 * 4 + 4].copy_from_slice(&[20, 0x42, 0x03, 99]);
        let ppu = run_to(oam, 0x18, &mut bus, 20, 258);
        assert_eq!(ppu.secondary_oam[..4], [20, 0x42, 0x03, 99]);
        // The rest stays $FF from the clear, except the next Y slot, which holds the last Y examined.
        assert_eq!(ppu.secondary_oam[4], 0xF0);
        assert!(ppu.secondary_oam[5..].iter().all(|&b| b == 0xFF));
        assert_eq!(ppu.regs.sprite_count, 1);
        assert_eq!(ppu.regs.sprite_0_in_unit_0, 0);
    }

    /// Opaque background everywhere (tile 0 solid) and sprite 0 solid at (x, y = 20).
    fn sprite_0_hit_at(x: u8, mask: u8) -> bool {
        let mut bus = FlatBus::new();
        bus.0[..16].fill(0xFF);
        let mut oam = [0xF0; 256];
        oam[..4].copy_from_slice(&[20, 0, 0, x]);
        let mut ppu = run_to(oam, mask, &mut bus, 30, 0);
        let hit = ppu.regs.visible_status() & status::SPRITE_0_HIT != 0;
        while ppu.scanline() != 261 || ppu.dot() != 2 {
            ppu.tick_dot(&mut bus);
        }
        assert_eq!(ppu.regs.visible_status() & status::SPRITE_0_HIT, 0, "cleared on the pre-render line");
        hit
    }

    #[test]
    fn sprite_flags_show_one_dot_after_the_dot_that_sets_them() {
        // Sprite 0 at x = 100 on line 21 over an opaque background: pixel 100 is output on dot 101.
        let mut bus = FlatBus::new();
        bus.0[..16].fill(0xFF);
        let mut oam = [0xF0; 256];
        oam[..4].copy_from_slice(&[20, 0, 0, 100]);
        let mut ppu = run_to(oam, 0x1E, &mut bus, 21, 102);
        assert_eq!(ppu.regs.visible_status() & status::SPRITE_0_HIT, 0, "dot 101 set it");
        ppu.tick_dot(&mut bus);
        assert_ne!(ppu.regs.visible_status() & status::SPRITE_0_HIT, 0, "shows once dot 102 is done");
    }

    #[test]
    fn sprite_0_hit_and_its_exclusions() {
        // nesdev "PPU OAM" (sprite 0 hits).
        assert!(sprite_0_hit_at(100, 0x1E));
        assert!(sprite_0_hit_at(254, 0x1E), "x = 254 overlaps at 254");
        assert!(!sprite_0_hit_at(255, 0x1E), "never at x = 255");
        assert!(sprite_0_hit_at(0, 0x1E));
        assert!(!sprite_0_hit_at(0, 0x1A), "sprites clipped in the left 8 pixels");
        assert!(!sprite_0_hit_at(0, 0x1C), "background clipped in the left 8 pixels");
        assert!(sprite_0_hit_at(1, 0x18), "x = 1 reaches pixel 8 past the clip");
        assert!(!sprite_0_hit_at(100, 0x10), "background disabled");
        assert!(!sprite_0_hit_at(100, 0x08), "sprites disabled");
    }
}
