//! Mapper 64: Tengen RAMBO-1 (nesdev "RAMBO-1"). Registers decoded with mask $E001, like the MMC3's:
//! - $8000: bank select `CPKx RRRR`: R the register the next $8001 write sets (R0-R9, RF); K 1 KiB CHR
//!   mode (R0 and R1 select 1 KiB banks, R8 and R9 the 1 KiB banks at $0400 and $0C00); P the PRG
//!   mode (0: R6, R7, RF at $8000, $A000, $C000; 1: RF, R7, R6); C the CHR A12 inversion;
//! - $8001: the selected register, all eight bits (R0/R1 in 2 KiB mode ignore bit 0);
//! - $A000: bit 0 mirroring (0 vertical, 1 horizontal); $A001: nothing;
//! - $C000: the IRQ latch; $C001: bit 0 the IRQ mode (0 PPU A12, 1 CPU cycles), and a reload at the
//!   next clock, which also restarts the cycle-mode prescaler (the next clock 4 cycles later);
//! - $E000: disables and acknowledges the IRQ; $E001: enables it (acknowledging nothing).
//!
//! The counter, at each clock: after a $C001 write it is reloaded from the latch, ORed with 1 when not
//! 0; else a counter of 0 is reloaded; else it is decremented. A clock that leaves it at 0 with the IRQ
//! enabled asserts /IRQ a little later. A12 mode clocks it as the MMC3's filter does (a rise of PPU A12
//! after three M2 edges low) and /IRQ rises on the second M2 edge after that rise; cycle mode clocks
//! it every fourth M2 edge and /IRQ rises on the next M2 edge (the wiki's prose, from the forum's
//! measurements, which it links; its rule list says "after 4 CPU cycles" for both, a figure from an
//! emulator's workaround on the talk page, not measured). With a latch of 0 every clock leaves the
//! counter at 0, so every clock asserts /IRQ (enabled).
//!
//! Schedule: in A12 mode the lazy PPU schedule catches the PPU up through the A12 clock that starts
//! /IRQ's delay ([`Mapper::a12_clocks_before_irq`], as for the MMC3), and then by the cycle whose M2
//! edge ends it ([`Mapper::m2_edges_before_irq`]); in cycle mode by the cycle whose edge raises /IRQ,
//! counted from the prescaler and the counter. The edges in between are replayed in their places
//! among the dots, so /IRQ rises on the eager schedule's cycle (`tests/ppu_schedule.rs`). Until
//! issue 48 the board ran the eager schedule.

use super::m004_txrom::A12_LOW_M2_EDGES;
use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

/// M2 edges from an A12-mode clock that leaves the counter at 0 to /IRQ rising.
const A12_IRQ_DELAY_M2_EDGES: u8 = 2;
/// M2 edges from a cycle-mode clock that leaves the counter at 0 to /IRQ rising.
const CYCLE_IRQ_DELAY_M2_EDGES: u8 = 1;
/// M2 edges per counter clock in cycle mode.
const CYCLE_MODE_PRESCALE: u8 = 4;

/// $8000 bit 5: R0/R1 select 1 KiB banks, R8/R9 the others.
const CHR_1K_MODE: u8 = 0x20;
/// $8000 bit 6: RF at $8000, R6 at $C000.
const PRG_SWAP: u8 = 0x40;
/// $8000 bit 7: the 2 KiB (or R0/R8/R1/R9) half at $1000.
const CHR_INVERT: u8 = 0x80;

crate::layout::state_struct! {
    /// RAMBO-1 registers and IRQ counter.
    pub struct Rambo1State {
        /// $8000.
        pub bank_select: u8,
        /// R0-RF as $8001 wrote them (RA-RE exist in the decoding but select nothing).
        pub registers: [u8; 16],
        /// $A000 bit 0.
        pub mirroring: u8,
        /// $C000.
        pub irq_latch: u8,
        /// The counter.
        pub irq_counter: u8,
        /// 1 when $C001 was written since the last clock.
        pub irq_reload: u8,
        /// $C001 bit 0: 1 clocks the counter by CPU cycles.
        pub irq_cycle_mode: u8,
        /// M2 edges counted towards the next cycle-mode clock (0-3).
        pub irq_prescaler: u8,
        /// 1 while the IRQ is enabled.
        pub irq_enabled: u8,
        /// 1 while /IRQ is asserted.
        pub irq_pending: u8,
        /// M2 edges left before /IRQ rises (0: none under way).
        pub irq_delay: u8,
        /// The level of PPU A12 seen last (1 = high).
        pub a12_level: u8,
        /// M2 edges seen while A12 was low (saturates at 3).
        pub a12_low_m2_edges: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Rambo1State>() == 28);

/// RAMBO-1 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rambo1 {
    state: Rambo1State,
}

impl Rambo1 {
    /// The PPU drove `addr`: in A12 mode a filtered rising edge of A12 clocks the counter.
    pub fn observe_ppu_address(&mut self, addr: u16) {
        let a12 = u8::from(addr & 0x1000 != 0);
        let s = &mut self.state;
        if a12 == s.a12_level {
            return;
        }
        s.a12_level = a12;
        if a12 == 0 {
            s.a12_low_m2_edges = 0;
        } else if s.a12_low_m2_edges >= A12_LOW_M2_EDGES && s.irq_cycle_mode == 0 {
            self.clock_counter(A12_IRQ_DELAY_M2_EDGES);
        }
    }

    /// Counter clocks up to the one that leaves the counter at 0 (see [`Rambo1::clock_counter`]).
    fn clocks_to_zero(&self) -> u32 {
        let s = &self.state;
        let reloaded = if s.irq_reload != 0 {
            if s.irq_latch == 0 { 0 } else { s.irq_latch | 1 }
        } else if s.irq_counter == 0 {
            s.irq_latch
        } else {
            return u32::from(s.irq_counter);
        };
        // The next clock reloads; a reloaded n then needs n more.
        1 + u32::from(reloaded)
    }

    /// True when a clock leaving the counter at 0 would start /IRQ's delay.
    fn irq_can_start(&self) -> bool {
        let s = &self.state;
        s.irq_enabled != 0 && s.irq_pending == 0 && s.irq_delay == 0
    }

    /// One counter clock; a counter left at 0, enabled, starts /IRQ's delay of `delay` M2 edges.
    fn clock_counter(&mut self, delay: u8) {
        let s = &mut self.state;
        if s.irq_reload != 0 {
            s.irq_counter = if s.irq_latch == 0 { 0 } else { s.irq_latch | 1 };
            s.irq_reload = 0;
        } else if s.irq_counter == 0 {
            s.irq_counter = s.irq_latch;
        } else {
            s.irq_counter -= 1;
        }
        if s.irq_counter == 0 && s.irq_enabled != 0 && s.irq_pending == 0 && s.irq_delay == 0 {
            s.irq_delay = delay;
        }
    }

    /// The 1 KiB CHR bank numbers of the eight windows at $0000-$1FFF, all eight bits as written
    /// (the half of R0, R8, R1, R9 first, then R2-R5's; C swaps the halves).
    pub(super) fn chr_banks(&self) -> [u8; 8] {
        let s = &self.state;
        let r = |i: usize| s.registers[i];
        let paired = if s.bank_select & CHR_1K_MODE != 0 {
            [r(0), r(8), r(1), r(9)]
        } else {
            [r(0) & !1, r(0) | 1, r(1) & !1, r(1) | 1]
        };
        let single = [r(2), r(3), r(4), r(5)];
        let (low, high) = if s.bank_select & CHR_INVERT != 0 { (single, paired) } else { (paired, single) };
        [low[0], low[1], low[2], low[3], high[0], high[1], high[2], high[3]]
    }
}

impl Mapper for Rambo1 {
    state_in!(state: Rambo1State);

    fn observe_ppu(&mut self, addr: u16, _read: bool) -> bool {
        self.observe_ppu_address(addr);
        false
    }

    /// The board in its power-on state (the wiki: the registers are unspecified; here 0).
    fn new(_config: BoardConfig) -> Self {
        Rambo1 { state: Rambo1State::default() }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        let s = &mut self.state;
        match addr & 0xE001 {
            0x8000 => s.bank_select = value,
            0x8001 => s.registers[usize::from(s.bank_select & 0x0F)] = value,
            0xA000 => s.mirroring = value & 1,
            0xC000 => s.irq_latch = value,
            0xC001 => {
                s.irq_cycle_mode = value & 1;
                s.irq_reload = 1;
                s.irq_prescaler = 0;
            }
            0xE000 => {
                s.irq_enabled = 0;
                s.irq_pending = 0;
                s.irq_delay = 0;
            }
            0xE001 => s.irq_enabled = 1,
            _ => {}
        }
        matches!(addr & 0xE001, 0x8000 | 0x8001 | 0xA000)
    }

    /// `edges` M2 cycles with no PPU access between them (one per call on the eager schedule this
    /// board runs on): a delayed /IRQ comes nearer, the A12 filter counts, and in cycle mode every
    /// fourth edge clocks the counter.
    fn cpu_cycles(&mut self, edges: u64) {
        for _ in 0..edges {
            let s = &mut self.state;
            if s.irq_delay != 0 {
                s.irq_delay -= 1;
                if s.irq_delay == 0 {
                    s.irq_pending = 1;
                }
            }
            if s.a12_level == 0 && s.a12_low_m2_edges < A12_LOW_M2_EDGES {
                s.a12_low_m2_edges += 1;
            }
            if s.irq_cycle_mode != 0 {
                // A run keeps the prescaler at 0-3; a loaded snapshot may hold more, which clocks
                // at the next edge (as 3 does) rather than overflowing.
                s.irq_prescaler = s.irq_prescaler.saturating_add(1);
                if s.irq_prescaler >= CYCLE_MODE_PRESCALE {
                    s.irq_prescaler = 0;
                    self.clock_counter(CYCLE_IRQ_DELAY_M2_EDGES);
                }
            }
        }
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    fn irq_line(&self) -> bool {
        self.state.irq_pending != 0
    }

    /// In A12 mode, counter clocks before the one that starts /IRQ's delay (`u32::MAX` in cycle mode,
    /// or while the IRQ is disabled, asserted or on its way).
    fn a12_clocks_before_irq(&self) -> u32 {
        if self.state.irq_cycle_mode == 0 && self.irq_can_start() { self.clocks_to_zero() } else { u32::MAX }
    }

    /// M2 edges counted since PPU A12 fell (up to the filter's three), `None` while A12 is high.
    fn a12_low_m2_edges(&self) -> Option<u8> {
        (self.state.a12_level == 0).then_some(self.state.a12_low_m2_edges)
    }

    /// The edges left of a delay under way; in cycle mode, those to the prescaler's clocks up to the
    /// one that leaves the counter at 0, and its delay.
    fn m2_edges_before_irq(&self) -> u32 {
        let s = &self.state;
        if s.irq_delay != 0 {
            u32::from(s.irq_delay)
        } else if s.irq_cycle_mode != 0 && self.irq_can_start() {
            // At least one edge: a prescaler past 3 (from a snapshot) clocks at the next, as in
            // `cpu_cycles`.
            let to_clock = u32::from(CYCLE_MODE_PRESCALE.saturating_sub(s.irq_prescaler).max(1));
            to_clock
                + (self.clocks_to_zero() - 1) * u32::from(CYCLE_MODE_PRESCALE)
                + u32::from(CYCLE_IRQ_DELAY_M2_EDGES)
        } else {
            u32::MAX
        }
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        let r = |i: usize| usize::from(s.registers[i]);
        let (at_8000, at_c000) = if s.bank_select & PRG_SWAP != 0 { (r(15), r(6)) } else { (r(6), r(15)) };
        map.set_prg_8k(0, at_8000);
        map.set_prg_8k(1, r(7));
        map.set_prg_8k(2, at_c000);
        map.set_prg_8k(3, map.prg_bank_from_end(1));

        for (window, bank) in self.chr_banks().into_iter().enumerate() {
            map.set_chr_1k(window, usize::from(bank));
        }
        map.set_mirroring(if s.mirroring != 0 { Mirroring::Horizontal } else { Mirroring::Vertical });
        map.watches_ppu = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board() -> Rambo1 {
        Rambo1::new(BoardConfig { mapper: 64, submapper: 0, chr_rom_size: 0x40000, battery: false })
    }

    /// One filtered A12 rise: A12 low for three M2 edges, then high.
    fn clock_a12(board: &mut Rambo1) {
        board.observe_ppu_address(0x0000);
        board.cpu_cycles(3);
        board.observe_ppu_address(0x1000);
    }

    #[test]
    fn a12_mode_reloads_the_latch_ored_with_1_and_asserts_on_the_second_m2_edge() {
        let mut board = board();
        board.write_register(0xC000, 2, 0); // reloaded as 3 after $C001
        board.write_register(0xC001, 0, 0);
        board.write_register(0xE001, 0, 0);
        clock_a12(&mut board); // 3
        for _ in 0..2 {
            clock_a12(&mut board); // 2, 1
        }
        assert_eq!(board.state.irq_counter, 1);
        clock_a12(&mut board); // 0
        board.cpu_cycles(1);
        assert!(!board.irq_line(), "one M2 edge after the rise");
        board.cpu_cycles(1);
        assert!(board.irq_line(), "the second");
        board.write_register(0xE001, 0, 0);
        assert!(board.irq_line(), "$E001 does not acknowledge");
        board.write_register(0xE000, 0, 0);
        assert!(!board.irq_line());
        // Steady state: 0 reloads the latch (2, not ORed), then two more clocks reach 0.
        board.write_register(0xE001, 0, 0);
        clock_a12(&mut board);
        assert_eq!(board.state.irq_counter, 2);
    }

    #[test]
    fn cycle_mode_clocks_every_fourth_edge_from_the_c001_write_and_asserts_one_edge_later() {
        let mut board = board();
        board.write_register(0xC000, 4, 0); // reloaded as 5
        board.write_register(0xE001, 0, 0);
        board.write_register(0xC001, 1, 0);
        // Clocks at edges 4 (reload), 8, 12, 16, 20, 24 (0): /IRQ on edge 25.
        board.cpu_cycles(24);
        assert_eq!(board.state.irq_counter, 0);
        assert!(!board.irq_line());
        board.cpu_cycles(1);
        assert!(board.irq_line());
        // A12 rises do not clock it in cycle mode (the prescaler at 3 of 4 edges here).
        board.write_register(0xE000, 0, 0);
        board.observe_ppu_address(0x0000);
        board.cpu_cycles(2);
        board.observe_ppu_address(0x1000);
        assert_eq!(board.state.irq_counter, 0);
    }

    /// A prescaler past 3 (only a forged snapshot holds one) clocks the counter at the next edge,
    /// as 3 does, and the predicted /IRQ edge agrees with the edges run.
    #[test]
    fn a_prescaler_past_3_clocks_at_the_next_edge() {
        for prescaler in [3, 4, 5, 200, 254, 255] {
            let mut board = board();
            board.write_register(0xC000, 2, 0);
            board.write_register(0xE001, 0, 0);
            board.write_register(0xC001, 1, 0);
            board.state.irq_prescaler = prescaler;
            let edges = board.m2_edges_before_irq();
            board.cpu_cycles(1);
            assert_eq!((board.state.irq_prescaler, board.state.irq_counter), (0, 3), "{prescaler}");
            board.cpu_cycles(u64::from(edges) - 2);
            assert!(!board.irq_line(), "{prescaler}: not before the predicted edge");
            board.cpu_cycles(1);
            assert!(board.irq_line(), "{prescaler}: on the predicted edge ({edges})");
        }
    }
}
