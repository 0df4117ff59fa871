//! Sprites: secondary OAM clear and evaluation (dots 1-256 of visible lines), pattern fetches into the
//! eight output units (dots 257-320), and the units' pixel output (nesdev "PPU sprite evaluation",
//! "PPU rendering", "PPU OAM").

use super::background::SPREAD;
use super::{Ppu, PpuBus, PpuBusPeek, ctrl, status};

/// Bits of [`Ppu::sprite_pixel`]'s result besides the 4-bit palette entry.
pub(super) mod sprite_pixel {
    /// The sprite is behind the background (attribute bit 5).
    pub const BEHIND: u8 = 0x20;
    /// The pixel comes from output unit 0.
    pub const UNIT_0: u8 = 0x40;
}

/// Values of `PpuRegs::sprite_units_off`: what the sprite output units did since rendering was
/// disabled, as far as it matters when it is enabled again.
pub(super) mod sprite_units {
    /// Rendering is enabled (or nothing is owed).
    pub const OFF_NONE: u8 = 0;
    /// Disabled on this line at dots 0-256: the X counters still run, the shifters stand.
    pub const OFF_VISIBLE: u8 = 1;
    /// Disabled on this line at dots 257-339, before dot 339.
    pub const OFF_HBLANK: u8 = 2;
    /// A line ended (or dot 339 passed) while disabled: every unit has counted to zero and is
    /// drawing, so it draws from the first pixel rendered.
    pub const OFF_LINE_ENDED: u8 = 3;
    /// Disabled on this line at dot 340, after dot 339 armed the counters for the next line.
    pub const OFF_AFTER_339: u8 = 4;
}

impl Ppu {
    /// Rendering was just disabled (as the pipeline sees PPUMASK), before the current dot.
    ///
    /// The units are modelled by comparison: unit i outputs bit `x - sprite_x[i]` of its pattern at
    /// pixel x. On hardware each unit has an X down-counter and pattern shifters (nesdev "PPU
    /// rendering"; AccuracyCoin "Stale Sprite Shift Regs" documents the rest): the counter is loaded
    /// with X by the unit's fetch, armed by dot 339 while rendering, and decrements on each pixel
    /// until 0, rendering enabled or not; from then the unit draws, its shifters shifting once per
    /// pixel, but only while rendering (never in H-Blank or forced blank). So while rendering is off
    /// the comparison stops being true for a unit that has started drawing; it is restored at the
    /// next enable ([`Ppu::restart_sprite_units`]). Here: units that drew some of their pixels
    /// drop them from their pattern.
    pub(super) fn stop_sprite_units(&mut self) {
        let r = &mut self.regs;
        // First pixels from the odd-frame skip not drawn yet are lost.
        r.sprite_first_lo = 0;
        r.sprite_first_hi = 0;
        let dot = r.dot;
        if r.scanline >= 240 && r.scanline != self.timing.pre_render_scanline {
            // The units finished on line 239 or 240 (counted down, drawn out).
            r.sprite_units_off = sprite_units::OFF_LINE_ENDED;
            return;
        }
        if dot == 340 {
            r.sprite_units_off = sprite_units::OFF_AFTER_339;
            return;
        }
        // The next pixel the units would have drawn, and the first unit whose fetches (dots 257 + 8 x
        // slot to 264 + 8 x slot) are not complete: all of them on dots 0-256.
        let (next_pixel, first_stale) =
            if dot <= 256 { (dot.saturating_sub(1), 0) } else { (256, usize::from((dot - 257) / 8).min(8)) };
        for slot in first_stale..8 {
            let start = u16::from(r.sprite_x[slot]);
            if start < next_pixel {
                let drawn = u32::from(next_pixel - start);
                r.sprite_pattern_lo[slot] = r.sprite_pattern_lo[slot].checked_shl(drawn).unwrap_or(0);
                r.sprite_pattern_hi[slot] = r.sprite_pattern_hi[slot].checked_shl(drawn).unwrap_or(0);
            }
            if dot <= 256 {
                // A unit drawing stands at the next pixel; one counting keeps its start.
                r.sprite_x[slot] = start.max(next_pixel) as u8;
            } else {
                // Counted down to 0 during the line, not reloaded: dot 339 arms a counter of 0, so
                // the unit draws from pixel 0 of the next line.
                r.sprite_x[slot] = 0;
            }
        }
        r.sprite_units_off = if dot <= 256 { sprite_units::OFF_VISIBLE } else { sprite_units::OFF_HBLANK };
    }

    /// Rendering was just enabled (as the pipeline sees PPUMASK), before the current dot: the units' starts as the counters and shifters left them (see
    /// [`Ppu::stop_sprite_units`]). Units the fetches of this line load later start over anyway.
    pub(super) fn restart_sprite_units(&mut self) {
        let r = &mut self.regs;
        let dot = r.dot;
        let visible = r.is_rendering_line(self.timing.pre_render_scanline);
        let off = core::mem::replace(&mut r.sprite_units_off, sprite_units::OFF_NONE);
        // A unit drawing (halted counter) continues at the first pixel rendered.
        let first_pixel = if visible && (1..=256).contains(&dot) { dot - 1 } else { 0 };
        let start_at = match off {
            sprite_units::OFF_VISIBLE if dot <= 256 => {
                // Same line: units whose counter reached 0 meanwhile draw from here.
                for start in &mut r.sprite_x {
                    *start = (*start).max(first_pixel as u8);
                }
                return;
            }
            // Counted down by the end of the line; dot 339 arms a counter of 0.
            sprite_units::OFF_VISIBLE => 0,
            // Dot 339 still to come: the units loaded before the disable count from their X, the
            // others were set to start at 0 then.
            sprite_units::OFF_HBLANK if dot <= 339 => return,
            // Dot 339 passed with rendering off: every unit is drawing.
            sprite_units::OFF_HBLANK | sprite_units::OFF_LINE_ENDED => first_pixel,
            // `OFF_NONE`, or `OFF_AFTER_339` on the same dot 340: nothing changed.
            _ => return,
        };
        r.sprite_x = [start_at as u8; 8];
    }

    /// Rendering was just disabled (as the pipeline sees PPUMASK), before the current dot: on a line
    /// that renders, the secondary OAM address the sprite circuitry stands at seeds an OAM
    /// corruption, owed until rendering runs again on such a line ([`Ppu::corrupt_oam`]).
    ///
    /// AccuracyCoin "OAM Corruption" (its source documents the mechanism) and nesdev "PPU OAM" (OAM
    /// corruption on disabling rendering): the address counts the clear's writes on dots 1-64 (one
    /// per even dot), the copies of in-range bytes on dots 65-256 (rounded up to a whole sprite), and
    /// the reads of the sprite fetches on dots 257-320 (after Y, tile and attribute, then after the
    /// slot's last dot); it is back at 0 after dot 320, where the corruption copies row 0 onto itself.
    /// The pre-render line copies nothing into secondary OAM on dots 65-256: no corruption seeded there.
    ///
    /// The corruption happens when rendering is enabled during VBlank (on the pre-render line's first
    /// dot, [`Ppu::corrupt_oam`]). Enabled again on a rendering line, it is dropped: the author's
    /// emulator (TriCNES) suppresses it then on some CPU/PPU alignments, and blargg's
    /// sprite_overflow_tests "5.Emulator" (test 3, which passes on hardware) disables rendering on
    /// dot 13 of line 126 and enables it on line 138, where corrupting row 7 would take two sprites
    /// off line 230 and the overflow it expects there.
    pub(super) fn seed_oam_corruption(&mut self) {
        let r = &mut self.regs;
        if !r.is_rendering_line(self.timing.pre_render_scanline) {
            return;
        }
        // The last dot processed with rendering on.
        let last = r.dot.wrapping_sub(1);
        let address = match last {
            1..=64 => last / 2,
            65..=256 if r.scanline != self.timing.pre_render_scanline => {
                (u16::from(r.eval_secondary_addr.min(32)) + 3) & !3
            }
            257..=320 => {
                let index = last - 257;
                let phase = index & 7;
                (index & !7) / 2 + if phase == 7 { 4 } else { (phase + 1).min(3) }
            }
            _ => 0,
        };
        // A seed of 0 replaces an older one (row 0 copied onto itself).
        r.oam_corruption = super::OAM_CORRUPTION_PENDING | (address & 31) as u8;
    }

    /// The first dot rendering runs on a line that renders: an owed corruption (see
    /// [`Ppu::seed_oam_corruption`]) copies OAM row 0 (bytes 0-7) over the row the seed names, and
    /// secondary OAM byte 0 over the byte at the seed.
    #[inline(always)]
    pub(super) fn corrupt_oam(&mut self) {
        let owed = self.regs.oam_corruption;
        if owed & super::OAM_CORRUPTION_PENDING == 0 {
            return;
        }
        self.regs.oam_corruption = 0;
        let row = usize::from(owed & 31);
        self.tables_digest_stale = true;
        self.in_range.forget();
        let (first, rest) = self.oam.split_at_mut(8);
        if row != 0 {
            rest[row * 8 - 8..row * 8].copy_from_slice(first);
        }
        self.secondary_oam[row] = self.secondary_oam[0];
    }

    /// The odd-frame skip of the pre-render line's dot 340 with rendering on: each unit loaded there
    /// draws its first pixel at x = 0 of scanline 0 and the other seven from its X, one pixel left
    /// (AccuracyCoin "Sprites On Scanline 0", composite PPUs: one frame in two shows sprite 0's
    /// single pixel at x = 0 instead of at its X). The first pixels wait in `sprite_first_lo`/`_hi`.
    pub(super) fn sprite_units_skip(&mut self) {
        let r = &mut self.regs;
        let (mut lo, mut hi) = (0u8, 0u8);
        for slot in 0..usize::from(r.sprite_count).min(8) {
            lo |= (r.sprite_pattern_lo[slot] >> 7) << slot;
            hi |= (r.sprite_pattern_hi[slot] >> 7) << slot;
            r.sprite_pattern_lo[slot] <<= 1;
            r.sprite_pattern_hi[slot] <<= 1;
        }
        r.sprite_first_lo = lo;
        r.sprite_first_hi = hi;
    }

    /// The line ends (or the odd-frame skip jumps to the next one) while rendering is off.
    #[inline(always)]
    pub(super) fn sprite_units_line_end(&mut self) {
        let r = &mut self.regs;
        r.sprite_units_off = match r.sprite_units_off {
            sprite_units::OFF_NONE => return,
            // Armed at dot 339: the new line counts from the units' X.
            sprite_units::OFF_AFTER_339 => sprite_units::OFF_VISIBLE,
            _ => sprite_units::OFF_LINE_ENDED,
        };
    }

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

    /// Dots `first..first + 8 * tiles` of sprite evaluation (`first` = 1, 9, ..., the tiles within
    /// dots 1-256): exactly the dots' [`Ppu::sprite_evaluation_dot`] calls. A run of sprites out
    /// of range while secondary OAM has room, the common case, is one step found from the mask of
    /// the sprites in range (`InRangeSprites`): each dot step of it only writes the Y read to the
    /// same secondary OAM byte and moves n on.
    #[inline(always)]
    pub(super) fn sprite_evaluation_tiles(&mut self, first: u16, tiles: u16) {
        let end = first + 8 * tiles;
        let mut dot = first;
        // Dots 1-64 clear secondary OAM: even dot d writes byte d / 2 - 1.
        let clear_end = end.min(65);
        if dot < clear_end {
            self.regs.oam_bus = 0xFF;
            self.secondary_oam[usize::from(dot / 2)..usize::from(clear_end / 2)].fill(0xFF);
            dot = clear_end;
        }
        if dot == 65 && dot < end {
            self.start_evaluation();
        }
        // Steps (an odd dot's read, the even dot's act) from the one whose even dot is `dot + 1`.
        let mut steps = (end - dot) / 2;
        let height = self.sprite_height();
        while steps > 0 {
            let r = &mut self.regs;
            if r.eval_done != 0 {
                r.oam_addr = r.oam_addr.wrapping_add((4 * steps) as u8);
                r.oam_bus = self.secondary_oam[usize::from(r.eval_secondary_addr & 31)];
                return;
            }
            if r.eval_secondary_addr < 32 && r.eval_copy_left == 0 {
                let (line, addr) = (r.scanline, r.oam_addr);
                let (sprite, byte) = (usize::from(addr / 4), usize::from(addr % 4));
                // The sprites from n on out of range, up to the first in range, the end of OAM
                // (n wraps: all 64 seen) or the steps left: the mask the $2002 polls keep too.
                let in_range = self.in_range.mask(&self.oam, line, height, byte);
                let out_of_range = (in_range >> sprite).trailing_zeros() as usize;
                let skipped = out_of_range.min(64 - sprite).min(usize::from(steps));
                if skipped > 0 {
                    let y = self.oam[usize::from(addr) + 4 * (skipped - 1)];
                    let r = &mut self.regs;
                    r.oam_addr = addr.wrapping_add((4 * skipped) as u8);
                    if sprite + skipped == 64 {
                        r.eval_done = 1;
                    }
                    r.oam_bus = y;
                    self.secondary_oam[usize::from(r.eval_secondary_addr)] = y;
                    steps -= skipped as u16;
                    dot += 2 * skipped as u16;
                    continue;
                }
            }
            self.evaluation_step(dot + 1);
            steps -= 1;
            dot += 2;
        }
    }

    /// An odd dot reads primary OAM, the even dot `dot` after it acts on the byte.
    #[inline(always)]
    fn evaluation_step(&mut self, dot: u16) {
        self.regs.oam_bus = self.oam[usize::from(self.regs.oam_addr)];
        self.evaluation_write(dot);
    }

    /// Evaluation's test of a byte read as a sprite's Y: the sprite covers the current scanline.
    #[inline(always)]
    fn y_in_range(&self, y: u8) -> bool {
        self.regs.scanline.wrapping_sub(u16::from(y)) < self.sprite_height()
    }

    /// Bit `t`: a loaded output unit has a pixel in columns `8t..8t + 8` (bits 0-32).
    #[inline(always)]
    pub(super) fn sprite_tiles(&self) -> u64 {
        let r = &self.regs;
        let count = usize::from(r.sprite_count).min(8);
        // A unit's first column's tile and its last one's.
        r.sprite_x[..count].iter().fold(0, |tiles, &x| tiles | 1 << (x >> 3) | 1 << ((u32::from(x) + 7) >> 3))
    }

    /// What [`Ppu::sprite_pixel`] returns at `x..x + 8` (`x` > 0: not the odd-frame skip's first
    /// pixels), one byte each, the first pixel's in the low byte: each unit's eight pixels placed at
    /// once, from the back unit to the front one, so that the front one's opaque pixels win.
    #[inline(always)]
    pub(super) fn tile_sprite_pixels(&self, x: u16) -> u64 {
        const LOW_BITS: u64 = 0x0101_0101_0101_0101;
        let r = &self.regs;
        let count = usize::from(r.sprite_count).min(8);
        let mut pixels = 0u64;
        for slot in (0..count).rev() {
            // The unit's pixel i is at column X + i: tile pixel p shows its pixel p + offset.
            let offset = i32::from(x) - i32::from(r.sprite_x[slot]);
            if !(-7..=7).contains(&offset) {
                continue;
            }
            let unit = SPREAD[usize::from(r.sprite_pattern_lo[slot])]
                | SPREAD[usize::from(r.sprite_pattern_hi[slot])] << 1;
            let placed = if offset >= 0 { unit >> (8 * offset) } else { unit << (8 * -offset) };
            let opaque = ((placed | placed >> 1) & LOW_BITS) * 0xFF;
            let attr = r.sprite_attr[slot];
            let unit_0 = if slot == 0 && r.sprite_0_in_unit_0 != 0 { sprite_pixel::UNIT_0 } else { 0 };
            let flags = ((attr & 3) << 2) | (attr & sprite_pixel::BEHIND) | unit_0;
            pixels = (pixels & !opaque) | ((placed | (LOW_BITS * u64::from(flags))) & opaque);
        }
        pixels
    }

    /// The even-dot half of an evaluation step, acting on the byte read on the odd dot before.
    #[inline(always)]
    fn evaluation_write(&mut self, dot: u16) {
        let value = self.regs.oam_bus;
        let in_range = self.y_in_range(value);
        let r = &mut self.regs;
        if r.eval_done != 0 {
            // Step 4: n keeps incrementing; the copy of OAM[n][0] fails, and the write turns into a
            // read of secondary OAM at its address (0 once full): AccuracyCoin "$2004 Stress Test"
            // reads it on every even dot after the 64 sprites, the last Y written when fewer than 8
            // were found.
            r.oam_addr = r.oam_addr.wrapping_add(4);
            r.oam_bus = self.secondary_oam[usize::from(r.eval_secondary_addr & 31)];
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
                    // The overflow sprite read: m goes back to 0 (n unchanged), then step 4 moves n.
                    // AccuracyCoin "$2004 Stress Test" reads OAM[n][0] on the next odd dot.
                    r.eval_done = 1;
                    r.oam_addr &= 0xFC;
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

    /// True when the rest of this line's sprite evaluation (dots 65-256 of a visible line) can find
    /// fewer than 8 sprites in all, so it can never fill secondary OAM and go looking for an
    /// overflow: the sprites found so far, plus every Y byte the evaluation will still read that
    /// is in range (they sit 4 bytes apart from the next one on, up to the end of OAM; primary OAM
    /// cannot change while rendering, and the line and the sprite height are constant until a
    /// register access). Only for a position on a visible line with rendering on.
    pub(super) fn evaluation_finds_fewer_than_8(&mut self) -> bool {
        let r = &self.regs;
        // Evaluation starts on dot 65 (with nothing found, at OAMADDR, which dots 1-64 leave alone).
        let started = r.dot > 65;
        if started && r.eval_done != 0 {
            return true;
        }
        let (found, next_y) = if started {
            if r.eval_secondary_addr >= 32 {
                return false;
            }
            // Mid-copy, the sprite being copied is found; its remaining bytes come before the next Y.
            (
                usize::from(r.eval_secondary_addr).div_ceil(4),
                usize::from(r.oam_addr) + usize::from(r.eval_copy_left),
            )
        } else {
            (0, usize::from(r.oam_addr))
        };
        let (line, height) = (self.regs.scanline, self.sprite_height());
        let mask = self.in_range.mask(&self.oam, line, height, next_y % 4);
        let ahead = mask.checked_shr((next_y / 4) as u32).unwrap_or(0).count_ones() as usize;
        found + ahead < 8
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

    /// Dot 257: the units about to be loaded serve the next scanline.
    ///
    /// The pre-render line evaluates nothing: its fetches load the units from what secondary OAM
    /// still holds (line 239's sprites, or those of the line where rendering was last disabled), each
    /// slot only if in range of the line counter's low 8 bits, 261 & 255 = 5, and the latch of sprite
    /// 0 found keeps its last evaluation's value (AccuracyCoin "Sprites On Scanline 0", after nesdev
    /// forum thread 26291). Normally nothing there is in range of line 5, so scanline 0 shows no sprites.
    #[inline(always)]
    pub(super) fn start_sprite_fetches(&mut self, pre_render: bool) {
        // First pixels left from the odd-frame skip (x = 0 is long past).
        self.regs.sprite_first_lo = 0;
        self.regs.sprite_first_hi = 0;
        if pre_render {
            let last_in_range = (0..8).rev().find(|&slot| self.slot_in_range(slot));
            let r = &mut self.regs;
            r.sprite_count = last_in_range.map_or(0, |slot| slot as u8 + 1);
            r.sprite_0_in_unit_0 = r.eval_sprite_0;
        } else {
            let r = &mut self.regs;
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

    /// True when the sprite in secondary OAM slot `slot` covers the current line (by its low 8 bits,
    /// without wrapping: Y = $FF never covers line 5).
    #[inline(always)]
    fn slot_in_range(&self, slot: usize) -> bool {
        let y = u16::from(self.secondary_oam[slot * 4]);
        (self.regs.scanline & 0xFF).wrapping_sub(y) < self.sprite_height()
    }

    /// A fetched pattern byte as the unit holds it: flipped for horizontal flip, empty for a slot
    /// beyond the sprites found.
    #[inline(always)]
    pub(super) fn unit_pattern(&self, slot: usize, data: u8) -> u8 {
        if slot >= usize::from(self.regs.sprite_count)
            || (self.regs.scanline == self.timing.pre_render_scanline && !self.slot_in_range(slot))
        {
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
    pub(super) fn sprite_pattern_address(&self, base: usize) -> u16 {
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
        if x == 0 && r.sprite_first_lo | r.sprite_first_hi != 0 {
            return self.sprite_pixel_after_skip();
        }
        let count = usize::from(r.sprite_count).min(8);
        for slot in 0..count {
            let offset = x.wrapping_sub(u16::from(r.sprite_x[slot]));
            if offset < 8 {
                let bit = 7 - offset;
                let pixel = (((r.sprite_pattern_hi[slot] >> bit) & 1) << 1)
                    | ((r.sprite_pattern_lo[slot] >> bit) & 1);
                if pixel != 0 {
                    return self.sprite_pixel_of(slot, pixel);
                }
            }
        }
        0
    }

    /// [`Ppu::sprite_pixel`] at x = 0 of scanline 0 after the odd-frame skip: units with a first
    /// pixel waiting (see [`Ppu::sprite_units_skip`]) draw it here instead of their pattern.
    #[cold]
    #[inline(never)]
    fn sprite_pixel_after_skip(&self) -> u8 {
        let r = &self.regs;
        let first = r.sprite_first_lo | r.sprite_first_hi;
        let count = usize::from(r.sprite_count).min(8);
        for slot in 0..count {
            let pixel = if (first >> slot) & 1 != 0 {
                (((r.sprite_first_hi >> slot) & 1) << 1) | ((r.sprite_first_lo >> slot) & 1)
            } else if r.sprite_x[slot] == 0 {
                (((r.sprite_pattern_hi[slot] >> 7) & 1) << 1) | ((r.sprite_pattern_lo[slot] >> 7) & 1)
            } else {
                0
            };
            if pixel != 0 {
                return self.sprite_pixel_of(slot, pixel);
            }
        }
        0
    }

    /// The [`Ppu::sprite_pixel`] result for the opaque `pixel` (1-3) of unit `slot`.
    #[inline(always)]
    fn sprite_pixel_of(&self, slot: usize, pixel: u8) -> u8 {
        let r = &self.regs;
        let attr = r.sprite_attr[slot];
        let unit_0 = if slot == 0 && r.sprite_0_in_unit_0 != 0 { sprite_pixel::UNIT_0 } else { 0 };
        ((attr & 3) << 2) | pixel | (attr & sprite_pixel::BEHIND) | unit_0
    }
}

/// Which sprites' byte `k` (0-3) is in range of each line: the masks sprite evaluation skips by
/// (once a line) and [`Ppu::evaluation_finds_fewer_than_8`] counts, which a $2002 poll asks for at
/// every read (ppu_race: about 8% of a frame), kept for one sprite height and byte while primary
/// OAM stays as it was. Derived, not state: whatever writes OAM forgets it
/// ([`InRangeSprites::forget`]).
#[derive(Debug, Clone)]
pub(crate) struct InRangeSprites {
    /// Height and byte the masks are for, with bit 0 set; 0 when nothing is kept.
    key: u32,
    /// Bit i of entry `line`: sprite i's byte is in range of `line`. A byte (up to 255) plus a
    /// height (up to 16) reaches line 270 at most: every later line's mask is 0.
    lines: [u64; IN_RANGE_LINES],
}

/// The lines [`InRangeSprites`] keeps a mask for.
const IN_RANGE_LINES: usize = 256 + 16;

impl Default for InRangeSprites {
    fn default() -> Self {
        InRangeSprites { key: 0, lines: [0; IN_RANGE_LINES] }
    }
}

impl InRangeSprites {
    /// The mask for `line`, sprites `height` lines high and byte `byte` of each sprite.
    #[inline]
    fn mask(&mut self, oam: &[u8; 256], line: u16, height: u16, byte: usize) -> u64 {
        let key = u32::from(height) << 8 | (byte as u32) << 1 | 1;
        if key != self.key {
            self.rebuild(oam, height, byte);
            self.key = key;
        }
        self.lines.get(usize::from(line)).copied().unwrap_or(0)
    }

    /// Every line's mask: a sprite whose byte is `y` is in range of lines `y..y + height`.
    #[inline(never)]
    fn rebuild(&mut self, oam: &[u8; 256], height: u16, byte: usize) {
        self.lines = [0; IN_RANGE_LINES];
        for (index, sprite) in oam.chunks_exact(4).enumerate() {
            let y = usize::from(sprite[byte & 3]);
            for mask in self.lines.iter_mut().skip(y).take(usize::from(height)) {
                *mask |= 1 << index;
            }
        }
    }

    /// OAM changed.
    #[inline]
    pub(crate) fn forget(&mut self) {
        self.key = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_bus::{FlatBus, random_below};
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
    fn the_oam_bus_after_evaluation_has_seen_every_sprite() {
        // AccuracyCoin "$2004 Stress Test". One sprite in range of line 20 (copied to secondary OAM
        // bytes 0-3); every other Y, the last one $33, goes to byte 4. After all 64 sprites, the
        // even dots' failed copy reads secondary OAM byte 4.
        let mut bus = FlatBus::new();
        let mut oam = [0xF0; 256];
        oam[5 * 4] = 20;
        oam[63 * 4] = 0x33;
        let ppu = run_to(oam, 0x18, &mut bus, 20, 251);
        assert_eq!(ppu.regs.oam_bus, 0x33);

        // Eight in range, then the diagonal search finds sprite 11's X byte (m = 3) in range: the
        // overflow sprite's three bytes are read from sprite 12 (m = 0-2), then m goes back to 0.
        let mut oam = eight_on_line_10();
        for sprite in 8..64 {
            oam[sprite * 4..sprite * 4 + 4].copy_from_slice(&[0xF0; 4]);
        }
        oam[11 * 4 + 3] = 10;
        oam[12 * 4..12 * 4 + 4].copy_from_slice(&[0x55, 0x56, 0x57, 0x58]);
        oam[13 * 4] = 0x77;
        let mut ppu = run_to(oam, 0x18, &mut bus, 10, 144);
        assert_eq!(ppu.regs.oam_bus, 0x55, "dot 143 reads sprite 12's Y again");
        ppu.tick_dot(&mut bus);
        ppu.tick_dot(&mut bus);
        assert_eq!(ppu.regs.oam_bus, 0x77, "dot 145 reads sprite 13's Y");
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

    /// Sprite 0 (tile `tile`) at (x, y = 20) over an opaque background, rendering on; rendering is
    /// disabled at (`off_line`, `off_dot`) and enabled again at (21, `on_dot`): the pixel of the hit.
    fn hit_after_forced_blank(tile: u8, x: u8, off_line: u16, off_dot: u16, on_dot: u16) -> Option<u16> {
        let mut bus = FlatBus::new();
        bus.0[..16].fill(0xFF);
        // Tile 1: only the right half opaque.
        bus.0[0x10..0x18].fill(0x0F);
        let mut oam = [0xF0; 256];
        oam[..4].copy_from_slice(&[20, tile, 0, x]);
        let mut ppu = run_to(oam, 0x1E, &mut bus, off_line, off_dot);
        ppu.write_register(0x2001, 0x00, &mut bus);
        while ppu.scanline() != 21 || ppu.dot() != on_dot {
            ppu.tick_dot(&mut bus);
        }
        assert_eq!(ppu.regs.sprite_0_hit_at, 0, "no hit before the enable");
        ppu.write_register(0x2001, 0x1E, &mut bus);
        while ppu.dot() != 258 {
            ppu.tick_dot(&mut bus);
            if ppu.regs.sprite_0_hit_at != 0 {
                return Some(ppu.dot() - 2);
            }
        }
        None
    }

    #[test]
    fn sprite_units_count_through_forced_blank_but_draw_only_while_rendering() {
        // AccuracyCoin "Stale Sprite Shift Regs": the X counter runs on, so a sprite whose start
        // passed while rendering was off draws from the first pixel rendered again. PPUMASK reaches
        // the pipeline 3 dots after the write: a write before dot d acts from dot d + 3 (pixel d + 2).
        assert_eq!(hit_after_forced_blank(0, 100, 21, 50, 60), Some(100), "start not yet reached");
        assert_eq!(hit_after_forced_blank(0, 100, 21, 50, 150), Some(152));
        // Pixels 100-102 drawn (transparent), then the rest from pixel 162: its opaque half at 163.
        assert_eq!(hit_after_forced_blank(1, 100, 21, 101, 160), Some(163));
        // Dot 339 in forced blank leaves every unit drawing ("Stale BG Shift Registers": X = $80 is
        // drawn where rendering resumes).
        assert_eq!(hit_after_forced_blank(0, 0x80, 20, 300, 60), Some(62));
        // Disabled before slot 0's pattern fetches complete: the unit keeps line 20's (empty) pattern.
        assert_eq!(hit_after_forced_blank(0, 0x80, 20, 258, 60), None);
    }

    /// OAM with row 0 (bytes 0-7) = 1..=8 and every other byte $F0: rendering disabled before
    /// (`line`, `dot`), enabled again at (`on_line`, 100), then run to line 20.
    fn oam_after_disable(line: u16, dot: u16, on_line: u16) -> [u8; 256] {
        let mut bus = FlatBus::new();
        let mut oam = [0xF0; 256];
        oam[..8].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        let mut ppu = run_to(oam, 0x18, &mut bus, line, dot);
        ppu.write_register(0x2001, 0x00, &mut bus);
        while ppu.scanline() != on_line || ppu.dot() != 100 {
            ppu.tick_dot(&mut bus);
        }
        assert_eq!(ppu.oam[8..], [0xF0; 248], "nothing corrupted while rendering is off");
        ppu.write_register(0x2001, 0x18, &mut bus);
        while ppu.scanline() != 20 {
            ppu.tick_dot(&mut bus);
        }
        ppu.oam
    }

    #[test]
    fn disabling_rendering_mid_line_corrupts_an_oam_row_once_enabled_in_vblank() {
        // AccuracyCoin "OAM Corruption": the write before dot 7 reaches the pipeline at dot 10; the
        // clear has written secondary OAM bytes 0-3 by then, so row 4 becomes a copy of row 0.
        let oam = oam_after_disable(10, 7, 250);
        assert_eq!(oam[32..40], [1, 2, 3, 4, 5, 6, 7, 8]);
        assert!(oam[8..32].iter().chain(&oam[40..]).all(|&b| b == 0xF0), "one row only");
        // During the sprite fetches: slot 1's tile read (dot 266) done, address 6.
        let oam = oam_after_disable(10, 264, 250);
        assert_eq!(oam[48..56], [1, 2, 3, 4, 5, 6, 7, 8]);
        // Enabled again on a rendering line: no corruption.
        let oam = oam_after_disable(10, 7, 12);
        assert!(oam[8..].iter().all(|&b| b == 0xF0));
    }

    #[test]
    fn the_pre_render_line_loads_the_units_from_stale_secondary_oam() {
        // AccuracyCoin "Sprites On Scanline 0": rendering off from line 1 (after evaluation copied
        // sprite 0, Y = 0, into secondary OAM) until the pre-render line, whose fetches load it as in
        // range of line 261 & 255 = 5. Tile 1 has one pixel, on row 5, column 0; the background is
        // opaque. Scanline 0 shows it at its X, or, after the odd-frame skip, at x = 0.
        let mut bus = FlatBus::new();
        bus.0[..16].fill(0xFF);
        bus.0[0x15] = 0x80;
        let mut oam = [0xF0; 256];
        oam[..4].copy_from_slice(&[0, 1, 0, 0x80]);
        let mut ppu = run_to(oam, 0x1E, &mut bus, 1, 200);
        let mut hits = Vec::new();
        for _ in 0..2 {
            ppu.write_register(0x2001, 0x00, &mut bus);
            while ppu.scanline() != 261 || ppu.dot() != 100 {
                ppu.tick_dot(&mut bus);
            }
            ppu.write_register(0x2001, 0x1E, &mut bus);
            while ppu.scanline() != 1 || ppu.dot() != 200 {
                ppu.tick_dot(&mut bus);
            }
            // Found on line 0 at pixel x, on dot x + 1: `sprite_0_hit_at` is x + 3.
            hits.push(ppu.regs.sprite_0_hit_at.checked_sub(3));
        }
        hits.sort_unstable();
        assert_eq!(hits, [Some(0), Some(0x80)]);
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

    /// `Ppu::sprite_evaluation_tiles` against the evaluation dot by dot: for random OAM (Y bytes
    /// crowding a band), lines, sizes, runs of tiles and starting states (mid-copy, full, done), the
    /// same registers and secondary OAM.
    #[test]
    fn evaluation_in_tile_runs_is_the_evaluation_dot_by_dot() {
        let mut next = random_below(0x2545_F491_4F6C_DD1Du64);
        let mut overflows = 0;
        for case in 0..20_000 {
            let mut ppu = Ppu::new();
            let band = next(240);
            // Sprites clustered about one band of lines (runs in and out of range), the rest random.
            for byte in ppu.oam.iter_mut() {
                *byte = if next(3) == 0 { (band + next(20)) as u8 } else { next(256) as u8 };
            }
            for byte in ppu.secondary_oam.iter_mut() {
                *byte = next(256) as u8;
            }
            let r = &mut ppu.regs;
            r.ctrl = if next(2) == 0 { 0 } else { 0x20 };
            r.scanline = band as u16 + next(24) as u16;
            r.oam_addr = next(256) as u8;
            r.oam_bus = next(256) as u8;
            let first_tile = next(32) as u16;
            let first = 1 + 8 * first_tile;
            let tiles = 1 + next(32 - u32::from(first_tile)) as u16;
            if first > 65 {
                // Any evaluation state a run can start from; the dot-by-dot reference takes it as is.
                r.eval_secondary_addr = next(36) as u8;
                r.eval_copy_left = next(4) as u8;
                r.eval_done = u8::from(next(4) == 0);
                r.eval_sprite_0 = next(2) as u8;
            }
            r.dot = first;
            let mut reference = ppu.clone();
            for dot in first..first + 8 * tiles {
                reference.sprite_evaluation_dot(dot);
            }
            ppu.sprite_evaluation_tiles(first, tiles);
            overflows += usize::from(reference.regs.status & status::SPRITE_OVERFLOW != 0);
            assert_eq!(ppu.regs, reference.regs, "case {case}: tiles {first}..+{tiles}");
            assert_eq!(ppu.secondary_oam, reference.secondary_oam, "case {case}: tiles {first}..+{tiles}");
        }
        assert!(overflows > 100, "runs that find an overflow: {overflows}");
    }

    /// The vectorised count against the evaluation's reads one by one: for random OAM (Y bytes
    /// crowding a band), lines, sprite sizes and starting points (OAMADDR at any alignment before
    /// dot 65; after it, sprites found and a copy under way), the same answer.
    #[test]
    fn evaluation_count_is_the_evaluations_reads_one_by_one() {
        let mut next = random_below(0x9E37_79B9_7F4A_7C15u64);
        let mut answers = [0; 2];
        for _ in 0..20_000 {
            let mut ppu = Ppu::new();
            let band = next(240);
            for byte in ppu.oam.iter_mut() {
                *byte = if next(2) == 0 { (band + next(20)) as u8 } else { next(256) as u8 };
            }
            let r = &mut ppu.regs;
            r.ctrl = if next(2) == 0 { 0 } else { 0x20 };
            r.scanline = next(240) as u16;
            r.oam_addr = next(256) as u8;
            let started = next(2) == 0;
            r.dot = if started { 66 + next(191) as u16 } else { 1 + next(65) as u16 };
            if started {
                r.eval_secondary_addr = next(32) as u8;
                r.eval_copy_left =
                    if r.eval_secondary_addr % 4 == 0 { 0 } else { 4 - r.eval_secondary_addr % 4 };
            }
            let (found, mut y_at) = if started {
                (
                    usize::from(r.eval_secondary_addr).div_ceil(4),
                    usize::from(r.oam_addr) + usize::from(r.eval_copy_left),
                )
            } else {
                (0, usize::from(r.oam_addr))
            };
            let height = if r.ctrl & 0x20 != 0 { 16 } else { 8 };
            let mut in_range = 0;
            while y_at < 256 {
                in_range += usize::from(r.scanline.wrapping_sub(u16::from(ppu.oam[y_at])) < height);
                y_at += 4;
            }
            let expected = found + in_range < 8;
            assert_eq!(ppu.evaluation_finds_fewer_than_8(), expected, "{:?}", ppu.regs);
            answers[usize::from(expected)] += 1;
        }
        assert!(answers[0] > 1000 && answers[1] > 1000, "both answers tried: {answers:?}");
    }

    #[test]
    fn in_range_masks_are_each_sprites_test() {
        let mut next = random_below(0x5EED_1234_ABCD_0042);
        let mut in_range = super::InRangeSprites::default();
        for round in 0..40 {
            // Often Y bytes near 255, whose sprites reach past line 255.
            let oam: [u8; 256] =
                core::array::from_fn(|_| if next(4) == 0 { 255 - next(20) as u8 } else { next(256) as u8 });
            // New OAM: what was kept is forgotten, as OAM writes make it.
            in_range.forget();
            for height in [8u16, 16] {
                for byte in 0..4 {
                    for line in 0..300u16 {
                        let expected = (0..64).fold(0u64, |mask, sprite| {
                            let y = u16::from(oam[4 * sprite + byte]);
                            mask | u64::from(line.wrapping_sub(y) < height) << sprite
                        });
                        assert_eq!(
                            in_range.mask(&oam, line, height, byte),
                            expected,
                            "{round} {height} {byte} {line}"
                        );
                    }
                }
            }
        }
    }
}
