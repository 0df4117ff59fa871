//! Mapper 5: the MMC5 on ExROM boards (nesdev "MMC5").
//!
//! CPU side ($5000-$5FFF): PRG mode $5100 and banks $5113-$5117 (8 KiB units; bit 7 of $5114-$5116
//! picks ROM (1) or RAM (0)), PRG RAM protect $5102/$5103, CHR mode $5101 with two register sets
//! ($5120-$5127 for sprites, $5128-$512B for the background) and the upper bits $5130, ExRAM mode
//! $5104, nametable mapping $5105, fill tile and colour $5106/$5107, vertical split $5200-$5202, the
//! scanline IRQ $5203/$5204, the multiplier $5205/$5206 and the 1 KiB ExRAM at $5C00-$5FFF. Its
//! sound ($5000-$5015: two pulses and PCM) is in `audio.rs`, run lazily on CPU cycles like the
//! VRC6's.
//!
//! PPU side (`ppu.rs`): the chip sees every PPU read and finds its place in the scanline from the
//! fetch pattern (three reads of one nametable address: the two dummy fetches at the end of a line
//! and the first fetch of the next), which drives the scanline counter, the in-frame flag, the
//! choice between the sprite and background CHR sets with 8x16 sprites, extended attributes and
//! the split. It also listens to the CPU's writes to PPUCTRL (sprite size) and PPUMASK (rendering).
//!
//! ExRAM is cartridge memory beside CHR (`Cartridge::chr_ram`), so snapshots, hashes and digests take
//! it like any RAM; its nametable uses (ExRAM, fill, the zero page of ExRAM modes 2-3) are nametable
//! pages 2-4 of the bank map.

mod audio;
mod ppu;

use super::expansion_audio::ExpansionChip;
use super::map::{BoardConfig, CHR_SLOT, MemoryMap, PRG_SLOT, PrgSlot};
use super::mapper::{Mapper, state_in};

pub use audio::Mmc5Audio;

/// Bytes of ExRAM.
pub(crate) const EXRAM_LEN: usize = 0x400;
/// PRG RAM of an iNES 1.0 image: 64 KiB, the nesdev "MMC5" page's advice for images whose header
/// cannot tell (the largest two-chip board; every smaller board's banks stay distinct in it).
pub(crate) const INES1_PRG_RAM_LEN: usize = 0x10000;
/// Nametable page of ExRAM in the bank map (0-1 are CIRAM).
pub(super) const PAGE_EXRAM: u8 = 2;
/// Nametable page of fill mode (tile $5106, attributes $5107), derived from the registers.
pub(super) const PAGE_FILL: u8 = 3;
/// Nametable page that reads 0: ExRAM as a nametable in ExRAM modes 2 and 3.
pub(super) const PAGE_ZERO: u8 = 4;
/// CPU cycles without a PPU read after which the chip considers the PPU idle: the in-frame flag
/// clears (nesdev "MMC5", scanline detection).
const IDLE_M2_EDGES: u8 = 3;

crate::layout::state_struct! {
    /// MMC5 registers, the scanline detector and the snooped PPU registers.
    pub struct Mmc5State {
        /// $5120-$512B as written, each with the $5130 bits of its write in bits 8-9.
        pub chr_banks: [u16; 12],
        /// The last PPU read's address (scanline detection).
        pub last_fetch_address: u16,
        /// The sound chip ($5000-$5015).
        pub audio: Mmc5Audio,
        /// $5100: PRG mode 0-3.
        pub prg_mode: u8,
        /// $5101: CHR mode 0-3.
        pub chr_mode: u8,
        /// $5102 and $5103: RAM writes need 2 and 1 in their low bits.
        pub prg_ram_protect: [u8; 2],
        /// $5104: ExRAM mode 0-3.
        pub exram_mode: u8,
        /// $5105: two bits per nametable quadrant (0-1 CIRAM, 2 ExRAM, 3 fill).
        pub nametable_mapping: u8,
        /// $5106: fill mode tile.
        pub fill_tile: u8,
        /// $5107: fill mode palette (bits 0-1).
        pub fill_attribute: u8,
        /// $5113-$5117.
        pub prg_banks: [u8; 5],
        /// $5130: upper CHR bank bits.
        pub chr_upper: u8,
        /// The CHR set written last: 0 = $5120-$5127, 1 = $5128-$512B.
        pub last_chr_set: u8,
        /// $5200: split enable (7), right side (6), tile threshold (0-4).
        pub split_control: u8,
        /// $5201: split vertical scroll.
        pub split_scroll: u8,
        /// $5202: split 4 KiB CHR page.
        pub split_page: u8,
        /// $5203: IRQ scanline.
        pub irq_compare: u8,
        /// $5204 bit 7 as written.
        pub irq_enabled: u8,
        /// 1 while the scanline IRQ is pending ($5204 bit 7).
        pub irq_pending: u8,
        /// 1 while the PPU renders the picture ($5204 bit 6).
        pub in_frame: u8,
        /// Scanline counter: the picture line being fetched.
        pub scanline: u8,
        /// $5205: multiplicand.
        pub multiplicand: u8,
        /// $5206: multiplier.
        pub multiplier: u8,
        /// The CPU's last write to PPUCTRL ($2000): bit 5 is the sprite size.
        pub ppu_ctrl: u8,
        /// The CPU's last write to PPUMASK ($2001): bits 3-4 enable rendering.
        pub ppu_mask: u8,
        /// Consecutive repeats of `last_fetch_address` on nametable reads (0-2).
        pub fetch_repeats: u8,
        /// The PPU read's place in the scanline's 170 reads, counted from the first tile fetch.
        pub fetch_index: u8,
        /// CPU cycles since the last PPU read (saturating at the idle threshold).
        pub idle_m2_edges: u8,
        /// The ExRAM byte of the tile being fetched (extended attributes) or its split tile number.
        pub tile_latch: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Mmc5State>() == 98);

/// MMC5 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mmc5 {
    state: Mmc5State,
    /// The CPU cycle the sound has been run through. Derived (set by `resync`), not state: every
    /// public entry point of the console catches it up.
    ticked: u64,
}

impl Mmc5 {
    fn product(&self) -> u16 {
        u16::from(self.state.multiplicand) * u16::from(self.state.multiplier)
    }

    /// The byte a CPU write of `value` to ExRAM stores, or `None` when it is ignored: mode 2 writes
    /// it, mode 3 is read-only, and in modes 0 and 1 a write lands only while the PPU renders, and
    /// stores 0 otherwise (nesdev "MMC5", $5C00-$5FFF).
    pub fn exram_write(&self, value: u8) -> Option<u8> {
        match self.state.exram_mode {
            2 => Some(value),
            3 => None,
            _ => Some(if self.state.in_frame != 0 { value } else { 0 }),
        }
    }

    /// $5204 bit 7 was written set: a pending IRQ reaches /IRQ.
    pub fn irq_enabled(&self) -> bool {
        self.state.irq_enabled != 0
    }

    /// True in PCM read mode: CPU reads of $8000-$BFFF reach the chip ([`Mmc5::prg_read`]).
    pub fn pcm_reads(&self) -> bool {
        self.state.audio.pcm_reads()
    }

    /// The CPU read `value` from PRG at `addr` ($8000-$FFFF).
    pub fn prg_read(&mut self, addr: u16, value: u8) {
        self.state.audio.cpu_read(addr, value);
    }

    /// The fill page's tile and attribute byte (attributes repeat the palette in every quadrant).
    pub fn fill_bytes(&self) -> (u8, u8) {
        (self.state.fill_tile, (self.state.fill_attribute & 3) * 0x55)
    }

    /// RAM writes are enabled: $5102 = 2 and $5103 = 1 in their low bits.
    fn ram_writable(&self) -> bool {
        self.state.prg_ram_protect == [2, 1]
    }

    /// Offset in PRG RAM of the 8 KiB bank that bank number `bank` selects among `ram_len` bytes.
    fn ram_offset(bank: u8, ram_len: usize) -> usize {
        let bank = usize::from(bank & 0x0F);
        // 16 KiB is two 8 KiB chips (ETROM), one per value of bit 2 (nesdev "MMC5", PRG RAM).
        let bank = if ram_len == 2 * PRG_SLOT { (bank >> 2) & 1 } else { bank };
        (bank * PRG_SLOT) % ram_len.max(1)
    }

    /// The 1 KiB CHR bank that set `set` (0: $5120-$5127, 1: $5128-$512B) maps at pattern address
    /// `addr`, in the CHR mode (nesdev "MMC5", CHR mode): set 0 covers $0000-$1FFF, set 1 covers
    /// $0000-$0FFF and repeats at $1000-$1FFF (but for the one 8 KiB bank of mode 0).
    fn chr_bank(&self, set: u8, addr: u16) -> usize {
        let s = &self.state;
        let window = usize::from(addr >> 10) & 7;
        let bank = |register: usize| usize::from(s.chr_banks[register]);
        if set == 0 {
            match s.chr_mode {
                0 => bank(7) * 8 + window,
                1 => bank(3 + (window & 4)) * 4 + (window & 3),
                2 => bank(1 + (window & 6)) * 2 + (window & 1),
                _ => bank(window),
            }
        } else {
            match s.chr_mode {
                0 => bank(11) * 8 + window,
                1 => bank(11) * 4 + (window & 3),
                2 => bank(9 + (window & 2)) * 2 + (window & 1),
                _ => bank(8 + (window & 3)),
            }
        }
    }
}

impl Mapper for Mmc5 {
    state_in!(state: Mmc5State, ticked: ticked);

    fn expansion_chip(&self) -> Option<ExpansionChip> {
        Some(ExpansionChip::Mmc5)
    }

    fn prg_reads_seen(&self) -> bool {
        self.pcm_reads()
    }

    fn prg_read(&mut self, addr: u16, value: u8) {
        Mmc5::prg_read(self, addr, value);
    }

    /// The fill page (nametable page 3) from the fill registers; the page of zeros stays.
    fn refresh_pages(&self, pages: &mut [u8]) {
        let (tile, attribute) = self.fill_bytes();
        let start = usize::from(PAGE_FILL - 3) * CHR_SLOT;
        let page = &mut pages[start..start + CHR_SLOT];
        if page[0] != tile || page[0x3C0] != attribute {
            page[..0x3C0].fill(tile);
            page[0x3C0..].fill(attribute);
        }
    }

    /// $5C00-$5FFF is ExRAM.
    fn extra_ram_write(&self, addr: u16, value: u8) -> Option<Option<u8>> {
        (0x5C00..=0x5FFF).contains(&addr).then(|| self.exram_write(value))
    }

    fn low_reads_see_ppu(&self) -> bool {
        true
    }

    fn irq_at_line_starts(&self) -> bool {
        self.irq_enabled()
    }

    /// The board in its power-on state: PRG mode 3 with $5117 = $FF, so the last bank is at $E000
    /// where the reset vector is read (nesdev "MMC5", PRG mode).
    fn new(_config: BoardConfig) -> Self {
        Mmc5 {
            state: Mmc5State {
                prg_mode: 3,
                chr_mode: 3,
                prg_banks: [0, 0, 0, 0, 0xFF],
                idle_m2_edges: IDLE_M2_EDGES,
                audio: Mmc5Audio::power_on(),
                ..Mmc5State::default()
            },
            ticked: 0,
        }
    }

    /// A CPU write to $5000-$5BFF (registers) on CPU cycle `cpu_cycle`; returns true when the bank
    /// map must be recomputed.
    fn write_low(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        let s = &mut self.state;
        match addr {
            0x5000..=0x5015 => {
                self.catch_up(cpu_cycle);
                self.state.audio.write(addr, value);
                // $5010's read mode changes what PRG reads do (`Cartridge::remap`).
                return addr == 0x5010;
            }
            0x5100 => s.prg_mode = value & 3,
            0x5101 => s.chr_mode = value & 3,
            0x5102 | 0x5103 => s.prg_ram_protect[usize::from(addr & 1)] = value & 3,
            0x5104 => s.exram_mode = value & 3,
            0x5105 => s.nametable_mapping = value,
            0x5106 => s.fill_tile = value,
            0x5107 => s.fill_attribute = value & 3,
            0x5113..=0x5117 => s.prg_banks[usize::from(addr - 0x5113)] = value,
            0x5120..=0x512B => {
                let index = usize::from(addr - 0x5120);
                s.chr_banks[index] = u16::from(value) | u16::from(s.chr_upper & 3) << 8;
                s.last_chr_set = u8::from(index >= 8);
            }
            0x5130 => s.chr_upper = value & 3,
            0x5200 => s.split_control = value,
            0x5201 => s.split_scroll = value,
            0x5202 => s.split_page = value,
            0x5203 => s.irq_compare = value,
            0x5204 => s.irq_enabled = value >> 7,
            0x5205 => s.multiplicand = value,
            0x5206 => s.multiplier = value,
            _ => return false,
        }
        true
    }

    /// What a CPU read of $5000-$5FFF returns, without side effects; `exram` is the chip's RAM.
    fn peek_low(&self, addr: u16, open_bus: u8, exram: &[u8]) -> u8 {
        let s = &self.state;
        match addr {
            // Bits 0-5 are not driven.
            0x5204 => u8::from(s.irq_pending != 0) << 7 | u8::from(s.in_frame != 0) << 6 | (open_bus & 0x3F),
            0x5205 => self.product() as u8,
            0x5206 => (self.product() >> 8) as u8,
            0x5010 | 0x5015 => s.audio.peek(addr).unwrap_or(open_bus),
            // Modes 2 and 3 map ExRAM for the CPU; in modes 0 and 1 it belongs to the PPU.
            0x5C00..=0x5FFF if s.exram_mode >= 2 => exram[usize::from(addr) & (EXRAM_LEN - 1)],
            _ => open_bus,
        }
    }

    /// A CPU read of $5000-$5FFF: reading $5204 acknowledges the IRQ.
    fn read_low(&mut self, addr: u16, open_bus: u8, exram: &[u8]) -> u8 {
        let value = self.peek_low(addr, open_bus, exram);
        if addr == 0x5204 {
            self.state.irq_pending = 0;
        }
        self.state.audio.read(addr);
        value
    }

    /// The CPU wrote a PPU register (`addr` in $2000-$3FFF): the chip keeps PPUCTRL and PPUMASK.
    /// Turning rendering off clears the in-frame flag at once.
    fn ppu_register_written(&mut self, addr: u16, value: u8) {
        let s = &mut self.state;
        match addr & 7 {
            0 => s.ppu_ctrl = value,
            1 => {
                s.ppu_mask = value;
                if value & 0x18 == 0 {
                    s.in_frame = 0;
                }
            }
            _ => {}
        }
    }

    /// `edges` CPU cycles (M2) with no PPU read: after three the PPU is idle and the frame over.
    #[inline]
    fn cpu_cycles(&mut self, edges: u64) {
        let s = &mut self.state;
        if s.idle_m2_edges >= IDLE_M2_EDGES {
            return;
        }
        let idle = u64::from(s.idle_m2_edges).saturating_add(edges).min(u64::from(IDLE_M2_EDGES));
        s.idle_m2_edges = idle as u8;
        if s.idle_m2_edges == IDLE_M2_EDGES {
            s.in_frame = 0;
            s.fetch_repeats = 0;
        }
    }

    /// The /IRQ output: the scanline IRQ or the PCM's.
    #[inline]
    fn irq_line(&self) -> bool {
        self.state.irq_pending != 0 && self.state.irq_enabled != 0 || self.state.audio.irq_line()
    }

    /// Runs the sound over `cycles` CPU cycles, in closed form.
    fn run_cycles(&mut self, cycles: u64) {
        self.state.audio.run(cycles);
    }

    /// The first CPU cycle the board must be run through ([`Mmc5::catch_up`]): every cycle in PCM
    /// read mode (a PRG read may trip the PCM IRQ, which fast cycles would not see), else the cycle
    /// of the next 240 Hz clock while a length counter runs (it changes what $5015 reads);
    /// `u64::MAX` when nothing can change without a CPU access.
    fn irq_due_cycle(&self) -> u64 {
        let audio = &self.state.audio;
        if audio.pcm_reads() {
            return 0;
        }
        audio.cycles_to_status_change().map_or(u64::MAX, |cycles| self.ticked.saturating_add(cycles))
    }

    /// The sound's level in units of a quarter PCM step: a pulse step is 9 of them (see
    /// `apu::mixer::expansion_gain`), a PCM step 4.
    fn expansion_level(&self) -> i32 {
        let (pulses, pcm) = self.state.audio.levels();
        9 * i32::from(pulses) + 4 * i32::from(pcm)
    }

    /// Points every window of `map` at the banks the registers select. The pattern tables show the
    /// CHR set written last (what CPU accesses through $2007 use); rendering picks its set per
    /// fetch (`ppu.rs`).
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        let writable = self.ram_writable();
        map.set_prg_ram(Self::ram_offset(s.prg_banks[0], map.prg_ram_len) / PRG_SLOT, true, writable);
        map.prg_ram_writable = writable;
        for slot in 0..4 {
            // (register, bank size in 8 KiB units): mode 0 one 32 KiB bank, 1 two of 16, 2 16+8+8,
            // 3 four of 8; $5117 is always ROM.
            let (register, units) = match (s.prg_mode, slot) {
                (0, _) => (4, 4),
                (1, 0 | 1) | (2, 0 | 1) => (2, 2),
                (1, _) => (4, 2),
                (2, 2) => (3, 1),
                (2, _) => (4, 1),
                _ => (slot + 1, 1),
            };
            let value = s.prg_banks[register];
            let bank = usize::from(value & 0x7F) & !(units - 1) | (slot & (units - 1));
            let rom = register == 4 || value & 0x80 != 0;
            map.prg_slots[slot] = if rom {
                map.set_prg_8k(slot, bank);
                PrgSlot::Rom
            } else if map.prg_ram_len == 0 {
                PrgSlot::OpenBus
            } else {
                let bank = value & 0x7F & !(units as u8 - 1) | (slot & (units - 1)) as u8;
                PrgSlot::Ram(Self::ram_offset(bank, map.prg_ram_len))
            };
        }
        for window in 0..8 {
            map.set_chr_1k(window, self.chr_bank(s.last_chr_set, window as u16 * CHR_SLOT as u16));
        }
        for quadrant in 0..4 {
            map.nametables[quadrant] = match (s.nametable_mapping >> (quadrant * 2)) & 3 {
                0 => 0,
                1 => 1,
                2 if s.exram_mode < 2 => PAGE_EXRAM,
                2 => PAGE_ZERO,
                _ => PAGE_FILL,
            };
        }
        map.low_registers = true;
        map.watches_ppu = true;
    }
}

#[cfg(test)]
mod tests;
