//! The two pulse (square wave) channels with their sweep units (nesdev "APU Pulse", "APU Sweep").

use super::envelope::Envelope;
use super::length::LengthCounter;

/// Duty waveforms in output order, indexed by bits 7-6 of $4000/$4004 (12.5%, 25%, 50%, 25% negated).
const DUTY_SEQUENCES: [u8; 4] = [0b0100_0000, 0b0110_0000, 0b0111_1000, 0b1001_1111];

crate::layout::state_struct! {
    /// One pulse channel.
    pub struct Pulse {
        /// The 11-bit timer period (in APU cycles, minus one).
        pub timer_period: u16,
        /// The timer's count down to the next sequencer step.
        pub timer_counter: u16,
        /// Duty waveform index (0-3).
        pub duty: u8,
        /// Position in the 8-step duty waveform.
        pub sequence_step: u8,
        /// 1 when the sweep unit may change the period.
        pub sweep_enabled: u8,
        /// The sweep divider's period minus one (0-7).
        pub sweep_period: u8,
        /// 1 when the sweep subtracts.
        pub sweep_negate: u8,
        /// The sweep's shift count (0-7).
        pub sweep_shift: u8,
        /// 1 after a $4001/$4005 write: reload the divider at the next half frame.
        pub sweep_reload: u8,
        /// The sweep divider's count.
        pub sweep_divider: u8,
        /// 1 for pulse 1, whose sweep negates in ones' complement (subtracting one more).
        pub ones_complement: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 3],
        /// Volume envelope.
        pub envelope: Envelope,
        /// Length counter.
        pub length: LengthCounter,
    }
}

const _: () = assert!(core::mem::size_of::<Pulse>() == 32);

impl Pulse {
    /// A pulse channel at power-on; `ones_complement` is true for pulse 1.
    pub fn new(ones_complement: bool) -> Pulse {
        Pulse { ones_complement: u8::from(ones_complement), ..Pulse::default() }
    }

    /// A CPU write of one of the channel's four registers (`index` 0-3).
    pub fn write_register(&mut self, index: u16, value: u8) {
        match index {
            0 => {
                self.duty = value >> 6;
                self.length.write_halt(value & 0x20 != 0);
                self.envelope.write_control(value);
            }
            1 => {
                self.sweep_enabled = value >> 7;
                self.sweep_period = (value >> 4) & 7;
                self.sweep_negate = (value >> 3) & 1;
                self.sweep_shift = value & 7;
                self.sweep_reload = 1;
            }
            2 => self.timer_period = (self.timer_period & 0x0700) | u16::from(value),
            _ => {
                self.timer_period = (self.timer_period & 0x00FF) | (u16::from(value & 7) << 8);
                self.length.write_load(value);
                self.sequence_step = 0;
                self.envelope.restart();
            }
        }
    }

    /// The period the sweep unit would set: the current period plus or minus the shifted period.
    /// Computed continuously, whether or not the sweep is enabled.
    pub fn sweep_target(&self) -> u16 {
        let change = self.timer_period >> (self.sweep_shift & 7);
        if self.sweep_negate != 0 {
            // Ones' complement on pulse 1 subtracts one more; saturate at 0 like the hardware's
            // borrow (a negative target never exceeds $7FF, so it never mutes).
            // Saturating too: a forged period near $FFFF with shift 0 would overflow the sum.
            self.timer_period.saturating_sub(change.saturating_add(u16::from(self.ones_complement)))
        } else {
            self.timer_period.saturating_add(change)
        }
    }

    /// True when the sweep unit silences the channel: period below 8 or target above $7FF.
    pub fn sweep_mutes(&self) -> bool {
        self.timer_period < 8 || self.sweep_target() > 0x7FF
    }

    /// A half-frame clock of the sweep unit.
    pub fn clock_sweep(&mut self) {
        if self.sweep_divider == 0 && self.sweep_enabled != 0 && self.sweep_shift != 0 && !self.sweep_mutes()
        {
            self.timer_period = self.sweep_target();
        }
        if self.sweep_divider == 0 || self.sweep_reload != 0 {
            self.sweep_divider = self.sweep_period;
            self.sweep_reload = 0;
        } else {
            self.sweep_divider -= 1;
        }
    }

    /// One APU cycle of the timer.
    #[inline]
    pub fn clock_timer(&mut self) {
        if self.timer_counter == 0 {
            self.timer_counter = self.timer_period;
            self.sequence_step = self.sequence_step.wrapping_add(1) & 7;
        } else {
            self.timer_counter -= 1;
        }
    }

    /// `clocks` APU cycles of the timer at once (exactly `clocks` calls of [`Pulse::clock_timer`]).
    #[inline]
    pub fn advance_timer(&mut self, clocks: u64) {
        let steps = super::timer::advance(&mut self.timer_counter, self.timer_period, clocks);
        self.sequence_step = ((u64::from(self.sequence_step) + steps) & 7) as u8;
    }

    /// The channel's output level (0-15).
    #[inline]
    pub fn output(&self) -> u8 {
        let high = DUTY_SEQUENCES[usize::from(self.duty & 3)] & (0x80 >> (self.sequence_step & 7)) != 0;
        if high && self.length.is_active() && !self.sweep_mutes() { self.envelope.output() } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pulse(ones_complement: bool, period: u16, sweep: u8) -> Pulse {
        let mut p = Pulse::new(ones_complement);
        p.timer_period = period;
        p.write_register(1, sweep);
        p
    }

    #[test]
    fn sweep_target_adds_shifted_period() {
        // nesdev "APU Sweep": period $100 with shift 1 targets $180.
        assert_eq!(pulse(true, 0x100, 0x81).sweep_target(), 0x180);
    }

    #[test]
    fn sweep_negate_differs_between_channels() {
        // Pulse 1 adds the ones' complement (-c - 1), pulse 2 the two's complement (-c).
        assert_eq!(pulse(true, 0x100, 0x89).sweep_target(), 0x100 - 0x80 - 1);
        assert_eq!(pulse(false, 0x100, 0x89).sweep_target(), 0x100 - 0x80);
    }

    #[test]
    fn sweep_mutes_on_overflow_and_low_period_even_when_disabled() {
        assert!(pulse(false, 0x7FF, 0x00).sweep_mutes()); // shift 0: target = 2 * period
        assert!(pulse(false, 0x7, 0x00).sweep_mutes());
        assert!(!pulse(false, 0x3FF, 0x01).sweep_mutes());
        assert!(pulse(false, 0x400, 0x00).sweep_mutes());
    }

    #[test]
    fn sweep_updates_period_when_divider_expires() {
        let mut p = pulse(false, 0x100, 0x81); // enabled, period 0 (every half frame), shift 1
        p.clock_sweep(); // reload flag: divider was 0, so the period updates too
        assert_eq!(p.timer_period, 0x180);
    }

    #[test]
    fn duty_waveform_12_5_percent() {
        let mut p = Pulse::new(false);
        p.write_register(0, 0x3F);
        p.timer_period = 8;
        p.length.counter = 1;
        let mut wave = [0u8; 8];
        for w in &mut wave {
            *w = p.output();
            p.sequence_step = (p.sequence_step + 1) & 7;
        }
        assert_eq!(wave, [0, 15, 0, 0, 0, 0, 0, 0]);
    }
}
