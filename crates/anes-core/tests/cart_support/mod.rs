//! Synthetic ROM images for the cartridge tests: every 8 KiB PRG bank is filled with its bank number
//! and every 1 KiB CHR bank with its bank number, so a read tells which bank is mapped.

#![allow(dead_code)]

use anes_core::Cartridge;

/// Offset in every 8 KiB PRG bank holding $FF, so writes to boards with bus conflicts keep their value.
pub const FF_OFFSET: u16 = 0x0100;

/// A header and ROM image under construction.
#[derive(Debug, Clone)]
pub struct RomBuilder {
    pub mapper: u16,
    pub submapper: u8,
    pub prg_bytes: usize,
    pub chr_bytes: usize,
    /// Byte 6 bits 0-3: mirroring, battery, trainer, four-screen.
    pub flags6: u8,
    /// NES 2.0 header with these byte 10 / byte 11 values (RAM shift counts).
    pub nes20: Option<(u8, u8)>,
    /// iNES 1.0 byte 8 (PRG RAM in 8 KiB units).
    pub ines_prg_ram_8k: u8,
}

impl RomBuilder {
    /// An iNES 1.0 image: `prg_16k` x 16 KiB PRG, `chr_8k` x 8 KiB CHR ROM (0: CHR RAM).
    pub fn new(mapper: u16, prg_16k: usize, chr_8k: usize) -> Self {
        RomBuilder {
            mapper,
            submapper: 0,
            prg_bytes: prg_16k * 0x4000,
            chr_bytes: chr_8k * 0x2000,
            flags6: 0,
            nes20: None,
            ines_prg_ram_8k: 0,
        }
    }

    /// Switches to an NES 2.0 header with the given PRG RAM / CHR RAM bytes (10 and 11).
    pub fn nes20(mut self, submapper: u8, byte10: u8, byte11: u8) -> Self {
        self.submapper = submapper;
        self.nes20 = Some((byte10, byte11));
        self
    }

    /// Sets byte 6 bits 0-3.
    pub fn flags6(mut self, flags: u8) -> Self {
        self.flags6 = flags;
        self
    }

    /// The header alone.
    pub fn header(&self) -> [u8; 16] {
        let mut h = [0u8; 16];
        h[..4].copy_from_slice(b"NES\x1a");
        let prg_units = self.prg_bytes / 0x4000;
        let chr_units = self.chr_bytes / 0x2000;
        h[4] = prg_units as u8;
        h[5] = chr_units as u8;
        h[6] = (self.flags6 & 0x0F) | ((self.mapper as u8 & 0x0F) << 4);
        h[7] = self.mapper as u8 & 0xF0;
        match self.nes20 {
            Some((b10, b11)) => {
                h[7] |= 0x08;
                h[8] = ((self.mapper >> 8) as u8 & 0x0F) | (self.submapper << 4);
                h[9] = ((prg_units >> 8) as u8 & 0x0F) | (((chr_units >> 8) as u8 & 0x0F) << 4);
                h[10] = b10;
                h[11] = b11;
            }
            None => h[8] = self.ines_prg_ram_8k,
        }
        h
    }

    /// The whole file.
    pub fn build(&self) -> Vec<u8> {
        let mut rom = self.header().to_vec();
        if self.flags6 & 0x04 != 0 {
            rom.extend((0..512).map(|i| (i as u8) ^ 0xA5));
        }
        rom.extend(prg_image(self.prg_bytes));
        rom.extend(chr_image(self.chr_bytes));
        rom
    }

    /// Parses the file.
    pub fn cartridge(&self) -> Cartridge {
        Cartridge::from_ines(&self.build()).expect("synthetic ROM parses")
    }
}

/// PRG ROM: each 8 KiB bank filled with its number, $FF at [`FF_OFFSET`].
pub fn prg_image(len: usize) -> Vec<u8> {
    (0..len).map(|i| if i % 0x2000 == usize::from(FF_OFFSET) { 0xFF } else { (i / 0x2000) as u8 }).collect()
}

/// CHR ROM: each 1 KiB bank filled with its number.
pub fn chr_image(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i / 0x400) as u8).collect()
}

/// The 8 KiB PRG banks mapped at $8000, $A000, $C000, $E000.
pub fn prg_banks(cart: &Cartridge) -> [u8; 4] {
    [0x8000, 0xA000, 0xC000, 0xE000].map(|addr| cart.cpu_peek(addr, 0xEE))
}

/// The 1 KiB CHR banks mapped at $0000-$1C00.
pub fn chr_banks(cart: &Cartridge) -> [u8; 8] {
    let ciram = [0u8; 0x800];
    core::array::from_fn(|i| cart.ppu_peek((i * 0x400) as u16, &ciram))
}

/// Which nametable page each of $2000/$2400/$2800/$2C00 uses: 0-1 CIRAM, 2-3 the cartridge's VRAM.
pub fn nametable_pages(cart: &mut Cartridge) -> [u8; 4] {
    core::array::from_fn(|table| {
        let mut ciram = [0u8; 0x800];
        cart.extra_vram_mut().fill(0);
        cart.ppu_write(0x2000 + (table as u16) * 0x400 + 5, 0x5A, &mut ciram);
        if ciram[5] == 0x5A {
            0
        } else if ciram[0x405] == 0x5A {
            1
        } else if cart.extra_vram()[5] == 0x5A {
            2
        } else if cart.extra_vram()[0x405] == 0x5A {
            3
        } else {
            panic!("nametable write went nowhere")
        }
    })
}

/// A CPU clock that hands out cycle numbers, so writes are never on back-to-back cycles unless asked.
#[derive(Debug, Default)]
pub struct Cycles(pub u64);

impl Cycles {
    /// The number of a cycle two cycles after the previous one (like STA's write cycles).
    pub fn next(&mut self) -> u64 {
        self.0 += 4;
        self.0
    }
}

/// Writes `value` to an MMC1 register serially: five writes of one bit, on non-consecutive cycles.
pub fn mmc1_write(cart: &mut Cartridge, cycles: &mut Cycles, addr: u16, value: u8) {
    for bit in 0..5 {
        cart.cpu_write(addr, (value >> bit) & 1, cycles.next());
    }
}

/// An NROM image (16 KiB PRG, 8 KiB CHR of zeros) whose PRG starts with `code` at $C000, the reset
/// vector, and is NOPs elsewhere: a whole console's tests run `code` from power-on.
pub fn nrom_running(code: &[u8]) -> Vec<u8> {
    let mut prg = vec![0xEA; 0x4000];
    prg[..code.len()].copy_from_slice(code);
    prg[0x3FFC] = 0x00; // reset vector: $C000
    prg[0x3FFD] = 0xC0;
    let mut rom = vec![b'N', b'E', b'S', 0x1A, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    rom.extend_from_slice(&prg);
    rom.extend_from_slice(&[0; 0x2000]);
    rom
}
