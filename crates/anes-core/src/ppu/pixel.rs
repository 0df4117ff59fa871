//! The pixel multiplexer: background and sprite pixels, clipping, priority, sprite 0 hit and the
//! palette lookup (nesdev "PPU rendering", "PPU sprite priority", "PPU palettes").

use super::sprites::sprite_pixel;
use super::{PICTURE_WIDTH, Ppu, mask, status};

/// Index into the 32-byte palette RAM for a PPU address in $3F00-$3FFF: 32 bytes mirrored every 32,
/// with $3F10/$3F14/$3F18/$3F1C mirroring $3F00/$3F04/$3F08/$3F0C.
#[inline(always)]
pub(super) fn palette_index(addr: u16) -> usize {
    let index = usize::from(addr & 0x1F);
    if index & 0x13 == 0x10 { index & 0x0F } else { index }
}

impl Ppu {
    /// Outputs the pixel at `x` (0-255) of the current visible scanline while rendering is disabled:
    /// the backdrop, or the palette entry `v` points at (nesdev "PPU palettes": the background palette
    /// direct access).
    #[inline(always)]
    pub(super) fn output_blank_pixel(&mut self, x: u16) {
        let color = self.blank_pixel_color();
        self.store_color(x, color);
    }

    /// Outputs the pixel at `x` (0-255) of the current visible scanline while rendering is enabled.
    #[inline(always)]
    pub(super) fn output_rendered_pixel(&mut self, x: u16) {
        let (show_background, show_sprites) = self.layers_shown(x < 8);
        let index = self.rendered_pixel(x, show_background, show_sprites);
        self.store_pixel(x, index);
    }

    /// Which layers PPUMASK shows (background, sprites), in the leftmost 8 pixels (`left`) or not.
    /// Sprites count as hidden on a line without any.
    #[inline(always)]
    pub(super) fn layers_shown(&self, left: bool) -> (bool, bool) {
        let m = self.regs.mask;
        let background = m & mask::BACKGROUND != 0 && (!left || m & mask::BACKGROUND_LEFT != 0);
        let sprites =
            self.regs.sprite_count != 0 && m & mask::SPRITES != 0 && (!left || m & mask::SPRITES_LEFT != 0);
        (background, sprites)
    }

    /// The palette index of the pixel at `x` with the given layers shown: background and sprite
    /// multiplexed by priority, and sprite 0 hit detected.
    #[inline(always)]
    pub(super) fn rendered_pixel(&mut self, x: u16, show_background: bool, show_sprites: bool) -> usize {
        let background = if show_background { self.background_pixel() } else { 0 };
        self.multiplex(x, background, show_sprites)
    }

    /// The palette index of the pixel at `x` over the background palette entry `background` (0:
    /// transparent or hidden): the sprite side of [`Ppu::rendered_pixel`].
    #[inline(always)]
    pub(super) fn multiplex(&mut self, x: u16, background: u8, show_sprites: bool) -> usize {
        let sprite = if show_sprites { self.sprite_pixel(x) } else { 0 };
        if sprite == 0 {
            usize::from(background)
        } else if background == 0 {
            usize::from(0x10 | (sprite & 0x0F))
        } else {
            // Both opaque: sprite 0 hit (never at x=255, nesdev "PPU OAM"; the clipping above already
            // excludes x=0-7 when either layer is clipped there).
            if sprite & sprite_pixel::UNIT_0 != 0 && x != 255 {
                // Pixel x is output on dot x + 1.
                self.regs.set_sprite_flag(status::SPRITE_0_HIT, x + 1);
            }
            if sprite & sprite_pixel::BEHIND != 0 {
                usize::from(background)
            } else {
                usize::from(0x10 | (sprite & 0x0F))
            }
        }
    }

    /// [`Ppu::multiplex`] of the eight pixels at `x..x + 8`, sprites shown, one byte each, the first
    /// pixel's in the low byte: `background` their background palette entries (see
    /// `background::background_entries`, 0 where hidden), `sprite` what [`Ppu::sprite_pixel`]
    /// returns on them. The sprite 0 hit of the first pixel that has one is the one recorded.
    #[inline(always)]
    pub(super) fn multiplex_tile(&mut self, x: u16, background: u64, sprite: u64) -> u64 {
        const LOW_BITS: u64 = 0x0101_0101_0101_0101;
        let bit_bytes = |value: u64, bit: u32| ((value >> bit) & LOW_BITS) * 0xFF;
        let opaque = |value: u64| ((value | value >> 1) & LOW_BITS) * 0xFF;
        let both = opaque(sprite) & opaque(background);
        // Sprite 0 hit, never at x = 255 (see `Ppu::multiplex`).
        let mut hits = both & bit_bytes(sprite, sprite_pixel::UNIT_0.trailing_zeros());
        if x == 248 {
            hits &= !(0xFF << 56);
        }
        if hits != 0 {
            // Pixel x is output on dot x + 1.
            let first = hits.trailing_zeros() as u16 / 8;
            self.regs.set_sprite_flag(status::SPRITE_0_HIT, x + first + 1);
        }
        let sprite_wins = opaque(sprite) & !(both & bit_bytes(sprite, sprite_pixel::BEHIND.trailing_zeros()));
        let sprite_entries = (sprite & (LOW_BITS * 0x0F)) | (LOW_BITS * 0x10);
        (sprite_entries & sprite_wins) | (background & !sprite_wins)
    }

    /// The pixel rendering-disabled output shows (what [`Ppu::output_blank_pixel`] stores).
    #[inline(always)]
    pub(super) fn blank_pixel_color(&self) -> u16 {
        let index = if self.regs.v & 0x3F00 == 0x3F00 { palette_index(self.regs.v) } else { 0 };
        self.pixel_color(index)
    }

    /// Palette entry `index` with greyscale and emphasis applied.
    #[inline(always)]
    pub(super) fn pixel_color(&self, index: usize) -> u16 {
        let (grey, emphasis) = self.color_mask();
        u16::from(self.palette[index & 0x1F] & grey) | emphasis
    }

    /// [`Ppu::pixel_color`] of every palette entry.
    #[inline(always)]
    pub(super) fn color_table(&self) -> [u16; 32] {
        let (grey, emphasis) = self.color_mask();
        self.palette.map(|entry| u16::from(entry & grey) | emphasis)
    }

    /// What PPUMASK does to a palette entry: the AND mask of greyscale and the emphasis bits, placed
    /// as in the picture (see [`Ppu::pixel_color`]).
    #[inline(always)]
    pub(super) fn color_mask(&self) -> (u8, u16) {
        let m = self.regs.mask;
        let grey = if m & mask::GREYSCALE != 0 { 0x30 } else { 0x3F };
        let mut emphasis = m & 0xE0;
        if self.timing.swap_red_green_emphasis {
            // The 2C07 and the UA6538 wire PPUMASK bit 5 to green and bit 6 to red (nesdev "Colour
            // emphasis"): the picture keeps red in bit 6 and green in bit 7 either way.
            emphasis = (emphasis & 0x80) | ((emphasis & 0x20) << 1) | ((emphasis & 0x40) >> 1);
        }
        (grey, u16::from(emphasis) << 1)
    }

    /// Writes palette entry `index` (greyscale and emphasis applied) as the pixel at `x`.
    #[inline(always)]
    fn store_pixel(&mut self, x: u16, index: usize) {
        self.store_color(x, self.pixel_color(index));
    }

    /// Writes `color` as the pixel at `x` of the current scanline.
    #[inline(always)]
    fn store_color(&mut self, x: u16, color: u16) {
        let offset = usize::from(self.regs.scanline) * PICTURE_WIDTH + usize::from(x);
        if let Some(pixel) = self.frame.get_mut(offset) {
            *pixel = color;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tile's sprite pixels and multiplexing at once ([`Ppu::tile_sprite_pixels`],
    /// [`Ppu::multiplex_tile`]) against [`Ppu::multiplex`] pixel by pixel: same entries, same sprite
    /// 0 hit, from random units placed around the tile.
    #[test]
    fn a_tile_multiplexed_at_once_is_its_pixels_one_by_one() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..50_000 {
            let mut ppu = Ppu::new();
            let x = 8 * (next() % 32) as u16;
            let r = &mut ppu.regs;
            r.scanline = (next() % 240) as u16;
            r.sprite_count = (next() % 10) as u8;
            r.sprite_0_in_unit_0 = (next() & 1) as u8;
            for slot in 0..8 {
                let near = i32::from(x) + (next() % 24) as i32 - 12;
                r.sprite_x[slot] = if next() % 4 == 0 { next() as u8 } else { near.clamp(0, 255) as u8 };
                r.sprite_attr[slot] = next() as u8;
                r.sprite_pattern_lo[slot] = next() as u8;
                r.sprite_pattern_hi[slot] = next() as u8;
            }
            let bytes = next().to_le_bytes();
            let background =
                super::super::background::background_entries([bytes[0], bytes[1], bytes[2], bytes[3]])
                    & if next() % 8 == 0 { 0 } else { u64::MAX };
            let mut one = ppu.clone();
            let expected = background.to_le_bytes();
            let expected: Vec<u8> =
                (0..8).map(|p| one.multiplex(x + p as u16, expected[p], true) as u8).collect();
            let sprite = ppu.tile_sprite_pixels(x);
            let entries = ppu.multiplex_tile(x, background, sprite).to_le_bytes();
            assert_eq!(entries[..], expected[..], "x {x}, background {background:#x}, sprite {sprite:#x}");
            assert_eq!(ppu.regs, one.regs, "x {x}, background {background:#x}, sprite {sprite:#x}");
        }
    }

    #[test]
    fn palette_mirrors_follow_nesdev() {
        // nesdev "PPU palettes": $3F10/$3F14/$3F18/$3F1C mirror $3F00/$3F04/$3F08/$3F0C.
        assert_eq!(palette_index(0x3F10), 0x00);
        assert_eq!(palette_index(0x3F14), 0x04);
        assert_eq!(palette_index(0x3F18), 0x08);
        assert_eq!(palette_index(0x3F1C), 0x0C);
        // Other sprite entries are their own.
        assert_eq!(palette_index(0x3F11), 0x11);
        assert_eq!(palette_index(0x3F1F), 0x1F);
        assert_eq!(palette_index(0x3F04), 0x04);
        // $3F20-$3FFF mirror $3F00-$3F1F.
        assert_eq!(palette_index(0x3F21), 0x01);
        assert_eq!(palette_index(0x3FF0), 0x00);
        assert_eq!(palette_index(0x3FFD), 0x1D);
    }
}
