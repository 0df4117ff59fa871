//! A rendered tile's output in runs of four pixels: derived from palette RAM and PPUMASK, rebuilt
//! when they change (see `stretch.rs`). A leaf: it knows colours, not the PPU.

/// For each background palette, the colours of every four pixels of one tile row: index
/// `low_plane_nibble << 4 | high_plane_nibble` (the leftmost pixel in the nibbles' bit 3), the
/// leftmost pixel first. A rendered tile without sprites is two lookups of the tile entering the
/// shifters. Each palette is rebuilt from its four colours (the backdrop and entries 1-3) when they
/// change.
#[derive(Clone)]
pub(super) struct BackgroundQuads {
    /// The four colours each palette's table was built from, packed; no colour has bit 15 set, so
    /// the initial key matches no palette.
    keys: [u64; 4],
    quads: [[[u16; 4]; 256]; 4],
}

impl BackgroundQuads {
    /// Not yet built.
    pub(super) const EMPTY: BackgroundQuads =
        BackgroundQuads { keys: [u64::MAX; 4], quads: [[[0; 4]; 256]; 4] };

    /// The tables for `colors` (`Ppu::color_table`), each palette's rebuilt when its colours differ.
    #[inline(always)]
    pub(super) fn refresh(&mut self, colors: &[u16; 32]) {
        for palette in 0..4 {
            let key = [colors[0], colors[4 * palette + 1], colors[4 * palette + 2], colors[4 * palette + 3]];
            let packed = key.iter().rev().fold(0u64, |packed, &color| packed << 16 | u64::from(color));
            if self.keys[palette] != packed {
                self.rebuild(palette, packed, key);
            }
        }
    }

    #[inline(never)]
    fn rebuild(&mut self, palette: usize, packed: u64, key: [u16; 4]) {
        self.keys[palette] = packed;
        // Two pixels from two bits of each plane (index `low << 2 | high`, the left pixel in bit 1):
        // a quad is two of them.
        let pairs: [[u16; 2]; 16] = core::array::from_fn(|index| {
            let (low, high) = (index >> 2, index & 3);
            [key[(low >> 1) | (high & 2)], key[(low & 1) | (high & 1) << 1]]
        });
        for (index, quad) in self.quads[palette].iter_mut().enumerate() {
            let (low, high) = (index >> 4, index & 15);
            let [left, right] =
                [(low >> 2) << 2 | high >> 2, (low & 3) << 2 | (high & 3)].map(|pair| pairs[pair]);
            *quad = [left[0], left[1], right[0], right[1]];
        }
    }

    /// The colours of the eight pixels of a tile row (pattern planes `low` and `high`, leftmost
    /// pixel in bit 7) in `palette` (0-3), the leftmost first.
    #[inline(always)]
    pub(super) fn row(&self, low: u8, high: u8, palette: u8) -> [u16; 8] {
        let quads = &self.quads[usize::from(palette & 3)];
        let mut row = [0; 8];
        row[..4].copy_from_slice(&quads[usize::from((low & 0xF0) | (high >> 4))]);
        row[4..].copy_from_slice(&quads[usize::from((low << 4) | (high & 0x0F))]);
        row
    }
}
