//! Mapper 152: Bandai's discrete board with one-screen mirroring (nesdev "INES Mapper 152"). Any
//! write to $8000-$FFFF, `MPPP CCCC`, selects the 16 KiB PRG bank at $8000 (P, 3 bits), the 8 KiB
//! CHR bank (C) and the CIRAM page of one-screen mirroring (M); the last 16 KiB is fixed at $C000.
//! The ROM drives the data bus too: bus conflicts.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// Mapper 152 register.
    pub struct Bandai152State {
        /// The last value written (after the bus conflict): bit 7 CIRAM page, bits 4-6 PRG bank,
        /// bits 0-3 CHR bank.
        pub register: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Bandai152State>() == 1);

/// Mapper 152 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bandai152 {
    state: Bandai152State,
}

impl Mapper for Bandai152 {
    state_in!(state: Bandai152State);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Bandai152 { state: Bandai152State::default() }
    }

    /// A CPU write to $8000-$FFFF (after the bus conflict); returns true: the map changes.
    #[inline]
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the register selects.
    fn update_map(&self, map: &mut MemoryMap) {
        let r = self.state.register;
        map.set_prg_16k(0, usize::from((r >> 4) & 0x07));
        map.set_prg_16k(1, map.prg_bank_from_end(2) / 2);
        map.set_chr_8k(usize::from(r & 0x0F));
        map.set_mirroring(if r & 0x80 != 0 { Mirroring::SingleScreenB } else { Mirroring::SingleScreenA });
        map.bus_conflicts = true;
    }
}
