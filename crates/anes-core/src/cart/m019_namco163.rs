//! Mapper 19: Namco 129 and 163 (nesdev "INES Mapper 019", "Namco 163 audio").
//!
//! Each register answers through $800 bytes:
//! - $4800 (r/w): the internal RAM's data port, at the address $F800 set; with its bit 7 set each
//!   access moves the address on by one (7 bits, wrapping);
//! - $5000, $5800 (r/w): the IRQ counter, bits 0-7 and `E` + bits 8-14 (`E`: counting). A write of
//!   either acknowledges the IRQ. While E is set the counter counts CPU cycles up to $7FFF, where it
//!   stops; the count that reaches $7FFF asserts /IRQ (a counter written as $7FFF stays there
//!   without asserting it: the wiki names only the count as the trigger). It counts from the cycle
//!   after the write;
//! - $8000-$B800: the eight 1 KiB pattern table windows. A value of $E0 or more selects the console's
//!   nametable RAM instead (page = bit 0), in $0000-$0FFF unless $E800 bit 6 is set, in
//!   $1000-$1FFF unless bit 7 is;
//! - $C000-$D800: the four nametables: $E0 or more selects nametable RAM page bit 0, below $E0 the
//!   1 KiB CHR ROM bank of that number (writes there go nowhere);
//! - $E000: PRG bank at $8000 (6 bits), bit 6 set: sound off; $E800: PRG bank at $A000 and the two
//!   bits above; $F000: PRG bank at $C000; $E000-$FFFF holds the last bank;
//! - $F800: the internal RAM's address (bits 0-6, bit 7 auto-increment), and PRG RAM's write
//!   protection: writes reach $6000-$7FFF only when the high nibble is 0100, and bits 0-3 then
//!   protect its 2 KiB quarters each.
//!
//! The nametable RAM a pattern window can select is why this board keeps the console's 2 KiB of
//! nametable RAM itself (after CHR in the cartridge's PPU-side memory, where a four-screen board
//! keeps its VRAM; the console's CIRAM goes unused): both kinds of window then index one memory.
//!
//! NES 2.0 submappers 0, 3, 4 and 5 mix the sound at the level the wiki gives for their mixing
//! resistor ([`ExpansionChip::Namco163`]); 1 and 2 have no sound output (the chip still runs: its
//! RAM shows the phases). With the battery flag and no PRG-NVRAM in a NES 2.0 header, the internal
//! RAM is the battery-backed memory (`Cartridge::battery_ram`).

use super::expansion_audio::{ExpansionChip, Namco163Mix};
use super::m019_namco163_audio::Namco163Audio;
use super::map::{BoardConfig, CHR_SLOT, MemoryMap, PRG_RAM_WINDOWS, PrgRamRead};
use super::mapper::{Mapper, state_in};
use super::rom_info::RomInfo;

/// The console's 2 KiB of nametable RAM, which the board keeps after CHR.
pub(super) const NAMCO163_NAMETABLE_RAM_LEN: usize = 0x800;

crate::layout::state_struct! {
    /// Namco 163 registers, its IRQ counter, internal RAM and sound.
    pub struct Namco163State {
        /// The 128 bytes of internal RAM (sound registers and wave samples, or save data).
        pub ram: [[u8; 16]; 8],
        /// $8000-$B800: pattern table windows.
        pub chr: [u8; 8],
        /// $C000-$D800: nametables.
        pub nametable: [u8; 4],
        /// $E000, $E800, $F000: PRG banks, sound disable, nametable RAM in the pattern tables.
        pub prg: [u8; 3],
        /// $F800 as written: PRG RAM write protection.
        pub write_protect: u8,
        /// The internal RAM's address (bits 0-6) and auto-increment (bit 7).
        pub ram_address: u8,
        /// 1 while /IRQ is asserted.
        pub irq_pending: u8,
        /// The IRQ counter: bits 0-14, bit 15 counting.
        pub irq_counter: u16,
        /// The sound's cadence and DAC.
        pub audio: Namco163Audio,
    }
}

const _: () = assert!(core::mem::size_of::<Namco163State>() == 152);

const SOUND_OFF: u8 = 0x40;
const AUTO_INCREMENT: u8 = 0x80;
const IRQ_COUNTING: u16 = 0x8000;
const IRQ_TOP: u16 = 0x7FFF;
/// Pattern and nametable register values from here on select nametable RAM.
const NAMETABLE_RAM: u8 = 0xE0;

/// Namco 129/163 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Namco163 {
    state: Namco163State,
    /// The sound mixing level the submapper names; `None`: no sound output (submappers 1, 2).
    mix: Option<Namco163Mix>,
    /// The CPU cycle the IRQ counter and the sound have been run through. Derived (set by
    /// `resync`), not state.
    ticked: u64,
}

impl Namco163 {
    fn ram(&self) -> &[u8; 128] {
        bytemuck::cast_ref(&self.state.ram)
    }

    /// The internal RAM (the battery-backed memory where the header says so).
    pub fn internal_ram(&self) -> &[u8] {
        self.ram()
    }

    /// The internal RAM, mutable (a battery save's restore).
    pub fn internal_ram_mut(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(&mut self.state.ram)
    }

    /// The internal RAM's data port moved on by one access.
    fn port_accessed(&mut self) {
        let address = self.state.ram_address;
        if address & AUTO_INCREMENT != 0 {
            self.state.ram_address = AUTO_INCREMENT | (address.wrapping_add(1) & 0x7F);
        }
    }

    /// One CPU cycle of the IRQ counter: the definition `catch_up` must equal.
    #[cfg(test)]
    fn step_irq(&mut self) {
        let s = &mut self.state;
        if s.irq_counter & IRQ_COUNTING != 0 && s.irq_counter & IRQ_TOP != IRQ_TOP {
            s.irq_counter += 1;
            if s.irq_counter & IRQ_TOP == IRQ_TOP {
                s.irq_pending = 1;
            }
        }
    }
}

impl Mapper for Namco163 {
    state_in!(state: Namco163State, ticked: ticked);

    /// The chip's 128 bytes are the battery memory when the header declares a battery but no
    /// PRG-NVRAM (nesdev "INES Mapper 019": NES 2.0 counts them in neither field).
    fn battery_memory(&self, info: &RomInfo) -> Option<&[u8]> {
        (info.battery && info.prg_nvram_size == 0).then(|| self.internal_ram())
    }

    fn battery_memory_mut(&mut self, info: &RomInfo) -> Option<&mut [u8]> {
        (info.battery && info.prg_nvram_size == 0).then(|| self.internal_ram_mut())
    }

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        let mix = match config.submapper {
            1 | 2 => None,
            4 => Some(Namco163Mix::Db16_5),
            5 => Some(Namco163Mix::Db18_75),
            _ => Some(Namco163Mix::Db12),
        };
        Namco163 {
            state: Namco163State { audio: Namco163Audio::new(), ..Default::default() },
            mix,
            ticked: 0,
        }
    }

    /// A CPU write to $8000-$FFFF on CPU cycle `cpu_cycle`; returns true when the bank map must be
    /// recomputed.
    fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        self.catch_up(cpu_cycle);
        let s = &mut self.state;
        let register = usize::from((addr >> 11) & 3);
        match addr & 0xE000 {
            0x8000 | 0xA000 => s.chr[usize::from((addr - 0x8000) >> 11)] = value,
            0xC000 => s.nametable[register] = value,
            _ if register == 3 => {
                s.write_protect = value;
                s.ram_address = value;
            }
            _ => s.prg[register] = value,
        }
        true
    }

    /// A CPU write to $4020-$7FFF, the board run through the write's cycle (`catch_up`).
    fn write_low(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        let s = &mut self.state;
        match addr & 0xF800 {
            0x4800 => {
                let index = usize::from(s.ram_address & 0x7F);
                s.ram[index / 16][index % 16] = value;
                self.port_accessed();
            }
            0x5000 => {
                s.irq_counter = (s.irq_counter & 0xFF00) | u16::from(value);
                s.irq_pending = 0;
            }
            0x5800 => {
                s.irq_counter = (s.irq_counter & 0x00FF) | u16::from(value) << 8;
                s.irq_pending = 0;
            }
            _ => {}
        }
        false
    }

    /// What a read of $4020-$5FFF returns, without its side effect.
    fn peek_low(&self, addr: u16, open_bus: u8, _extra_ram: &[u8]) -> u8 {
        let s = &self.state;
        match addr & 0xF800 {
            0x4800 => self.ram()[usize::from(s.ram_address & 0x7F)],
            0x5000 => s.irq_counter as u8,
            0x5800 => (s.irq_counter >> 8) as u8,
            _ => open_bus,
        }
    }

    /// A read of $4020-$5FFF, the board run through the read's cycle: the data port moves on.
    fn read_low(&mut self, addr: u16, open_bus: u8, extra_ram: &[u8]) -> u8 {
        let value = self.peek_low(addr, open_bus, extra_ram);
        if addr & 0xF800 == 0x4800 {
            self.port_accessed();
        }
        value
    }

    /// Runs the IRQ counter and the sound over `cycles` CPU cycles, in closed form.
    fn run_cycles(&mut self, cycles: u64) {
        if cycles == 0 {
            return;
        }
        let s = &mut self.state;
        let count = s.irq_counter & IRQ_TOP;
        if s.irq_counter & IRQ_COUNTING != 0 && count != IRQ_TOP {
            let to_top = u64::from(IRQ_TOP - count);
            if cycles >= to_top {
                s.irq_counter |= IRQ_TOP;
                s.irq_pending = 1;
            } else {
                s.irq_counter += cycles as u16;
            }
        }
        if s.prg[0] & SOUND_OFF == 0 {
            s.audio.run(cycles, bytemuck::cast_mut(&mut s.ram));
        }
    }

    /// The CPU cycle whose count asserts /IRQ; `None` when none can.
    fn cycles_to_irq(&self) -> Option<u64> {
        let s = &self.state;
        let count = s.irq_counter & IRQ_TOP;
        if s.irq_counter & IRQ_COUNTING == 0 || count == IRQ_TOP {
            return None;
        }
        Some(u64::from(IRQ_TOP - count))
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    fn irq_line(&self) -> bool {
        self.state.irq_pending != 0
    }

    /// The sound's mixing level, where the board's sound reaches the console.
    fn expansion_chip(&self) -> Option<ExpansionChip> {
        self.mix.map(ExpansionChip::Namco163)
    }

    /// The DAC's level as of the cycle the board was run through (0 with the sound off).
    fn expansion_level(&self) -> i32 {
        if self.state.prg[0] & SOUND_OFF != 0 { 0 } else { self.state.audio.level() }
    }

    /// Points every window of `map` at the banks the registers select. The nametable RAM is the
    /// 2 KiB after CHR (nametable pages 2 and 3).
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        for (slot, &bank) in s.prg.iter().enumerate() {
            map.set_prg_8k(slot, usize::from(bank & 0x3F));
        }
        let last = map.prg_bank_from_end(1);
        map.set_prg_8k(3, last);
        let nametable_ram = map.chr_banks * CHR_SLOT;
        for (window, &bank) in s.chr.iter().enumerate() {
            let rom_only = if window < 4 { 0x40 } else { 0x80 };
            if bank >= NAMETABLE_RAM && s.prg[1] & rom_only == 0 {
                map.chr[window] = nametable_ram + usize::from(bank & 1) * CHR_SLOT;
            } else {
                map.set_chr_1k(window, usize::from(bank));
            }
        }
        for (quadrant, &page) in s.nametable.iter().enumerate() {
            if page >= NAMETABLE_RAM {
                map.nametables[quadrant] = 2 + (page & 1);
            } else {
                map.set_nametable_chr(quadrant, usize::from(page));
            }
        }
        let writes = s.write_protect & 0xF0 == 0x40;
        for window in 0..PRG_RAM_WINDOWS {
            let quarter = window / (PRG_RAM_WINDOWS / 4);
            let writable = writes && s.write_protect & (1 << quarter) == 0;
            map.set_prg_ram_window(window, window * super::map::PRG_RAM_WINDOW, PrgRamRead::Ram, writable);
        }
        map.low_registers = true;
    }
}

#[cfg(test)]
mod tests {
    use super::super::rom_info::Mirroring;
    use super::*;

    fn board() -> Namco163 {
        Namco163::new(BoardConfig { mapper: 19, submapper: 0, chr_rom_size: 0x20000, battery: false })
    }

    #[test]
    fn the_irq_counter_stops_at_7fff_and_closed_form_equals_single_cycles() {
        for start in [0x7FF0u16, 0x7FFE, 0x0000, 0x7FFF, 0x1234] {
            let mut stepped = board();
            stepped.write_low(0x5000, start as u8, 0);
            stepped.write_low(0x5800, (start >> 8) as u8 | 0x80, 0);
            let mut lazy = stepped.clone();
            let due = lazy.irq_due_cycle();
            let mut first = None;
            let mut cycle = 0;
            for chunk in [1u64, 14, 3, 200, 40_000, 1] {
                for _ in 0..chunk {
                    cycle += 1;
                    stepped.step_irq();
                    if stepped.irq_line() && first.is_none() {
                        first = Some(cycle);
                    }
                }
                lazy.catch_up(cycle);
                assert_eq!(
                    lazy.state.irq_counter, stepped.state.irq_counter,
                    "from {start:#X}, cycle {cycle}"
                );
                assert_eq!(lazy.irq_line(), stepped.irq_line(), "from {start:#X}, cycle {cycle}");
            }
            let expected = if start == 0x7FFF { None } else { Some(u64::from(0x7FFF - start)) };
            assert_eq!(first, expected, "from {start:#X}");
            assert_eq!(due, expected.unwrap_or(u64::MAX), "from {start:#X}");
        }
    }

    #[test]
    fn the_data_port_increments_only_with_bit_7() {
        let mut m = board();
        m.write_register(0xF800, 0x80 | 0x7E, 0);
        for value in [1, 2, 3] {
            m.write_low(0x4800, value, 0);
        }
        assert_eq!(m.state.ram_address, 0x81, "wrapped past $7F");
        assert_eq!((m.ram()[0x7E], m.ram()[0x7F], m.ram()[0]), (1, 2, 3));
        m.write_register(0xF800, 0x7E, 0);
        assert_eq!(m.read_low(0x4800, 0, &[]), 1);
        assert_eq!(m.read_low(0x4FFF, 0, &[]), 1, "no increment");
    }

    #[test]
    fn nametable_ram_in_the_pattern_tables_follows_e800() {
        let mut map = MemoryMap::new(0x20000, 0x40000, 0x2000, Mirroring::Vertical);
        let mut m = board();
        m.write_register(0x8000, 0xE1, 0);
        m.write_register(0xB800, 0xE0, 0);
        m.update_map(&mut map);
        assert_eq!(map.chr[0], 0x40000 + 0x400, "page 1 after CHR");
        assert_eq!(map.chr[7], 0x40000, "page 0");
        m.write_register(0xE800, 0x40, 0);
        m.update_map(&mut map);
        assert_eq!(map.chr[0], 0xE1 * 0x400, "ROM at $0000-$0FFF");
        assert_eq!(map.chr[7], 0x40000, "$1000-$1FFF still RAM");
    }

    #[test]
    fn nametable_values_below_e0_select_chr_rom() {
        let mut map = MemoryMap::new(0x20000, 0x40000, 0x2000, Mirroring::Vertical);
        let mut m = board();
        for (addr, value) in [(0xC000, 0xE1), (0xC800, 0xDF), (0xD000, 0x00), (0xD800, 0xFE)] {
            m.write_register(addr, value, 0);
        }
        m.update_map(&mut map);
        map.resolve_nametables();
        assert_eq!(map.nametables, [3, super::super::map::PAGE_CHR, super::super::map::PAGE_CHR, 2]);
        let at = |bank: usize| super::super::map::NAMETABLE_IN_CART + bank * 0x400;
        assert_eq!(map.nametable_at, [at(0x101), at(0xDF), at(0), at(0x100)], "RAM after the 256 KiB of CHR");
    }
}
