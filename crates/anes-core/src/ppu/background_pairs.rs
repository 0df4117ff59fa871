//! A rendered tile's output in pairs of pixels: derived from palette RAM and PPUMASK, rebuilt when
//! they change (see `stretch.rs`). A leaf: it knows colours, not the PPU.

/// The colours of every pair of background palette entries (0-15, first pixel in the low half):
/// a rendered tile without sprites stores its eight pixels as four lookups. Built from the 16
/// background colours `key`, again when they change.
#[derive(Clone)]
pub(super) struct BackgroundPairs {
    key: [u16; 16],
    pub(super) pairs: [u32; 256],
}

impl BackgroundPairs {
    /// Not yet built: no colour has the top bit set, so the key matches no palette.
    pub(super) const EMPTY: BackgroundPairs = BackgroundPairs { key: [u16::MAX; 16], pairs: [0; 256] };

    /// The pairs for `colors` (`Ppu::color_table`), rebuilt when they differ.
    #[inline(always)]
    pub(super) fn refresh(&mut self, colors: &[u16; 32]) {
        if self.key[..] != colors[..16] {
            self.rebuild(colors);
        }
    }

    #[inline(never)]
    fn rebuild(&mut self, colors: &[u16; 32]) {
        self.key.copy_from_slice(&colors[..16]);
        for (index, pair) in self.pairs.iter_mut().enumerate() {
            *pair = u32::from(colors[index & 15]) | u32::from(colors[index >> 4]) << 16;
        }
    }
}
