//! Runs of dots: [`Ppu::run_dots`] is exactly `count` calls of [`Ppu::tick_dot`], with the common
//! stretches done in bulk: where the PPU only counts (rendering off and settled), a scanline segment
//! at a time; and on rendered visible lines, 8 dots at a time (a tile of dots 1-256 or 321-336, a
//! sprite slot of 257-320), with the fetch phase of each dot known in advance and PPUMASK and PPUCTRL
//! constant (no CPU access falls inside a stretch).

use super::background::{copy_horizontal, increment_y};
use super::{
    DOTS_PER_SCANLINE, FRAME_WIDTH, PRE_RENDER_SCANLINE, Ppu, PpuBus, SCANLINES_PER_FRAME, VBLANK_SCANLINE,
};

impl Ppu {
    /// Runs `count` dots; the bus hears [`PpuBus::advance_dots`] after each.
    pub fn run_dots(&mut self, mut count: u32, bus: &mut impl PpuBus) {
        while count > 0 {
            let (scanline, dot) = (self.regs.scanline, self.regs.dot);
            let rendering = self.regs.rendering_enabled();
            // The pipeline sees the enable `RENDERING_DELAY_DOTS` late: on through these 8 dots when
            // it was on for the last 4.
            let settled_on = self.regs.rendering_history & 0x0F == 0x0F;
            if rendering && settled_on && scanline < 240 && dot & 7 == 1 && count >= 8 {
                if dot <= 249 {
                    self.run_visible_tile(bus);
                    count -= 8;
                    continue;
                }
                if dot <= 313 {
                    self.run_sprite_slot(bus);
                    count -= 8;
                    continue;
                }
                if dot <= 329 {
                    self.run_prefetch_tile(bus);
                    count -= 8;
                    continue;
                }
            }
            let idle = self.regs.rendering_history == 0 && !rendering;
            // Dot 1 of the VBlank and pre-render lines sets and clears flags: the full dot.
            let flag_dot = (scanline == VBLANK_SCANLINE || scanline == PRE_RENDER_SCANLINE) && dot <= 1;
            if !idle || flag_dot || scanline >= SCANLINES_PER_FRAME || dot >= DOTS_PER_SCANLINE {
                self.tick_dot(bus);
                bus.advance_dots(1);
                count -= 1;
                continue;
            }
            // Rendering has been off for 8 dots: no fetch, no evaluation, no odd-frame skip, and the
            // rendering history stays 0. Only blank pixels and the position change.
            let run = count.min(u32::from(DOTS_PER_SCANLINE - dot));
            if scanline < 240 {
                self.fill_blank_pixels(dot, run);
            }
            // The last dot of the run goes through `advance_position` for the scanline and frame
            // bookkeeping.
            self.regs.dot = dot + (run as u16) - 1;
            self.advance_position();
            bus.advance_dots(run);
            count -= run;
        }
    }

    /// Dots `d..d + 8` of a visible line with rendering on, `d` = 1, 9, ..., 249: what eight calls of
    /// `tick_dot` do. Sprite evaluation touches nothing the background pipeline or the pixel
    /// multiplexer reads, so it runs as its own loop after them.
    #[inline(always)]
    fn run_visible_tile(&mut self, bus: &mut impl PpuBus) {
        let first = self.regs.dot;
        let (show_background, show_sprites) = self.layers_shown(first == 1);
        // Units whose 8 pixels miss this tile cannot show: skip the multiplexer's sprite side.
        let show_sprites = show_sprites && self.sprite_in_columns(first - 1);
        let mut colors = [0u16; 8];
        self.visible_tile_dot::<0>(bus, first, show_background, show_sprites, &mut colors);
        self.visible_tile_dot::<1>(bus, first, show_background, show_sprites, &mut colors);
        self.visible_tile_dot::<2>(bus, first, show_background, show_sprites, &mut colors);
        self.visible_tile_dot::<3>(bus, first, show_background, show_sprites, &mut colors);
        self.visible_tile_dot::<4>(bus, first, show_background, show_sprites, &mut colors);
        self.visible_tile_dot::<5>(bus, first, show_background, show_sprites, &mut colors);
        self.visible_tile_dot::<6>(bus, first, show_background, show_sprites, &mut colors);
        self.visible_tile_dot::<7>(bus, first, show_background, show_sprites, &mut colors);
        self.sprite_evaluation_tile(first);
        if first == 249 {
            // Dot 256: after the coarse X increment of the last fetch.
            self.regs.v = increment_y(self.regs.v);
        }
        let start = usize::from(self.regs.scanline) * FRAME_WIDTH + usize::from(first - 1);
        if let Some(pixels) = self.frame.get_mut(start..start + 8) {
            pixels.copy_from_slice(&colors);
        }
        // Eight dots with rendering enabled; the position cannot wrap before dot 257.
        self.regs.rendering_history = 0xFF;
        self.regs.dot = first + 8;
    }

    /// Dot `first + PHASE` of [`Ppu::run_visible_tile`]: shift and reload, the fetch of this phase,
    /// and the pixel into `colors[PHASE]`.
    #[inline(always)]
    fn visible_tile_dot<const PHASE: u16>(
        &mut self,
        bus: &mut impl PpuBus,
        first: u16,
        show_background: bool,
        show_sprites: bool,
        colors: &mut [u16; 8],
    ) {
        // Dot 1 neither shifts nor reloads; the reloads fall on dots 9, 17, ..., 249.
        if PHASE != 0 || first != 1 {
            self.shift_background();
            if PHASE == 0 {
                self.reload_background_shifters();
            }
        }
        self.background_fetch(bus, (PHASE + 1) & 7);
        let x = first - 1 + PHASE;
        let index = self.rendered_pixel(x, show_background, show_sprites);
        colors[usize::from(PHASE)] = self.pixel_color(index);
        bus.advance_dots(1);
    }

    /// Dots `d..d + 8` of a visible line with rendering on, `d` = 257, 265, ..., 313: the fetches
    /// of sprite slot (d - 257) / 8 (see `Ppu::sprite_fetch_dot`).
    #[inline(always)]
    fn run_sprite_slot(&mut self, bus: &mut impl PpuBus) {
        let first = self.regs.dot;
        if first == 257 {
            // Dot 257: the last shift and reload of the line (see `Ppu::render_dot`).
            self.shift_background();
            self.reload_background_shifters();
            self.regs.v = copy_horizontal(self.regs.v, self.regs.t);
            self.start_sprite_fetches(false);
        }
        let slot = usize::from((first - 257) >> 3);
        for phase in 0..8 {
            self.sprite_fetch(bus, slot, phase);
            bus.advance_dots(1);
        }
        // What the OAM bus and OAMADDR show after the slot's last dot.
        self.regs.oam_bus = self.secondary_oam[slot * 4 + 3];
        self.regs.oam_addr = 0;
        self.regs.rendering_history = 0xFF;
        self.regs.dot = first + 8;
    }

    /// Dots `d..d + 8` of a visible line with rendering on, `d` = 321 or 329: the first two tiles
    /// of the next line enter the pipeline; no pixel is output.
    #[inline(always)]
    fn run_prefetch_tile(&mut self, bus: &mut impl PpuBus) {
        let first = self.regs.dot;
        for dot in first..first + 8 {
            self.background_dot(bus, dot);
            bus.advance_dots(1);
        }
        self.regs.oam_bus = self.secondary_oam[0];
        self.regs.rendering_history = 0xFF;
        self.regs.dot = first + 8;
    }

    /// Blank pixels for dots `dot..dot + run` of the current visible line (pixel x = dot - 1).
    fn fill_blank_pixels(&mut self, dot: u16, run: u32) {
        let first = usize::from(dot.max(1) - 1);
        let end = (usize::from(dot) + run as usize).saturating_sub(1).min(FRAME_WIDTH);
        if first >= end {
            return;
        }
        let color = self.blank_pixel_color();
        let row = usize::from(self.regs.scanline) * FRAME_WIDTH;
        if let Some(pixels) = self.frame.get_mut(row + first..row + end) {
            pixels.fill(color);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Ppu;
    use super::super::test_bus::FlatBus;
    use proptest::prelude::*;

    /// A PPU in an arbitrary state: registers, position, OAM, palette and the memory behind it.
    fn arbitrary_ppu(regs: &[u8], oam: &[u8], palette: &[u8], memory: &[u8]) -> (Ppu, FlatBus) {
        let mut ppu = Ppu::new();
        let [regs_bytes, oam_bytes, _secondary, palette_bytes] = ppu.state_bytes_mut();
        regs_bytes.copy_from_slice(regs);
        oam_bytes.copy_from_slice(oam);
        palette_bytes.copy_from_slice(palette);
        // A position inside the frame (an out-of-range one is folded by `tick_dot` on both sides).
        ppu.regs.scanline %= 262;
        ppu.regs.dot %= 341;
        let mut bus = FlatBus::new();
        bus.0.copy_from_slice(memory);
        (ppu, bus)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// `run_dots(n)` is `n` calls of `tick_dot`, from any state and in stretches of any length:
        /// same registers, memories, picture and bus contents after every stretch.
        #[test]
        fn run_dots_is_tick_dot_repeated(
            regs in proptest::collection::vec(any::<u8>(), core::mem::size_of::<super::super::PpuRegs>()),
            oam in proptest::collection::vec(any::<u8>(), 256),
            palette in proptest::collection::vec(0u8..64, 32),
            memory in proptest::collection::vec(any::<u8>(), 0x4000),
            rendering in any::<bool>(),
            stretches in proptest::collection::vec(0u32..40, 1..150),
        ) {
            let (mut bulk, mut bulk_bus) = arbitrary_ppu(&regs, &oam, &palette, &memory);
            if rendering {
                bulk.regs.mask |= 0x18;
            }
            let (mut single, mut single_bus) = (bulk.clone(), FlatBus(bulk_bus.0.clone()));
            for (i, &count) in stretches.iter().enumerate() {
                bulk.run_dots(count, &mut bulk_bus);
                for _ in 0..count {
                    single.tick_dot(&mut single_bus);
                }
                prop_assert_eq!(bulk.state_bytes(), single.state_bytes(), "after stretch {}", i);
                prop_assert!(bulk.frame_buffer() == single.frame_buffer(), "pictures differ after stretch {}", i);
                prop_assert!(bulk_bus.0 == single_bus.0, "PPU memory differs after stretch {}", i);
            }
        }
    }
}
