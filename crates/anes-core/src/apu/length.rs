//! The length counter shared by the pulse, triangle and noise channels (nesdev "APU Length Counter").

/// Length counter load values, indexed by bits 7-3 of $4003/$4007/$400B/$400F.
pub const LENGTH_TABLE: [u8; 32] = [
    10, 254, 20, 2, 40, 4, 80, 6, 160, 8, 60, 10, 14, 12, 26, 14, //
    12, 16, 24, 18, 48, 20, 96, 22, 192, 24, 72, 26, 16, 28, 32, 30,
];

crate::layout::state_struct! {
    /// A length counter: silences its channel when it reaches zero; clocked by half-frame signals.
    ///
    /// Register writes reach the counter one cycle late, after that cycle's frame-counter clock: a reload
    /// on the same cycle as a clock is dropped if the clock changed the counter (it was non-zero), and a
    /// change of the halt flag only affects clocks after the write (nesdev "APU Length Counter"; blargg's
    /// apu_test 5-len_timing and the 2005 frame counter notes).
    pub struct LengthCounter {
        /// The count; the channel is silent at zero.
        pub counter: u8,
        /// 1 while the halt flag stops clocking.
        pub halt: u8,
        /// The halt flag as last written, applied at the next cycle.
        pub pending_halt: u8,
        /// A load value written but not yet applied (0 = none: the table has no zero).
        pub pending_reload: u8,
        /// `counter` at the moment of the pending load, to detect an intervening clock.
        pub counter_at_write: u8,
        /// 1 when enabled through $4015; while disabled the counter is held at zero.
        pub enabled: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 2],
    }
}

const _: () = assert!(core::mem::size_of::<LengthCounter>() == 8);

impl LengthCounter {
    /// True while the counter lets its channel sound.
    #[inline]
    pub fn is_active(&self) -> bool {
        self.counter != 0
    }

    /// A write of the halt flag (bit 5 of $4000/$4004/$400C, bit 7 of $4008).
    pub fn write_halt(&mut self, halt: bool) {
        self.pending_halt = u8::from(halt);
    }

    /// A write of the length index (bits 7-3 of the channel's fourth register).
    pub fn write_load(&mut self, register_value: u8) {
        if self.enabled != 0 {
            self.pending_reload = LENGTH_TABLE[usize::from(register_value >> 3)];
            self.counter_at_write = self.counter;
        }
    }

    /// A write of this channel's enable bit in $4015.
    pub fn set_enabled(&mut self, enabled: bool) {
        self.enabled = u8::from(enabled);
        if !enabled {
            self.counter = 0;
            self.pending_reload = 0;
        }
    }

    /// A half-frame clock.
    #[inline]
    pub fn clock(&mut self) {
        if self.halt == 0 && self.counter != 0 {
            self.counter -= 1;
        }
    }

    /// True when no register write waits to be applied ([`LengthCounter::apply_writes`] would
    /// change nothing).
    #[inline]
    pub fn is_settled(&self) -> bool {
        self.pending_reload == 0 && self.halt == self.pending_halt
    }

    /// Applies the register writes of the previous cycle, after this cycle's clock.
    #[inline]
    pub fn apply_writes(&mut self) {
        if self.pending_reload != 0 {
            if self.counter == self.counter_at_write {
                self.counter = self.pending_reload;
            }
            self.pending_reload = 0;
        }
        self.halt = self.pending_halt;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_nesdev() {
        // nesdev "APU Length Counter": index $00 -> 10, $01 -> 254, $1F -> 30; odd indexes 1..=31
        // give 254, then 2, 4, ... 30.
        assert_eq!(LENGTH_TABLE[0x00], 10);
        assert_eq!(LENGTH_TABLE[0x01], 254);
        assert_eq!(LENGTH_TABLE[0x08], 160);
        assert_eq!(LENGTH_TABLE[0x18], 192);
        assert_eq!(LENGTH_TABLE[0x1F], 30);
        for i in 1..16 {
            assert_eq!(LENGTH_TABLE[2 * i + 1], 2 * i as u8);
        }
    }

    #[test]
    fn reload_during_clock_is_ignored_when_non_zero() {
        let mut len = LengthCounter { enabled: 1, counter: 5, ..Default::default() };
        len.write_load(0x40); // index 8: 160
        len.clock();
        len.apply_writes();
        assert_eq!(len.counter, 4);
        let mut len = LengthCounter { enabled: 1, counter: 0, ..Default::default() };
        len.write_load(0x40);
        len.clock();
        len.apply_writes();
        assert_eq!(len.counter, 160);
    }

    #[test]
    fn halt_takes_effect_after_the_clock() {
        let mut len = LengthCounter { enabled: 1, counter: 5, ..Default::default() };
        len.write_halt(true);
        len.clock();
        len.apply_writes();
        assert_eq!(len.counter, 4);
        len.clock();
        assert_eq!(len.counter, 4);
    }

    #[test]
    fn disabled_counter_ignores_loads() {
        let mut len = LengthCounter::default();
        len.write_load(0x40);
        len.apply_writes();
        assert_eq!(len.counter, 0);
    }
}
