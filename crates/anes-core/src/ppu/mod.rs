//! The PPU (the 2C02, and the PAL 2C07 and Dendy timings through `RegionModel`), ticked one dot at a time.
//!
//! Interface contract with the console:
//! - [`Ppu::tick_dot`] advances exactly one dot (341 dots x 262 scanlines, odd frames one dot shorter
//!   while rendering); every memory access goes through the [`PpuBus`];
//! - the CPU bus calls [`Ppu::read_register`] / [`Ppu::write_register`] for $2000-$3FFF, after the PPU
//!   has caught up to the moment of the access within the CPU cycle;
//! - [`Ppu::nmi_line`] is the /NMI output level, sampled by the CPU at the end of every CPU cycle.
//!
//! Files: `registers.rs` (the CPU-visible registers, the I/O latch), `background.rs` (the tile fetch
//! pipeline and the scroll counters), `sprites.rs` (evaluation, fetches, sprite output units),
//! `pixel.rs` (the pixel multiplexer), `rgb.rs` (palette index to RGB), `address_bus.rs` (CPU accesses
//! meeting the fetch cadence on the multiplexed address bus: the PPUDATA read's late buffer fill, the
//! octal latch, the delayed $2006 copy).
//!
//! State: everything that influences future behaviour is in [`Ppu::state_bytes`]; the frame buffer is
//! output only.
//!
//! Timing model (measured with blargg's ppu_vbl_nmi, sprite_hit_tests and sprite_overflow_tests at
//! the console's default CPU/PPU alignment 0):
//! - `tick_dot` processes the dot at (`scanline`, `dot`) and then advances; a register access sees
//!   every dot that completed before it. VBlank is set while processing (241, 1) and cleared with the
//!   sprite flags while processing (261, 1);
//! - a $2002 read when (241, 1) is the next dot returns the flag clear and suppresses it for the frame;
//! - the /NMI pin is registered at the start of each dot, so it follows the flag one dot late. With
//!   the CPU sampling /NMI at the end of its cycle this reproduces nesdev's "reading on the same clock
//!   or one later suppresses the NMI";
//! - the odd-frame skip of dot (261, 340) depends on the rendering enable as it was at the start of
//!   dot 338 (PPUMASK changes reach the skip logic two dots late);
//! - the rendering pipeline (fetches, shifters, evaluation, sprite units, pixels) sees a change of
//!   the rendering enable three dots late (`RENDERING_DELAY_DOTS`, from `rendering_history`), so a
//!   toggle happens inside `tick_dot`, never inside a stretch of `run_dots`.

use crate::region::{PpuTiming, RegionModel, with_region_model};

mod a12;
mod address_bus;
mod background;
mod background_quads;
mod pixel;
mod registers;
pub mod rgb;
mod sprites;
mod stretch;
mod tile_fetches;

use background_quads::BackgroundQuads;

/// Side-effect-free view of the PPU's address bus, for peeks (debuggers, disassembly, state diffs).
pub trait PpuBusPeek {
    /// What a read of `addr` would return, without side effects.
    fn peek(&self, addr: u16) -> u8;
    /// The 1 KiB of memory (a CHR bank, a nametable) that `addr` falls in, as peeks see it: `peek(a)`
    /// is `peek_window(a)[a & 0x3FF]` for every `a` in it.
    fn peek_window(&self, addr: u16) -> &[u8; 0x400];
    /// [`PpuBusPeek::peek`] of two addresses in the same 1 KiB window (`first >> 10 == second >> 10`),
    /// such as a pattern row's two planes or a tile's nametable and attribute bytes: one bank lookup.
    #[inline(always)]
    fn peek_pair(&self, first: u16, second: u16) -> (u8, u8) {
        (self.peek(first), self.peek(second))
    }
}

/// The PPU's view of its address bus ($0000-$3EFF: cartridge CHR and the nametables). Palette RAM is
/// inside the PPU and never reaches this bus.
pub trait PpuBus: PpuBusPeek {
    /// A read cycle at `addr`.
    fn read(&mut self, addr: u16) -> u8;
    /// A write cycle at `addr`.
    fn write(&mut self, addr: u16, value: u8);
    /// `addr` is driven on the bus without a data transfer (mappers watching A12 see it).
    fn set_address(&mut self, addr: u16);
    /// `dots` more dots are done (a bus that interleaves other clocks with the PPU's counts them).
    #[inline(always)]
    fn advance_dots(&mut self, dots: u32) {
        let _ = dots;
    }
    /// True when something besides the data sees the PPU's fetches: a board watching the address
    /// bus, or other clocks interleaved with the dots. When false, a read is a [`PpuBusPeek::peek`]
    /// and [`PpuBus::set_address`] and [`PpuBus::advance_dots`] do nothing, so a run of fetches may
    /// skip the address-only dots and the unused reads.
    #[inline(always)]
    fn fetches_observed(&self) -> bool {
        true
    }
    /// True when what sees the fetches sees only the changes of A12 ($1000), like the MMC3: then a
    /// run of fetches may be peeks, with one access per run of dots that drive A12 alike (its
    /// first) and [`PpuBus::advance_dots`] for every dot. What the board is owed in between (M2
    /// edges, which it counts only while A12 stays low) reaches it before its next access. Its
    /// accesses never change what a peek returns.
    #[inline(always)]
    fn only_a12_observed(&self) -> bool {
        false
    }
    /// With [`PpuBus::only_a12_observed`]: the level of A12 the bus saw last (true = high).
    #[inline(always)]
    fn a12_high(&self) -> bool {
        false
    }
    /// True when what sees the fetches sees only the reads' addresses and every read returns what a
    /// [`PpuBusPeek::peek`] would (the MMC5 while it supplies no data itself): then a run of
    /// fetches may be peeks, with the run's reads told in one [`PpuBus::hear_reads`]. Its reads
    /// never change what a peek returns.
    #[inline(always)]
    fn only_reads_observed(&self) -> bool {
        false
    }
    /// With [`PpuBus::only_reads_observed`]: the next `2 * N` dots (the current one first) read
    /// `addrs`, one on every second dot from the dot after the current one, and drive only
    /// addresses in between; their data was peeked. Stands for those dots' accesses and
    /// [`PpuBus::advance_dots`] calls.
    #[inline(always)]
    fn hear_reads<const N: usize>(&mut self, addrs: [u16; N]) {
        for addr in addrs {
            self.advance_dots(1);
            self.read(addr);
            self.advance_dots(1);
        }
    }
}

/// Dots per scanline.
pub const DOTS_PER_SCANLINE: u16 = 341;
/// Width of the picture in pixels.
pub const PICTURE_WIDTH: usize = 256;
/// Height of the picture in pixels.
pub const PICTURE_HEIGHT: usize = 240;

/// The line after the picture's post-render line: reaching its dot 0 completes a picture (and ages
/// the I/O latch), in every region. The line whose dot 1 sets the VBlank flag is per region
/// (`PpuTiming::vblank_scanline`: 241, Dendy 291).
const PICTURE_END_SCANLINE: u16 = 241;
/// Dots between a PPUMASK write and the odd-frame skip logic seeing the new rendering enable. nesdev
/// "PPU registers" (PPUMASK): toggling rendering takes effect about 3-4 dots after the write;
/// ppu_vbl_nmi 10-even_odd_timing pins the skip decision to the enable as it was at the start of dot 338.
const SKIP_DECISION_DELAY_DOTS: u8 = 2;
/// Dots between a PPUMASK write and the rendering pipeline (fetches, shifters, evaluation, sprite
/// units, pixel output) seeing the new rendering enable: nesdev "PPU registers" (PPUMASK), about 3-4
/// dots. AccuracyCoin "BG Serial In" toggles rendering off across three reloads 18 dots apart, which
/// shows the shifters' serial input only with the effect 3 dots late; "Stale Sprite Shift Regs" step 6
/// disables it just before sprite slot 0's fetches complete.
const RENDERING_DELAY_DOTS: u8 = 3;
/// `PpuRegs::oam_corruption`: a corruption is owed (the low 5 bits name the OAM row).
const OAM_CORRUPTION_PENDING: u8 = 0x80;

/// PPUCTRL ($2000) bits.
mod ctrl {
    /// VRAM address increment per PPUDATA access: 0 = 1, 1 = 32.
    pub const INCREMENT_32: u8 = 0x04;
    /// Sprite pattern table for 8x8 sprites: $1000 when set.
    pub const SPRITE_TABLE: u8 = 0x08;
    /// Background pattern table: $1000 when set.
    pub const BACKGROUND_TABLE: u8 = 0x10;
    /// 8x16 sprites.
    pub const SPRITE_16: u8 = 0x20;
    /// Generate an NMI at the start of VBlank.
    pub const NMI_ENABLE: u8 = 0x80;
}

/// PPUMASK ($2001) bits.
mod mask {
    /// Greyscale: palette indices are ANDed with $30.
    pub const GREYSCALE: u8 = 0x01;
    /// Show the background in the leftmost 8 pixels.
    pub const BACKGROUND_LEFT: u8 = 0x02;
    /// Show sprites in the leftmost 8 pixels.
    pub const SPRITES_LEFT: u8 = 0x04;
    /// Show the background.
    pub const BACKGROUND: u8 = 0x08;
    /// Show sprites.
    pub const SPRITES: u8 = 0x10;
    /// Either layer enabled: the PPU renders (fetches, evaluates, increments its counters).
    pub const RENDERING: u8 = BACKGROUND | SPRITES;
}

/// PPUSTATUS ($2002) bits.
mod status {
    /// Sprite overflow.
    pub const SPRITE_OVERFLOW: u8 = 0x20;
    /// Sprite 0 hit.
    pub const SPRITE_0_HIT: u8 = 0x40;
    /// Vertical blank started.
    pub const VBLANK: u8 = 0x80;
}

crate::layout::state_struct! {
    /// Every register, latch, counter and flag of the PPU (everything but the memories).
    ///
    /// Field names follow the nesdev wiki ("PPU scrolling" for `v`, `t`, `x`, `w`).
    pub struct PpuRegs {
        /// Pictures completed since power-on (incremented on reaching scanline 241, dot 0).
        pub frames_completed: u64,
        /// Current VRAM address (15 bits: fine Y, nametable, coarse Y, coarse X).
        pub v: u16,
        /// Temporary VRAM address (the top-left of the screen while rendering).
        pub t: u16,
        /// Scanline about to be processed (0-261).
        pub scanline: u16,
        /// Dot about to be processed (0-340).
        pub dot: u16,
        /// Background pattern shifter, low bit plane (bit 15 = the next pixel before fine X).
        pub bg_pattern_lo: u16,
        /// Background pattern shifter, high bit plane.
        pub bg_pattern_hi: u16,
        /// Background palette shifter, low bit (one bit per pixel).
        pub bg_attr_lo: u16,
        /// Background palette shifter, high bit.
        pub bg_attr_hi: u16,
        /// Fine X scroll (0-7).
        pub x: u8,
        /// First/second write toggle of $2005/$2006 (0 or 1).
        pub w: u8,
        /// PPUCTRL ($2000).
        pub ctrl: u8,
        /// PPUMASK ($2001).
        pub mask: u8,
        /// PPUSTATUS flags (bits 5-7; bits 0-4 are always 0 here, they read from the I/O latch).
        pub status: u8,
        /// OAMADDR ($2003); also the sprite evaluation pointer while rendering.
        pub oam_addr: u8,
        /// The PPUDATA read buffer.
        pub read_buffer: u8,
        /// The I/O data latch between the CPU and the PPU ("PPU open bus").
        pub io_latch: u8,
        /// Per bit of `io_latch`: frames left before the bit decays to 0 (0 = already decayed).
        pub io_decay_frames: [u8; 8],
        /// 1 during odd frames (the pre-render line is one dot shorter when rendering).
        pub odd_frame: u8,
        /// 1 when a $2002 read one dot before VBlank suppresses setting the flag this frame.
        pub vblank_suppress: u8,
        /// 1 from power-on or reset until the pre-render line: writes to $2000/$2001/$2005/$2006 are ignored.
        pub reset_warmup: u8,
        /// Nametable byte fetched for the next tile.
        pub nt_latch: u8,
        /// Attribute bits (0-3) fetched for the next tile.
        pub at_latch: u8,
        /// Pattern low bit plane fetched for the next tile.
        pub pattern_lo_latch: u8,
        /// Pattern high bit plane fetched for the next tile.
        pub pattern_hi_latch: u8,
        /// The value on the internal OAM data bus (what $2004 returns while rendering).
        pub oam_bus: u8,
        /// Sprite output units: pattern low bit plane (already flipped horizontally, bit 7 leftmost).
        pub sprite_pattern_lo: [u8; 8],
        /// Sprite output units: pattern high bit plane.
        pub sprite_pattern_hi: [u8; 8],
        /// Sprite output units: attribute byte.
        pub sprite_attr: [u8; 8],
        /// Sprite output units: X position.
        pub sprite_x: [u8; 8],
        /// Sprite output units loaded for the current scanline (0-8).
        pub sprite_count: u8,
        /// 1 when output unit 0 holds OAM sprite 0 on the current scanline.
        pub sprite_0_in_unit_0: u8,
        /// Evaluation: next byte of secondary OAM to write (32 = full).
        pub eval_secondary_addr: u8,
        /// Evaluation: bytes left to copy of an in-range sprite (or to read after an overflow).
        pub eval_copy_left: u8,
        /// Evaluation: 1 once all 64 sprites were examined (or the overflow sprite was read).
        pub eval_done: u8,
        /// Evaluation: 1 when sprite 0 (the first sprite examined) is in range for the next scanline.
        pub eval_sprite_0: u8,
        /// Where the sprite output units stand while rendering is disabled (`sprite_units::OFF_*`;
        /// see `Ppu::stop_sprite_units`); `OFF_NONE` while rendering is enabled.
        pub sprite_units_off: u8,
        /// Rendering enabled (PPUMASK bit 3 or 4) at the start of each of the last 8 dots, most recent in
        /// bit 0.
        pub rendering_history: u8,
        /// The sprite 0 hit found but not yet visible in PPUSTATUS: the frame position
        /// (`scanline * 341 + dot`) from which it shows; 0 = none pending.
        pub sprite_0_hit_at: u32,
        /// The same for the sprite overflow flag.
        pub sprite_overflow_at: u32,
        /// OAM corruption owed since rendering was disabled on a rendering line (see
        /// `Ppu::seed_oam_corruption`): `OAM_CORRUPTION_PENDING` | the secondary OAM address then
        /// (0-31), or 0 = none.
        pub oam_corruption: u8,
        /// Sprite output units (bit = unit): the first pixel's low bit plane, drawn at x = 0 of
        /// scanline 0 after the odd-frame skip (see `Ppu::sprite_units_skip`).
        pub sprite_first_lo: u8,
        /// The same for the high bit plane.
        pub sprite_first_hi: u8,
        /// Dots until a PPUDATA read fills the read buffer (1 = on the next dot; 0 = none owed; see
        /// `address_bus.rs`), with bit 7 set for a read made outside rendering, whose byte waits in
        /// `data_pins`.
        pub data_read_fill: u8,
        /// The octal latch outside the PPU: the low address byte of the last ALE dot, as far as a
        /// collision with a CPU access needs it (see `address_bus.rs`).
        pub octal_latch: u8,
        /// 1 when the next fetch read takes its low address byte from `octal_latch`.
        pub latch_held: u8,
        /// The byte last read over the PPU's shared address/data pins, as far as a collision needs it.
        pub data_pins: u8,
        /// Dots until a $2006 second write's copy of `t` into `v` (1 = before the next dot; 0 = none
        /// owed; see `address_bus.rs`).
        pub v_copy_delay: u8,
    }
}

const _: () = assert!(core::mem::size_of::<PpuRegs>() == 104);

impl PpuRegs {
    /// Registers at power-on (nesdev "PPU power up state").
    fn power_on() -> PpuRegs {
        PpuRegs {
            // "+0+x xxxx": VBlank and sprite overflow are often set at power-on.
            status: status::VBLANK | status::SPRITE_OVERFLOW,
            reset_warmup: 1,
            ..PpuRegs::default()
        }
    }

    #[inline(always)]
    fn rendering_enabled(&self) -> bool {
        self.mask & mask::RENDERING != 0
    }

    /// The frame position of the dot about to be processed, `scanline * 341 + dot`.
    #[inline(always)]
    fn position(&self) -> u32 {
        u32::from(self.scanline) * u32::from(DOTS_PER_SCANLINE) + u32::from(self.dot)
    }

    /// PPUSTATUS's flags as a read sees them now: the sprite flags show one dot after the dot that
    /// sets them (they pass a latch in the PPU's pipeline; TriCNES, the AccuracyCoin author's
    /// emulator, delays them likewise), which, with the read sampling them as it ends, places them
    /// where AccuracyCoin "$2002 flag timing" (error 2) finds them.
    #[inline]
    fn visible_status(&self) -> u8 {
        let now = self.position();
        let hit = self.sprite_0_hit_at != 0 && now >= self.sprite_0_hit_at;
        let overflow = self.sprite_overflow_at != 0 && now >= self.sprite_overflow_at;
        self.status
            | if hit { status::SPRITE_0_HIT } else { 0 }
            | if overflow { status::SPRITE_OVERFLOW } else { 0 }
    }

    /// True when the dots around a register read (the PPU may stand anywhere from the read's start to
    /// the end of its cycle, at most a CPU cycle apart) cannot change PPUSTATUS's sprite flags or the
    /// I/O latch's decay: no flag found in the last few dots or waiting to show, the flags' clear
    /// (pre-render line, dot 1) and the latch's decay (scanline 241, dot 0) are not that near,
    /// sprite 0 hit cannot be found (it needs rendering, a line that outputs pixels with sprite 0 in
    /// output unit 0, or the end of a line where the units are reloaded) and overflow cannot be found
    /// (it needs sprite evaluation, dots 65-256 of a visible line, not yet done).
    #[inline]
    fn sprite_flags_settled(&self, pre_render: u16) -> bool {
        // More dots than a CPU cycle spans.
        const NEAR: u32 = 6;
        const DOTS: u32 = DOTS_PER_SCANLINE as u32;
        const DECAY: u32 = PICTURE_END_SCANLINE as u32 * DOTS;
        let clear = u32::from(pre_render) * DOTS + 1;
        let now = self.position();
        // Saturating: a run keeps `at` within a frame's dots, but a loaded snapshot may hold any u32.
        let recent = |at: u32| at != 0 && at.saturating_add(NEAR) > now;
        if recent(self.sprite_0_hit_at) || recent(self.sprite_overflow_at) {
            return false;
        }
        if now.abs_diff(clear) <= NEAR || now.abs_diff(DECAY) <= NEAR {
            return false;
        }
        if !self.rendering_enabled() && self.rendering_history & 0x0F == 0 {
            return true;
        }
        let (scanline, dot) = (self.scanline, self.dot);
        let hit = self.sprite_0_hit_at == 0
            && self.is_rendering_line(pre_render)
            && (self.sprite_0_in_unit_0 != 0 || dot >= 250);
        let overflow = self.sprite_overflow_at == 0
            && scanline < 240
            && self.eval_done == 0
            && (60..=256).contains(&dot);
        !hit && !overflow
    }

    /// A sprite flag (`flag`) set while processing dot `dot` of the current scanline: visible once the
    /// dot after it has completed.
    #[inline]
    fn set_sprite_flag(&mut self, flag: u8, dot: u16) {
        let at = u32::from(self.scanline) * u32::from(DOTS_PER_SCANLINE) + u32::from(dot) + 2;
        let pending = if flag == status::SPRITE_0_HIT {
            &mut self.sprite_0_hit_at
        } else {
            &mut self.sprite_overflow_at
        };
        if self.status & flag == 0 && *pending == 0 {
            *pending = at;
        }
    }

    /// True on the scanlines that render (visible and pre-render), rendering enabled or not.
    #[inline(always)]
    fn is_rendering_line(&self, pre_render: u16) -> bool {
        self.scanline < 240 || self.scanline == pre_render
    }

    /// True on the scanlines that render (visible and pre-render) while rendering is enabled: where
    /// the PPU owns its address bus, OAMADDR and `v`.
    #[inline(always)]
    fn is_rendering(&self, pre_render: u16) -> bool {
        self.rendering_enabled() && self.is_rendering_line(pre_render)
    }
}

/// OAMADDR increments of the 2C07's forced OAM refresh (`PpuTiming::forced_oam_refresh`) in dots
/// `first..=last` of a refreshed line: one on each even dot from 2 to 340.
#[inline(always)]
fn oam_refresh_steps(first: u16, last: u16) -> u16 {
    let last = last.min(DOTS_PER_SCANLINE - 1);
    let first = first.max(1);
    if first > last { 0 } else { last / 2 - (first - 1) / 2 }
}

/// The 2C02 (or the 2C07, or the Dendy's UA6538: [`Ppu::with_timing`]).
// `repr(C)` with the region's numbers last: in Rust's own layout they moved the fields around, and
// the demo cost 4% more host instructions for it (callgrind, 300 frames); in this order, 2% (what
// reading the numbers costs).
#[derive(Clone)]
#[repr(C)]
pub struct Ppu {
    regs: PpuRegs,
    oam: [u8; 256],
    secondary_oam: [u8; 32],
    palette: [u8; 32],
    /// 256x240 palette indices with emphasis (output only; see [`Ppu::frame_buffer`]).
    frame: Box<[u16; PICTURE_WIDTH * PICTURE_HEIGHT]>,
    /// The region's line counts and flags, chosen at power-on. Not state: the machine state's region
    /// decides it.
    timing: PpuTiming,
    /// The colours of background tile rows four pixels at a time, for rendered tiles without
    /// sprites: derived from palette RAM and PPUMASK, not state (see `stretch.rs`).
    background_quads: BackgroundQuads,
    /// The sprites in range of a line, for $2002 polls (derived from OAM, not state: see
    /// `sprites.rs`).
    in_range: sprites::InRangeSprites,
    /// True when the state may have changed since the console last summed it for the sync digest
    /// (`state/digest.rs`, which keeps the sum while this is false). Every `&mut self` method
    /// reachable from outside this module sets it: with the fields private, they are the only way
    /// the state can change. Not state.
    digest_stale: bool,
    /// The same for primary OAM and palette RAM alone, which only their writes change ($2004,
    /// $2007, OAM corruption, power-on, restores): the digest keeps their 36 words' sum while the
    /// registers' and secondary OAM's move with every line.
    tables_digest_stale: bool,
}

impl core::fmt::Debug for Ppu {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ppu")
            .field("regs", &self.regs)
            .field("oam", &self.oam)
            .field("secondary_oam", &self.secondary_oam)
            .field("palette", &self.palette)
            .finish_non_exhaustive()
    }
}

impl Default for Ppu {
    fn default() -> Self {
        Self::new()
    }
}

impl Ppu {
    /// An NTSC PPU (2C02) at power-on: scanline 0, dot 0. Allocates the frame buffer (the only
    /// allocation).
    pub fn new() -> Self {
        Ppu::with_timing(crate::region::NTSC.ppu)
    }

    /// A PPU of the region whose numbers are `timing` at power-on (see [`Ppu::new`]).
    pub fn with_timing(timing: PpuTiming) -> Self {
        Ppu {
            timing,
            regs: PpuRegs::power_on(),
            oam: [0; 256],
            secondary_oam: [0; 32],
            palette: [0; 32],
            frame: vec![0; PICTURE_WIDTH * PICTURE_HEIGHT]
                .into_boxed_slice()
                .try_into()
                .expect("the frame buffer has exactly PICTURE_WIDTH * PICTURE_HEIGHT pixels"),
            background_quads: BackgroundQuads::EMPTY,
            in_range: sprites::InRangeSprites::default(),
            digest_stale: true,
            tables_digest_stale: true,
        }
    }

    /// True when the state may have changed since [`Ppu::mark_digest_fresh`].
    #[inline(always)]
    pub(crate) fn digest_stale(&self) -> bool {
        self.digest_stale
    }

    /// True when primary OAM or palette RAM may have changed since [`Ppu::mark_digest_fresh`].
    #[inline(always)]
    pub(crate) fn tables_digest_stale(&self) -> bool {
        self.tables_digest_stale
    }

    /// The console has summed the state as it stands.
    #[inline(always)]
    pub(crate) fn mark_digest_fresh(&mut self) {
        self.digest_stale = false;
        self.tables_digest_stale = false;
    }

    /// The power-on choices of the console (see `NesConfig`), on a PPU just made by
    /// [`Ppu::with_timing`]: PPUSTATUS's VBlank and sprite overflow flags set or clear ("+0+x xxxx"),
    /// whether the warm-up ignores writes until the pre-render line, and palette RAM and OAM (both
    /// "unspecified" at power; palette entries are stored through their mirrors, so $3F10-style
    /// slots stay 0 as writes leave them).
    pub(crate) fn set_power_on_state(
        &mut self,
        flags_set: bool,
        warm_up: bool,
        palette: &[u8; 32],
        oam: &[u8; 256],
    ) {
        self.digest_stale = true;
        self.tables_digest_stale = true;
        self.regs.status = if flags_set { status::VBLANK | status::SPRITE_OVERFLOW } else { 0 };
        self.regs.reset_warmup = u8::from(warm_up);
        self.palette = [0; 32];
        for (addr, &value) in (0u16..).zip(palette) {
            self.palette[pixel::palette_index(addr)] = value & 0x3F;
        }
        self.oam = *oam;
        self.in_range.forget();
    }

    /// The reset button was pressed (nesdev "PPU power up state", column "after reset"): PPUCTRL,
    /// PPUMASK, the write toggle, the scroll part of `t`, fine X, the read buffer and the odd-frame
    /// flag are cleared; OAM, palette, `v` and OAMADDR are kept; writes to $2000/$2001/$2005/$2006
    /// are ignored until the next pre-render line.
    pub fn reset(&mut self) {
        self.digest_stale = true;
        let r = &mut self.regs;
        r.ctrl = 0;
        r.mask = 0;
        r.w = 0;
        r.t = 0;
        r.x = 0;
        r.read_buffer = 0;
        if r.data_read_fill & address_bus::DATA_READ_HELD != 0 {
            // The cleared buffer stays clear.
            r.data_read_fill = 0;
        }
        r.odd_frame = 0;
        r.reset_warmup = 1;
    }

    /// Advances one dot.
    pub fn tick_dot(&mut self, bus: &mut impl PpuBus) {
        with_region_model!(self.timing.region, R => self.tick_dot_as::<R>(bus))
    }

    /// [`Ppu::tick_dot`] in region `R` (the PPU's own).
    #[inline]
    pub fn tick_dot_as<R: RegionModel>(&mut self, bus: &mut impl PpuBus) {
        self.digest_stale = true;
        if self.regs.bus_collision_pending() {
            self.tick_dot_colliding::<R>(bus);
        } else {
            self.tick_dot_plain::<R>(bus);
        }
    }

    /// One dot, the address bus left to the fetches (`tick_dot` without a collision owed).
    #[inline(always)]
    fn tick_dot_plain<R: RegionModel>(&mut self, bus: &mut impl PpuBus) {
        let history = (self.regs.rendering_history << 1) | u8::from(self.regs.rendering_enabled());
        self.regs.rendering_history = history;
        // The rendering enable as the pipeline sees it on this dot, and on the dot before.
        let rendering = history & (1 << RENDERING_DELAY_DOTS) != 0;
        if rendering != (history & (2 << RENDERING_DELAY_DOTS) != 0) {
            if rendering {
                self.restart_sprite_units();
                if self.regs.is_rendering_line(R::TIMING.ppu.pre_render_scanline) {
                    // Enabled again outside VBlank: the owed corruption is dropped (see
                    // `Ppu::seed_oam_corruption`).
                    self.regs.oam_corruption = 0;
                }
            } else {
                self.seed_oam_corruption();
                self.stop_sprite_units();
            }
        }
        let scanline = self.regs.scanline;
        if scanline < 240 {
            let dot = self.regs.dot;
            let x = dot.wrapping_sub(1);
            if rendering {
                if x < 256 {
                    // The hot path: dots 1-256 of a rendered line.
                    self.background_dot(bus, dot);
                    self.sprite_evaluation_dot(dot);
                    if dot == 256 {
                        self.regs.v = background::increment_y(self.regs.v);
                    }
                    self.output_rendered_pixel(x);
                } else {
                    self.render_dot(bus, false);
                }
            } else if x < 256 {
                self.output_blank_pixel(x);
            }
        } else if scanline == R::TIMING.ppu.pre_render_scanline {
            if self.regs.dot == 340
                && self.regs.odd_frame != 0
                && R::TIMING.ppu.odd_frame_skip
                && self.regs.rendering_history & (1 << SKIP_DECISION_DELAY_DOTS) != 0
            {
                // nesdev "PPU frame timing": on odd frames with rendering enabled, the last dot of the
                // pre-render line is skipped: this dot is scanline 0, dot 0 instead, and it performs
                // the read half of the last dummy nametable fetch.
                self.sprite_units_line_end();
                self.sprite_units_skip();
                let r = &mut self.regs;
                r.scanline = 0;
                r.dot = 0;
                r.odd_frame = 0;
                self.unused_nametable_dot(bus, 340);
                self.regs.oam_bus = self.secondary_oam[0];
                self.advance_position::<R>();
                return;
            }
            if self.regs.dot == 1 {
                // nesdev "PPU registers" (PPUSTATUS): all three flags clear at dot 1 of the pre-render
                // line; the power-on/reset write lockout ends here too ("PPU power up state").
                self.regs.status = 0;
                self.regs.sprite_0_hit_at = 0;
                self.regs.sprite_overflow_at = 0;
                self.regs.reset_warmup = 0;
            }
            if rendering {
                // Rendering enabled during VBlank: an owed OAM corruption happens on the first dot
                // of this line.
                self.corrupt_oam();
                self.render_dot(bus, true);
            }
        } else if scanline == R::TIMING.ppu.vblank_scanline && self.regs.dot == 1 {
            // A $2002 read on the previous dot suppresses the flag (and so the NMI) for this frame.
            if self.regs.vblank_suppress == 0 {
                self.regs.status |= status::VBLANK;
            }
            self.regs.vblank_suppress = 0;
        } else if let Some((first, last)) = R::TIMING.ppu.forced_oam_refresh
            && (first..=last).contains(&scanline)
        {
            let dot = self.regs.dot;
            self.regs.oam_addr = self.regs.oam_addr.wrapping_add(oam_refresh_steps(dot, dot) as u8);
        }
        self.advance_position::<R>();
    }

    /// One dot of the rendering pipeline on a visible (`pre_render` false) or the pre-render line,
    /// rendering enabled (nesdev "PPU rendering", frame timing diagram).
    #[inline(always)]
    fn render_dot(&mut self, bus: &mut impl PpuBus, pre_render: bool) {
        let dot = self.regs.dot;
        match dot {
            0 => {
                if !pre_render {
                    self.idle_dot_address(bus);
                }
                self.regs.oam_bus = self.secondary_oam[0];
            }
            1..=256 => {
                self.background_dot(bus, dot);
                if !pre_render {
                    self.sprite_evaluation_dot(dot);
                }
                if dot == 256 {
                    self.regs.v = background::increment_y(self.regs.v);
                }
            }
            257..=320 => {
                if dot == 257 {
                    // nesdev "PPU rendering": the shifters shift on dots 2-257 and reload on dots 9,
                    // 17, ..., 257; then they hold until dot 322, so the tile fetched at dots 249-256
                    // is still in them if rendering is off through the prefetch (AccuracyCoin "Stale
                    // BG Shift Registers").
                    self.shift_background();
                    self.reload_background_shifters();
                    self.regs.v = background::copy_horizontal(self.regs.v, self.regs.t);
                    self.start_sprite_fetches(pre_render);
                }
                if pre_render && (280..=304).contains(&dot) {
                    self.regs.v = background::copy_vertical(self.regs.v, self.regs.t);
                }
                self.sprite_fetch_dot(bus, dot);
                // nesdev "PPU registers" (OAMADDR): set to 0 on every dot 257-320 while rendering.
                self.regs.oam_addr = 0;
            }
            321..=336 => {
                self.background_dot(bus, dot);
                self.regs.oam_bus = self.secondary_oam[0];
            }
            _ => {
                // 337-340: the last reload, then two nametable fetches whose data is unused (mappers
                // such as MMC5 watch them). The shift at 337 finishes moving the first tile into the
                // high bytes.
                if dot == 337 {
                    self.shift_background();
                    self.reload_background_shifters();
                }
                self.unused_nametable_dot(bus, dot);
                self.regs.oam_bus = self.secondary_oam[0];
            }
        }
    }

    /// Moves to the next dot, the next scanline and the next frame.
    #[inline(always)]
    fn advance_position<R: RegionModel>(&mut self) {
        let r = &mut self.regs;
        r.dot = r.dot.wrapping_add(1);
        // `>=` rather than `==` so that a restored out-of-range position folds back within a frame.
        if r.dot >= DOTS_PER_SCANLINE {
            self.sprite_units_line_end();
            let r = &mut self.regs;
            r.dot = 0;
            r.scanline = r.scanline.wrapping_add(1);
            if r.scanline == PICTURE_END_SCANLINE {
                r.frames_completed = r.frames_completed.wrapping_add(1);
                self.decay_io_latch();
            } else if r.scanline >= R::TIMING.ppu.scanlines_per_frame {
                r.scanline = 0;
                r.odd_frame ^= 1;
            }
        }
    }

    /// Dots that can be processed before the next one whose effect the CPU can see without accessing
    /// a register: the dot that completes a picture (240, 340), the VBlank flag's (241, 1) and the
    /// pre-render flag clear (261, 1). 0: the next dot is one of them. Never more than the real
    /// distance (the odd-frame skip is assumed); 0 for a restored position outside the frame, and
    /// while an address bus collision is pending (it may move `v` and drive the bus).
    pub fn dots_before_event<R: RegionModel>(&self) -> u64 {
        let t = R::TIMING.ppu;
        let events: [(u16, u16); 3] = [(240, 340), (t.vblank_scanline, 1), (t.pre_render_scanline, 1)];
        let (scanline, dot) = (self.regs.scanline, self.regs.dot);
        // A pending collision (`address_bus.rs`) may move `v` and drive the address bus: the
        // lazy schedule catches up dot by dot until it is over (a few dots). A PPUDATA read's held
        // byte does neither: its dots run with the next catch-up.
        if scanline >= t.scanlines_per_frame || dot >= DOTS_PER_SCANLINE || self.regs.bus_collision_visible()
        {
            return 0;
        }
        let here = u64::from(scanline) * u64::from(DOTS_PER_SCANLINE) + u64::from(dot);
        let frame = u64::from(t.scanlines_per_frame) * u64::from(DOTS_PER_SCANLINE);
        events
            .iter()
            .map(|&(s, d)| {
                let at = u64::from(s) * u64::from(DOTS_PER_SCANLINE) + u64::from(d);
                // Crossing the end of the frame may skip a dot.
                if at >= here { at - here } else { (at + frame - here).saturating_sub(1) }
            })
            .min()
            .unwrap_or(0)
    }

    /// Dots that can be processed before the one that ends the current scanline (after it the
    /// scanline number changes). Never more than the real distance (the odd-frame skip is assumed on
    /// the pre-render line); 0 for a restored position outside the line.
    pub fn dots_before_line_end<R: RegionModel>(&self) -> u64 {
        let last = if self.regs.scanline == R::TIMING.ppu.pre_render_scanline {
            DOTS_PER_SCANLINE - 2
        } else {
            DOTS_PER_SCANLINE - 1
        };
        u64::from(last.saturating_sub(self.regs.dot))
    }

    /// Dots that can be processed before the first one that could fetch (drive the address bus for
    /// rendering): the rest of lines 240-260, which fetch nothing, up to the pre-render line's dot 0
    /// (which drives nothing either); 0 elsewhere.
    pub fn dots_before_fetching_line<R: RegionModel>(&self) -> u64 {
        let (scanline, dot) = (self.regs.scanline, self.regs.dot);
        let pre_render = R::TIMING.ppu.pre_render_scanline;
        if !(240..pre_render).contains(&scanline) || dot >= DOTS_PER_SCANLINE {
            return 0;
        }
        u64::from(pre_render - scanline) * u64::from(DOTS_PER_SCANLINE) - u64::from(dot)
    }

    /// True while PPUMASK enables either layer, or did within the last few dots (the PPU fetches on
    /// rendered lines until the change reaches its pipeline).
    #[inline]
    pub fn rendering_enabled(&self) -> bool {
        self.regs.rendering_enabled() || self.regs.rendering_history & 0x0F != 0
    }

    /// Dots that can run before the `n`-th (n >= 1) coming dot 261 of a fetching line (0-239 and the
    /// pre-render line), where A12 could clock the MMC3, when that is the only such place: 8x8
    /// sprites from $1000, the background from $0000, rendering settled on, and the position outside
    /// the sprite fetches after slot 0's pattern fetch (dots 262-320) of a fetching line unless A12
    /// is high or its low run too short to clock at the next slot (`a12_low_edges`: the M2 edges
    /// counted since A12 fell, `None` while high; a PPUCTRL write may have just set this up). Then A12
    /// rises only at the sprite slots' pattern fetches, and after a low stretch the filter accepts
    /// (from dot 321 of the line before) only at slot 0's, dot 261; the later slots rise after 4 low
    /// dots. `None` where this does not hold. Never more than the real distance (the odd-frame skip
    /// is assumed).
    pub fn dots_before_sprite_pattern_clock<R: RegionModel>(
        &self,
        n: u64,
        a12_low_edges: Option<u8>,
    ) -> Option<u64> {
        const CLOCK_DOT: u16 = 261;
        let r = &self.regs;
        let pre_render = R::TIMING.ppu.pre_render_scanline;
        let fetching = |line: u16| line < 240 || line == pre_render;
        let (line, dot) = (r.scanline, r.dot);
        let usual_tables =
            r.ctrl & (ctrl::SPRITE_16 | ctrl::SPRITE_TABLE | ctrl::BACKGROUND_TABLE) == ctrl::SPRITE_TABLE;
        if n == 0
            || !usual_tables
            || !r.rendering_enabled()
            || r.rendering_history != 0xFF
            || line >= R::TIMING.ppu.scanlines_per_frame
            || dot >= DOTS_PER_SCANLINE
        {
            return None;
        }
        if fetching(line)
            && (262..=320).contains(&dot)
            && let Some(edges) = a12_low_edges
        {
            // The next slot's pattern fetch, 1-7 dots on, ends the low run: at most one M2 edge
            // every 3 dots on top of those counted (the filter wants 3).
            let to_rise = u64::from(7 - (dot - 262) % 8);
            if u64::from(edges) + (to_rise + 1) / 3 + 1 >= 3 {
                return None;
            }
        }
        // Positions from the start of the pre-render line, taken as 340 dots long (the odd-frame
        // skip), then lines 0-260; fetching lines in order: 261 (index 0), 0-239 (1-240).
        // (Without the skip, PAL and Dendy, the positions are one dot early at worst.)
        let frame = u64::from(R::TIMING.ppu.scanlines_per_frame) * u64::from(DOTS_PER_SCANLINE) - 1;
        const FETCHING_LINES: u64 = 241;
        let start = |line: u16| {
            if line == pre_render { 0 } else { 340 + u64::from(line) * u64::from(DOTS_PER_SCANLINE) }
        };
        let here = start(line) + u64::from(dot);
        let passed = dot > CLOCK_DOT;
        let first = match line {
            0..240 => u64::from(line) + 1 + u64::from(passed),
            _ if line == pre_render => u64::from(passed),
            _ => FETCHING_LINES,
        };
        let target = first + (n - 1);
        let target_line = match target % FETCHING_LINES {
            0 => pre_render,
            index => index as u16 - 1,
        };
        let at = (target / FETCHING_LINES) * frame + start(target_line) + u64::from(CLOCK_DOT);
        Some(at - here)
    }

    /// True when PPUCTRL selects 8x16 sprites.
    #[inline]
    pub fn sprites_8x16(&self) -> bool {
        self.regs.ctrl & ctrl::SPRITE_16 != 0
    }

    /// The /NMI output: true while VBlank is flagged and NMI output is enabled. The CPU samples it one
    /// dot before the end of its cycle (see `bus/mod.rs`), which is why a $2002 read on the dot the flag is
    /// set or the dot after still suppresses the NMI (nesdev "NMI"; ppu_vbl_nmi 05-nmi_timing,
    /// 06-suppression).
    #[inline]
    pub fn nmi_line(&self) -> bool {
        self.regs.status & status::VBLANK != 0 && self.regs.ctrl & ctrl::NMI_ENABLE != 0
    }

    /// The scanline about to be processed (0-239 visible, 240 post-render, 241-260 VBlank, 261 pre-render).
    #[inline]
    pub fn scanline(&self) -> u16 {
        self.regs.scanline
    }

    /// The dot about to be processed (0-340).
    #[inline]
    pub fn dot(&self) -> u16 {
        self.regs.dot
    }

    /// Pictures completed: increments when the PPU reaches scanline 241, dot 0.
    #[inline]
    pub fn frames_completed(&self) -> u64 {
        self.regs.frames_completed
    }

    /// The picture: 256x240 pixels, row-major. Each pixel holds the palette index (bits 0-5, after
    /// greyscale) and the PPUMASK emphasis bits 5-7 in bits 6-8; [`rgb::to_rgb`] converts it. Pixels
    /// are written as the PPU outputs them, so between frames the buffer mixes two pictures.
    pub fn frame_buffer(&self) -> &[u16] {
        &self.frame[..]
    }

    /// The registers, latches and counters.
    pub fn regs(&self) -> &PpuRegs {
        &self.regs
    }

    /// Primary OAM (64 sprites x 4 bytes).
    pub fn oam(&self) -> &[u8; 256] {
        &self.oam
    }

    /// Palette RAM as stored: 32 entries of 6 bits; entries $10/$14/$18/$1C are never used (their
    /// addresses mirror $00/$04/$08/$0C).
    pub fn palette(&self) -> &[u8; 32] {
        &self.palette
    }

    /// True when the dots up to the end of the current CPU cycle cannot change what PPUSTATUS's
    /// sprite flags read (see `Nes::finish_ppu_read`).
    #[inline]
    pub(crate) fn sprite_flags_settled(&self) -> bool {
        self.regs.sprite_flags_settled(self.timing.pre_render_scanline)
    }

    /// All of the PPU's state as bytes, in this order: [`PpuRegs`] (104 bytes), primary OAM (256),
    /// secondary OAM (32), palette RAM (32). Nothing else influences the PPU's future behaviour.
    pub fn state_bytes(&self) -> [&[u8]; 4] {
        [bytemuck::bytes_of(&self.regs), &self.oam, &self.secondary_oam, &self.palette]
    }

    /// Mutable view of the same four sections as [`Ppu::state_bytes`], in the same order, for restoring
    /// a snapshot. Any byte pattern is accepted: out-of-range positions are folded back on the next dot.
    pub fn state_bytes_mut(&mut self) -> [&mut [u8]; 4] {
        self.digest_stale = true;
        self.tables_digest_stale = true;
        self.in_range.forget();
        [bytemuck::bytes_of_mut(&mut self.regs), &mut self.oam, &mut self.secondary_oam, &mut self.palette]
    }
}

/// A flat 16 KiB PPU address space for unit tests.
#[cfg(test)]
pub(crate) mod test_bus {
    use super::{PpuBus, PpuBusPeek};

    /// A deterministic xorshift stream from `seed`: each call returns a number below its bound.
    pub(crate) fn random_below(mut seed: u64) -> impl FnMut(u32) -> u32 {
        move |bound: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % u64::from(bound)) as u32
        }
    }

    pub(crate) struct FlatBus(pub Vec<u8>);

    impl FlatBus {
        pub(crate) fn new() -> FlatBus {
            FlatBus(vec![0; 0x4000])
        }

        /// Filled with a deterministic pseudo-random pattern (xorshift), so that tiles, attributes
        /// and sprites vary.
        pub(crate) fn patterned() -> FlatBus {
            let mut x: u32 = 0x1234_5678;
            FlatBus(
                (0..0x4000)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^= x << 5;
                        x as u8
                    })
                    .collect(),
            )
        }
    }

    impl PpuBusPeek for FlatBus {
        fn peek(&self, addr: u16) -> u8 {
            self.0[usize::from(addr & 0x3FFF)]
        }
        fn peek_window(&self, addr: u16) -> &[u8; 0x400] {
            self.0[usize::from(addr & 0x3C00)..].first_chunk().expect("16 KiB of memory")
        }
    }

    impl PpuBus for FlatBus {
        fn read(&mut self, addr: u16) -> u8 {
            self.peek(addr)
        }
        fn write(&mut self, addr: u16, value: u8) {
            self.0[usize::from(addr & 0x3FFF)] = value;
        }
        fn set_address(&mut self, _addr: u16) {}
        fn fetches_observed(&self) -> bool {
            false
        }
    }

    /// A bus that sees what the MMC3 sees: the changes of A12, logged with the dot count.
    pub(crate) struct A12Bus {
        pub memory: FlatBus,
        pub dots: u64,
        pub a12_high: bool,
        pub log: Vec<(u64, bool)>,
    }

    impl A12Bus {
        pub(crate) fn new(memory: FlatBus, a12_high: bool) -> A12Bus {
            A12Bus { memory, dots: 0, a12_high, log: Vec::new() }
        }

        pub(crate) fn see(&mut self, addr: u16) {
            let a12_high = addr & 0x1000 != 0;
            if a12_high != self.a12_high {
                self.a12_high = a12_high;
                self.log.push((self.dots, a12_high));
            }
        }
    }

    impl PpuBusPeek for A12Bus {
        fn peek(&self, addr: u16) -> u8 {
            self.memory.peek(addr)
        }
        fn peek_window(&self, addr: u16) -> &[u8; 0x400] {
            self.memory.peek_window(addr)
        }
    }

    impl PpuBus for A12Bus {
        fn read(&mut self, addr: u16) -> u8 {
            self.see(addr);
            self.memory.read(addr)
        }
        fn write(&mut self, addr: u16, value: u8) {
            self.see(addr);
            self.memory.write(addr, value);
        }
        fn set_address(&mut self, addr: u16) {
            self.see(addr);
        }
        fn advance_dots(&mut self, dots: u32) {
            self.dots += u64::from(dots);
        }
        fn only_a12_observed(&self) -> bool {
            true
        }
        fn a12_high(&self) -> bool {
            self.a12_high
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_bus::{A12Bus, FlatBus};
    use super::{Ppu, address_bus, status};

    /// A sprite flag time near `u32::MAX` (no run reaches one; a forged snapshot may hold it) reads
    /// as a flag still to show, without overflowing.
    #[test]
    fn a_sprite_flag_time_near_u32_max_is_not_settled() {
        for at in [u32::MAX - 5, u32::MAX - 1, u32::MAX] {
            for overflow in [false, true] {
                let mut ppu = Ppu::with_timing(crate::region::NTSC.ppu);
                (ppu.regs.scanline, ppu.regs.dot) = (100, 10);
                if overflow {
                    ppu.regs.sprite_overflow_at = at;
                } else {
                    ppu.regs.sprite_0_hit_at = at;
                }
                assert!(!ppu.sprite_flags_settled(), "at {at:#x}, overflow {overflow}");
            }
        }
    }

    #[test]
    fn pal_and_dendy_swap_the_red_and_green_emphasis_bits() {
        // nesdev "Colour emphasis": PPUMASK bit 5 is red on NTSC, green on PAL and Dendy; bit 6 the
        // reverse; bit 7 blue everywhere. The picture holds red, green, blue in bits 6, 7, 8.
        for (timing, red_bit, green_bit) in [
            (crate::region::NTSC.ppu, 0x20u8, 0x40u8),
            (crate::region::PAL.ppu, 0x40, 0x20),
            (crate::region::DENDY.ppu, 0x40, 0x20),
        ] {
            let mut ppu = Ppu::with_timing(timing);
            for (mask, picture) in [(red_bit, 0x040u16), (green_bit, 0x080), (0x80, 0x100), (0xE0, 0x1C0)] {
                ppu.regs.mask = mask;
                assert_eq!(ppu.color_mask().1, picture, "{timing:?}, PPUMASK {mask:#04x}");
            }
        }
    }

    #[test]
    fn pal_forced_oam_refresh_counts_oamaddr_up_through_late_vblank() {
        // nesdev-org/MesenCE#137 (hardware tests): the 2C07 increments OAMADDR on every even dot of
        // lines 265-310, so one started at 0 is 1 after dot 2 of line 265 and $8C when the
        // pre-render line starts; the 2C02 and the Dendy's PPU leave it alone.
        let line = u32::from(super::DOTS_PER_SCANLINE);
        for (timing, after_first_step, at_pre_render) in [
            (crate::region::NTSC.ppu, 0u8, 0u8),
            (crate::region::PAL.ppu, 1, 0x8C),
            (crate::region::DENDY.ppu, 0, 0),
        ] {
            for stretched in [false, true] {
                let mut bus = FlatBus::new();
                let mut ppu = Ppu::with_timing(timing);
                run_to(&mut ppu, &mut bus, 241, 0);
                ppu.regs.oam_addr = 0;
                let mut advance = |ppu: &mut Ppu, dots: u32| {
                    if stretched {
                        ppu.run_dots(dots, &mut bus);
                    } else {
                        (0..dots).for_each(|_| ppu.tick_dot(&mut bus));
                    }
                };
                advance(&mut ppu, 24 * line + 2);
                assert_eq!(ppu.regs.oam_addr, 0, "{timing:?}: nothing before line 265, dot 2");
                advance(&mut ppu, 1);
                assert_eq!(ppu.regs.oam_addr, after_first_step, "{timing:?}, stretched {stretched}");
                advance(&mut ppu, 46 * line - 3);
                assert_eq!((ppu.scanline(), ppu.dot()), ((241 + 70) % timing.scanlines_per_frame, 0));
                assert_eq!(ppu.regs.oam_addr, at_pre_render, "{timing:?}, stretched {stretched}");
            }
        }
    }

    #[test]
    fn no_long_low_a12_rise_before_the_predicted_sprite_pattern_clock() {
        let mut warm_bus = FlatBus::patterned();
        let warm = warm_ppu(&mut warm_bus);
        let starts = [(0u16, 0u16), (0, 256), (0, 321), (5, 100), (5, 255), (5, 340), (239, 330), (240, 0)];
        let more = [(250u16, 17u16), (261, 0), (261, 256), (261, 339), (261, 340)];
        for (scanline, dot) in starts.into_iter().chain(more) {
            for odd_frame in [0u8, 1] {
                let mut ppu = warm.clone();
                ppu.regs.ctrl = super::ctrl::SPRITE_TABLE;
                ppu.regs.mask = 0x18;
                ppu.regs.rendering_history = 0xFF;
                ppu.regs.odd_frame = odd_frame;
                (ppu.regs.scanline, ppu.regs.dot) = (scanline, dot);
                let mut bus = A12Bus::new(FlatBus::patterned(), true);
                let predictions: Vec<u64> = (1..=300u64)
                    .map(|n| {
                        ppu.dots_before_sprite_pattern_clock::<crate::region::NtscModel>(n, Some(3))
                            .expect("the usual MMC3 setup")
                    })
                    .collect();
                // Two frames and a bit: every rise the filter could take.
                for _ in 0..(2 * 262 * 341 + 400) {
                    ppu.tick_dot(&mut bus);
                    bus.dots += 1;
                }
                // The rises after at least 5 dots low (a filter such as the MMC3's could clock
                // there: it wants three M2 edges, two CPU cycles, six dots).
                let rises: Vec<u64> = bus
                    .log
                    .windows(2)
                    .filter(|pair| !pair[0].1 && pair[1].1 && pair[1].0 - pair[0].0 >= 5)
                    .map(|pair| pair[1].0)
                    .collect();
                let case = format!("from {scanline}/{dot}, odd frame {odd_frame}");
                for (n, (&predicted, &rise)) in predictions.iter().zip(&rises).enumerate() {
                    // `rise` counts the dots run before the one that rose.
                    assert!(
                        predicted <= rise,
                        "{case}: clock {} predicted after {predicted}, at {rise}",
                        n + 1
                    );
                    assert!(
                        rise - predicted <= 2,
                        "{case}: clock {} predicted after {predicted}, at {rise}",
                        n + 1
                    );
                }
                assert!(rises.len() >= 300, "{case}: {} rises", rises.len());
            }
        }
    }

    fn run_to(ppu: &mut Ppu, bus: &mut FlatBus, scanline: u16, dot: u16) -> u64 {
        let mut dots = 0;
        while ppu.scanline() != scanline || ppu.dot() != dot {
            ppu.tick_dot(bus);
            dots += 1;
        }
        dots
    }

    fn warm_ppu(bus: &mut FlatBus) -> Ppu {
        // Through the first frame: the power-on VBlank flag and write lockout end on the pre-render line.
        let mut ppu = Ppu::new();
        ppu.tick_dot(bus);
        run_to(&mut ppu, bus, 0, 0);
        ppu
    }

    #[test]
    fn background_shifters_reload_at_dot_257_and_hold_through_forced_blank() {
        // nesdev "PPU rendering": shifts on dots 2-257, reloads on 9, 17, ..., 257. On line 1 (scroll
        // 0, fine Y 1), dots 241-248 fetch the tile at $2400 and dots 249-256 the one at $2401.
        let mut bus = FlatBus::new();
        bus.0[0x2400] = 1;
        bus.0[0x2401] = 2;
        (bus.0[0x0011], bus.0[0x0019], bus.0[0x0021], bus.0[0x0029]) = (0xAA, 0x0F, 0xCC, 0xF0);
        let mut ppu = warm_ppu(&mut bus);
        ppu.regs.mask = 0x0A;
        run_to(&mut ppu, &mut bus, 1, 258);
        assert_eq!((ppu.regs.bg_pattern_lo, ppu.regs.bg_pattern_hi), (0xAACC, 0x0FF0));
        // Rendering off before the prefetch at dot 321: nothing shifts or reloads until it is back on.
        ppu.regs.mask = 0;
        run_to(&mut ppu, &mut bus, 2, 100);
        assert_eq!((ppu.regs.bg_pattern_lo, ppu.regs.bg_pattern_hi), (0xAACC, 0x0FF0));
    }

    #[test]
    fn frame_boundary_and_power_on_position() {
        let mut bus = FlatBus::new();
        let mut ppu = Ppu::new();
        assert_eq!((ppu.scanline(), ppu.dot(), ppu.frames_completed()), (0, 0, 0));
        for _ in 0..21 {
            ppu.tick_dot(&mut bus);
        }
        assert_eq!(ppu.dot(), 21);
        run_to(&mut ppu, &mut bus, 240, 340);
        assert_eq!(ppu.frames_completed(), 0);
        ppu.tick_dot(&mut bus);
        assert_eq!((ppu.scanline(), ppu.dot(), ppu.frames_completed()), (241, 0, 1));
    }

    #[test]
    fn vblank_flag_and_nmi_pin() {
        // nesdev "PPU frame timing": VBlank set at (241, 1), cleared at (261, 1).
        let mut bus = FlatBus::new();
        let mut ppu = warm_ppu(&mut bus);
        ppu.write_register(0x2000, 0x80, &mut bus);
        run_to(&mut ppu, &mut bus, 241, 1);
        assert_eq!(ppu.regs.status & status::VBLANK, 0);
        ppu.tick_dot(&mut bus);
        assert_ne!(ppu.regs.status & status::VBLANK, 0);
        // The pin is VBlank AND NMI enable, combinationally (the CPU's phi2 sampling adds the delay).
        assert!(ppu.nmi_line());
        // Disabling NMI output drops the pin; re-enabling during VBlank raises it again.
        ppu.write_register(0x2000, 0x00, &mut bus);
        assert!(!ppu.nmi_line());
        ppu.write_register(0x2000, 0x80, &mut bus);
        assert!(ppu.nmi_line());
        run_to(&mut ppu, &mut bus, 261, 1);
        assert!(ppu.nmi_line());
        ppu.tick_dot(&mut bus);
        assert_eq!(ppu.regs.status & status::VBLANK, 0);
        assert!(!ppu.nmi_line());
    }

    #[test]
    fn status_read_just_before_vblank_suppresses_it_for_the_frame() {
        let mut bus = FlatBus::new();
        let mut ppu = warm_ppu(&mut bus);
        ppu.write_register(0x2000, 0x80, &mut bus);
        run_to(&mut ppu, &mut bus, 241, 1);
        assert_eq!(ppu.read_register(0x2002, &mut bus) & 0x80, 0);
        run_to(&mut ppu, &mut bus, 260, 0);
        assert_eq!(ppu.regs.status & status::VBLANK, 0);
        assert!(!ppu.nmi_line());
        // The next frame is unaffected.
        run_to(&mut ppu, &mut bus, 241, 3);
        assert!(ppu.nmi_line());
    }

    #[test]
    fn odd_frames_are_one_dot_shorter_only_while_rendering() {
        // nesdev "PPU frame timing": 341 x 262 = 89342 dots, 89341 on odd frames when rendering.
        let mut bus = FlatBus::new();
        let mut ppu = warm_ppu(&mut bus);
        run_to(&mut ppu, &mut bus, 100, 0);
        let mut lengths = Vec::new();
        for _ in 0..2 {
            lengths.push(run_to(&mut ppu, &mut bus, 99, 0) + run_to(&mut ppu, &mut bus, 100, 0));
        }
        assert_eq!(lengths, [89342, 89342]);
        ppu.write_register(0x2001, 0x08, &mut bus);
        lengths.clear();
        for _ in 0..2 {
            lengths.push(run_to(&mut ppu, &mut bus, 99, 0) + run_to(&mut ppu, &mut bus, 100, 0));
        }
        lengths.sort_unstable();
        assert_eq!(lengths, [89341, 89342]);
    }

    fn tick(ppu: &mut Ppu, bus: &mut FlatBus, dots: u32) {
        for _ in 0..dots {
            ppu.tick_dot(bus);
        }
    }

    fn snapshot(ppu: &Ppu) -> Vec<Vec<u8>> {
        ppu.state_bytes().iter().map(|s| s.to_vec()).collect()
    }

    #[test]
    fn restored_ppu_continues_identically() {
        // The PPU's state is exactly `Ppu::state_bytes`: a PPU restored from those bytes continues
        // identically.
        let mut bus = FlatBus::patterned();
        let mut ppu = Ppu::new();
        // Past the power-on write lockout, then rendering on with sprites from the pattern.
        tick(&mut ppu, &mut bus, 262 * 341);
        ppu.write_register(0x2006, 0x3F, &mut bus);
        ppu.write_register(0x2006, 0x00, &mut bus);
        tick(&mut ppu, &mut bus, u32::from(address_bus::V_COPY_DOTS));
        for i in 0..32u8 {
            ppu.write_register(0x2007, i, &mut bus);
        }
        ppu.write_register(0x2000, 0x88, &mut bus);
        ppu.write_register(0x2001, 0x1E, &mut bus);
        ppu.write_register(0x2003, 0x00, &mut bus);
        for i in 0..=255u8 {
            ppu.write_register(0x2004, i.wrapping_mul(37), &mut bus);
        }
        tick(&mut ppu, &mut bus, 100_000);

        let saved = snapshot(&ppu);
        let mut bus_copy = FlatBus(bus.0.clone());
        let mut restored = Ppu::new();
        for (dst, src) in restored.state_bytes_mut().into_iter().zip(&saved) {
            dst.copy_from_slice(src);
        }
        assert_eq!(snapshot(&restored), saved);

        // Two full frames: every visible pixel is rewritten, so the outputs agree too.
        tick(&mut ppu, &mut bus, 2 * 262 * 341);
        tick(&mut restored, &mut bus_copy, 2 * 262 * 341);
        assert_eq!(snapshot(&restored), snapshot(&ppu));
        assert_eq!(restored.frame_buffer(), ppu.frame_buffer());
        assert_eq!(restored.nmi_line(), ppu.nmi_line());
        assert!(ppu.frame_buffer().iter().any(|&p| p != ppu.frame_buffer()[0]), "something was drawn");
    }
}
