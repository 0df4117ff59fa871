//! The envelope generator of the pulse and noise channels (nesdev "APU Envelope").

crate::layout::state_struct! {
    /// Volume envelope: a constant volume, or a sawtooth decaying from 15 at a programmable rate.
    pub struct Envelope {
        /// 1 after a write of the channel's fourth register: restart on the next quarter frame.
        pub start: u8,
        /// The divider's count.
        pub divider: u8,
        /// The decay level (15 down to 0).
        pub decay: u8,
        /// Bits 3-0 of the control register: the constant volume, or the divider period minus one.
        pub volume: u8,
        /// 1 when the constant volume is output.
        pub constant: u8,
        /// 1 when the decay level loops from 0 back to 15 (the same bit as the length counter halt).
        pub loop_flag: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 2],
    }
}

const _: () = assert!(core::mem::size_of::<Envelope>() == 8);

impl Envelope {
    /// A write of the channel's control register ($4000/$4004/$400C).
    pub fn write_control(&mut self, value: u8) {
        self.loop_flag = (value >> 5) & 1;
        self.constant = (value >> 4) & 1;
        self.volume = value & 0x0F;
    }

    /// A write of the channel's fourth register sets the start flag.
    pub fn restart(&mut self) {
        self.start = 1;
    }

    /// A quarter-frame clock.
    pub fn clock(&mut self) {
        if self.start != 0 {
            self.start = 0;
            self.decay = 15;
            self.divider = self.volume;
        } else if self.divider == 0 {
            self.divider = self.volume;
            if self.decay != 0 {
                self.decay -= 1;
            } else if self.loop_flag != 0 {
                self.decay = 15;
            }
        } else {
            self.divider -= 1;
        }
    }

    /// The volume (0-15) the envelope outputs.
    #[inline]
    pub fn output(&self) -> u8 {
        if self.constant != 0 { self.volume } else { self.decay }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decays_from_15_at_period_plus_one() {
        let mut env = Envelope::default();
        env.write_control(0x01); // period 2 quarter frames
        env.restart();
        env.clock();
        assert_eq!(env.output(), 15);
        env.clock();
        assert_eq!(env.output(), 15);
        env.clock();
        assert_eq!(env.output(), 14);
    }

    #[test]
    fn loops_only_with_loop_flag() {
        let mut env = Envelope::default();
        env.write_control(0x00);
        env.restart();
        for _ in 0..16 {
            env.clock();
        }
        assert_eq!(env.output(), 0);
        env.clock();
        assert_eq!(env.output(), 0);
        env.write_control(0x20);
        env.clock();
        assert_eq!(env.output(), 15);
    }
}
