//! Mapper 71: Camerica/Codemasters BF9093 and BF9097 (nesdev "INES Mapper 071"). Writes to
//! $C000-$FFFF select the 16 KiB PRG bank at $8000, the last 16 KiB is fixed at $C000, 8 KiB of CHR
//! RAM. On the BF9097 (NES 2.0 submapper 1, Fire Hawk), bit 4 of a write to $8000-$9FFF selects the
//! single-screen nametable page; other boards have wired mirroring and ignore those writes.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// Camerica registers.
    pub struct CamericaState {
        /// 16 KiB PRG bank at $8000.
        pub prg_bank: u8,
        /// BF9097 only: 0 = wired mirroring (nothing written yet), 1 = single-screen page 0, 2 = page 1.
        pub single_screen: u8,
    }
}

const _: () = assert!(core::mem::size_of::<CamericaState>() == 2);

/// Camerica board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Camerica {
    state: CamericaState,
    mirroring_control: bool,
}

impl Mapper for Camerica {
    state_in!(state: CamericaState);

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        Camerica { state: CamericaState::default(), mirroring_control: config.submapper == 1 }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    #[inline]
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        match addr {
            0xC000..=0xFFFF => self.state.prg_bank = value,
            0x8000..=0x9FFF if self.mirroring_control => {
                self.state.single_screen = if value & 0x10 != 0 { 2 } else { 1 };
            }
            _ => return false,
        }
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_16k(0, usize::from(self.state.prg_bank));
        map.set_prg_8k(2, map.prg_bank_from_end(2));
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        map.set_chr_8k(0);
        match self.state.single_screen {
            1 => map.set_mirroring(Mirroring::SingleScreenA),
            2 => map.set_mirroring(Mirroring::SingleScreenB),
            _ => map.set_mirroring(map.wired_mirroring),
        }
    }
}
