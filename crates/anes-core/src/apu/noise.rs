//! The noise channel: a 15-bit linear feedback shift register (nesdev "APU Noise").

use super::envelope::Envelope;
use super::length::LengthCounter;

crate::layout::state_struct! {
    /// The noise channel.
    pub struct Noise {
        /// The shift register (1 at power-on; never all zero).
        pub shift_register: u16,
        /// The timer's count down to the next shift.
        pub timer_counter: u16,
        /// Period index (bits 3-0 of $400E).
        pub period_index: u8,
        /// 1 for the short (93-step) sequence: feedback from bit 6 instead of bit 1.
        pub mode: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 2],
        /// Volume envelope.
        pub envelope: Envelope,
        /// Length counter.
        pub length: LengthCounter,
    }
}

const _: () = assert!(core::mem::size_of::<Noise>() == 24);

impl Noise {
    /// The noise channel at power-on: the shift register holds 1.
    pub fn new() -> Noise {
        Noise { shift_register: 1, ..Noise::default() }
    }

    /// A CPU write of $400C-$400F (`index` 0-3; 1 is unused).
    pub fn write_register(&mut self, index: u16, value: u8) {
        match index {
            0 => {
                self.length.write_halt(value & 0x20 != 0);
                self.envelope.write_control(value);
            }
            1 => {}
            2 => {
                self.mode = value >> 7;
                self.period_index = value & 0x0F;
            }
            _ => {
                self.length.write_load(value);
                self.envelope.restart();
            }
        }
    }

    /// One APU cycle of the timer; `periods` is the region's period table
    /// ([`crate::region::ApuTiming::noise_periods`]).
    #[inline]
    pub fn clock_timer(&mut self, periods: &[u16; 16]) {
        if self.timer_counter == 0 {
            self.timer_counter = self.reload(periods);
            self.shift();
        } else {
            self.timer_counter -= 1;
        }
    }

    fn reload(&self, periods: &[u16; 16]) -> u16 {
        periods[usize::from(self.period_index & 0x0F)] - 1
    }

    /// `clocks` APU cycles of the timer at once (exactly `clocks` calls of [`Noise::clock_timer`]).
    #[inline]
    pub fn advance_timer(&mut self, clocks: u64, periods: &[u16; 16]) {
        let reload = self.reload(periods);
        let shifts = super::timer::advance(&mut self.timer_counter, reload, clocks);
        self.shift_many(shifts);
    }

    /// `steps` steps of the shift register at once (exactly `steps` calls of [`Noise::shift`]).
    ///
    /// The feedback of the next k steps is bit j ^ bit j+tap for j < k (tap 1, or 6 in short mode),
    /// which are all still the register's own bits while k <= 15 - tap: k steps are then one shift by
    /// k bits with those k feedback bits entering at the top.
    #[inline]
    pub fn shift_many(&mut self, mut steps: u64) {
        if steps == 0 {
            return;
        }
        // Bit 15 (set only by a restored arbitrary state) falls into bit 14 on the first step.
        if self.shift_register & 0x8000 != 0 {
            self.shift();
            steps -= 1;
        }
        let tap = if self.mode != 0 { 6 } else { 1 };
        let batch = 15 - tap;
        let mut register = u32::from(self.shift_register);
        while steps != 0 {
            let k = steps.min(batch) as u32;
            let feedback = (register ^ (register >> tap)) & ((1 << k) - 1);
            register = (register >> k) | (feedback << (15 - k));
            steps -= u64::from(k);
        }
        self.shift_register = register as u16;
    }

    /// One step of the shift register.
    #[inline]
    pub fn shift(&mut self) {
        let other = if self.mode != 0 { 6 } else { 1 };
        let feedback = (self.shift_register ^ (self.shift_register >> other)) & 1;
        self.shift_register = (self.shift_register >> 1) | (feedback << 14);
    }

    /// The channel's output level (0-15): silent while bit 0 of the shift register is set.
    #[inline]
    pub fn output(&self) -> u8 {
        if self.shift_register & 1 == 0 && self.length.is_active() { self.envelope.output() } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_mode_sequence_start() {
        // From 1, feedback bit0^bit1 = 1 enters at bit 14: 1 -> $4000 -> $2000 -> ... -> 2 -> $4001.
        let mut n = Noise::new();
        n.shift();
        assert_eq!(n.shift_register, 0x4000);
        n.shift();
        assert_eq!(n.shift_register, 0x2000);
        for _ in 0..12 {
            n.shift();
        }
        assert_eq!(n.shift_register, 0x0002);
        n.shift(); // bit 1 set: feedback 1
        assert_eq!(n.shift_register, 0x4001);
        // Long mode period is 32767.
        let mut n = Noise::new();
        let mut steps = 0;
        loop {
            n.shift();
            steps += 1;
            if n.shift_register == 1 {
                break;
            }
        }
        assert_eq!(steps, 32767);
    }

    #[test]
    fn many_steps_at_once_equal_single_steps() {
        let mut seed = 0x1234_5678_9ABC_DEF0u64;
        for mode in [0, 1, 2] {
            for _ in 0..200 {
                let register = crate::nes::splitmix64_next(&mut seed) as u16;
                for steps in [0u64, 1, 2, 8, 9, 10, 13, 14, 15, 16, 28, 29, 93, 500, 32_768] {
                    let mut fast = Noise { shift_register: register, mode, ..Noise::default() };
                    let mut slow = fast;
                    fast.shift_many(steps);
                    for _ in 0..steps {
                        slow.shift();
                    }
                    assert_eq!(fast, slow, "register {register:#06X}, mode {mode}, {steps} steps");
                }
            }
        }
    }

    #[test]
    fn short_mode_period_is_93_from_1() {
        let mut n = Noise::new();
        n.mode = 1;
        let mut steps = 0;
        loop {
            n.shift();
            steps += 1;
            if n.shift_register == 1 {
                break;
            }
        }
        assert_eq!(steps, 93);
    }
}
