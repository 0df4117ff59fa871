//! Mapper 4: MMC3 on TxROM boards (nesdev "MMC3"), and MMC6 on HKROM (nesdev "MMC6"; NES 2.0
//! submapper 1).
//!
//! Eight bank registers behind $8000/$8001, mirroring at $A000, PRG RAM protect at $A001, and the
//! scanline counter: $C000 latch, $C001 reload, $E000 disable and acknowledge, $E001 enable.
//!
//! The counter is clocked by rising edges of PPU A12 that come after A12 stayed low for at least
//! three falling edges of M2 (nesdev "MMC3", "IRQ Specifics"), which filters the short low phases
//! between sprite pattern fetches. `Cartridge::cpu_cycle` is the M2 edge. When clocked, the counter
//! is reloaded from the latch if it is 0 or a reload was requested, else decremented; then:
//! - [`Mmc3Revision::B`] (default; MMC3B/MMC3C, "new" behaviour): IRQ whenever the counter is 0;
//! - [`Mmc3Revision::A`] (MMC3A, "old" behaviour; NES 2.0 submapper 4, and the MMC6): IRQ only when
//!   the counter became 0 by decrementing, or by a reload requested through $C001, so a latch of 0
//!   fires once.
//!
//! The MMC6 banks and counts like the MMC3 but has 1 KiB of RAM inside the chip instead of the
//! board's 8 KiB, at $7000-$7FFF ($6000-$6FFF is not decoded: open bus), in two 512-byte halves,
//! $7000-$71FF and $7200-$73FF, repeated every 1 KiB. $8000 bit 5 enables it; while that bit is
//! clear the chip holds $A001 at 0, so writes to $A001 are lost and re-enabling finds nothing
//! readable. $A001 is `HhLl xxxx`: read (H) and write (h) enables of the upper half, read (L) and
//! write (l) of the lower. A write enable counts only with its half's read enable. With neither half
//! readable $7000-$7FFF is open bus; with one readable, the other reads 0 (nesdev "MMC6",
//! "Hardware"). `roms/mmc6/mmc6.nes` checks each rule.
//!
//! With more than 512 KiB of PRG ROM (NES 2.0 only), R6 and R7 use all 8 bits (nesdev "MMC3",
//! "iNES Mapper 004": the extension for more PRG; `roms/mmc3fam/m004_big_prg.nes`). The boards that
//! wire the chip's CHR outputs differently (118 TxSROM, 119 TQROM) are a [`Txrom`] too, with their
//! wiring ([`ChrWiring`]) in their own files: one `Board` variant keeps the A12 counter's paths, run
//! at every PPU fetch, a single test (as variants of their own they cost the MMC3 demo 4.6% more
//! host instructions).

use super::map::{BoardConfig, MemoryMap, PRG_RAM_WINDOW, PRG_RAM_WINDOWS, PrgRamRead};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

/// Which MMC3 IRQ behaviour a board has (`mmc3_test_2` 5-MMC3 passes on B, 6-MMC3_alt on A).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mmc3Revision {
    /// MMC3A ("old"): IRQ only when the counter is decremented to 0 or reloaded to 0 after $C001.
    /// Also the MMC6's behaviour, and its default.
    A,
    /// MMC3B/MMC3C ("new"): IRQ whenever the counter is 0 after a clock. The default.
    B,
}

impl Mmc3Revision {
    /// State encoding: 0 = B (the default, so a zeroed state is the common chip), 1 = A.
    fn from_state(value: u8) -> Self {
        if value == 1 { Mmc3Revision::A } else { Mmc3Revision::B }
    }

    fn to_state(self) -> u8 {
        match self {
            Mmc3Revision::A => 1,
            Mmc3Revision::B => 0,
        }
    }
}

/// Which chip is on the board: the MMC3 or the MMC6 (the same banking and counter, other PRG RAM).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chip {
    Mmc3,
    Mmc6,
}

impl Chip {
    /// State encoding: 0 = MMC3 (so a zeroed state, and every snapshot from before the MMC6, is the
    /// common chip), 1 = MMC6.
    fn from_state(value: u8) -> Self {
        if value == 1 { Chip::Mmc6 } else { Chip::Mmc3 }
    }

    fn to_state(self) -> u8 {
        match self {
            Chip::Mmc3 => 0,
            Chip::Mmc6 => 1,
        }
    }
}

/// M2 falling edges A12 must stay low before a rising edge clocks the counter.
pub(super) const A12_LOW_M2_EDGES: u8 = 3;

/// $8000 bit 5 on the MMC6: its RAM is enabled.
const MMC6_RAM_ENABLE: u8 = 0x20;

crate::layout::state_struct! {
    /// MMC3 and MMC6 registers, IRQ counter and A12 filter.
    pub struct TxromState {
        /// $8000: bits 0-2 register to update, bit 6 PRG mode, bit 7 CHR A12 inversion; on the MMC6
        /// bit 5 enables its RAM.
        pub bank_select: u8,
        /// $A000 bit 0: 0 vertical, 1 horizontal.
        pub mirroring: u8,
        /// $A001. MMC3: bit 7 PRG RAM enable, bit 6 write protect. MMC6: bits 7/6 read/write enable
        /// of $7200-$73FF, bits 5/4 of $7000-$71FF; held at 0 while $8000 bit 5 is clear.
        pub prg_ram_protect: u8,
        /// $C000: counter reload value.
        pub irq_latch: u8,
        /// Scanline counter.
        pub irq_counter: u8,
        /// 1 when $C001 requested a reload on the next clock.
        pub irq_reload: u8,
        /// 1 when IRQs are enabled ($E001).
        pub irq_enabled: u8,
        /// 1 while /IRQ is asserted.
        pub irq_pending: u8,
        /// R0-R7: R0-R1 2 KiB CHR, R2-R5 1 KiB CHR, R6-R7 8 KiB PRG.
        pub registers: [u8; 8],
        /// PPU A12 as last seen (0 or 1).
        pub a12_level: u8,
        /// M2 edges seen since A12 went low (saturating).
        pub a12_low_m2_edges: u8,
        /// IRQ behaviour: 0 = revision B, 1 = revision A (see [`Mmc3Revision`]).
        pub revision: u8,
        /// The chip: 0 = MMC3, 1 = MMC6 (NES 2.0 submapper 1).
        pub chip: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 4],
    }
}

const _: () = assert!(core::mem::size_of::<TxromState>() == 24);

/// How the board wires the chip's CHR outputs: from the mapper number, not state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChrWiring {
    /// Straight to the CHR chip (mapper 4).
    Txrom,
    /// CHR A17 to CIRAM A10 (mapper 118, `m118_txsrom.rs`).
    Txsrom,
    /// CHR A16 selecting CHR RAM after `rom_banks` 1 KiB banks of ROM (mapper 119, `m119_tqrom.rs`).
    Tqrom { rom_banks: usize },
}

/// MMC3 or MMC6 board, and the boards wiring the MMC3 differently (118, 119).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Txrom {
    state: TxromState,
    wiring: ChrWiring,
}

impl Txrom {
    /// The IRQ behaviour modelled.
    pub fn revision(&self) -> Mmc3Revision {
        Mmc3Revision::from_state(self.state.revision)
    }

    /// True on TQROM (mapper 119), whose CHR RAM sits beside its CHR ROM.
    pub fn is_tqrom(&self) -> bool {
        matches!(self.wiring, ChrWiring::Tqrom { .. })
    }

    /// True for the MMC6 (NES 2.0 submapper 1).
    pub fn is_mmc6(&self) -> bool {
        Chip::from_state(self.state.chip) == Chip::Mmc6
    }

    /// Selects the IRQ behaviour.
    pub fn set_revision(&mut self, revision: Mmc3Revision) {
        self.state.revision = revision.to_state();
    }

    /// One M2 cycle: counts how long A12 has been low. The one-edge definition that
    /// [`Txrom::cpu_cycles`] is tested against (the console delivers edges through that).
    #[cfg(test)]
    fn cpu_cycle(&mut self) {
        let s = &mut self.state;
        if s.a12_level == 0 && s.a12_low_m2_edges < A12_LOW_M2_EDGES {
            s.a12_low_m2_edges += 1;
        }
    }

    /// The PPU drove `addr`: a filtered rising edge of A12 clocks the counter.
    #[inline]
    pub fn observe_ppu_address(&mut self, addr: u16) {
        let a12 = u8::from(addr & 0x1000 != 0);
        let s = &mut self.state;
        if a12 == s.a12_level {
            return;
        }
        s.a12_level = a12;
        if a12 == 0 {
            s.a12_low_m2_edges = 0;
        } else if s.a12_low_m2_edges >= A12_LOW_M2_EDGES {
            self.clock_counter();
        }
    }

    // Out of line: rare (once per scanline at most), and keeping it out keeps the A12 check small
    // enough to inline into the PPU's fetches.
    #[inline(never)]
    fn clock_counter(&mut self) {
        let s = &mut self.state;
        let before = s.irq_counter;
        let reload = s.irq_reload != 0;
        if before == 0 || reload {
            s.irq_counter = s.irq_latch;
        } else {
            s.irq_counter = before - 1;
        }
        s.irq_reload = 0;
        let fire = match Mmc3Revision::from_state(s.revision) {
            Mmc3Revision::B => s.irq_counter == 0,
            Mmc3Revision::A => s.irq_counter == 0 && (before != 0 || reload),
        };
        if fire && s.irq_enabled != 0 {
            s.irq_pending = 1;
        }
    }

    /// Maps the eight CHR windows from R0-R5, `chr_bank` turning each 1 KiB bank number the chip
    /// outputs into the bank of the cartridge's CHR it selects (boards wire the upper lines
    /// differently: TxSROM, TQROM).
    pub(super) fn map_chr(&self, map: &mut MemoryMap, chr_bank: impl Fn(u8) -> usize) {
        let r = &self.state.registers;
        // CHR A12 inversion swaps the 2 KiB and 1 KiB halves.
        let two_k = if self.chr_a12_inverted() { 4 } else { 0 };
        // R0 and R1 ignore their low bit: 2 KiB bank n is 1 KiB banks 2n and 2n+1.
        for (pair, register) in [r[0], r[1]].into_iter().enumerate() {
            map.set_chr_1k(two_k + pair * 2, chr_bank(register & 0xFE));
            map.set_chr_1k(two_k + pair * 2 + 1, chr_bank(register | 1));
        }
        for i in 0..4 {
            map.set_chr_1k((two_k ^ 4) + i, chr_bank(r[2 + i]));
        }
    }

    /// R0-R7.
    pub(super) fn registers(&self) -> [u8; 8] {
        self.state.registers
    }

    /// $8000 bit 7: the 1 KiB CHR banks are at $0000-$0FFF, the 2 KiB ones at $1000-$1FFF.
    pub(super) fn chr_a12_inverted(&self) -> bool {
        self.state.bank_select & 0x80 != 0
    }

    /// The MMC6's RAM windows: $6000-$6FFF open bus; in $7000-$7FFF, even windows are the lower
    /// half of the RAM and odd ones the upper half, each readable, reading 0 or open bus.
    fn update_mmc6_ram(&self, map: &mut MemoryMap) {
        let s = &self.state;
        // The chip holds $A001 at 0 while the RAM is disabled; `write_register` keeps it so, and a
        // restored state that says otherwise is read the way the chip would drive it.
        let protect = if s.bank_select & MMC6_RAM_ENABLE != 0 { s.prg_ram_protect } else { 0 };
        // (read, write) of the lower and the upper half; a write enable needs its read enable.
        let half = |read_bit: u8, write_bit: u8| {
            let read = protect & read_bit != 0;
            (read, read && protect & write_bit != 0)
        };
        let halves = [half(0x20, 0x10), half(0x80, 0x40)];
        let any_readable = halves[0].0 || halves[1].0;
        for window in 0..PRG_RAM_WINDOWS {
            let (read, writable) = if window < PRG_RAM_WINDOWS / 2 {
                (PrgRamRead::OpenBus, false)
            } else {
                let (readable, writable) = halves[window & 1];
                let read = match (readable, any_readable) {
                    (true, _) => PrgRamRead::Ram,
                    (false, true) => PrgRamRead::Zero,
                    (false, false) => PrgRamRead::OpenBus,
                };
                (read, writable)
            };
            map.set_prg_ram_window(window, (window & 1) * PRG_RAM_WINDOW, read, writable);
        }
    }
}

impl Mapper for Txrom {
    state_in!(state: TxromState);

    /// The Acclaim MC-ACC (submapper 3) clocks its counter from a prescaler on falling A12 edges,
    /// unlike the MMC3 and MMC6 modelled here (nesdev "MMC3", "IRQ Specifics").
    fn supports(mapper: u16, submapper: u8) -> bool {
        mapper != 4 || submapper != 3
    }

    fn observe_ppu(&mut self, addr: u16, _read: bool) -> bool {
        self.observe_ppu_address(addr);
        false
    }

    /// TQROM's 8 KiB of CHR RAM beside its ROM.
    fn chr_ram_beside_rom(&self) -> Option<usize> {
        self.is_tqrom().then_some(super::m119_tqrom::TQROM_CHR_RAM_LEN)
    }

    /// The MMC6's 1 KiB starts at $7000.
    fn prg_ram_cpu_address(&self) -> u16 {
        if self.is_mmc6() { 0x7000 } else { 0x6000 }
    }

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        // The submappers are mapper 4's; the boards built around an MMC3 (118, 119) have none.
        let submapper = if config.mapper == 4 { config.submapper } else { 0 };
        let chip = if submapper == 1 { Chip::Mmc6 } else { Chip::Mmc3 };
        // The MMC6's counter has the old behaviour, revision A here (the NEC MMC3 of nesdev "MMC3",
        // "IRQ Specifics"): with a latch of 0 it raises the IRQ once, after a $C001 reload, where a
        // Sharp MMC3 raises it at every clock. blargg's mmc3_test ROM 6-MMC6 was written for the
        // MMC6's counter and expects exactly that (it notes that some MMC3s behave the same), and
        // kevtris's MMC6 notes name a latch of 0 as where its IRQ differs from the MMC3's. The nesdev
        // "MMC6" page likens the chip to an MMC3C apart from the RAM, which would mean the Sharp
        // behaviour; the hardware tests win.
        let revision = if submapper == 4 || chip == Chip::Mmc6 { Mmc3Revision::A } else { Mmc3Revision::B };
        // Power-on values are unspecified; these give distinct banks. On the MMC3, RAM enabled so
        // programs that never write $A001 (older dumps, test ROMs) still have it; on the MMC6, $8000
        // bit 5 clear and so $A001 at 0: its games enable the RAM themselves.
        let prg_ram_protect = if chip == Chip::Mmc3 { 0x80 } else { 0 };
        let wiring = match config.mapper {
            118 => ChrWiring::Txsrom,
            119 => ChrWiring::Tqrom { rom_banks: config.chr_rom_size.div_ceil(super::map::CHR_SLOT) },
            _ => ChrWiring::Txrom,
        };
        Txrom {
            wiring,
            state: TxromState {
                registers: [0, 2, 4, 5, 6, 7, 0, 1],
                prg_ram_protect,
                revision: revision.to_state(),
                chip: chip.to_state(),
                ..TxromState::default()
            },
        }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    #[inline]
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        let s = &mut self.state;
        let mmc6 = Chip::from_state(s.chip) == Chip::Mmc6;
        match addr & 0xE001 {
            0x8000 => {
                s.bank_select = value;
                if mmc6 && value & MMC6_RAM_ENABLE == 0 {
                    s.prg_ram_protect = 0;
                }
            }
            0x8001 => s.registers[usize::from(s.bank_select & 7)] = value,
            0xA000 => s.mirroring = value & 1,
            0xA001 => {
                if !mmc6 || s.bank_select & MMC6_RAM_ENABLE != 0 {
                    s.prg_ram_protect = value;
                }
            }
            0xC000 => {
                s.irq_latch = value;
                return false;
            }
            0xC001 => {
                s.irq_counter = 0;
                s.irq_reload = 1;
                return false;
            }
            0xE000 => {
                s.irq_enabled = 0;
                s.irq_pending = 0;
                return false;
            }
            _ => {
                s.irq_enabled = 1;
                return false;
            }
        }
        true
    }

    /// `edges` M2 cycles with no PPU access between them: each counts how long A12 has been low.
    #[inline(always)]
    fn cpu_cycles(&mut self, edges: u64) {
        let s = &mut self.state;
        if s.a12_level == 0 && s.a12_low_m2_edges < A12_LOW_M2_EDGES {
            let counted = u64::from(s.a12_low_m2_edges).saturating_add(edges);
            s.a12_low_m2_edges = counted.min(u64::from(A12_LOW_M2_EDGES)) as u8;
        }
    }

    /// Counter clocks (filtered A12 rises) that must happen before /IRQ can be asserted; `u32::MAX`
    /// when it cannot be (disabled, or already asserted: only a CPU write changes it then).
    fn a12_clocks_before_irq(&self) -> u32 {
        let s = &self.state;
        if s.irq_enabled == 0 || s.irq_pending != 0 {
            u32::MAX
        } else if s.irq_reload != 0 || s.irq_counter == 0 {
            1
        } else {
            u32::from(s.irq_counter)
        }
    }

    /// M2 edges counted since PPU A12 fell (up to the filter's three), `None` while A12 is high.
    fn a12_low_m2_edges(&self) -> Option<u8> {
        (self.state.a12_level == 0).then_some(self.state.a12_low_m2_edges)
    }

    /// The level of PPU A12 seen last (true = high).
    #[inline(always)]
    fn a12_high(&self) -> bool {
        self.state.a12_level != 0
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    fn irq_line(&self) -> bool {
        self.state.irq_pending != 0
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        let r = |i: usize| usize::from(s.registers[i]);
        let second_last = map.prg_bank_from_end(2);
        // The MMC3 has six PRG bank outputs (512 KiB). A larger ROM, which only an NES 2.0 header
        // can declare, is the wiki's "MMC3 with more PRG" extension: all 8 bits of R6 and R7 count.
        let prg_mask = if map.prg_banks > 64 { 0xFF } else { 0x3F };
        let r6 = r(6) & prg_mask;
        let (slot0, slot2) = if s.bank_select & 0x40 == 0 { (r6, second_last) } else { (second_last, r6) };
        map.set_prg_8k(0, slot0);
        map.set_prg_8k(1, r(7) & prg_mask);
        map.set_prg_8k(2, slot2);
        map.set_prg_8k(3, map.prg_bank_from_end(1));

        map.set_mirroring(if s.mirroring & 1 == 0 { Mirroring::Vertical } else { Mirroring::Horizontal });
        // After the mirroring: TxSROM's CHR outputs override it.
        match self.wiring {
            ChrWiring::Txrom => self.map_chr(map, usize::from),
            ChrWiring::Txsrom => {
                map.nametables = super::m118_txsrom::nametables(self.registers(), self.chr_a12_inverted());
                self.map_chr(map, |bank| usize::from(bank & 0x7F));
            }
            ChrWiring::Tqrom { rom_banks } => {
                let ram_banks = map.chr_banks.saturating_sub(rom_banks).max(1);
                self.map_chr(map, |bank| super::m119_tqrom::chr_bank(bank, rom_banks, ram_banks));
            }
        }
        match Chip::from_state(s.chip) {
            Chip::Mmc3 => {
                let enabled = s.prg_ram_protect & 0x80 != 0;
                map.set_prg_ram(0, enabled, enabled && s.prg_ram_protect & 0x40 == 0);
            }
            Chip::Mmc6 => self.update_mmc6_ram(map),
        }
        map.watches_ppu = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::map::PRG_SLOT;

    /// A board (MMC6 for submapper 1) and its bank map over 32 KiB PRG, 8 KiB CHR and `ram` bytes of
    /// PRG RAM.
    fn board(submapper: u8, ram: usize) -> (Txrom, MemoryMap) {
        let board = Txrom::new(BoardConfig { mapper: 4, submapper, chr_rom_size: 0, battery: false });
        let mut map = MemoryMap::new(0x8000, 0x2000, ram, Mirroring::Vertical);
        board.update_map(&mut map);
        (board, map)
    }

    fn write(board: &mut Txrom, map: &mut MemoryMap, addr: u16, value: u8) {
        if board.write_register(addr, value, 0) {
            board.update_map(map);
        }
    }

    /// (read, writable) of $7000 (lower half) and $7200 (upper half).
    fn halves(map: &MemoryMap) -> [(PrgRamRead, bool); 2] {
        [0x7000, 0x7200].map(|addr| {
            let window = map.prg_ram_window(addr);
            (window.read, window.writable)
        })
    }

    const CLOSED: (PrgRamRead, bool) = (PrgRamRead::OpenBus, false);

    #[test]
    fn m2_cycles_in_one_call_are_single_cycles_repeated() {
        for low_edges in 0..=5u8 {
            for a12 in [0u16, 0x1000] {
                for edges in 0..8u64 {
                    let mut one_by_one =
                        Txrom::new(BoardConfig { mapper: 4, submapper: 0, chr_rom_size: 0, battery: false });
                    one_by_one.observe_ppu_address(a12);
                    one_by_one.state.a12_low_m2_edges = low_edges;
                    let mut at_once = one_by_one.clone();
                    for _ in 0..edges {
                        one_by_one.cpu_cycle();
                    }
                    at_once.cpu_cycles(edges);
                    assert_eq!(at_once, one_by_one, "{low_edges} low edges, A12 {a12:#x}, {edges} edges");
                }
            }
        }
    }

    #[test]
    fn no_irq_before_the_predicted_clock() {
        for revision in [0u8, 1] {
            for latch in [0u8, 1, 2, 5, 80, 255] {
                for counter in [0u8, 1, 2, 7, 200] {
                    for reload in [0u8, 1] {
                        let mut board = Txrom::new(BoardConfig {
                            mapper: 4,
                            submapper: 0,
                            chr_rom_size: 0,
                            battery: false,
                        });
                        let s = &mut board.state;
                        (s.revision, s.irq_latch, s.irq_counter, s.irq_reload, s.irq_enabled) =
                            (revision, latch, counter, reload, 1);
                        let predicted = board.a12_clocks_before_irq();
                        let case =
                            format!("revision {revision}, latch {latch}, counter {counter}, reload {reload}");
                        // The first clock that raises /IRQ, within 600 clocks.
                        let first = (1..=600u32).find(|_| {
                            clock(&mut board);
                            board.irq_line()
                        });
                        match first {
                            // Never later than the clock that raises it (the schedule runs up to
                            // it in bulk); exactly on it while the counter runs down.
                            Some(first) => {
                                assert!(
                                    predicted <= first,
                                    "{case}: predicted {predicted}, raised at {first}"
                                );
                                if reload == 0 && counter != 0 {
                                    assert_eq!(predicted, first, "{case}");
                                }
                            }
                            // Revision A reloading 0 by itself never raises it.
                            None => assert!(revision == 1 && latch == 0, "{case}: predicted {predicted}"),
                        }
                    }
                }
            }
        }
    }

    /// One filtered rising edge of A12: low for three M2 edges, then high.
    fn clock(board: &mut Txrom) {
        board.observe_ppu_address(0x0000);
        for _ in 0..A12_LOW_M2_EDGES {
            board.cpu_cycle();
        }
        board.observe_ppu_address(0x1000);
    }

    #[test]
    fn mmc6_powers_on_with_its_ram_disabled_and_the_old_irq() {
        let (board, map) = board(1, 0x400);
        assert_eq!(board.revision(), Mmc3Revision::A);
        assert_eq!(board.state.chip, 1);
        assert!(map.prg_ram.iter().all(|w| (w.read, w.writable) == CLOSED), "{:?}", map.prg_ram);
        // Submapper 0 is the MMC3 with its RAM enabled, writable, over the whole $6000-$7FFF.
        let (board, map) = board_mmc3();
        assert_eq!((board.revision(), board.state.chip), (Mmc3Revision::B, 0));
        for (i, w) in map.prg_ram.iter().enumerate() {
            assert_eq!((w.offset, w.read, w.writable), (i * PRG_RAM_WINDOW, PrgRamRead::Ram, true));
        }
    }

    fn board_mmc3() -> (Txrom, MemoryMap) {
        board(0, PRG_SLOT)
    }

    #[test]
    fn mmc6_a001_enables_each_half_by_its_own_bits() {
        // nesdev "MMC6": H (bit 7) and h (bit 6) read/write the upper half, L (5) and l (4) the
        // lower; a write enable needs its read enable; an unreadable half reads open bus when the
        // other is unreadable too, else 0.
        for nibble in 0u8..16 {
            let (mut board, mut map) = board(1, 0x400);
            write(&mut board, &mut map, 0x8000, 0x20);
            write(&mut board, &mut map, 0xA001, nibble << 4 | 0x0F);
            let (upper_read, upper_write) = (nibble & 8 != 0, nibble & 4 != 0);
            let (lower_read, lower_write) = (nibble & 2 != 0, nibble & 1 != 0);
            let expect = |read: bool, write: bool, other_read: bool| {
                let kind = match (read, other_read) {
                    (true, _) => PrgRamRead::Ram,
                    (false, true) => PrgRamRead::Zero,
                    (false, false) => PrgRamRead::OpenBus,
                };
                (kind, read && write)
            };
            assert_eq!(
                halves(&map),
                [expect(lower_read, lower_write, upper_read), expect(upper_read, upper_write, lower_read)],
                "$A001 = ${:02X}",
                nibble << 4
            );
        }
    }

    #[test]
    fn mmc6_ram_repeats_every_kib_above_7000_and_6000_is_not_decoded() {
        let (mut board, mut map) = board(1, 0x400);
        write(&mut board, &mut map, 0x8000, 0x20);
        write(&mut board, &mut map, 0xA001, 0xF0);
        for (i, w) in map.prg_ram.iter().enumerate() {
            let addr = 0x6000 + i * PRG_RAM_WINDOW;
            if addr < 0x7000 {
                assert_eq!((w.read, w.writable), CLOSED, "${addr:04X}");
            } else {
                let lower_or_upper = (addr & 0x3FF) / PRG_RAM_WINDOW;
                assert_eq!(
                    (w.offset, w.read, w.writable),
                    (lower_or_upper * PRG_RAM_WINDOW, PrgRamRead::Ram, true),
                    "${addr:04X}"
                );
            }
        }
    }

    #[test]
    fn mmc6_ram_disable_holds_a001_at_zero() {
        let (mut board, mut map) = board(1, 0x400);
        // While $8000 bit 5 is clear, $A001 writes are lost.
        write(&mut board, &mut map, 0xA001, 0xF0);
        assert_eq!(board.state.prg_ram_protect, 0);
        write(&mut board, &mut map, 0x8000, 0x20);
        assert_eq!(halves(&map), [CLOSED; 2], "enabling finds $A001 still 0");
        write(&mut board, &mut map, 0xA001, 0xF0);
        assert_eq!(halves(&map), [(PrgRamRead::Ram, true); 2]);
        // Clearing bit 5 clears $A001; setting it again does not bring the old value back. The
        // other bits of $8000 keep their MMC3 meaning throughout.
        write(&mut board, &mut map, 0x8000, 0x06);
        assert_eq!((board.state.prg_ram_protect, halves(&map)), (0, [CLOSED; 2]));
        write(&mut board, &mut map, 0x8001, 3);
        assert_eq!(board.state.registers[6], 3);
        write(&mut board, &mut map, 0x8000, 0x27);
        write(&mut board, &mut map, 0x8001, 1);
        assert_eq!(board.state.registers[7], 1);
        assert_eq!(halves(&map), [CLOSED; 2]);
        // A restored state whose $A001 is not 0 while the RAM is disabled reads as the chip drives
        // it: disabled.
        board.state.bank_select = 0;
        board.state.prg_ram_protect = 0xF0;
        board.update_map(&mut map);
        assert_eq!(halves(&map), [CLOSED; 2]);
    }

    #[test]
    fn mmc3_a001_is_untouched_by_8000_bit_5() {
        let (mut board, mut map) = board_mmc3();
        write(&mut board, &mut map, 0xA001, 0xC0);
        write(&mut board, &mut map, 0x8000, 0x00);
        assert_eq!(board.state.prg_ram_protect, 0xC0);
        assert_eq!(halves(&map), [(PrgRamRead::Ram, false); 2], "readable, write-protected");
        write(&mut board, &mut map, 0xA001, 0x00);
        assert_eq!(halves(&map), [CLOSED; 2]);
    }

    /// IRQs raised by `clocks` clocks after latch `latch` and a $C001 reload, each acknowledged.
    fn irqs(board: &mut Txrom, latch: u8, clocks: usize) -> usize {
        board.write_register(0xC000, latch, 0);
        board.write_register(0xC001, 0, 0);
        board.write_register(0xE001, 0, 0);
        (0..clocks)
            .filter(|_| {
                clock(board);
                let fired = board.irq_line();
                board.write_register(0xE000, 0, 0);
                board.write_register(0xE001, 0, 0);
                fired
            })
            .count()
    }

    #[test]
    fn mmc6_latch_zero_raises_one_irq_where_the_mmc3_raises_one_a_clock() {
        let (mut mmc6, _) = board(1, 0x400);
        assert_eq!(irqs(&mut mmc6, 0, 5), 1);
        let (mut mmc3, _) = board_mmc3();
        assert_eq!(irqs(&mut mmc3, 0, 5), 5);
        // Any other latch counts alike on both.
        let (mut mmc6, _) = board(1, 0x400);
        let (mut mmc3, _) = board_mmc3();
        assert_eq!((irqs(&mut mmc6, 2, 9), irqs(&mut mmc3, 2, 9)), (3, 3));
    }
}
