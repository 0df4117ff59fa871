//! The PPU's multiplexed address bus where CPU accesses collide with the rendering fetches.
//!
//! The 2C02 drives the low address byte and the data on the same eight pins: an access takes two
//! dots, ALE (the address goes out and an octal latch outside the PPU keeps its low byte), then the
//! read, whose address is the high byte the PPU drives on that dot over the latched low byte. While
//! rendering, every dot is one or the other (the fetch cadence: nesdev "PPU rendering"; AccuracyCoin
//! "$2007 Stress Test", "ALE + Read", "Hybrid Addresses"). A CPU access meets that cadence in two
//! ways, both modelled here:
//! - a PPUDATA read fills the read buffer a few dots after the read ends, with whatever the PPU reads
//!   on that dot: during rendering the fetch's byte; on an ALE dot the read and the ALE overlap, the
//!   latch keeps the byte last read on the pins (which hold it) and the buffer takes the byte at the
//!   fetch's high byte over that latch, as does the fetch's read on the next dot;
//! - `v` changed by the CPU (a $2006 second write, whose copy of `t` lands a few dots after the
//!   write; a PPUDATA access's increment) between a fetch's ALE and its read: the read combines the
//!   new high byte with the old latched low byte (a "hybrid address").
//!
//! `tick_dot` takes the plain path unless one of these is owed (`PpuRegs::data_read_fill`,
//! `PpuRegs::latch_held`, `PpuRegs::v_copy_delay`), stretches run those dots one at a time and the
//! lazy schedule catches up at every cycle meanwhile (`Ppu::dots_before_event`). Outside rendering
//! the fill is late too: the read's byte waits on the pins and lands on the fill's dot, so a second
//! read on the next CPU cycle returns the old buffer (blargg's double_2007_read). A second read
//! before the first one's fill restarts the state machine: one fill, from the second read (while
//! rendering also one increment; outside it each read moved `v` as it was made). Not modelled: the
//! other outputs real consoles give for a double read, which depend on the CPU-PPU alignment
//! (double_2007_read: "22 33 44 55 66", "02 ..", "32 .."), and a board watching the address bus
//! sees the fetch's own address where the latch makes the read land elsewhere (the high byte, A12
//! included, is the same).

use super::background::{attribute_address, attribute_bits, nametable_address};
use super::{Ppu, PpuBus, PpuRegs, RENDERING_DELAY_DOTS};
use crate::region::RegionModel;

/// Dots from a PPUDATA read (the PPU caught up to the access) to the dot whose read fills the buffer:
/// the read ends about two dots after the access, the state machine drives ALE one dot later and
/// reads two dots after that (AccuracyCoin "$2007 Stress Test": the buffer is set about four dots
/// after the read ends; its answer key pins the dot).
pub(super) const DATA_READ_FILL_DOTS: u8 = 6;

/// `PpuRegs::data_read_fill`'s flag for a read made outside rendering: `v` moved at the read and the
/// byte read waits on the pins (`PpuRegs::data_pins`) for the fill.
pub(super) const DATA_READ_HELD: u8 = 0x80;

/// Dots from a $2006 second write (the PPU caught up to the access) to the copy of `t` into `v`,
/// which happens before the dot this many dots on: the write ends about a dot after the access and
/// the copy follows a few dots later (AccuracyCoin "Hybrid Addresses": the new `v` must miss a
/// nametable fetch's ALE and reach its read).
pub(super) const V_COPY_DOTS: u8 = 4;

/// What the rendering pipeline does with the address bus on one dot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CadenceAccess {
    /// Nothing: not rendering, or the idle dot of the pre-render line.
    Idle,
    /// The first dot of a fetch: the address goes out and the latch takes its low byte.
    Ale(u16),
    /// The second dot of a fetch: the read.
    Read(u16),
}

impl PpuRegs {
    /// True when a dot must model the address bus: a buffer fill or a $2006 copy is owed, or the
    /// latch is held.
    #[inline(always)]
    pub(super) fn bus_collision_pending(&self) -> bool {
        self.data_read_fill | self.latch_held | self.v_copy_delay != 0
    }

    /// True when a pending collision may move `v` or drive the address bus: any but a PPUDATA read's
    /// held byte outside rendering, which only waits to land in the buffer, where nothing but a
    /// PPUDATA read (which catches the PPU up first) or a full catch-up looks.
    #[inline(always)]
    pub(super) fn bus_collision_visible(&self) -> bool {
        let fill_visible = self.data_read_fill != 0 && self.data_read_fill & DATA_READ_HELD == 0;
        fill_visible || self.latch_held | self.v_copy_delay != 0
    }

    /// True when the pipeline renders on the next dot (the enable as it sees it, `RENDERING_DELAY_DOTS`
    /// late, on a rendering line).
    #[inline(always)]
    fn pipeline_renders_next_dot(&self, pre_render: u16) -> bool {
        let history = (self.rendering_history << 1) | u8::from(self.rendering_enabled());
        history & (1 << RENDERING_DELAY_DOTS) != 0 && self.is_rendering_line(pre_render)
    }
}

impl Ppu {
    /// The fetch cadence's access on the next dot, from the state before that dot runs.
    pub(super) fn cadence_access(&self) -> CadenceAccess {
        let r = &self.regs;
        let pre_render = self.timing.pre_render_scanline;
        if !r.pipeline_renders_next_dot(pre_render) {
            return CadenceAccess::Idle;
        }
        let dot = r.dot;
        let nametable = nametable_address(r.v);
        match dot {
            0 if r.scanline == pre_render => CadenceAccess::Idle,
            // Dot 0 drives the pattern address of the tile fetched at dot 5 of the line's tail.
            0 => CadenceAccess::Ale(self.background_pattern_address()),
            1..=256 | 321..=336 => {
                let pattern = self.background_pattern_address();
                match dot & 7 {
                    1 => CadenceAccess::Ale(nametable),
                    2 => CadenceAccess::Read(nametable),
                    3 => CadenceAccess::Ale(attribute_address(r.v)),
                    4 => CadenceAccess::Read(attribute_address(r.v)),
                    5 => CadenceAccess::Ale(pattern),
                    6 => CadenceAccess::Read(pattern),
                    7 => CadenceAccess::Ale(pattern | 8),
                    _ => CadenceAccess::Read(pattern | 8),
                }
            }
            257..=320 => {
                let index = dot - 257;
                let base = usize::from(index >> 3) * 4;
                match index & 7 {
                    0 | 2 => CadenceAccess::Ale(nametable),
                    1 | 3 => CadenceAccess::Read(nametable),
                    4 => CadenceAccess::Ale(self.sprite_pattern_address(base)),
                    5 => CadenceAccess::Read(self.sprite_pattern_address(base)),
                    6 => CadenceAccess::Ale(self.sprite_pattern_address(base) | 8),
                    _ => CadenceAccess::Read(self.sprite_pattern_address(base) | 8),
                }
            }
            _ if dot & 1 == 1 => CadenceAccess::Ale(nametable),
            _ => CadenceAccess::Read(nametable),
        }
    }

    /// The CPU is about to change `v` (or what a fetch address is made of): if the next dot is a
    /// fetch's read, its ALE already latched the low byte of the address as it stood, and the read
    /// takes only its high byte from the new state.
    pub(super) fn hold_fetch_latch(&mut self) {
        if self.regs.latch_held != 0 {
            // A modelled ALE already set the latch.
            return;
        }
        if let CadenceAccess::Read(addr) = self.cadence_access() {
            self.regs.octal_latch = addr as u8;
            self.regs.latch_held = 1;
        }
    }

    /// One dot with the address bus modelled (see the module documentation), then the dot itself.
    #[inline(never)]
    pub(super) fn tick_dot_colliding<R: RegionModel>(&mut self, bus: &mut impl PpuBus) {
        if self.regs.v_copy_delay != 0 {
            self.regs.v_copy_delay -= 1;
            if self.regs.v_copy_delay == 0 {
                self.copy_t_to_v(bus);
            }
        }
        if self.regs.data_read_fill & DATA_READ_HELD != 0 {
            // A read made outside rendering: its byte lands, before this dot's own access can
            // change the pins.
            let left = (self.regs.data_read_fill & !DATA_READ_HELD).saturating_sub(1);
            self.regs.data_read_fill = if left == 0 { 0 } else { left | DATA_READ_HELD };
            if left == 0 {
                self.regs.read_buffer = self.regs.data_pins;
            }
            self.collide_dot::<R>(bus, false);
            return;
        }
        let fill_now = self.regs.data_read_fill == 1;
        self.regs.data_read_fill = self.regs.data_read_fill.saturating_sub(1);
        self.collide_dot::<R>(bus, fill_now);
        if fill_now {
            // The state machine's last step moves `v` (`Ppu::finish_data_access`).
            self.finish_data_access(bus);
        }
    }

    #[inline(always)]
    fn collide_dot<R: RegionModel>(&mut self, bus: &mut impl PpuBus, fill_now: bool) {
        match self.cadence_access() {
            CadenceAccess::Idle => {
                self.regs.latch_held = 0;
                if fill_now {
                    // Nothing else drives the bus: the state machine's own read at `v`.
                    self.regs.read_buffer = bus.read(self.regs.v & 0x3FFF);
                }
                self.tick_dot_plain::<R>(bus);
            }
            CadenceAccess::Ale(addr) => {
                if fill_now {
                    // ALE and the state machine's read together: the latch keeps what the pins
                    // carry from the last read, and the read goes out at the fetch's high byte.
                    let latched = self.regs.data_pins;
                    self.regs.octal_latch = latched;
                    self.regs.read_buffer = bus.peek((addr & 0x3F00) | u16::from(latched));
                } else {
                    self.regs.octal_latch = addr as u8;
                }
                self.regs.latch_held = 1;
                self.tick_dot_plain::<R>(bus);
            }
            CadenceAccess::Read(addr) => {
                let actual = if self.regs.latch_held != 0 {
                    (addr & 0x3F00) | u16::from(self.regs.octal_latch)
                } else {
                    addr
                };
                self.regs.latch_held = 0;
                let data = bus.peek(actual);
                self.regs.data_pins = data;
                if fill_now {
                    self.regs.read_buffer = data;
                }
                // The dot's own fetch runs (the address's high byte, which boards watching A12 see,
                // is the same); where the latch made it read elsewhere, its latch takes that byte.
                let (v, dot) = (self.regs.v, self.regs.dot);
                self.tick_dot_plain::<R>(bus);
                if actual != addr {
                    self.store_fetched(v, dot, data);
                }
            }
        }
    }

    /// The delayed end of a $2006 second write: `v` takes `t`. A fetch between its ALE and its read
    /// reads at a hybrid address; the new address is driven (outside rendering a board watching A12
    /// sees it).
    fn copy_t_to_v(&mut self, bus: &mut impl PpuBus) {
        self.hold_fetch_latch();
        self.regs.v = self.regs.t;
        bus.set_address(self.regs.v & 0x3FFF);
    }

    /// The fetch that read at dot `dot` (with `v` as it was then) keeps `data` instead.
    fn store_fetched(&mut self, v: u16, dot: u16, data: u8) {
        match dot {
            1..=256 | 321..=336 => match dot & 7 {
                2 => self.regs.nt_latch = data,
                4 => self.regs.at_latch = attribute_bits(v, data),
                6 => self.regs.pattern_lo_latch = data,
                _ => self.regs.pattern_hi_latch = data,
            },
            257..=320 => {
                let index = dot - 257;
                let slot = usize::from(index >> 3);
                match index & 7 {
                    5 => self.regs.sprite_pattern_lo[slot] = self.unit_pattern(slot, data),
                    7 => self.regs.sprite_pattern_hi[slot] = self.unit_pattern(slot, data),
                    // The garbage nametable reads keep nothing.
                    _ => {}
                }
            }
            // 338, 340: the unused nametable reads.
            _ => self.regs.nt_latch = data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_bus::FlatBus;
    use super::{DATA_READ_FILL_DOTS, Ppu, V_COPY_DOTS};

    /// A PPU past the power-on lockout rendering the background from scroll (0, 0), stopped at
    /// (`scanline`, `dot`).
    fn rendering_at(bus: &mut FlatBus, scanline: u16, dot: u16) -> Ppu {
        let mut ppu = Ppu::new();
        while ppu.regs.reset_warmup != 0 || ppu.scanline() != 241 {
            ppu.tick_dot(bus);
        }
        ppu.write_register(0x2001, 0x08, bus);
        while ppu.scanline() != scanline || ppu.dot() != dot {
            ppu.tick_dot(bus);
        }
        ppu
    }

    /// Nametable $2000 numbered so that each byte differs from its neighbours.
    fn numbered_nametable(bus: &mut FlatBus) {
        for i in 0..0x3C0 {
            bus.0[0x2000 + i] = (i as u8) ^ 0x5A;
        }
    }

    #[test]
    fn data_read_while_rendering_takes_the_fetch_on_the_fill_dot() {
        // AccuracyCoin "$2007 Stress Test": the buffer takes what the fetch cadence reads on the dot
        // the state machine reads; a read filling on dot 98 of line 10 (a nametable read: dots 97-104
        // fetch the tile for x = 112 + 16, coarse X 14, coarse Y 1) takes that nametable byte.
        let mut bus = FlatBus::new();
        numbered_nametable(&mut bus);
        let fill_dot = 98;
        let mut ppu = rendering_at(&mut bus, 10, fill_dot - u16::from(DATA_READ_FILL_DOTS - 1));
        let v_before = ppu.regs.v;
        ppu.read_register(0x2007, &mut bus);
        while ppu.dot() != fill_dot {
            ppu.tick_dot(&mut bus);
            assert_eq!(ppu.regs.read_buffer, 0, "not filled before its dot");
        }
        ppu.tick_dot(&mut bus);
        assert_eq!(ppu.regs.read_buffer, bus.0[0x2000 + 32 + 14]);
        // The state machine's increment while rendering: coarse X and Y at once (nesdev "PPU
        // scrolling"), after the fill: one more coarse X from the fetches (dot 96), then the glitch.
        let expected = super::super::background::increment_y(super::super::background::increment_coarse_x(
            super::super::background::increment_coarse_x(v_before),
        ));
        assert_eq!(ppu.regs.v, expected);
    }

    #[test]
    fn data_read_filling_on_an_ale_dot_holds_the_latch_for_the_next_fetch() {
        // AccuracyCoin "ALE + Read": the fill lands on dot 229, the low pattern plane's ALE. The latch
        // keeps the byte the pins still carry from the attribute read of dot 228 ($FF), the buffer
        // and the pattern read of dot 230 both read at the pattern's high byte over it: tile $F0,
        // table $0000, so $0FFF.
        let mut bus = FlatBus::new();
        bus.0[0x2000..0x23C0].fill(0xF0);
        bus.0[0x23C0..0x2400].fill(0xFF);
        bus.0[0x0FFF] = 0x81;
        let ale_dot = 229;
        let mut ppu = rendering_at(&mut bus, 3, ale_dot - u16::from(DATA_READ_FILL_DOTS - 1));
        ppu.read_register(0x2007, &mut bus);
        while ppu.dot() != ale_dot + 1 {
            ppu.tick_dot(&mut bus);
        }
        assert_eq!(ppu.regs.read_buffer, 0x81);
        ppu.tick_dot(&mut bus);
        // Without the collision the row read would be at $0F03 (fine Y 3), which holds 0.
        assert_eq!(ppu.regs.pattern_lo_latch, 0x81);
    }

    #[test]
    fn address_write_between_ale_and_read_makes_a_hybrid_address() {
        // AccuracyCoin "Hybrid Addresses": `t` = $2F00 reaches `v` between the nametable ALE of dot
        // 185, which latched the old address's low byte, and the read of dot 186, which reads at
        // the new high byte ($2F) over that latch.
        let mut bus = FlatBus::new();
        numbered_nametable(&mut bus);
        for i in 0..0x100 {
            bus.0[0x2F00 + i] = !(i as u8);
        }
        let read_dot = 186;
        let mut ppu = rendering_at(&mut bus, 4, read_dot - u16::from(V_COPY_DOTS - 1));
        ppu.write_register(0x2006, 0x2F, &mut bus);
        ppu.write_register(0x2006, 0x00, &mut bus);
        while ppu.dot() != read_dot {
            ppu.tick_dot(&mut bus);
        }
        // The tile fetched at dots 185-192 is the one for x = 184 + 16: coarse X 25, coarse Y 0.
        let old_low = 25u8;
        assert_eq!(ppu.regs.v & 0x0FFF, u16::from(old_low), "v unchanged through the ALE");
        ppu.tick_dot(&mut bus);
        assert_eq!(ppu.regs.v, 0x2F00);
        assert_eq!(ppu.regs.nt_latch, bus.0[0x2F00 + usize::from(old_low)]);
    }

    /// A PPU on line 241 with rendering off, over the numbered nametable.
    fn in_vblank_with_rendering_off() -> (FlatBus, Ppu) {
        let mut bus = FlatBus::new();
        numbered_nametable(&mut bus);
        let mut ppu = rendering_at(&mut bus, 10, 100);
        ppu.write_register(0x2001, 0x00, &mut bus);
        while ppu.scanline() != 241 {
            ppu.tick_dot(&mut bus);
        }
        (bus, ppu)
    }

    #[test]
    fn data_read_outside_rendering_moves_v_at_once_and_fills_late() {
        let (mut bus, mut ppu) = in_vblank_with_rendering_off();
        let v = ppu.regs.v;
        let before = ppu.regs.read_buffer;
        ppu.read_register(0x2007, &mut bus);
        assert_eq!(ppu.regs.v, v + 1);
        for _ in 1..DATA_READ_FILL_DOTS {
            ppu.tick_dot(&mut bus);
            assert_eq!(ppu.regs.read_buffer, before);
        }
        ppu.tick_dot(&mut bus);
        assert_eq!(ppu.regs.read_buffer, bus.0[usize::from(v & 0x3FFF)]);
        assert_eq!((ppu.regs.v, ppu.regs.data_read_fill), (v + 1, 0));
    }

    #[test]
    fn a_second_read_outside_rendering_before_the_fill_replaces_its_byte() {
        // blargg's double_2007_read: the second read, 3 dots on, returns the old buffer; both move
        // `v`; the buffer ends with the second read's byte.
        let (mut bus, mut ppu) = in_vblank_with_rendering_off();
        let v = ppu.regs.v;
        let before = ppu.regs.read_buffer;
        assert_eq!(ppu.read_register(0x2007, &mut bus), before);
        for _ in 0..3 {
            ppu.tick_dot(&mut bus);
        }
        assert_eq!(ppu.read_register(0x2007, &mut bus), before);
        for _ in 0..DATA_READ_FILL_DOTS {
            ppu.tick_dot(&mut bus);
        }
        assert_eq!(ppu.regs.v, v + 2);
        assert_eq!(ppu.regs.read_buffer, bus.0[usize::from((v + 1) & 0x3FFF)]);
    }
}
