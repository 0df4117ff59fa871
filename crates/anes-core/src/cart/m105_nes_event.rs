//! Mapper 105: NES-EVENT, the Nintendo World Championships 1990 board (nesdev "NES-EVENT", with
//! Disch's notes there). An MMC1 ([`Sxrom`]) whose CHR bank 0 register ($A000) drives the board:
//! - bit 4 `I`: 1 holds the timer at 0 and acknowledges its IRQ; 0 lets it count;
//! - bit 3 `O`: 0 the first 128 KiB PRG chip, a 32 KiB bank chosen by bits 1-2; 1 the second chip,
//!   banked by the MMC1's PRG register and mode as on any MMC1 (its bank bit 3 unused);
//! - bit 0: unconnected (the 8 KiB of CHR RAM is not banked).
//!
//! PRG A14 comes from the MMC1 on both chips (the wiki's note), so on the first chip the MMC1's PRG
//! mode and register still pick which 16 KiB of the 32 KiB bank each half shows. Until the program has
//! written `I` as 0 and then as 1, the first chip's A15-A16 stay 0 and `O` is ignored (the power-on
//! lock). $E000 bit 4 disables the 8 KiB of PRG RAM as on the MMC1B; mirroring is the MMC1's.
//!
//! The timer is a 30-bit counter of CPU cycles (M2) while `I` is 0; /IRQ rises on the cycle it reaches
//! `%1DCB_A000_0000_...` (bit 29 set, bits 28-25 the four DIP switches D-A), and stays asserted until
//! `I` is written 1. The header carries no DIP switches: this board has switch C closed and the others
//! open, the official tournament's setting the wiki gives, so /IRQ comes $28000000 cycles (671088640,
//! 6 min 15 s on NTSC) after `I` goes to 0. It runs lazily in closed form like the H3001's counter
//! ([`NesEvent::catch_up`], [`NesEvent::irq_due_cycle`]).
//!
//! Not modelled: with the MMC1 in 4 KiB CHR mode, PPU A12 would make its $C000 register drive these
//! lines while the PPU fetches from $1000 (the wiki's note); like the SUROM model (`m001_sxrom.rs`),
//! this board always follows $A000. The console's reset button does not relock it (the cartridge has
//! no reset line; `Cartridge::reset`).

use super::m001_sxrom::{Sxrom, SxromState};
use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

/// The four DIP switches D-C-B-A as bits 3-0 (1 = closed): C, the tournament's setting.
const DIP_SWITCHES: u32 = 0b0100;
/// The timer value that asserts /IRQ.
pub(super) const TIMER_TARGET: u32 = 0x2000_0000 | (DIP_SWITCHES << 25);
/// The timer's 30 bits.
const TIMER_MASK: u32 = (1 << 30) - 1;

/// $A000 bit 4: the timer held at 0 (and the unlock sequence's second step).
const TIMER_RESET: u8 = 0x10;
/// $A000 bit 3: the second PRG chip.
const SECOND_CHIP: u8 = 0x08;

/// [`NesEventState::unlock`]: the power-on lock, `I` not yet written 0.
const LOCKED: u8 = 0;
/// `I` written 0; the next write of 1 unlocks.
const UNLOCKING: u8 = 1;
/// PRG banking free.
const UNLOCKED: u8 = 2;

crate::layout::state_struct! {
    /// NES-EVENT: the MMC1's registers, the timer and the lock.
    pub struct NesEventState {
        /// The MMC1.
        pub mmc1: SxromState,
        /// The 30-bit timer.
        pub timer: u32,
        /// The power-on lock's progress: 0 locked, 1 `I` written 0, 2 unlocked.
        pub unlock: u8,
        /// 1 while /IRQ is asserted.
        pub irq_pending: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 2],
    }
}

const _: () = assert!(core::mem::size_of::<NesEventState>() == 24);

/// NES-EVENT board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NesEvent {
    state: NesEventState,
    /// The CPU cycle the timer has been run through. Derived (set by `resync`), not state.
    ticked: u64,
}

impl NesEvent {
    /// True while `I` lets the timer count.
    fn timer_running(&self) -> bool {
        self.state.mmc1.chr_bank0 & TIMER_RESET == 0
    }

    /// Cycles from the timer's current value to the target (1 to 2^30).
    fn cycles_to_target(&self) -> u64 {
        match TIMER_TARGET.wrapping_sub(self.state.timer) & TIMER_MASK {
            0 => 1 << 30,
            cycles => u64::from(cycles),
        }
    }

    /// One CPU cycle of the timer: the definition [`NesEvent::catch_up`] must equal.
    #[cfg(test)]
    fn step_cycle(&mut self) {
        if self.timer_running() {
            self.state.timer = (self.state.timer + 1) & TIMER_MASK;
            if self.state.timer == TIMER_TARGET {
                self.state.irq_pending = 1;
            }
        }
    }
}

impl Mapper for NesEvent {
    state_in!(state: NesEventState, ticked: ticked);

    /// The board at power-on: the MMC1 in PRG mode 3 as [`Sxrom`] powers on, and `I` set (the
    /// registers' power-on values are not documented; this holds the timer until the program starts
    /// it).
    fn new(_config: BoardConfig) -> Self {
        let mmc1 = SxromState { control: 0x0C, chr_bank0: TIMER_RESET, ..SxromState::default() };
        NesEvent { state: NesEventState { mmc1, ..NesEventState::default() }, ticked: 0 }
    }

    /// A write to $8000-$FFFF on CPU cycle `cpu_cycle`; returns true when the bank map must be
    /// recomputed. The timer is first run through this cycle.
    fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        self.catch_up(cpu_cycle);
        let mut mmc1 = Sxrom::from_state(self.state.mmc1);
        let changed = mmc1.write_register(addr, value, cpu_cycle);
        let s = &mut self.state;
        s.mmc1 = *mmc1.state();
        // A completed write (not a reset, bit 7) of the CHR bank 0 register.
        if changed && value & 0x80 == 0 && (addr >> 13) & 3 == 1 {
            if s.mmc1.chr_bank0 & TIMER_RESET != 0 {
                s.timer = 0;
                s.irq_pending = 0;
                if s.unlock == UNLOCKING {
                    s.unlock = UNLOCKED;
                }
            } else if s.unlock == LOCKED {
                s.unlock = UNLOCKING;
            }
        }
        changed
    }

    /// Runs the timer through CPU cycle `cpu_cycle`, in closed form.
    fn run_cycles(&mut self, cycles: u64) {
        if cycles == 0 || !self.timer_running() {
            return;
        }
        if cycles >= self.cycles_to_target() {
            self.state.irq_pending = 1;
        }
        let timer = (u64::from(self.state.timer) + cycles) & u64::from(TIMER_MASK);
        self.state.timer = timer as u32;
    }

    /// The CPU cycle on which the timer asserts /IRQ; `u64::MAX` when it cannot (held, or asserted).
    fn cycles_to_irq(&self) -> Option<u64> {
        if !self.timer_running() || self.state.irq_pending != 0 {
            return None;
        }
        Some(self.cycles_to_target())
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    fn irq_line(&self) -> bool {
        self.state.irq_pending != 0
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let mmc1 = Sxrom::from_state(self.state.mmc1);
        mmc1.update_map(map);
        // The MMC1's 16 KiB banks: bit 0 is PRG A14 on either chip.
        let (low, high) = mmc1.prg_16k_banks(map);
        let register = self.state.mmc1.chr_bank0;
        let unlocked = self.state.unlock == UNLOCKED;
        let (low, high) = if unlocked && register & SECOND_CHIP != 0 {
            (8 | (low & 7), 8 | (high & 7))
        } else {
            let bank_32k = if unlocked { usize::from(register >> 1) & 3 } else { 0 };
            (bank_32k << 1 | (low & 1), bank_32k << 1 | (high & 1))
        };
        map.set_prg_16k(0, low);
        map.set_prg_16k(1, high);
        map.set_chr_8k(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::map::PRG_SLOT;
    use crate::cart::rom_info::Mirroring;

    fn board() -> (NesEvent, MemoryMap) {
        let board = NesEvent::new(BoardConfig { mapper: 105, submapper: 0, chr_rom_size: 0, battery: false });
        let mut map = MemoryMap::new(0x40000, 0x2000, 0x2000, Mirroring::Vertical);
        board.update_map(&mut map);
        (board, map)
    }

    /// Writes `value` to the MMC1 register at `addr` through the serial port, from cycle `*cycle`.
    fn write(board: &mut NesEvent, map: &mut MemoryMap, cycle: &mut u64, addr: u16, value: u8) {
        for bit in 0..5 {
            *cycle += 2;
            board.write_register(addr, value >> bit, *cycle);
        }
        board.update_map(map);
    }

    /// The 16 KiB banks at $8000 and $C000.
    fn prg(map: &MemoryMap) -> (usize, usize) {
        (map.prg[0] / (2 * PRG_SLOT), map.prg[2] / (2 * PRG_SLOT))
    }

    #[test]
    fn prg_is_locked_to_the_first_32k_until_i_goes_0_then_1() {
        let (mut board, mut map) = board();
        let mut cycle = 0;
        assert_eq!(prg(&map), (0, 1));
        write(&mut board, &mut map, &mut cycle, 0xA000, 0x1C); // O=1, I=1: still locked
        assert_eq!(prg(&map), (0, 1));
        write(&mut board, &mut map, &mut cycle, 0xA000, 0x04); // I=0
        assert_eq!(prg(&map), (0, 1));
        write(&mut board, &mut map, &mut cycle, 0xA000, 0x14); // I=1: unlocked, 32 KiB bank 2
        assert_eq!(prg(&map), (4, 5));
        write(&mut board, &mut map, &mut cycle, 0xE000, 0x03); // MMC1 mode 3 on the second chip
        write(&mut board, &mut map, &mut cycle, 0xA000, 0x18);
        assert_eq!(prg(&map), (11, 15));
        write(&mut board, &mut map, &mut cycle, 0x8000, 0x08); // mode 2: first bank fixed
        assert_eq!(prg(&map), (8, 11));
    }

    #[test]
    fn the_timer_asserts_irq_at_the_target_and_catch_up_equals_single_cycles() {
        let (mut board, mut map) = board();
        let mut cycle = 0;
        write(&mut board, &mut map, &mut cycle, 0xA000, 0x00); // I=0 on `cycle`
        let start = cycle;
        assert_eq!(board.irq_due_cycle(), start + u64::from(TIMER_TARGET));
        let mut stepped = board.clone();
        // Near the target: jump most of the way, then single cycles against the closed form.
        board.catch_up(start + u64::from(TIMER_TARGET) - 3);
        stepped.state.timer = TIMER_TARGET - 3;
        stepped.ticked = board.ticked;
        assert_eq!(board.state, stepped.state);
        for at in start + u64::from(TIMER_TARGET) - 2..start + u64::from(TIMER_TARGET) + 3 {
            board.catch_up(at);
            stepped.step_cycle();
            assert_eq!(board.state, stepped.state, "cycle {at}");
            assert_eq!(board.irq_line(), at >= start + u64::from(TIMER_TARGET), "cycle {at}");
        }
        write(&mut board, &mut map, &mut cycle, 0xA000, 0x10);
        assert!(!board.irq_line(), "I=1 acknowledges");
        assert_eq!(board.state.timer, 0);
    }
}
