//! Runs of dots: [`Ppu::run_dots`] is exactly `count` calls of [`Ppu::tick_dot`], with the common
//! stretches done in bulk: where the PPU only counts (rendering off and settled), a scanline segment
//! at a time; and on rendered visible lines, 8 dots at a time (a tile of dots 1-256 or 321-336, a
//! sprite slot of 257-320), with the fetch phase of each dot known in advance and PPUMASK and PPUCTRL
//! constant (no CPU access falls inside a stretch).

use super::background::{
    attribute_address, background_entries, copy_horizontal, increment_y, nametable_address, reloaded_bytes,
};
use super::tile_fetches::{Fetches, drive_a12_runs, fetch_tiles, increment_coarse_x_by};
use super::{DOTS_PER_SCANLINE, PICTURE_WIDTH, Ppu, PpuBus, ctrl};
use crate::region::{RegionModel, with_region_model};

/// The rendering history (see `PpuRegs::rendering_history`) after `dots` more dots with the
/// rendering enable constant at `rendering`.
#[inline(always)]
fn history_after(history: u8, rendering: bool, dots: u32) -> u8 {
    if dots >= 8 {
        return if rendering { 0xFF } else { 0 };
    }
    let fill = if rendering { (1u8 << dots) - 1 } else { 0 };
    ((u16::from(history) << dots) as u8) | fill
}

/// The colours of eight pixels whose palettes differ (see [`background_entries`] for the bytes),
/// the leftmost first.
#[cold]
#[inline(never)]
fn mixed_palette_colors(bytes: [u8; 4], colors: &[u16; 32]) -> [u16; 8] {
    background_entries(bytes).to_le_bytes().map(|entry| colors[usize::from(entry)])
}

impl Ppu {
    /// Runs `count` dots; the bus hears [`PpuBus::advance_dots`] after each.
    pub fn run_dots(&mut self, count: u32, bus: &mut impl PpuBus) {
        with_region_model!(self.timing.region, R => self.run_dots_as::<R>(count, bus))
    }

    /// The most dots, up to `within`, after which the PPU stands where one of `run_dots`'s 8-dot
    /// stretches of a visible line starts (dot 1, 9, ..., 329 or the line's tail at 337), counted
    /// only from a visible line to one up to line 240; 0 when there is no such dot.
    pub(crate) fn dots_to_stretch_start(&self, within: u32) -> u32 {
        const DOTS: u32 = DOTS_PER_SCANLINE as u32;
        let (scanline, dot) = (u32::from(self.regs.scanline), u32::from(self.regs.dot));
        let end = dot.saturating_add(within);
        if scanline >= 240 || scanline + end / DOTS > 240 {
            return 0;
        }
        // Back from the end to the stretch start at or before it (dot 0 follows the tail, 4 dots).
        let back = match end % DOTS {
            0 => 4,
            e @ 1..=336 => (e - 1) % 8,
            e => e - 337,
        };
        within.saturating_sub(back)
    }

    /// [`Ppu::run_dots`] in region `R` (the PPU's own).
    pub fn run_dots_as<R: RegionModel>(&mut self, mut count: u32, bus: &mut impl PpuBus) {
        self.digest_stale = true;
        // Palette RAM and PPUMASK cannot change within a stretch (no CPU access falls inside), so
        // the colours of the 32 entries are looked up once, on the first rendered tile, and the
        // background quads checked against them.
        let mut colors = None;
        while count > 0 {
            if self.regs.bus_collision_pending() {
                // A CPU access meets the fetch cadence (`address_bus.rs`): dot by dot until it is over.
                self.tick_dot_as::<R>(bus);
                bus.advance_dots(1);
                count -= 1;
                continue;
            }
            let (scanline, dot) = (self.regs.scanline, self.regs.dot);
            let rendering = self.regs.rendering_enabled();
            // The pipeline sees the enable `RENDERING_DELAY_DOTS` late: on through these 8 dots when
            // it was on for the last 4.
            let settled_on = self.regs.rendering_history & 0x0F == 0x0F;
            // A unit's first pixel moved to x = 0 by the odd-frame skip (see
            // `Ppu::sprite_units_skip`) is drawn by `tick_dot`: a tile's own sprite test
            // (`Ppu::tile_sprite_pixels`) looks at the units' X only.
            let first_pixel_waiting = dot == 1 && self.regs.sprite_first_lo | self.regs.sprite_first_hi != 0;
            if rendering && settled_on && scanline < 240 && dot & 7 == 1 && count >= 8 && !first_pixel_waiting
            {
                if dot <= 249 {
                    // Every whole tile of dots 1-256 the stretch covers, in one loop.
                    let colors = colors.get_or_insert_with(|| {
                        let colors = self.color_table();
                        self.background_quads.refresh(&colors);
                        colors
                    });
                    let tiles = (count / 8).min(u32::from((257 - dot) / 8));
                    self.run_visible_tiles(bus, colors, tiles);
                    // Sprite evaluation touches nothing the background pipeline or the pixel
                    // multiplexer reads: the run's in one go.
                    self.sprite_evaluation_tiles(dot, tiles as u16);
                    count -= 8 * tiles;
                    continue;
                }
                if dot <= 313 {
                    let slots = (count / 8).min(u32::from((321 - dot) / 8));
                    for _ in 0..slots {
                        self.run_sprite_slot(bus);
                    }
                    count -= 8 * slots;
                    continue;
                }
                if dot <= 329 {
                    self.run_prefetch_tile(bus);
                    count -= 8;
                    continue;
                }
            }
            // (Where every fetch is seen, four single dots measured cheaper.)
            if rendering
                && settled_on
                && scanline < 240
                && dot == 337
                && count >= 4
                && (!bus.fetches_observed() || bus.only_a12_observed() || bus.only_reads_observed())
            {
                self.run_line_tail_unobserved::<R>(bus);
                count -= 4;
                continue;
            }
            let idle = self.regs.rendering_history == 0 && !rendering;
            // Lines 240-260 fetch nothing and output nothing, rendering or not; but a change of the
            // enable the pipeline has yet to see stops or restarts the sprite units (`tick_dot`), so
            // only once the history holds no change.
            let unchanging = self.regs.rendering_history & 0x1F == if rendering { 0x1F } else { 0 };
            let t = R::TIMING.ppu;
            let blank_line = (240..t.pre_render_scanline).contains(&scanline) && unchanging;
            // Dot 1 of the VBlank and pre-render lines sets and clears flags: the full dot.
            let flag_dot = (scanline == t.vblank_scanline || scanline == t.pre_render_scanline) && dot <= 1;
            if !(idle || blank_line)
                || flag_dot
                || scanline >= t.scanlines_per_frame
                || dot >= DOTS_PER_SCANLINE
            {
                self.tick_dot_as::<R>(bus);
                bus.advance_dots(1);
                count -= 1;
                continue;
            }
            // Rendering has been off for 8 dots (no fetch, no evaluation, no odd-frame skip), or the
            // line renders nothing: only blank pixels, the rendering history and the position change.
            let run = count.min(u32::from(DOTS_PER_SCANLINE - dot));
            if scanline < 240 {
                self.fill_blank_pixels(dot, run);
            }
            if let Some((first, last)) = t.forced_oam_refresh
                && (first..=last).contains(&scanline)
            {
                let steps = super::oam_refresh_steps(dot, dot + (run as u16) - 1);
                self.regs.oam_addr = self.regs.oam_addr.wrapping_add(steps as u8);
            }
            self.regs.rendering_history = history_after(self.regs.rendering_history, rendering, run);
            // The last dot of the run goes through `advance_position` for the scanline and frame
            // bookkeeping.
            self.regs.dot = dot + (run as u16) - 1;
            self.advance_position::<R>();
            bus.advance_dots(run);
            count -= run;
        }
    }

    /// Dots `d..d + 8 * tiles` of a visible line with rendering on, `d` = 1, 9, ..., 249, within
    /// dots 1-256: what their `tick_dot` calls do, but for sprite evaluation
    /// (`Ppu::sprite_evaluation_tiles`).
    ///
    /// The run's fetches come first (`tile_fetches.rs`), then its pixels. A tile's eight pixels
    /// come from the shifters as they stand after its first dot's shift and reload (the later
    /// shifts only move the window, and the fetches fill the latches, which reach the shifters on
    /// the next tile's first dot): at fine X `x`, pixels `x..8` of the tile in the shifters' high
    /// bytes (the one showing), then pixels `0..x` of the one in their low bytes (the one
    /// entering). So the run's background is a row of whole tiles' colours, one tile row in one
    /// palette each, from the tile showing at its start on, of which the picture shows the run's
    /// pixels from `x` on: one store, over which a tile with sprites, or without the background,
    /// stores its own pixels.
    #[inline(always)]
    fn run_visible_tiles(&mut self, bus: &mut impl PpuBus, colors: &[u16; 32], tiles: u32) {
        let first = self.regs.dot;
        // Dot 1 neither shifts nor reloads; the reloads fall on dots 9, 17, ..., 249.
        if first != 1 {
            self.shift_background();
            self.reload_background_shifters();
        }
        let tiles = tiles as usize;
        let table = u16::from(self.regs.ctrl & ctrl::BACKGROUND_TABLE) << 8;
        let mut fetched = [[0u8; 4]; 32];
        let latches = &mut fetched[..tiles];
        fetch_tiles(bus, Fetches::of(bus), self.regs.v, table, latches);
        let latches = &*latches;
        // The shifters' bytes for tile k of the run: the tile showing (high bytes) and the tile
        // entering (low bytes), the one the tile before fetched.
        let shifters = self.background_shifters();
        let entering_of = |k: usize| {
            if k == 0 { shifters.map(|shifter| shifter as u8) } else { reloaded_bytes(latches[k - 1]) }
        };
        let showing_of =
            |k: usize| if k == 0 { shifters.map(|shifter| (shifter >> 8) as u8) } else { entering_of(k - 1) };
        let fine_x = usize::from(self.regs.x & 7);
        let x = usize::from(first - 1);
        let row = usize::from(self.regs.scanline) * PICTURE_WIDTH + x;
        // The colours of the tile showing, the one entering and the ones the run's tiles but the
        // last fetched: pixel p of the run shows colour `fine_x + p`.
        let mut background = [0u16; 8 * 33];
        background[..8].copy_from_slice(&self.shifter_colors(showing_of(0), colors));
        background[8..16].copy_from_slice(&self.shifter_colors(entering_of(0), colors));
        for (out, &[_, attribute, lo, hi]) in background[16..].chunks_exact_mut(8).zip(&latches[..tiles - 1])
        {
            out.copy_from_slice(&self.background_quads.row(lo, hi, attribute));
        }
        if let Some(pixels) = self.frame.get_mut(row..row + 8 * tiles) {
            pixels.copy_from_slice(&background[fine_x..fine_x + 8 * tiles]);
        }
        // The tiles with sprites in their columns (units whose 8 pixels miss a tile cannot show)
        // or without the background: bit k for tile k, the first with the left 8 pixels' layers.
        let (left, after_left) = (self.layers_shown(first == 1), self.layers_shown(false));
        let sprite_tiles = if left.1 || after_left.1 { self.sprite_tiles() >> (x / 8) } else { 0 };
        let own = |(background, sprites): (bool, bool)| {
            if !background {
                u64::MAX
            } else if sprites {
                sprite_tiles
            } else {
                0
            }
        };
        let mut own_tiles = ((own(left) & 1) | (own(after_left) & !1)) & ((1 << tiles) - 1);
        while own_tiles != 0 {
            let k = own_tiles.trailing_zeros() as usize;
            own_tiles &= own_tiles - 1;
            let (show_background, show_sprites) = if k == 0 { left } else { after_left };
            let sprites = show_sprites && sprite_tiles >> k & 1 != 0;
            let tile_bytes = [showing_of(k), entering_of(k)];
            let pixels = self.own_tile_pixels(x + 8 * k, tile_bytes, (show_background, sprites), colors);
            if let Some(out) = self.frame.get_mut(row + 8 * k..row + 8 * k + 8) {
                out.copy_from_slice(&pixels);
            }
        }
        let last = tiles - 1;
        let (showing, entering) = (showing_of(last), entering_of(last));
        let end = first + 8 * tiles as u16;
        let r = &mut self.regs;
        r.v = increment_coarse_x_by(r.v, tiles as u16);
        if end == 257 {
            // Dot 256: after the coarse X increment of the last fetch.
            r.v = increment_y(r.v);
        }
        [r.nt_latch, r.at_latch, r.pattern_lo_latch, r.pattern_hi_latch] = latches[last];
        [r.bg_pattern_lo, r.bg_pattern_hi, r.bg_attr_lo, r.bg_attr_hi] =
            core::array::from_fn(|k| u16::from(showing[k]) << 8 | u16::from(entering[k]));
        // The last tile's other seven shifts.
        self.shift_background_by(7);
        // Dots with rendering enabled; the position cannot wrap before dot 257.
        self.regs.rendering_history = 0xFF;
        self.regs.dot = end;
    }

    /// The pixels of the tile at `x` computed on their own, from the shifters' bytes `[showing,
    /// entering]` (see `Ppu::run_visible_tiles`), the background and sprites shown or not: out of
    /// line, the run's loop keeps its values in registers.
    #[inline(never)]
    fn own_tile_pixels(
        &mut self,
        x: usize,
        [showing, entering]: [[u8; 4]; 2],
        (show_background, sprites): (bool, bool),
        colors: &[u16; 32],
    ) -> [u16; 8] {
        let fine_x = usize::from(self.regs.x & 7);
        if sprites {
            let windows = core::array::from_fn(|k| {
                let shifter = u16::from(showing[k]) << 8 | u16::from(entering[k]);
                (shifter >> (8 - fine_x)) as u8
            });
            let background = if show_background { background_entries(windows) } else { 0 };
            let sprite = self.tile_sprite_pixels(x as u16);
            let entries = self.multiplex_tile(x as u16, background, sprite).to_le_bytes();
            entries.map(|entry| colors[usize::from(entry & 0x1F)])
        } else if show_background {
            let mut both = [0; 16];
            both[..8].copy_from_slice(&self.shifter_colors(showing, colors));
            both[8..].copy_from_slice(&self.shifter_colors(entering, colors));
            core::array::from_fn(|p| both[fine_x + p])
        } else {
            [colors[0]; 8]
        }
    }

    /// The colours of the eight pixels of a tile in the background shifters, from its byte of each
    /// (see [`background_entries`]), the leftmost first.
    #[inline(always)]
    fn shifter_colors(&self, bytes: [u8; 4], colors: &[u16; 32]) -> [u16; 8] {
        let [pattern_lo, pattern_hi, attr_lo, attr_hi] = bytes;
        // After a reload each palette bit fills its byte; otherwise (rendering toggled across a
        // reload, serial input shifted in) each pixel has a palette of its own.
        if (attr_lo == 0 || attr_lo == 0xFF) && (attr_hi == 0 || attr_hi == 0xFF) {
            self.background_quads.row(pattern_lo, pattern_hi, (attr_lo & 1) | (attr_hi & 2))
        } else {
            mixed_palette_colors(bytes, colors)
        }
    }

    /// The fetches of a tile's eight dots, dot `d + p` driving or reading fetch phase p + 1.
    #[inline(always)]
    fn fetch_tile(&mut self, bus: &mut impl PpuBus) {
        if !bus.fetches_observed() {
            self.background_fetch_unobserved(bus);
            return;
        }
        if bus.only_a12_observed() {
            let nametable = nametable_address(self.regs.v);
            self.background_fetch_unobserved(bus);
            // Dots 1-4 fetch the nametable and attribute bytes, 5-8 the pattern planes.
            drive_a12_runs(bus, nametable, self.background_pattern_address());
            return;
        }
        if bus.only_reads_observed() {
            let v = self.regs.v;
            self.background_fetch_unobserved(bus);
            let pattern = self.background_pattern_address();
            bus.hear_reads([nametable_address(v), attribute_address(v), pattern, pattern | 8]);
            return;
        }
        self.tile_fetch_dot::<1>(bus);
        self.tile_fetch_dot::<2>(bus);
        self.tile_fetch_dot::<3>(bus);
        self.tile_fetch_dot::<4>(bus);
        self.tile_fetch_dot::<5>(bus);
        self.tile_fetch_dot::<6>(bus);
        self.tile_fetch_dot::<7>(bus);
        self.tile_fetch_dot::<0>(bus);
    }

    /// One dot of a tile's fetches: fetch phase `PHASE`, known at compile time.
    #[inline(always)]
    fn tile_fetch_dot<const PHASE: u16>(&mut self, bus: &mut impl PpuBus) {
        self.background_fetch(bus, PHASE);
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
        if !bus.fetches_observed() {
            self.sprite_fetch_unobserved(bus, slot);
        } else if bus.only_a12_observed() {
            let nametable = nametable_address(self.regs.v);
            let pattern = self.sprite_pattern_address(slot * 4);
            self.sprite_fetch_unobserved(bus, slot);
            // Dots 1-4 fetch garbage nametable bytes, 5-8 the pattern planes.
            drive_a12_runs(bus, nametable, pattern);
        } else if bus.only_reads_observed() {
            // Two garbage nametable reads, then the pattern planes.
            let nametable = 0x2000 | (self.regs.v & 0x0FFF);
            let pattern = self.sprite_pattern_address(slot * 4);
            self.sprite_fetch_unobserved(bus, slot);
            bus.hear_reads([nametable, nametable, pattern, pattern | 8]);
        } else {
            for phase in 0..8 {
                self.sprite_fetch(bus, slot, phase);
                bus.advance_dots(1);
            }
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
        // Dot 321 neither shifts nor reloads; dot 329 does both (see `Ppu::background_dot`). The
        // shifts do not touch what the fetches read or write, so the other seven come after them.
        if first != 321 {
            self.shift_background();
            self.reload_background_shifters();
        }
        self.fetch_tile(bus);
        self.shift_background_by(7);
        self.regs.oam_bus = self.secondary_oam[0];
        self.regs.rendering_history = 0xFF;
        self.regs.dot = first + 8;
    }

    /// Dots 337-340 of a visible line with rendering on, where nothing observes the fetches, or
    /// only A12 (see [`PpuBus::only_a12_observed`]) or the reads' addresses: the last reload, then two nametable fetches
    /// whose data is unused (see `Ppu::render_dot`); the position moves to the next line.
    #[inline(always)]
    fn run_line_tail_unobserved<R: RegionModel>(&mut self, bus: &mut impl PpuBus) {
        self.shift_background();
        self.reload_background_shifters();
        if bus.fetches_observed() {
            let nametable = nametable_address(self.regs.v);
            if bus.only_a12_observed() {
                // Four dots of nametable fetches: A12 low.
                if bus.a12_high() {
                    bus.set_address(nametable);
                }
                bus.advance_dots(4);
            } else {
                bus.hear_reads([nametable, nametable]);
            }
        }
        self.unused_nametable_unobserved(bus);
        self.regs.oam_bus = self.secondary_oam[0];
        self.regs.rendering_history = history_after(self.regs.rendering_history, true, 4);
        self.regs.dot = 340;
        self.advance_position::<R>();
    }

    /// Blank pixels for dots `dot..dot + run` of the current visible line (pixel x = dot - 1).
    fn fill_blank_pixels(&mut self, dot: u16, run: u32) {
        let first = usize::from(dot.max(1) - 1);
        let end = (usize::from(dot) + run as usize).saturating_sub(1).min(PICTURE_WIDTH);
        if first >= end {
            return;
        }
        let color = self.blank_pixel_color();
        let row = usize::from(self.regs.scanline) * PICTURE_WIDTH;
        if let Some(pixels) = self.frame.get_mut(row + first..row + end) {
            pixels.fill(color);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_bus::{A12Bus, FlatBus};
    use super::super::{Ppu, PpuBus, PpuBusPeek};
    use proptest::prelude::*;

    /// Log tags of a read and of an address-only dot (a write logs its value, below $100).
    const READ: u16 = 0x100;
    const ADDRESS: u16 = 0x200;

    /// A bus that observes the fetches: it logs every access with the dot it belongs to, so the
    /// stretches' per-dot fetch paths are checked, not only the unobserved ones `FlatBus` takes.
    /// With `reads_only` it observes like the MMC5 in its common modes
    /// ([`PpuBus::only_reads_observed`]): reads and writes, no address-only dots.
    struct LoggingBus {
        memory: FlatBus,
        dots: u32,
        log: Vec<(u32, u16, u16)>,
        reads_only: bool,
    }

    impl PpuBusPeek for LoggingBus {
        fn peek(&self, addr: u16) -> u8 {
            self.memory.peek(addr)
        }
        fn peek_window(&self, addr: u16) -> &[u8; 0x400] {
            self.memory.peek_window(addr)
        }
    }

    impl PpuBus for LoggingBus {
        fn read(&mut self, addr: u16) -> u8 {
            self.log.push((self.dots, addr, READ));
            self.memory.read(addr)
        }
        fn write(&mut self, addr: u16, value: u8) {
            self.log.push((self.dots, addr, u16::from(value)));
            self.memory.write(addr, value);
        }
        fn set_address(&mut self, addr: u16) {
            if !self.reads_only {
                self.log.push((self.dots, addr, ADDRESS));
            }
        }
        fn advance_dots(&mut self, dots: u32) {
            self.dots += dots;
        }
        fn only_reads_observed(&self) -> bool {
            self.reads_only
        }
        // Not the default: the reads' dots are computed, as a bus that skips the dots would.
        fn hear_reads<const N: usize>(&mut self, addrs: [u16; N]) {
            for (k, addr) in addrs.into_iter().enumerate() {
                self.log.push((self.dots + 1 + 2 * k as u32, addr, READ));
            }
            self.dots += 2 * N as u32;
        }
    }

    /// The A12 changes in a [`LoggingBus`]'s log, from A12 low.
    fn a12_changes_in(log: &[(u32, u16, u16)]) -> Vec<(u64, bool)> {
        let mut bus = A12Bus::new(FlatBus(Vec::new()), false);
        for &(dots, addr, _) in log {
            bus.dots = u64::from(dots);
            bus.see(addr);
        }
        bus.log
    }

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

    /// Runs the same stretches on a PPU in bulk (on a bus that observes nothing, on one that logs
    /// every access and on one that watches A12 like the MMC3) and dot by dot, comparing after every
    /// stretch.
    fn compare_stretches(
        mut bulk: Ppu,
        mut bulk_bus: FlatBus,
        stretches: &[u32],
    ) -> Result<(), TestCaseError> {
        let logging_bus = |memory: &FlatBus, reads_only| LoggingBus {
            memory: FlatBus(memory.0.clone()),
            dots: 0,
            log: Vec::new(),
            reads_only,
        };
        let (mut observed, mut observed_bus) = (bulk.clone(), logging_bus(&bulk_bus, false));
        let (mut reads, mut reads_bus) = (bulk.clone(), logging_bus(&bulk_bus, true));
        let (mut single, mut single_bus) = (bulk.clone(), logging_bus(&bulk_bus, false));
        let (mut a12, mut a12_bus) = (bulk.clone(), A12Bus::new(FlatBus(bulk_bus.0.clone()), false));
        for (i, &count) in stretches.iter().enumerate() {
            bulk.run_dots(count, &mut bulk_bus);
            observed.run_dots(count, &mut observed_bus);
            reads.run_dots(count, &mut reads_bus);
            a12.run_dots(count, &mut a12_bus);
            for _ in 0..count {
                single.tick_dot(&mut single_bus);
                single_bus.advance_dots(1);
            }
            prop_assert_eq!(bulk.state_bytes(), single.state_bytes(), "after stretch {}", i);
            prop_assert!(bulk.frame_buffer() == single.frame_buffer(), "pictures differ after stretch {}", i);
            prop_assert!(bulk_bus.0 == single_bus.memory.0, "PPU memory differs after stretch {}", i);
            prop_assert_eq!(observed.state_bytes(), single.state_bytes(), "observed, after stretch {}", i);
            prop_assert!(
                observed.frame_buffer() == single.frame_buffer(),
                "observed pictures differ after stretch {}",
                i
            );
            prop_assert!(observed_bus.log == single_bus.log, "observed accesses differ after stretch {}", i);
            prop_assert_eq!(reads.state_bytes(), single.state_bytes(), "reads heard, after stretch {}", i);
            prop_assert!(reads.frame_buffer() == single.frame_buffer(), "reads heard, pictures differ {}", i);
            let single_reads: Vec<_> = single_bus.log.iter().copied().filter(|e| e.2 != ADDRESS).collect();
            prop_assert!(reads_bus.log == single_reads, "heard reads differ after stretch {}", i);
            prop_assert_eq!(a12.state_bytes(), single.state_bytes(), "A12 watched, after stretch {}", i);
            prop_assert!(a12.frame_buffer() == single.frame_buffer(), "A12 watched, pictures differ {}", i);
            prop_assert!(a12_bus.memory.0 == single_bus.memory.0, "A12 watched, memory differs {}", i);
            prop_assert!(
                a12_bus.log == a12_changes_in(&single_bus.log),
                "A12 changes differ after stretch {}",
                i
            );
        }
        Ok(())
    }

    /// The background quads (derived from palette RAM and PPUMASK) follow changes between stretches,
    /// as CPU writes make them: the pictures stay those of `tick_dot`.
    #[test]
    fn background_quads_follow_palette_and_mask_changes() {
        let memory: Vec<u8> = (0..0x4000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        let palette: Vec<u8> = (0..32).collect();
        let regs = vec![0; core::mem::size_of::<super::super::PpuRegs>()];
        // Every sprite below the picture: tiles without sprites, the quads path.
        let (mut bulk, mut bulk_bus) = arbitrary_ppu(&regs, &[0xF0; 256], &palette, &memory);
        bulk.regs.mask = 0x1E;
        let (mut single, mut single_bus) = (bulk.clone(), FlatBus(bulk_bus.0.clone()));
        for round in 0..6 {
            bulk.run_dots(3 * 341, &mut bulk_bus);
            for _ in 0..3 * 341 {
                single.tick_dot(&mut single_bus);
                single_bus.advance_dots(1);
            }
            assert!(bulk.frame_buffer() == single.frame_buffer(), "pictures differ in round {round}");
            for ppu in [&mut bulk, &mut single] {
                let [.., palette] = ppu.state_bytes_mut();
                palette[1 + round] ^= 0x15;
                ppu.regs.mask ^= 0x20 << (round % 3);
            }
        }
    }

    /// Against a walk dot by dot: the last stretch start (dot 1, 9, ..., 337) the walk reaches within
    /// the dots, none where the walk ends past line 240 or starts outside the picture.
    #[test]
    fn dots_to_stretch_start_is_the_last_start_walked_to() {
        let stretch_start = |dot: u16| ((1..=329).contains(&dot) && dot % 8 == 1) || dot == 337;
        let mut ppu = Ppu::new();
        for scanline in [0u16, 1, 120, 238, 239, 240, 241, 261] {
            for dot in 0..341u16 {
                ppu.regs.scanline = scanline;
                ppu.regs.dot = dot;
                let (mut line, mut at, mut last_start) = (scanline, dot, 0);
                for within in 0..=800u32 {
                    if within > 0 {
                        at += 1;
                        if at == 341 {
                            (line, at) = (line + 1, 0);
                        }
                        if stretch_start(at) {
                            last_start = within;
                        }
                    }
                    let expected = if scanline >= 240 || line > 240 { 0 } else { last_start };
                    assert_eq!(ppu.dots_to_stretch_start(within), expected, "{scanline}:{dot} + {within}");
                }
            }
        }
    }

    #[test]
    fn history_after_is_one_shift_per_dot() {
        for history in 0..=255u8 {
            for rendering in [false, true] {
                let mut expected = history;
                for dots in 0..20 {
                    assert_eq!(
                        super::history_after(history, rendering, dots),
                        expected,
                        "{history} {rendering} {dots}"
                    );
                    expected = (expected << 1) | u8::from(rendering);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// `run_dots(n)` is `n` calls of `tick_dot`, from any state and in stretches of any length:
        /// same registers, memories, picture and bus contents after every stretch, and, on a bus
        /// that observes the fetches, the same accesses on the same dots.
        #[test]
        fn run_dots_is_tick_dot_repeated(
            regs in proptest::collection::vec(any::<u8>(), core::mem::size_of::<super::super::PpuRegs>()),
            oam in proptest::collection::vec(any::<u8>(), 256),
            palette in proptest::collection::vec(0u8..64, 32),
            memory in proptest::collection::vec(any::<u8>(), 0x4000),
            rendering in any::<bool>(),
            stretches in proptest::collection::vec(0u32..40, 1..150),
        ) {
            let (mut bulk, bulk_bus) = arbitrary_ppu(&regs, &oam, &palette, &memory);
            if rendering {
                bulk.regs.mask |= 0x18;
            }
            compare_stretches(bulk, bulk_bus, &stretches)?;
        }

        /// The same from the edges of the bulk paths (tiles, sprite slots, the line's last dots,
        /// lines 240-260) on a rendered line, in short stretches, so that every bulk path starts and
        /// ends next to single dots.
        #[test]
        fn run_dots_is_tick_dot_repeated_at_path_edges(
            regs in proptest::collection::vec(any::<u8>(), core::mem::size_of::<super::super::PpuRegs>()),
            oam in proptest::collection::vec(any::<u8>(), 256),
            palette in proptest::collection::vec(0u8..64, 32),
            memory in proptest::collection::vec(any::<u8>(), 0x4000),
            scanline in prop_oneof![0u16..240, 239u16..262],
            dot in prop::sample::select(vec![0u16, 1, 9, 241, 249, 255, 257, 313, 321, 329, 336, 337, 338, 340]),
            stretches in proptest::collection::vec(0u32..12, 1..60),
        ) {
            let (mut bulk, bulk_bus) = arbitrary_ppu(&regs, &oam, &palette, &memory);
            bulk.regs.mask |= 0x18;
            bulk.regs.scanline = scanline;
            bulk.regs.dot = dot;
            compare_stretches(bulk, bulk_bus, &stretches)?;
        }
    }
}
