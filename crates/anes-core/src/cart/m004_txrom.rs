//! Mapper 4: MMC3 on TxROM boards (nesdev "MMC3").
//!
//! Eight bank registers behind $8000/$8001, mirroring at $A000, PRG RAM protect at $A001, and the
//! scanline counter: $C000 latch, $C001 reload, $E000 disable and acknowledge, $E001 enable.
//!
//! The counter is clocked by rising edges of PPU A12 that come after A12 stayed low for at least
//! three falling edges of M2 (nesdev "MMC3", "IRQ Specifics"), which filters the short low phases
//! between sprite pattern fetches. `Cartridge::cpu_cycle` is the M2 edge. When clocked, the counter
//! is reloaded from the latch if it is 0 or a reload was requested, else decremented; then:
//! - [`Mmc3Revision::B`] (default; MMC3B/MMC3C, "new" behaviour): IRQ whenever the counter is 0;
//! - [`Mmc3Revision::A`] (MMC3A, "old" behaviour; NES 2.0 submapper 4): IRQ only when the counter
//!   became 0 by decrementing, or by a reload requested through $C001, so a latch of 0 fires once.

use super::board::{BoardConfig, MemoryMap};
use super::header::Mirroring;

/// Which MMC3 IRQ behaviour a board has (`mmc3_test_2` 5-MMC3 passes on B, 6-MMC3_alt on A).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mmc3Revision {
    /// MMC3A ("old"): IRQ only when the counter is decremented to 0 or reloaded to 0 after $C001.
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

/// M2 falling edges A12 must stay low before a rising edge clocks the counter.
const A12_LOW_M2_EDGES: u8 = 3;

crate::state::state_struct! {
    /// MMC3 registers, IRQ counter and A12 filter.
    pub struct TxromState {
        /// $8000: bits 0-2 register to update, bit 6 PRG mode, bit 7 CHR A12 inversion.
        pub bank_select: u8,
        /// $A000 bit 0: 0 vertical, 1 horizontal.
        pub mirroring: u8,
        /// $A001: bit 7 PRG RAM enable, bit 6 write protect.
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
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 5],
    }
}

const _: () = assert!(core::mem::size_of::<TxromState>() == 24);

/// MMC3 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Txrom {
    state: TxromState,
}

impl Txrom {
    /// The board in its power-on state.
    pub fn new(config: BoardConfig) -> Self {
        let revision = if config.submapper == 4 { Mmc3Revision::A } else { Mmc3Revision::B };
        Txrom {
            state: TxromState {
                // Power-on values are unspecified; these give distinct banks, and RAM enabled so
                // programs that never write $A001 (older dumps, test ROMs) still have it.
                registers: [0, 2, 4, 5, 6, 7, 0, 1],
                prg_ram_protect: 0x80,
                revision: revision.to_state(),
                ..TxromState::default()
            },
        }
    }

    /// The IRQ behaviour modelled.
    pub fn revision(&self) -> Mmc3Revision {
        Mmc3Revision::from_state(self.state.revision)
    }

    /// Selects the IRQ behaviour.
    pub fn set_revision(&mut self, revision: Mmc3Revision) {
        self.state.revision = revision.to_state();
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    #[inline]
    pub fn write_register(&mut self, addr: u16, value: u8) -> bool {
        let s = &mut self.state;
        match addr & 0xE001 {
            0x8000 => s.bank_select = value,
            0x8001 => s.registers[usize::from(s.bank_select & 7)] = value,
            0xA000 => s.mirroring = value & 1,
            0xA001 => s.prg_ram_protect = value,
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

    /// One M2 cycle: counts how long A12 has been low.
    #[inline]
    pub fn cpu_cycle(&mut self) {
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

    /// Counter clocks (filtered A12 rises) that must happen before /IRQ can be asserted; `u32::MAX`
    /// when it cannot be (disabled, or already asserted: only a CPU write changes it then).
    pub fn a12_clocks_before_irq(&self) -> u32 {
        let s = &self.state;
        if s.irq_enabled == 0 || s.irq_pending != 0 {
            u32::MAX
        } else if s.irq_reload != 0 || s.irq_counter == 0 {
            1
        } else {
            u32::from(s.irq_counter)
        }
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    pub fn irq_line(&self) -> bool {
        self.state.irq_pending != 0
    }

    /// Points every window of `map` at the banks the registers select.
    pub fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        let r = |i: usize| usize::from(s.registers[i]);
        let second_last = map.prg_bank_from_end(2);
        let r6 = r(6) & 0x3F;
        let (slot0, slot2) = if s.bank_select & 0x40 == 0 { (r6, second_last) } else { (second_last, r6) };
        map.set_prg_8k(0, slot0);
        map.set_prg_8k(1, r(7) & 0x3F);
        map.set_prg_8k(2, slot2);
        map.set_prg_8k(3, map.prg_bank_from_end(1));

        // CHR A12 inversion swaps the 2 KiB and 1 KiB halves.
        let two_k = if s.bank_select & 0x80 == 0 { 0 } else { 4 };
        // R0 and R1 ignore their low bit: 2 KiB bank n is 1 KiB banks 2n and 2n+1.
        map.set_chr_2k(two_k / 2, r(0) >> 1);
        map.set_chr_2k(two_k / 2 + 1, r(1) >> 1);
        for i in 0..4 {
            map.set_chr_1k((two_k ^ 4) + i, r(2 + i));
        }

        map.set_mirroring(if s.mirroring & 1 == 0 { Mirroring::Vertical } else { Mirroring::Horizontal });
        let enabled = s.prg_ram_protect & 0x80 != 0;
        map.set_prg_ram(0, enabled, enabled && s.prg_ram_protect & 0x40 == 0);
        map.watches_ppu = true;
    }

    /// The register state as bytes.
    pub fn state_bytes(&self) -> &[u8] {
        bytemuck::bytes_of(&self.state)
    }

    /// The register state as mutable bytes (snapshot restore).
    pub fn state_bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::bytes_of_mut(&mut self.state)
    }
}
