//! Mapper 48: Taito TC0690 (nesdev "INES Mapper 048"). Registers decoded with mask $E003:
//! - $8000 / $8001: the 8 KiB PRG banks at $8000 / $A000 (6 bits); $C000-$FFFF the last two banks;
//! - $8002 / $8003, $A000-$A003: CHR as on the TC0190 (`m033_taito_tc0190.rs`);
//! - $C000: the IRQ latch, written inverted (writing $06 is the MMC3's $F9);
//! - $C001: clears the counter, so the next clock reloads it; $C002: enables the IRQ;
//!   $C003: disables and acknowledges it (the MMC3's $C001, $E001, $E000);
//! - $E000: bit 6 mirroring (0 vertical, 1 horizontal).
//!
//! The counter is the MMC3's (nesdev "MMC3", "IRQ Specifics", the B revision's behaviour): clocked by
//! a rise of PPU A12 after A12 stayed low for three M2 falling edges, reloaded from the latch when 0
//! or after $C001, else decremented; a clock that leaves it at 0 raises the IRQ, enabled. The wiki
//! gives the TC0690's IRQ as coming later than the MMC3's by about four CPU cycles: /IRQ here rises
//! on the fourth M2 edge after that clock ([`IRQ_DELAY_M2_EDGES`]).
//!
//! Schedule: the lazy PPU schedule catches the PPU up through the A12 clock that starts the delay
//! ([`Mapper::a12_clocks_before_irq`], as for the MMC3), and then by the cycle whose M2 edge ends it
//! ([`Mapper::m2_edges_before_irq`]); the edges in between are replayed in their places among the
//! dots, so /IRQ rises on the eager schedule's cycle (`tests/ppu_schedule.rs`). Until issue 48 the
//! board ran the eager schedule.

use super::m004_txrom::A12_LOW_M2_EDGES;
use super::m033_taito_tc0190::set_taito_chr;
use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

/// M2 edges from the counter clock that raises the IRQ to /IRQ rising.
pub(super) const IRQ_DELAY_M2_EDGES: u8 = 4;

crate::layout::state_struct! {
    /// TC0690 registers and scanline counter.
    pub struct Tc0690State {
        /// $8000, $8001.
        pub prg: [u8; 2],
        /// $8002, $8003 (2 KiB banks), $A000-$A003 (1 KiB banks).
        pub chr: [u8; 6],
        /// $E000: bit 6 mirroring.
        pub mirroring: u8,
        /// The reload value (the written value inverted).
        pub irq_latch: u8,
        /// The counter.
        pub irq_counter: u8,
        /// 1 when the next clock reloads the counter ($C001).
        pub irq_reload: u8,
        /// 1 while the IRQ is enabled.
        pub irq_enabled: u8,
        /// 1 while /IRQ is asserted.
        pub irq_pending: u8,
        /// M2 edges left before /IRQ rises (0: none under way).
        pub irq_delay: u8,
        /// The level of PPU A12 seen last (1 = high).
        pub a12_level: u8,
        /// M2 falling edges seen while A12 was low (saturates at 3).
        pub a12_low_m2_edges: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Tc0690State>() == 17);

/// TC0690 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tc0690 {
    state: Tc0690State,
}

impl Tc0690 {
    /// The PPU drove `addr`: a filtered rising edge of A12 clocks the counter.
    pub fn observe_ppu_address(&mut self, addr: u16) {
        let a12 = u8::from(addr & 0x1000 != 0);
        let s = &mut self.state;
        if a12 == s.a12_level {
            return;
        }
        s.a12_level = a12;
        if a12 == 0 {
            s.a12_low_m2_edges = 0;
            return;
        }
        if s.a12_low_m2_edges < A12_LOW_M2_EDGES {
            return;
        }
        if s.irq_counter == 0 || s.irq_reload != 0 {
            s.irq_counter = s.irq_latch;
        } else {
            s.irq_counter -= 1;
        }
        s.irq_reload = 0;
        if s.irq_counter == 0 && s.irq_enabled != 0 && s.irq_pending == 0 && s.irq_delay == 0 {
            s.irq_delay = IRQ_DELAY_M2_EDGES;
        }
    }
}

impl Mapper for Tc0690 {
    state_in!(state: Tc0690State);

    fn observe_ppu(&mut self, addr: u16, _read: bool) -> bool {
        self.observe_ppu_address(addr);
        false
    }

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Tc0690 { state: Tc0690State::default() }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        let s = &mut self.state;
        let n = usize::from(addr & 3);
        match addr & 0xE003 {
            0x8000 | 0x8001 => s.prg[n] = value,
            0x8002 | 0x8003 => s.chr[n - 2] = value,
            0xA000..=0xA003 => s.chr[n + 2] = value,
            0xC000 => s.irq_latch = value ^ 0xFF,
            0xC001 => {
                s.irq_counter = 0;
                s.irq_reload = 1;
            }
            0xC002 => s.irq_enabled = 1,
            0xC003 => {
                s.irq_enabled = 0;
                s.irq_pending = 0;
                s.irq_delay = 0;
            }
            0xE000 => s.mirroring = value & 0x40,
            _ => return false,
        }
        matches!(addr & 0xE000, 0x8000 | 0xA000 | 0xE000)
    }

    /// `edges` M2 cycles with no PPU access between them: the A12 filter counts them, and a delayed
    /// IRQ comes nearer.
    #[inline]
    fn cpu_cycles(&mut self, edges: u64) {
        let s = &mut self.state;
        if s.a12_level == 0 && s.a12_low_m2_edges < A12_LOW_M2_EDGES {
            let counted = u64::from(s.a12_low_m2_edges).saturating_add(edges);
            s.a12_low_m2_edges = counted.min(u64::from(A12_LOW_M2_EDGES)) as u8;
        }
        if s.irq_delay != 0 {
            if edges >= u64::from(s.irq_delay) {
                s.irq_delay = 0;
                s.irq_pending = 1;
            } else {
                s.irq_delay -= edges as u8;
            }
        }
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    fn irq_line(&self) -> bool {
        self.state.irq_pending != 0
    }

    /// Counter clocks before the one that starts /IRQ's delay (`u32::MAX` while the IRQ is disabled,
    /// asserted or on its way).
    fn a12_clocks_before_irq(&self) -> u32 {
        let s = &self.state;
        if s.irq_enabled == 0 || s.irq_pending != 0 || s.irq_delay != 0 {
            u32::MAX
        } else if s.irq_counter == 0 || s.irq_reload != 0 {
            // The next clock reloads the latch; a latch of n then needs n more.
            1 + u32::from(s.irq_latch)
        } else {
            u32::from(s.irq_counter)
        }
    }

    /// M2 edges counted since PPU A12 fell (up to the filter's three), `None` while A12 is high.
    fn a12_low_m2_edges(&self) -> Option<u8> {
        (self.state.a12_level == 0).then_some(self.state.a12_low_m2_edges)
    }

    /// The edges left of a delay under way: /IRQ rises on the last.
    fn m2_edges_before_irq(&self) -> u32 {
        match self.state.irq_delay {
            0 => u32::MAX,
            delay => u32::from(delay),
        }
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        map.set_prg_8k(0, usize::from(s.prg[0] & 0x3F));
        map.set_prg_8k(1, usize::from(s.prg[1] & 0x3F));
        map.set_prg_8k(2, map.prg_bank_from_end(2));
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        set_taito_chr(map, &s.chr);
        map.set_mirroring(if s.mirroring != 0 { Mirroring::Horizontal } else { Mirroring::Vertical });
        map.watches_ppu = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One filtered A12 rise: A12 low for three M2 edges, then high.
    fn clock(board: &mut Tc0690) {
        board.observe_ppu_address(0x0000);
        board.cpu_cycles(3);
        board.observe_ppu_address(0x1000);
    }

    #[test]
    fn the_inverted_latch_counts_like_the_mmc3_and_irq_rises_four_m2_edges_later() {
        let mut board =
            Tc0690::new(BoardConfig { mapper: 48, submapper: 0, chr_rom_size: 0x20000, battery: false });
        board.write_register(0xC000, 0xFD, 0); // latch 2
        board.write_register(0xC001, 0, 0);
        board.write_register(0xC002, 0, 0);
        clock(&mut board); // reload: 2
        clock(&mut board); // 1
        assert_eq!(board.state.irq_delay, 0);
        clock(&mut board); // 0: the delay starts
        assert!(!board.irq_line());
        board.cpu_cycles(3);
        assert!(!board.irq_line(), "three edges after the clock");
        board.cpu_cycles(1);
        assert!(board.irq_line(), "the fourth");
        board.write_register(0xE003, 0, 0);
        assert!(board.irq_line(), "$E003 is no register (mask $E003)");
        board.write_register(0xC003, 0, 0);
        assert!(!board.irq_line());
        // A rise without three low edges before it does not clock.
        let counter = board.state.irq_counter;
        board.observe_ppu_address(0x0000);
        board.cpu_cycles(2);
        board.observe_ppu_address(0x1000);
        assert_eq!(board.state.irq_counter, counter);
    }
}
