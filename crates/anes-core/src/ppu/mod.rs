//! The 2C02 PPU (NTSC), ticked one dot at a time.
//!
//! Interface contract with the console:
//! - [`Ppu::tick_dot`] advances exactly one dot (341 dots x 262 scanlines, odd frames one dot shorter
//!   while rendering); every memory access goes through the [`PpuBus`];
//! - the CPU bus calls [`Ppu::read_register`] / [`Ppu::write_register`] for $2000-$3FFF, after the PPU
//!   has caught up to the moment of the access within the CPU cycle;
//! - [`Ppu::nmi_line`] is the /NMI output level, sampled by the CPU at the end of every CPU cycle.

/// Side-effect-free view of the PPU's address bus, for peeks (debuggers, disassembly, state diffs).
pub trait PpuBusPeek {
    /// What a read of `addr` would return, without side effects.
    fn peek(&self, addr: u16) -> u8;
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
}

/// Dots per scanline.
pub const DOTS_PER_SCANLINE: u16 = 341;
/// Scanlines per frame (NTSC), pre-render line included.
pub const SCANLINES_PER_FRAME: u16 = 262;

/// The 2C02.
#[derive(Debug, Clone)]
pub struct Ppu {
    scanline: u16,
    dot: u16,
    frames_completed: u64,
}

impl Default for Ppu {
    fn default() -> Self {
        Self::new()
    }
}

impl Ppu {
    /// A PPU at power-on: scanline 0, dot 0.
    pub fn new() -> Self {
        Ppu { scanline: 0, dot: 0, frames_completed: 0 }
    }

    /// The reset button was pressed.
    pub fn reset(&mut self) {}

    /// Advances one dot.
    #[inline]
    pub fn tick_dot(&mut self, _bus: &mut impl PpuBus) {
        self.dot += 1;
        if self.dot == DOTS_PER_SCANLINE {
            self.dot = 0;
            self.scanline += 1;
            if self.scanline == 241 {
                self.frames_completed += 1;
            }
            if self.scanline == SCANLINES_PER_FRAME {
                self.scanline = 0;
            }
        }
    }

    /// A CPU read of $2000-$3FFF (mirrored every 8 bytes).
    pub fn read_register(&mut self, _addr: u16, _bus: &mut impl PpuBus) -> u8 {
        0
    }

    /// What a CPU read of a register would return, without side effects.
    pub fn peek_register(&self, _addr: u16, _bus: &impl PpuBusPeek) -> u8 {
        0
    }

    /// A CPU write of $2000-$3FFF.
    pub fn write_register(&mut self, _addr: u16, _value: u8, _bus: &mut impl PpuBus) {}

    /// The /NMI output: true while VBlank is flagged and NMI output is enabled.
    #[inline]
    pub fn nmi_line(&self) -> bool {
        false
    }

    /// The scanline about to be processed (0-239 visible, 240 post-render, 241-260 VBlank, 261 pre-render).
    #[inline]
    pub fn scanline(&self) -> u16 {
        self.scanline
    }

    /// The dot about to be processed (0-340).
    #[inline]
    pub fn dot(&self) -> u16 {
        self.dot
    }

    /// Pictures completed: increments when the PPU reaches scanline 241, dot 0.
    #[inline]
    pub fn frames_completed(&self) -> u64 {
        self.frames_completed
    }
}
