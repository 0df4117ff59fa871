//! Mapper 7: AxROM (nesdev "AxROM"). A 32 KiB PRG bank (bits 0-2) and the single-screen nametable
//! page (bit 4) selected by any write to $8000-$FFFF; 8 KiB of CHR RAM.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// AxROM registers.
    pub struct AxromState {
        /// The last value written: bits 0-2 PRG bank, bit 4 CIRAM page.
        pub register: u8,
    }
}

const _: () = assert!(core::mem::size_of::<AxromState>() == 1);

/// AxROM board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Axrom {
    state: AxromState,
    bus_conflicts: bool,
}

impl Mapper for Axrom {
    state_in!(state: AxromState);

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        // NES 2.0 submapper 2 (AOROM) has bus conflicts; 0 (unspecified) and 1 (ANROM) have none.
        Axrom { state: AxromState::default(), bus_conflicts: config.submapper == 2 }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    #[inline]
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_32k(usize::from(self.state.register & 0x07));
        map.set_chr_8k(0);
        map.set_mirroring(if self.state.register & 0x10 != 0 {
            Mirroring::SingleScreenB
        } else {
            Mirroring::SingleScreenA
        });
        map.bus_conflicts = self.bus_conflicts;
    }
}
