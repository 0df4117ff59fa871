//! Mappers 16, 153 and 159: Bandai's FCG-1/2 and LZ93D50 (nesdev "INES Mapper 016", "INES Mapper
//! 153", "INES Mapper 159", "Bandai FCG board").
//!
//! Registers (mask $000F of the range the chip answers in):
//! - $xxx0-$xxx7: 1 KiB CHR ROM banks for PPU $0000-$1FFF; on mapper 153 (8 KiB of CHR RAM, unbanked)
//!   bit 0 of any of $xxx0-$xxx3 is PRG A18, the 256 KiB outer bank of both PRG windows;
//! - $xxx8: 16 KiB PRG bank at $8000 (4 bits); $C000-$FFFF holds the last 16 KiB (of the outer bank);
//! - $xxx9: mirroring: 0 vertical, 1 horizontal, 2 one-screen A, 3 one-screen B;
//! - $xxxA: IRQ control, bit 0 enables counting; a write acknowledges the IRQ, and on the LZ93D50
//!   copies the latch into the counter;
//! - $xxxB, $xxxC: low and high byte of the LZ93D50's latch, or of the FCG-1/2's counter itself;
//! - $800D: the LZ93D50's EEPROM lines (bit 5 SCL, bit 6 SDA, bit 7 set releases SDA to read it), or
//!   on mapper 153 bit 5 enabling its 8 KiB of PRG RAM at $6000.
//!
//! Where the chip answers: the FCG-1/2 (mapper 16 submapper 4) at $6000-$7FFF, the LZ93D50
//! (submapper 5, mappers 153 and 159) at $8000-$FFFF; an image without a submapper (0) gets both, as
//! the wiki advises, each range with its own chip's IRQ rules. Reads of $6000-$7FFF on the LZ93D50
//! boards with an EEPROM return its data line in bit 4, open bus in the others.
//!
//! The IRQ counter counts down on every CPU cycle while enabled; the clock that takes it to $0000
//! asserts /IRQ, and it goes on through $FFFF. (The wiki leaves the exact trigger open; this reading
//! makes a count of N assert /IRQ N cycles after the enabling write, what `roms/bandai/bandai.inc`
//! pins, and a count of 0 a full 65,536 cycles later.) It runs lazily like the VRC3's: [`BandaiFcg::catch_up`]
//! in closed form, equal to single cycles (compared in the tests), and [`BandaiFcg::irq_due_cycle`]
//! names the cycle that asserts /IRQ.

use super::bandai_eeprom::{EepromChip, EepromState};
use super::map::{BoardConfig, MemoryMap, PrgRamRead};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;
use super::rom_info::RomInfo;

crate::layout::state_struct! {
    /// Bandai FCG / LZ93D50 registers, IRQ counter and serial EEPROM.
    pub struct BandaiFcgState {
        /// $xxx0-$xxx7: the 1 KiB CHR banks (mapper 153: bit 0 of the first four is PRG A18).
        pub chr: [u8; 8],
        /// $xxx8: the 16 KiB PRG bank at $8000.
        pub prg: u8,
        /// $xxx9: the mirroring (2 bits).
        pub mirroring: u8,
        /// $xxxA bit 0: the counter counts.
        pub irq_enabled: u8,
        /// 1 while /IRQ is asserted.
        pub irq_pending: u8,
        /// The IRQ counter.
        pub irq_counter: u16,
        /// The LZ93D50's IRQ latch.
        pub irq_latch: u16,
        /// $800D as last written.
        pub eeprom_control: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
        /// The serial EEPROM (mapper 16 with a battery, 159); unused, all zero, on the other boards.
        pub eeprom: EepromState,
    }
}

const _: () = assert!(core::mem::size_of::<BandaiFcgState>() == 18 + 264);

/// $800D bits.
const EEPROM_SCL: u8 = 0x20;
const EEPROM_SDA: u8 = 0x40;
const EEPROM_READ: u8 = 0x80;
/// Mapper 153: $800D bit 5 enables PRG RAM.
const PRG_RAM_ENABLE: u8 = 0x20;

/// Bandai FCG-1/2 or LZ93D50 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BandaiFcg {
    state: BandaiFcgState,
    /// Registers answer at $6000-$7FFF with the FCG-1/2's rules (mapper 16 submappers 0 and 4).
    fcg_low: bool,
    /// Registers answer at $8000-$FFFF with the LZ93D50's rules (all but mapper 16 submapper 4).
    lz93d50_high: bool,
    /// The serial EEPROM on the board, if any.
    eeprom: Option<EepromChip>,
    /// Mapper 153: PRG A18 from the CHR registers, 8 KiB of PRG RAM, CHR RAM.
    sram_board: bool,
    /// The CPU cycle the IRQ counter has been run through. Derived (set by `resync`), not state.
    ticked: u64,
}

impl BandaiFcg {
    /// The EEPROM's memory (its size: 128 or 256 bytes), if the board has one: the battery-backed
    /// save.
    pub fn eeprom(&self) -> Option<&[u8]> {
        self.eeprom.map(|chip| &self.state.eeprom.memory()[..chip.len()])
    }

    /// The EEPROM's memory, mutable (loading a save, keeping it over a power cycle).
    pub fn eeprom_mut(&mut self) -> Option<&mut [u8]> {
        self.eeprom.map(|chip| &mut self.state.eeprom.memory_mut()[..chip.len()])
    }

    /// One register write; `latched`: the LZ93D50's IRQ rules, else the FCG-1/2's.
    fn write(&mut self, addr: u16, value: u8, latched: bool) -> bool {
        let s = &mut self.state;
        match addr & 0x000F {
            reg @ 0x0..=0x7 => s.chr[usize::from(reg)] = value,
            0x8 => s.prg = value & 0x0F,
            0x9 => s.mirroring = value & 0x03,
            0xA => {
                s.irq_enabled = value & 0x01;
                s.irq_pending = 0;
                if latched {
                    s.irq_counter = s.irq_latch;
                }
                return false;
            }
            0xB | 0xC => {
                let shift = if addr & 0xF == 0xB { 0 } else { 8 };
                let target = if latched { &mut s.irq_latch } else { &mut s.irq_counter };
                *target = (*target & !(0xFF << shift)) | u16::from(value) << shift;
                return false;
            }
            0xD if latched => {
                s.eeprom_control = value;
                if let Some(chip) = self.eeprom {
                    let scl = u8::from(value & EEPROM_SCL != 0);
                    let sda = u8::from(value & (EEPROM_SDA | EEPROM_READ) != 0);
                    s.eeprom.drive(chip, scl, sda);
                }
            }
            _ => return false,
        }
        true
    }

    /// Clocks from a counter value to the clock that takes it to $0000 (from $0000: a full turn).
    fn clocks_to_zero(counter: u16) -> u64 {
        if counter == 0 { 0x1_0000 } else { u64::from(counter) }
    }

    /// One CPU cycle of the IRQ counter: the definition [`BandaiFcg::catch_up`] must equal.
    #[cfg(test)]
    fn step_cycle(&mut self) {
        let s = &mut self.state;
        if s.irq_enabled != 0 {
            s.irq_counter = s.irq_counter.wrapping_sub(1);
            if s.irq_counter == 0 {
                s.irq_pending = 1;
            }
        }
    }
}

impl Mapper for BandaiFcg {
    state_in!(state: BandaiFcgState, ticked: ticked);

    /// Submappers 1-3 of mapper 16 are deprecated for mappers 159, 157 and 153 (nesdev "INES
    /// Mapper 016").
    fn supports(mapper: u16, submapper: u8) -> bool {
        mapper != 16 || matches!(submapper, 0 | 4 | 5)
    }

    /// A board with an EEPROM keeps its saves there, not in PRG RAM.
    fn no_prg_ram(&self) -> bool {
        self.eeprom().is_some()
    }

    fn eeprom_mut(&mut self) -> Option<&mut [u8]> {
        BandaiFcg::eeprom_mut(self)
    }

    fn battery_memory(&self, _info: &RomInfo) -> Option<&[u8]> {
        self.eeprom()
    }

    fn battery_memory_mut(&mut self, _info: &RomInfo) -> Option<&mut [u8]> {
        BandaiFcg::eeprom_mut(self)
    }

    /// The board in its power-on state (the EEPROM blank; see [`BandaiFcg::eeprom_mut`]).
    fn new(config: BoardConfig) -> Self {
        let (fcg_low, lz93d50_high) = match (config.mapper, config.submapper) {
            (16, 4) => (true, false),
            (16, 5) | (153 | 159, _) => (false, true),
            _ => (true, true),
        };
        let eeprom = match config.mapper {
            159 => Some(EepromChip::X24c01),
            // Mapper 16's LZ93D50 boards carry a 24C02 where the header says there is a battery.
            16 if lz93d50_high && config.battery => Some(EepromChip::C24c02),
            _ => None,
        };
        let state = BandaiFcgState { eeprom: EepromState::new(), ..BandaiFcgState::default() };
        BandaiFcg { state, fcg_low, lz93d50_high, eeprom, sram_board: config.mapper == 153, ticked: 0 }
    }

    /// A CPU write to $8000-$FFFF on CPU cycle `cpu_cycle`; returns true when the bank map must be
    /// recomputed. The IRQ counter is first run through this cycle.
    fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        if !self.lz93d50_high {
            return false;
        }
        self.catch_up(cpu_cycle);
        self.write(addr, value, true)
    }

    /// A CPU write to $6000-$7FFF on CPU cycle `cpu_cycle` (the FCG-1/2's registers); returns true
    /// when the bank map must be recomputed. The IRQ counter is first run through this cycle.
    fn write_low(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        if !self.fcg_low {
            return false;
        }
        self.catch_up(cpu_cycle);
        self.write(addr, value, false)
    }

    /// Runs the IRQ counter over `cycles` CPU cycles, in closed form.
    fn run_cycles(&mut self, cycles: u64) {
        let s = &mut self.state;
        if cycles == 0 || s.irq_enabled == 0 {
            return;
        }
        if cycles >= Self::clocks_to_zero(s.irq_counter) {
            s.irq_pending = 1;
        }
        s.irq_counter = s.irq_counter.wrapping_sub(cycles as u16);
    }

    /// CPU cycles to the one whose counter clock asserts /IRQ; `None` when none can.
    fn cycles_to_irq(&self) -> Option<u64> {
        let s = &self.state;
        if s.irq_enabled == 0 || s.irq_pending != 0 {
            return None;
        }
        Some(Self::clocks_to_zero(s.irq_counter))
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    fn irq_line(&self) -> bool {
        self.state.irq_pending != 0
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        if self.sram_board {
            let outer = usize::from(s.chr[..4].iter().fold(0, |a, &b| a | b) & 1) << 4;
            map.set_prg_16k(0, outer | usize::from(s.prg));
            map.set_prg_16k(1, outer | 0x0F);
            map.set_chr_8k(0);
            let enabled = s.eeprom_control & PRG_RAM_ENABLE != 0;
            map.set_prg_ram(0, enabled, enabled);
        } else {
            map.set_prg_16k(0, usize::from(s.prg));
            map.set_prg_16k(1, map.prg_bank_from_end(2) / 2);
            for (window, &bank) in s.chr.iter().enumerate() {
                map.set_chr_1k(window, usize::from(bank));
            }
            let read = if self.eeprom.is_some() { PrgRamRead::SerialData } else { PrgRamRead::OpenBus };
            for window in 0..super::map::PRG_RAM_WINDOWS {
                map.set_prg_ram_window(window, 0, read, false);
            }
            map.prg_latch = s.eeprom.line();
        }
        map.set_mirroring(Mirroring::from_two_bits(s.mirroring));
        map.low_registers = self.fcg_low;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(mapper: u16, submapper: u8) -> BandaiFcg {
        BandaiFcg::new(BoardConfig { mapper, submapper, chr_rom_size: 0x20000, battery: true })
    }

    #[test]
    fn lz93d50_latches_and_fcg_writes_the_counter() {
        // LZ93D50: $800B/$800C load the latch; $800A copies it: 16 clocks to the IRQ.
        let mut lz = board(16, 5);
        lz.write_register(0x800B, 0x10, 1);
        lz.write_register(0x800C, 0x00, 1);
        assert_eq!(lz.state.irq_counter, 0, "the counter is untouched");
        lz.write_register(0x800A, 1, 2);
        assert_eq!(lz.irq_due_cycle(), 2 + 16);
        lz.catch_up(17);
        assert!(!lz.irq_line());
        lz.catch_up(18);
        assert!(lz.irq_line());
        assert_eq!(lz.irq_due_cycle(), u64::MAX);
        lz.write_register(0x800A, 1, 20);
        assert!(!lz.irq_line(), "a control write acknowledges");
        // FCG-1/2: $600B/$600C write the counter; $600A does not reload it.
        let mut fcg = board(16, 4);
        assert!(!fcg.write_register(0x800B, 0x55, 1), "no registers at $8000 on submapper 4");
        fcg.write_low(0x600B, 0x20, 1);
        fcg.write_low(0x600C, 0x00, 1);
        fcg.write_low(0x600A, 1, 2);
        assert_eq!(fcg.irq_due_cycle(), 2 + 0x20);
        // Submapper 0 answers in both ranges.
        let mut both = board(16, 0);
        assert!(both.write_register(0x8008, 3, 1) && both.write_low(0x6009, 1, 1));
        assert_eq!((both.state.prg, both.state.mirroring), (3, 1));
    }

    #[test]
    fn closed_form_equals_single_cycles() {
        for (counter, enabled) in [(0u16, 1u8), (1, 1), (0x10, 1), (0xFFFF, 1), (0x1234, 0)] {
            let mut stepped = board(16, 4);
            stepped.write_low(0x600B, counter as u8, 1);
            stepped.write_low(0x600C, (counter >> 8) as u8, 1);
            stepped.write_low(0x600A, enabled, 2);
            let mut lazy = stepped.clone();
            let due = lazy.irq_due_cycle();
            let mut first_irq = None;
            let mut cycle = 2;
            for chunk in [1u64, 7, 255, 256, 3, 500, 70_000, 1, 131_072] {
                for _ in 0..chunk {
                    cycle += 1;
                    stepped.step_cycle();
                    if stepped.irq_line() && first_irq.is_none() {
                        first_irq = Some(cycle);
                    }
                }
                lazy.catch_up(cycle);
                assert_eq!(lazy.state, stepped.state, "counter {counter:#X} cycle {cycle}");
            }
            assert_eq!(first_irq.unwrap_or(u64::MAX), due, "counter {counter:#X}");
        }
    }

    #[test]
    fn mapper_153_takes_prg_a18_from_the_chr_registers() {
        let mut m = BandaiFcg::new(BoardConfig { mapper: 153, submapper: 0, chr_rom_size: 0, battery: true });
        let mut map = MemoryMap::new(0x80000, 0x2000, 0x2000, Mirroring::Vertical);
        m.write_register(0x8008, 0x03, 1);
        m.write_register(0x8002, 0x01, 1);
        m.update_map(&mut map);
        assert_eq!(map.prg[0] / 0x2000, (16 + 3) * 2, "outer bank 1, bank 3");
        assert_eq!(map.prg[2] / 0x2000, (16 + 15) * 2, "the last 16 KiB of the outer bank");
        assert_eq!(map.prg_ram[0].read, PrgRamRead::OpenBus, "RAM disabled at power-on");
        m.write_register(0x800D, PRG_RAM_ENABLE, 1);
        m.update_map(&mut map);
        assert_eq!(map.prg_ram[0].read, PrgRamRead::Ram);
    }
}
