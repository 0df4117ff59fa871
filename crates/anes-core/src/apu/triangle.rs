//! The triangle channel and its linear counter (nesdev "APU Triangle").

use super::length::LengthCounter;

/// The 32-step triangle waveform.
const TRIANGLE_SEQUENCE: [u8; 32] = [
    15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, //
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
];

crate::layout::state_struct! {
    /// The triangle channel.
    pub struct Triangle {
        /// The 11-bit timer period (in CPU cycles, minus one).
        pub timer_period: u16,
        /// The timer's count down to the next sequencer step.
        pub timer_counter: u16,
        /// Position in the 32-step waveform.
        pub sequence_step: u8,
        /// The linear counter.
        pub linear_counter: u8,
        /// The linear counter's reload value (bits 6-0 of $4008).
        pub linear_reload_value: u8,
        /// 1 when the next quarter frame reloads the linear counter.
        pub linear_reload: u8,
        /// Bit 7 of $4008: keeps the reload flag set (and halts the length counter).
        pub control: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 3],
        /// Length counter.
        pub length: LengthCounter,
    }
}

const _: () = assert!(core::mem::size_of::<Triangle>() == 20);

impl Triangle {
    /// A CPU write of $4008-$400B (`index` 0-3; 1 is unused).
    pub fn write_register(&mut self, index: u16, value: u8) {
        match index {
            0 => {
                self.control = value >> 7;
                self.linear_reload_value = value & 0x7F;
                self.length.write_halt(value & 0x80 != 0);
            }
            1 => {}
            2 => self.timer_period = (self.timer_period & 0x0700) | u16::from(value),
            _ => {
                self.timer_period = (self.timer_period & 0x00FF) | (u16::from(value & 7) << 8);
                self.length.write_load(value);
                self.linear_reload = 1;
            }
        }
    }

    /// A quarter-frame clock of the linear counter.
    pub fn clock_linear(&mut self) {
        if self.linear_reload != 0 {
            self.linear_counter = self.linear_reload_value;
        } else if self.linear_counter != 0 {
            self.linear_counter -= 1;
        }
        if self.control == 0 {
            self.linear_reload = 0;
        }
    }

    /// One CPU cycle of the timer (the triangle's timer runs at the CPU rate).
    #[inline]
    pub fn clock_timer(&mut self) {
        if self.timer_counter == 0 {
            self.timer_counter = self.timer_period;
            if self.linear_counter != 0 && self.length.is_active() {
                self.sequence_step = self.sequence_step.wrapping_add(1) & 31;
            }
        } else {
            self.timer_counter -= 1;
        }
    }

    /// `clocks` CPU cycles of the timer at once (exactly `clocks` calls of [`Triangle::clock_timer`];
    /// the linear and length counters do not change meanwhile).
    #[inline]
    pub fn advance_timer(&mut self, clocks: u64) {
        let steps = super::timer::advance(&mut self.timer_counter, self.timer_period, clocks);
        if self.linear_counter != 0 && self.length.is_active() {
            self.sequence_step = ((u64::from(self.sequence_step) + steps) & 31) as u8;
        }
    }

    /// The channel's output level (0-15). The sequencer holds its step when silenced, so the level
    /// stays where it stopped (no click), as on hardware.
    #[inline]
    pub fn output(&self) -> u8 {
        TRIANGLE_SEQUENCE[usize::from(self.sequence_step & 31)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_counter_reloads_then_counts_down() {
        let mut t = Triangle::default();
        t.write_register(0, 0x05); // control clear, reload value 5
        t.write_register(3, 0x00);
        t.clock_linear();
        assert_eq!(t.linear_counter, 5);
        assert_eq!(t.linear_reload, 0);
        t.clock_linear();
        assert_eq!(t.linear_counter, 4);
    }

    #[test]
    fn control_flag_keeps_reloading() {
        let mut t = Triangle::default();
        t.write_register(0, 0x85);
        t.write_register(3, 0x00);
        t.clock_linear();
        t.clock_linear();
        assert_eq!(t.linear_counter, 5);
    }
}
