//! Mapper 92: Jaleco JF-19 and JF-21 (nesdev "INES Mapper 092", the same latches as mapper 72's
//! JF-17 with the PRG banks the other way round). One register at $8000-$FFFF, `PC.. DDDD`, with
//! bus conflicts: a rising edge of bit 7 (0 in the previous write, 1 in this one) clocks D into the
//! 16 KiB PRG latch for $C000 ($8000 holds the first bank); a rising edge of bit 6 clocks D into the
//! 8 KiB CHR latch. A write with the bit already high changes nothing, so games write the bank with
//! the bit set, then clear it. Bits 4-5 drive the speech chip (a uPD7756C; not modelled).

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// JF-19 latches.
    pub struct Jf19State {
        /// 16 KiB PRG bank at $C000.
        pub prg_bank: u8,
        /// 8 KiB CHR bank.
        pub chr_bank: u8,
        /// The previous write (after the bus conflict): its bits 6-7 tell the next write's edges.
        pub last_write: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Jf19State>() == 3);

/// Jaleco JF-19 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Jf19 {
    state: Jf19State,
}

impl Mapper for Jf19 {
    state_in!(state: Jf19State);

    /// The board in its power-on state (the latches' is unspecified; 0 here).
    fn new(_config: BoardConfig) -> Self {
        Jf19 { state: Jf19State::default() }
    }

    /// A CPU write to $8000-$FFFF (after the bus conflict); returns true when the map must be
    /// recomputed.
    #[inline]
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        let rising = value & !self.state.last_write;
        self.state.last_write = value;
        if rising & 0x80 != 0 {
            self.state.prg_bank = value & 0x0F;
        }
        if rising & 0x40 != 0 {
            self.state.chr_bank = value & 0x0F;
        }
        rising & 0xC0 != 0
    }

    /// Points every window of `map` at the banks the latches hold.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_16k(0, 0);
        map.set_prg_16k(1, usize::from(self.state.prg_bank));
        map.set_chr_8k(usize::from(self.state.chr_bank));
        map.bus_conflicts = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_rising_edge_clocks_a_latch() {
        let mut board =
            Jf19::new(BoardConfig { mapper: 92, submapper: 0, chr_rom_size: 0x20000, battery: false });
        assert!(board.write_register(0x8000, 0x85, 0), "0 -> 1: PRG latched");
        assert!(!board.write_register(0x8000, 0x87, 0), "bit 7 still high: nothing");
        assert!(board.write_register(0x8000, 0xC3, 0), "bit 6 rises: CHR latched, PRG not");
        assert_eq!((board.state.prg_bank, board.state.chr_bank), (5, 3));
        assert!(!board.write_register(0x8000, 0x02, 0));
        assert!(board.write_register(0x8000, 0x89, 0));
        assert_eq!((board.state.prg_bank, board.state.chr_bank), (9, 3));
    }
}
