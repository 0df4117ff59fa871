//! Mapper 185: CNROM with copy protection (nesdev "INES Mapper 185"). 8 KiB of CHR ROM on a chip
//! whose two upper address pins are chip selects: the latch written at $8000-$FFFF (bus conflicts)
//! enables CHR only with the game's one right value, and a disabled chip leaves the pattern tables
//! open bus, the low byte of the PPU address ("theoretically ... the LSB of the address read").
//! NES 2.0 submappers 4-7 name the right chip-select bits (0-3, bits 0-1 of the latch); without one,
//! the wiki's first heuristic: CHR is enabled when the latch's low nibble is non-zero and the latch
//! is not $13 (every game but Seicross v2).

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// Mapper 185 latch.
    pub struct Cnrom185State {
        /// The last value written (after the bus conflict).
        pub latch: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Cnrom185State>() == 1);

/// Mapper 185 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cnrom185 {
    state: Cnrom185State,
    /// Submappers 4-7: the chip-select value that enables CHR.
    enabling_select: Option<u8>,
}

impl Cnrom185 {
    /// True when the latch enables the CHR ROM.
    fn chr_enabled(&self) -> bool {
        let latch = self.state.latch;
        match self.enabling_select {
            Some(select) => latch & 3 == select,
            None => latch & 0x0F != 0 && latch != 0x13,
        }
    }
}

impl Mapper for Cnrom185 {
    state_in!(state: Cnrom185State);

    /// Its CHR ROM can be disabled: reads then see open bus.
    fn chr_open_bus_page(&self, chr_is_ram: bool) -> bool {
        !chr_is_ram
    }

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        let enabling_select = matches!(config.submapper, 4..=7).then(|| config.submapper - 4);
        Cnrom185 { state: Cnrom185State::default(), enabling_select }
    }

    /// A CPU write to $8000-$FFFF (after the bus conflict); returns true when the map must be recomputed.
    #[inline]
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.state.latch = value;
        true
    }

    /// Points every window of `map` at the banks the latch selects.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_32k(0);
        if self.chr_enabled() {
            map.set_chr_8k(0);
        } else {
            map.set_chr_open_bus();
        }
        map.bus_conflicts = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn games_values_enable_and_disable_chr() {
        // The wiki's table: the value each game writes to disable CHR, then the one that enables it.
        let games = [(0xF0u8, 0x0Fu8), (0x00, 0x33), (0x00, 0x11), (0x20, 0x22), (0x00, 0xFF), (0x13, 0x21)];
        let board = |submapper| {
            Cnrom185::new(BoardConfig { mapper: 185, submapper, chr_rom_size: 0x2000, battery: false })
        };
        for (wrong, right) in games {
            let mut b = board(0);
            b.write_register(0x8000, wrong, 0);
            assert!(!b.chr_enabled(), "{wrong:#X}");
            b.write_register(0x8000, right, 0);
            assert!(b.chr_enabled(), "{right:#X}");
        }
        // Seicross v2 needs its submapper: $20 (select 0) enables, $21 disables.
        let mut seicross = board(4);
        seicross.write_register(0x8000, 0x21, 0);
        assert!(!seicross.chr_enabled());
        seicross.write_register(0x8000, 0x20, 0);
        assert!(seicross.chr_enabled());
    }
}
