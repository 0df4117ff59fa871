//! The CPU-visible registers $2000-$2007 and the I/O latch behind them (nesdev "PPU registers",
//! "PPU scrolling", "Open bus behavior").

use super::address_bus::{DATA_READ_FILL_DOTS, DATA_READ_HELD, V_COPY_DOTS};
use super::pixel::palette_index;
use super::{DOTS_PER_SCANLINE, Ppu, PpuBus, PpuBusPeek, PpuRegs, background, ctrl, mask, status};

/// Frames a 1 bit of the I/O latch survives without being refreshed. The latch is dynamic memory that
/// fades in about 600 ms (nesdev "Open bus behavior"); 36 NTSC frames are 600 ms. Counting frames
/// keeps the decay deterministic.
const IO_DECAY_FRAMES: u8 = 36;

impl PpuRegs {
    /// The bits in `bits` of the I/O latch take `value`'s bits, and their decay timers restart.
    #[inline(always)]
    fn refresh_io_latch(&mut self, value: u8, bits: u8) {
        self.io_latch = (self.io_latch & !bits) | (value & bits);
        for (bit, timer) in self.io_decay_frames.iter_mut().enumerate() {
            if bits & (1 << bit) != 0 {
                *timer = if value & (1 << bit) != 0 { IO_DECAY_FRAMES } else { 0 };
            }
        }
    }

    /// What $2002 returns: the three flags over the latch's low five bits.
    #[inline(always)]
    fn status_value(&self) -> u8 {
        (self.visible_status() & 0xE0) | (self.io_latch & 0x1F)
    }
}

impl Ppu {
    /// `v` after a $2007 access: +1 or +32, or while rendering, the coarse X and Y increments at once
    /// (nesdev "PPU scrolling": $2007 reads and writes during rendering). Outside rendering the PPU's
    /// address bus rests on `v`, so the new address is driven (mmc3_test_2 3-A12_clocking: a $2007
    /// access that moves `v` across A12 clocks the MMC3 counter).
    #[inline(always)]
    pub(super) fn finish_data_access(&mut self, bus: &mut impl PpuBus) {
        if self.regs.is_rendering(self.timing.pre_render_scanline) {
            // A fetch between its ALE and its read keeps the latched low byte (`address_bus.rs`).
            self.hold_fetch_latch();
            let r = &mut self.regs;
            r.v = background::increment_y(background::increment_coarse_x(r.v));
        } else {
            let r = &mut self.regs;
            let step = if r.ctrl & ctrl::INCREMENT_32 != 0 { 32 } else { 1 };
            r.v = r.v.wrapping_add(step) & 0x7FFF;
            bus.set_address(r.v & 0x3FFF);
        }
    }

    /// Once per frame (on reaching scanline 241): ages the I/O latch's bits.
    pub(super) fn decay_io_latch(&mut self) {
        let r = &mut self.regs;
        for (bit, timer) in r.io_decay_frames.iter_mut().enumerate() {
            if *timer != 0 {
                *timer -= 1;
                if *timer == 0 {
                    r.io_latch &= !(1 << bit);
                }
            }
        }
    }

    /// Palette RAM as $2007 reads it: 6 bits, greyscale applied.
    #[inline(always)]
    fn palette_value(&self, addr: u16) -> u8 {
        let grey = if self.regs.mask & mask::GREYSCALE != 0 { 0x30 } else { 0x3F };
        self.palette[palette_index(addr)] & grey
    }

    /// A CPU read of $2000-$3FFF (mirrored every 8 bytes).
    pub fn read_register(&mut self, addr: u16, bus: &mut impl PpuBus) -> u8 {
        self.digest_stale = true;
        match addr & 7 {
            2 => {
                let value = self.regs.status_value();
                let r = &mut self.regs;
                r.status &= !status::VBLANK;
                r.w = 0;
                // nesdev "PPU frame timing": a read one dot before the flag would be set returns it
                // clear and keeps it from being set this frame (so no NMI either).
                if r.scanline == self.timing.vblank_scanline && r.dot == 1 {
                    r.vblank_suppress = 1;
                }
                r.refresh_io_latch(value, 0xE0);
                value
            }
            4 => {
                let value = self.oam_data_value();
                self.regs.refresh_io_latch(value, 0xFF);
                value
            }
            7 => {
                let v = self.regs.v & 0x3FFF;
                // The buffer is filled a few dots after the read (`address_bus.rs`). While rendering
                // the fill takes whatever the PPU reads then, and `v` moves with it; otherwise the
                // byte at `v` goes out on the bus now, `v` moves at once (so a write on the next
                // cycle lands at the new address: blargg's read_write_2007), and the byte reaches
                // the buffer on the fill's dot. A read on the next CPU cycle, 3 dots on, still
                // returns the old buffer and its own byte replaces the first one's: two reads, two
                // increments, one fill (blargg's double_2007_read, "22 44 55 66 77"; the halted
                // reads of a DMC DMA: nesdev "DMA", DMC DMA can corrupt PPUDATA reads).
                let deferred = self.regs.is_rendering(self.timing.pre_render_scanline);
                if deferred {
                    self.regs.data_read_fill = DATA_READ_FILL_DOTS;
                }
                let value = if v >= 0x3F00 {
                    // Palette reads bypass the buffer; the buffer gets the nametable byte "under" the
                    // palette ($2F00-$2FFF). Bits 6-7 are the latch's (nesdev "PPU registers").
                    let value = self.palette_value(v) | (self.regs.io_latch & 0xC0);
                    self.regs.refresh_io_latch(value, 0x3F);
                    value
                } else {
                    let value = self.regs.read_buffer;
                    self.regs.refresh_io_latch(value, 0xFF);
                    value
                };
                if !deferred {
                    let under = if v >= 0x3F00 { v & 0x2FFF } else { v };
                    // The byte crosses the PPU's shared address/data pins, which hold it until the
                    // fill.
                    self.regs.data_pins = bus.read(under);
                    self.regs.data_read_fill = DATA_READ_FILL_DOTS | DATA_READ_HELD;
                    self.finish_data_access(bus);
                }
                value
            }
            // Write-only registers read back the latch.
            _ => self.regs.io_latch,
        }
    }

    /// The end of a read of $2002 or $2004 (`value` is what the read returned when it began): the
    /// bits that are only sampled as the read ends, PPUSTATUS's sprite flags and all of OAMDATA,
    /// taken from the PPU now (see `Nes::finish_ppu_read`); the I/O latch takes them too.
    pub(crate) fn finish_register_read(&mut self, addr: u16, value: u8) -> u8 {
        self.digest_stale = true;
        match addr & 7 {
            2 => {
                let late = status::SPRITE_0_HIT | status::SPRITE_OVERFLOW;
                let value = (value & !late) | (self.regs.visible_status() & late);
                self.regs.refresh_io_latch(value, late);
                value
            }
            4 => {
                let value = self.oam_data_value();
                self.regs.refresh_io_latch(value, 0xFF);
                value
            }
            _ => value,
        }
    }

    /// True when a $2002 read can be answered by the PPU as it stands, `dots` dots before the end of
    /// the read's cycle, without running those dots first: they cannot change what the read returns
    /// or be changed by what it does. They lie on one line before its dot 340, a visible one or line 240 (no VBlank flag
    /// set or cleared, no latch decay: those come with line 241 and the pre-render line), with
    /// rendering on and settled (or off for 8 dots), and in them no sprite flag can show: none is
    /// pending, and on dots up to 256 of a visible line sprite 0 is not in output unit 0 (or the hit
    /// was found already) and evaluation cannot find an overflow (or found it already); past dot 256
    /// and on line 240 no pixel is output and nothing is evaluated. The read's own effects (VBlank
    /// clear, the write toggle, the latch) touch nothing those dots use.
    pub(crate) fn status_read_commutes(&mut self, dots: u32) -> bool {
        self.digest_stale = true;
        let r = &self.regs;
        // Dot 340 ends the line (on line 240 the latch decays as it ends).
        if r.scanline > 240
            || u32::from(r.dot) + dots >= u32::from(DOTS_PER_SCANLINE)
            || r.bus_collision_pending()
        {
            return false;
        }
        let now = r.position();
        let waiting = |at: u32| at != 0 && at > now;
        if waiting(r.sprite_0_hit_at) || waiting(r.sprite_overflow_at) {
            return false;
        }
        if r.rendering_history == 0 && !r.rendering_enabled() {
            return true;
        }
        if r.rendering_history != 0xFF || !r.rendering_enabled() {
            return false;
        }
        if r.scanline == 240 || r.dot > 256 {
            return true;
        }
        if r.sprite_0_hit_at == 0 && r.sprite_0_in_unit_0 != 0 {
            return false;
        }
        // Overflow is found on an even dot from 66 on; none of those in the dots: no need to look.
        r.sprite_overflow_at != 0 || u32::from(r.dot) + dots <= 66 || self.evaluation_finds_fewer_than_8()
    }

    /// What a CPU read of a register would return, without side effects.
    pub fn peek_register(&self, addr: u16, _bus: &impl PpuBusPeek) -> u8 {
        match addr & 7 {
            2 => self.regs.status_value(),
            4 => self.oam_data_value(),
            7 => {
                let v = self.regs.v & 0x3FFF;
                if v >= 0x3F00 {
                    self.palette_value(v) | (self.regs.io_latch & 0xC0)
                } else {
                    self.regs.read_buffer
                }
            }
            _ => self.regs.io_latch,
        }
    }

    /// $2004 as read now: while rendering, the value on the internal OAM bus (what evaluation and the
    /// sprite fetches are reading); otherwise OAM at OAMADDR.
    #[inline(always)]
    fn oam_data_value(&self) -> u8 {
        if self.regs.is_rendering(self.timing.pre_render_scanline) {
            self.regs.oam_bus
        } else {
            self.oam[usize::from(self.regs.oam_addr)]
        }
    }

    /// A CPU write of $2000-$3FFF.
    pub fn write_register(&mut self, addr: u16, value: u8, bus: &mut impl PpuBus) {
        self.digest_stale = true;
        self.regs.refresh_io_latch(value, 0xFF);
        let warm = self.regs.reset_warmup == 0;
        let r = &mut self.regs;
        match addr & 7 {
            0 if warm => {
                r.ctrl = value;
                r.t = (r.t & !0x0C00) | (u16::from(value & 3) << 10);
            }
            1 if warm => r.mask = value,
            3 => r.oam_addr = value,
            4 => {
                if r.is_rendering(self.timing.pre_render_scanline) {
                    // nesdev "PPU registers" (OAMDATA): no write, but a glitchy increment of the
                    // sprite index: OAMADDR moves to the next sprite's first byte (AccuracyCoin
                    // "Address $2004 behavior" error A: +4, then ANDed with $FC).
                    r.oam_addr = r.oam_addr.wrapping_add(4) & 0xFC;
                } else {
                    // Bits 2-4 of attribute bytes do not exist (nesdev "PPU OAM").
                    let value = if r.oam_addr & 3 == 2 { value & 0xE3 } else { value };
                    self.oam[usize::from(r.oam_addr)] = value;
                    self.tables_digest_stale = true;
                    self.in_range.forget();
                    r.oam_addr = r.oam_addr.wrapping_add(1);
                }
            }
            5 if warm => {
                if r.w == 0 {
                    r.t = (r.t & !0x001F) | u16::from(value >> 3);
                    r.x = value & 7;
                    r.w = 1;
                } else {
                    r.t = (r.t & !0x73E0) | (u16::from(value & 7) << 12) | (u16::from(value & 0xF8) << 2);
                    r.w = 0;
                }
            }
            6 if warm => {
                if r.w == 0 {
                    r.t = (r.t & 0x00FF) | (u16::from(value & 0x3F) << 8);
                    r.w = 1;
                } else {
                    r.t = (r.t & 0x7F00) | u16::from(value);
                    r.w = 0;
                    // `v` takes `t` a few dots later (`address_bus.rs`).
                    r.v_copy_delay = V_COPY_DOTS;
                }
            }
            7 => {
                let v = r.v & 0x3FFF;
                if v >= 0x3F00 {
                    self.palette[palette_index(v)] = value & 0x3F;
                    self.tables_digest_stale = true;
                } else {
                    bus.write(v, value);
                }
                self.finish_data_access(bus);
            }
            // $2002 is read-only; ignored writes during the reset warm-up only load the latch.
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Ppu;
    use super::super::address_bus::{DATA_READ_FILL_DOTS, V_COPY_DOTS};
    use super::super::test_bus::{FlatBus, random_below};

    fn warm_ppu() -> (Ppu, FlatBus) {
        let mut ppu = Ppu::new();
        ppu.regs.reset_warmup = 0;
        (ppu, FlatBus::new())
    }

    /// Both $2006 writes, then the dots until `v` takes the address.
    fn set_address(ppu: &mut Ppu, bus: &mut FlatBus, addr: u16) {
        ppu.write_register(0x2006, (addr >> 8) as u8, bus);
        ppu.write_register(0x2006, addr as u8, bus);
        for _ in 0..V_COPY_DOTS {
            ppu.tick_dot(bus);
        }
    }

    /// Where `Ppu::status_read_commutes(dots)` holds, a $2002 read answered before the `dots` dots
    /// (the lazy schedule's lagging read) is the read in place: the dots up to the access, the
    /// read, the rest of the cycle, the end of the read. Same value, registers, memories and picture.
    /// The PPU renders a frame whose sprites crowd a few lines (overflow, sprite 0 hits, lines with
    /// 8 sprites or fewer), and reads are tried all along it.
    #[test]
    fn a_commuting_status_read_is_the_read_in_place() {
        let mut next = random_below(0x2545_F491_4F6C_DD1Du64);
        let (mut tried, mut commuting) = (0, 0);
        for _ in 0..24 {
            let (mut ppu, _) = warm_ppu();
            let mut bus = FlatBus::patterned();
            for byte in ppu.oam.iter_mut() {
                *byte = next(256) as u8;
            }
            let crowded = next(240);
            for sprite in 0..64 {
                if next(3) == 0 {
                    ppu.oam[sprite * 4] = (crowded + next(12)) as u8;
                }
            }
            ppu.regs.ctrl = next(256) as u8 & 0x38;
            // Rendering on, but now and then off for a while.
            ppu.regs.mask = if next(6) == 0 { 0 } else { 0x1E };
            ppu.regs.scanline = 261;
            ppu.regs.dot = 0;
            while ppu.regs.scanline == 261 || ppu.regs.scanline <= 240 {
                let dots = next(40);
                let access = next(dots + 1);
                tried += 1;
                if ppu.status_read_commutes(dots) {
                    commuting += 1;
                    let (mut in_place, mut in_place_bus) = (ppu.clone(), FlatBus(bus.0.clone()));
                    for _ in 0..access {
                        in_place.tick_dot(&mut in_place_bus);
                    }
                    let value = in_place.read_register(0x2002, &mut in_place_bus);
                    for _ in access..dots {
                        in_place.tick_dot(&mut in_place_bus);
                    }
                    let value = in_place.finish_register_read(0x2002, value);
                    let (mut lagging, mut lagging_bus) = (ppu.clone(), FlatBus(bus.0.clone()));
                    let read = lagging.read_register(0x2002, &mut lagging_bus);
                    let read = lagging.finish_register_read(0x2002, read);
                    for _ in 0..dots {
                        lagging.tick_dot(&mut lagging_bus);
                    }
                    let at = (ppu.regs.scanline, ppu.regs.dot, dots, access);
                    assert_eq!(read, value, "value read at {at:?}");
                    assert_eq!(lagging.state_bytes(), in_place.state_bytes(), "state after a read at {at:?}");
                    assert!(
                        lagging.frame_buffer() == in_place.frame_buffer(),
                        "picture after a read at {at:?}"
                    );
                }
                for _ in 0..next(30) {
                    ppu.tick_dot(&mut bus);
                }
            }
        }
        // Not vacuous: most reads on the frame's lines commute, and some do not.
        assert!(commuting * 4 > tried && commuting < tried, "{commuting} of {tried} reads commute");
    }

    #[test]
    fn scroll_and_address_writes_fill_t_as_documented() {
        // The worked example on nesdev "PPU scrolling" ("Summary").
        let (mut ppu, mut bus) = warm_ppu();
        ppu.write_register(0x2000, 0x00, &mut bus);
        ppu.read_register(0x2002, &mut bus);
        ppu.write_register(0x2005, 0x7D, &mut bus);
        assert_eq!((ppu.regs.t, ppu.regs.x, ppu.regs.w), (0x000F, 5, 1));
        ppu.write_register(0x2005, 0x5E, &mut bus);
        assert_eq!((ppu.regs.t, ppu.regs.w), (0x616F, 0));
        ppu.write_register(0x2006, 0x3D, &mut bus);
        assert_eq!((ppu.regs.t, ppu.regs.w), (0x3D6F, 1));
        ppu.write_register(0x2006, 0xF0, &mut bus);
        assert_eq!((ppu.regs.t, ppu.regs.w), (0x3DF0, 0));
        // `v` takes `t` a few dots after the second write (nesdev "PPU scrolling": the copy is
        // delayed; AccuracyCoin "Hybrid Addresses").
        for _ in 1..V_COPY_DOTS {
            ppu.tick_dot(&mut bus);
            assert_eq!(ppu.regs.v, 0);
        }
        ppu.tick_dot(&mut bus);
        assert_eq!(ppu.regs.v, 0x3DF0);
        // $2000 writes the nametable bits of t.
        ppu.write_register(0x2000, 0x03, &mut bus);
        assert_eq!(ppu.regs.t, 0x3DF0 | 0x0C00);
    }

    #[test]
    fn data_reads_are_buffered_except_palette() {
        let (mut ppu, mut bus) = warm_ppu();
        bus.0[0x2105] = 0x11;
        bus.0[0x2106] = 0x22;
        bus.0[0x2F10] = 0x33;
        set_address(&mut ppu, &mut bus, 0x2105);
        ppu.read_register(0x2007, &mut bus);
        // `v` moves at once, the byte reaches the buffer on the fill's dot.
        assert_eq!(ppu.regs.v, 0x2106);
        for _ in 1..DATA_READ_FILL_DOTS {
            ppu.tick_dot(&mut bus);
            assert_eq!(ppu.regs.read_buffer, 0);
        }
        ppu.tick_dot(&mut bus);
        assert_eq!(ppu.read_register(0x2007, &mut bus), 0x11);
        assert_eq!(ppu.regs.v, 0x2107);
        // Palette: immediate, and the buffer gets the nametable byte underneath.
        set_address(&mut ppu, &mut bus, 0x3F00);
        ppu.write_register(0x2007, 0x2A, &mut bus);
        set_address(&mut ppu, &mut bus, 0x3F10);
        // Bits 6-7 of a palette read come from the latch, which holds the last write ($10).
        assert_eq!(ppu.read_register(0x2007, &mut bus), 0x2A);
        for _ in 0..DATA_READ_FILL_DOTS {
            ppu.tick_dot(&mut bus);
        }
        assert_eq!(ppu.regs.read_buffer, 0x33);
        // Increment 32.
        ppu.write_register(0x2000, 0x04, &mut bus);
        set_address(&mut ppu, &mut bus, 0x2000);
        ppu.read_register(0x2007, &mut bus);
        assert_eq!(ppu.regs.v, 0x2020);
    }

    #[test]
    fn status_read_clears_vblank_and_the_write_toggle_and_shows_the_latch() {
        let (mut ppu, mut bus) = warm_ppu();
        ppu.regs.status = 0x80;
        ppu.write_register(0x2006, 0x1F, &mut bus);
        assert_eq!(ppu.read_register(0x2002, &mut bus), 0x9F);
        assert_eq!((ppu.regs.status, ppu.regs.w), (0, 0));
        assert_eq!(ppu.read_register(0x2002, &mut bus), 0x1F);
        // Write-only registers read back the latch, which now holds $2002's top bits (0).
        assert_eq!(ppu.read_register(0x2000, &mut bus), 0x1F);
    }

    #[test]
    fn oam_attribute_bits_2_to_4_read_as_zero() {
        let (mut ppu, mut bus) = warm_ppu();
        ppu.write_register(0x2003, 0x00, &mut bus);
        for _ in 0..4 {
            ppu.write_register(0x2004, 0xFF, &mut bus);
        }
        ppu.write_register(0x2003, 0x00, &mut bus);
        let bytes: Vec<u8> = (0..4).map(|_| ppu.read_register(0x2004, &mut bus)).collect();
        // Reads do not increment OAMADDR.
        assert_eq!(bytes, [0xFF; 4]);
        ppu.write_register(0x2003, 0x02, &mut bus);
        assert_eq!(ppu.read_register(0x2004, &mut bus), 0xE3);
    }

    #[test]
    fn oam_data_writes_while_rendering_skip_to_the_next_sprite() {
        let (mut ppu, mut bus) = warm_ppu();
        ppu.regs.mask = 0x18;
        ppu.regs.scanline = 10;
        ppu.write_register(0x2003, 0x01, &mut bus);
        ppu.write_register(0x2004, 0x55, &mut bus);
        // OAM untouched, OAMADDR at the next sprite's first byte (AccuracyCoin "Address $2004
        // behavior" error A).
        assert_eq!((ppu.oam[1], ppu.regs.oam_addr), (0, 0x04));
        ppu.write_register(0x2003, 0xFE, &mut bus);
        ppu.write_register(0x2004, 0x55, &mut bus);
        assert_eq!(ppu.regs.oam_addr, 0x00);
    }

    #[test]
    fn writes_are_ignored_until_the_pre_render_line_after_power_on() {
        let mut ppu = Ppu::new();
        let mut bus = FlatBus::new();
        ppu.write_register(0x2000, 0x80, &mut bus);
        assert_eq!(ppu.regs.ctrl, 0);
        while ppu.scanline() != 261 || ppu.dot() != 2 {
            ppu.tick_dot(&mut bus);
        }
        ppu.write_register(0x2000, 0x80, &mut bus);
        assert_eq!(ppu.regs.ctrl, 0x80);
    }
}
