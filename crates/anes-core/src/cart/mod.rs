//! Cartridges: iNES / NES 2.0 parsing and the mapper boards.
//!
//! Interface contract with the rest of the console (kept stable for all mappers):
//! - the CPU bus calls [`Cartridge::cpu_read`] / [`Cartridge::cpu_write`] for $4020-$FFFF;
//! - the PPU calls [`Cartridge::ppu_read`] / [`Cartridge::ppu_write`] for $0000-$3EFF, passing the
//!   console's 2 KiB CIRAM, and [`Cartridge::ppu_address`] whenever it drives an address without a
//!   data transfer, so boards that watch PPU A12 (MMC3) see every address the PPU puts on the bus;
//! - [`Cartridge::cpu_cycle`] runs once per CPU cycle (M2), before that cycle's bus access;
//! - [`Cartridge::irq_line`] is the board's /IRQ output, sampled by the CPU at the end of each cycle.

mod header;

pub use header::{Mirroring, Region, RomError, RomInfo};

/// A loaded cartridge: immutable ROM images plus the board's mutable state.
#[derive(Debug, Clone)]
pub struct Cartridge {
    info: RomInfo,
    prg_rom: Box<[u8]>,
    chr: Box<[u8]>,
    prg_ram: Box<[u8]>,
}

impl Cartridge {
    /// Parses an iNES 1.0 or NES 2.0 file.
    pub fn from_ines(bytes: &[u8]) -> Result<Cartridge, RomError> {
        let (info, prg_rom, chr_rom) = header::parse(bytes)?;
        let chr = if chr_rom.is_empty() { vec![0u8; 0x2000].into_boxed_slice() } else { chr_rom.into() };
        let prg_ram = vec![0u8; 0x2000].into_boxed_slice();
        Ok(Cartridge { info, prg_rom: prg_rom.into(), chr, prg_ram })
    }

    /// What the header says about this cartridge.
    pub fn info(&self) -> &RomInfo {
        &self.info
    }

    /// A CPU read of $4020-$FFFF; `open_bus` is returned where the board drives nothing.
    #[inline]
    pub fn cpu_read(&mut self, addr: u16, open_bus: u8) -> u8 {
        self.cpu_peek(addr, open_bus)
    }

    /// The value a CPU read would return, without side effects.
    #[inline]
    pub fn cpu_peek(&self, addr: u16, open_bus: u8) -> u8 {
        match addr {
            0x6000..=0x7FFF => self.prg_ram[usize::from(addr - 0x6000) % self.prg_ram.len()],
            0x8000..=0xFFFF => self.prg_rom[usize::from(addr - 0x8000) % self.prg_rom.len()],
            _ => open_bus,
        }
    }

    /// A CPU write of $4020-$FFFF on CPU cycle `cpu_cycle`.
    #[inline]
    pub fn cpu_write(&mut self, addr: u16, value: u8, _cpu_cycle: u64) {
        if let 0x6000..=0x7FFF = addr {
            let len = self.prg_ram.len();
            self.prg_ram[usize::from(addr - 0x6000) % len] = value;
        }
    }

    /// A PPU read of $0000-$3EFF (pattern tables and nametables).
    #[inline]
    pub fn ppu_read(&mut self, addr: u16, ciram: &mut [u8; 0x800]) -> u8 {
        self.ppu_peek(addr, ciram)
    }

    /// The value a PPU read would return, without side effects.
    #[inline]
    pub fn ppu_peek(&self, addr: u16, ciram: &[u8; 0x800]) -> u8 {
        let addr = addr & 0x3FFF;
        if addr < 0x2000 {
            self.chr[usize::from(addr) % self.chr.len()]
        } else {
            ciram[self.ciram_index(addr)]
        }
    }

    /// A PPU write of $0000-$3EFF.
    #[inline]
    pub fn ppu_write(&mut self, addr: u16, value: u8, ciram: &mut [u8; 0x800]) {
        let addr = addr & 0x3FFF;
        if addr < 0x2000 {
            if self.info.chr_rom_size == 0 {
                let len = self.chr.len();
                self.chr[usize::from(addr) % len] = value;
            }
        } else {
            ciram[self.ciram_index(addr)] = value;
        }
    }

    /// The PPU drove `addr` onto its address bus without a data transfer.
    #[inline]
    pub fn ppu_address(&mut self, _addr: u16) {}

    /// One CPU cycle (M2) has begun.
    #[inline]
    pub fn cpu_cycle(&mut self) {}

    /// The board's /IRQ output (true = asserted).
    #[inline]
    pub fn irq_line(&self) -> bool {
        false
    }

    /// The console's reset button was pressed.
    pub fn reset(&mut self) {}

    /// Power-on state of the board (battery-backed RAM keeps its contents).
    pub fn power_on(&mut self) {}

    /// Recomputes derived data from the board's state after a snapshot restore.
    pub fn rebuild_caches(&mut self) {}

    /// The PRG ROM image.
    pub fn prg_rom(&self) -> &[u8] {
        &self.prg_rom
    }

    /// The CHR ROM image (empty when the board has CHR RAM).
    pub fn chr_rom(&self) -> &[u8] {
        if self.info.chr_rom_size == 0 { &[] } else { &self.chr }
    }

    fn ciram_index(&self, addr: u16) -> usize {
        let table = usize::from((addr >> 10) & 3);
        let offset = usize::from(addr & 0x3FF);
        let page = match self.info.mirroring {
            Mirroring::Horizontal => table >> 1,
            Mirroring::Vertical => table & 1,
            Mirroring::SingleScreenA => 0,
            Mirroring::SingleScreenB => 1,
            Mirroring::FourScreen => table & 1,
        };
        page * 0x400 + offset
    }
}
