//! The VRC6's sound (nesdev "VRC6 audio"): two pulse channels and a sawtooth, clocked by the CPU.
//!
//! Each channel has a 12-bit period P (shifted right by 4 with $9003 bit 1, by 8 with bit 2, which
//! wins) and a divider that counts down each CPU cycle and, at 0, reloads with P and clocks the
//! channel's sequencer: every P + 1 cycles. $9003 bit 0 halts every divider where it stands.
//! - Pulse ($9000/$A000 MDDD VVVV, $9001/$A001 period low, $9002/$A002 E... PPPP): a 4-bit step
//!   counts up; the output is the volume V while the step is at most the duty D ((D + 1) / 16 of the
//!   period, CPU / (16 (P + 1)) Hz), always V in mode M, 0 while the channel is disabled (E clear),
//!   which also resets the step.
//! - Sawtooth ($B000 ..AA AAAA rate, $B001 period low, $B002 E... PPPP): every second clock adds the
//!   rate to an 8-bit accumulator, the fourteenth clock clears it (so 6 additions per CPU / (14 (P +
//!   1)) Hz; a rate above 42 wraps); the output is the accumulator's top 5 bits, 0 while disabled,
//!   which also resets the accumulator and its step.
//!
//! The DAC sums the three outputs linearly (0-61). Lazy: [`Vrc6Audio::run`] advances the chip over
//! any number of cycles in closed form, equal to single cycles ([`Vrc6Audio::step_cycle`], compared
//! in the tests).

crate::layout::state_struct! {
    /// One VRC6 pulse channel.
    pub struct Vrc6Pulse {
        /// $9000/$A000: bit 7 mode (ignore duty), bits 4-6 duty, bits 0-3 volume.
        pub control: u8,
        /// $9001/$A001: period bits 0-7.
        pub period_low: u8,
        /// $9002/$A002: bit 7 enable, bits 0-3 period bits 8-11.
        pub period_high: u8,
        /// Duty step, 0-15.
        pub step: u8,
        /// Cycles until the next sequencer clock (counts down to 0, then reloads with the period).
        pub divider: u16,
    }
}

crate::layout::state_struct! {
    /// The VRC6 sawtooth channel.
    pub struct Vrc6Saw {
        /// $B000: accumulator rate, bits 0-5.
        pub rate: u8,
        /// $B001: period bits 0-7.
        pub period_low: u8,
        /// $B002: bit 7 enable, bits 0-3 period bits 8-11.
        pub period_high: u8,
        /// Sequencer step, 0-13: even steps add the rate, the wrap to 0 clears the accumulator.
        pub step: u8,
        /// Cycles until the next sequencer clock.
        pub divider: u16,
        /// The accumulator; its bits 3-7 are the output.
        pub accumulator: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
    }
}

crate::layout::state_struct! {
    /// The VRC6's sound registers and oscillators.
    pub struct Vrc6Audio {
        /// Pulse 1 ($9000-$9002) and pulse 2 ($A000-$A002).
        pub pulse: [Vrc6Pulse; 2],
        /// Sawtooth ($B000-$B002).
        pub saw: Vrc6Saw,
        /// $9003: bit 0 halt, bit 1 periods shifted right by 4, bit 2 by 8.
        pub frequency_control: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Vrc6Audio>() == 22);

const ENABLE: u8 = 0x80;
const HALT: u8 = 0x01;
/// Sequencer clocks per sawtooth period.
const SAW_STEPS: u8 = 14;

/// A divider that reloads with `period` at 0: after `cycles` more cycles, the number of times it
/// reached 0 and its new value.
#[inline]
fn run_divider(divider: u16, period: u16, cycles: u64) -> (u64, u16) {
    let divider = u64::from(divider);
    if cycles <= divider {
        return (0, (divider - cycles) as u16);
    }
    let length = u64::from(period) + 1;
    let after_first = cycles - divider - 1;
    (1 + after_first / length, (u64::from(period) - after_first % length) as u16)
}

impl Vrc6Pulse {
    fn enabled(&self) -> bool {
        self.period_high & ENABLE != 0
    }

    fn write(&mut self, select: u8, value: u8) {
        match select {
            0 => self.control = value,
            1 => self.period_low = value,
            _ => {
                self.period_high = value & 0x8F;
                if !self.enabled() {
                    self.step = 0;
                }
            }
        }
    }

    /// The DAC input, 0-15.
    fn output(&self) -> u8 {
        let volume = self.control & 0x0F;
        let duty = (self.control >> 4) & 0x07;
        let high = self.control & 0x80 != 0 || self.step & 0x0F <= duty;
        if self.enabled() && high { volume } else { 0 }
    }

    fn run(&mut self, cycles: u64, shift: u32) {
        if !self.enabled() {
            return;
        }
        let period = (u16::from(self.period_high & 0x0F) << 8 | u16::from(self.period_low)) >> shift;
        let (clocks, divider) = run_divider(self.divider, period, cycles);
        self.divider = divider;
        self.step = (u64::from(self.step) + clocks) as u8 & 0x0F;
    }
}

impl Vrc6Saw {
    fn enabled(&self) -> bool {
        self.period_high & ENABLE != 0
    }

    fn write(&mut self, select: u8, value: u8) {
        match select {
            0 => self.rate = value & 0x3F,
            1 => self.period_low = value,
            _ => {
                self.period_high = value & 0x8F;
                if !self.enabled() {
                    self.step = 0;
                    self.accumulator = 0;
                }
            }
        }
    }

    /// The DAC input, 0-31.
    fn output(&self) -> u8 {
        if self.enabled() { self.accumulator >> 3 } else { 0 }
    }

    fn clock(&mut self) {
        self.step = (self.step + 1) % SAW_STEPS;
        if self.step == 0 {
            self.accumulator = 0;
        } else if self.step & 1 == 0 {
            self.accumulator = self.accumulator.wrapping_add(self.rate);
        }
    }

    fn run(&mut self, cycles: u64, shift: u32) {
        if !self.enabled() {
            return;
        }
        let period = (u16::from(self.period_high & 0x0F) << 8 | u16::from(self.period_low)) >> shift;
        let (mut clocks, divider) = run_divider(self.divider, period, cycles);
        self.divider = divider;
        // A restored state may hold any step: the wrap to 0 is what clears the accumulator.
        self.step %= SAW_STEPS;
        let to_wrap = u64::from(SAW_STEPS - self.step);
        if clocks >= to_wrap {
            // Whatever it held, the wrap leaves step 0 and an empty accumulator; whole periods
            // after it end there again.
            self.step = 0;
            self.accumulator = 0;
            clocks = (clocks - to_wrap) % u64::from(SAW_STEPS);
        }
        for _ in 0..clocks {
            self.clock();
        }
    }
}

impl Vrc6Audio {
    /// A write of sound register `select` (0-3) of page `page` (0: $9000, 1: $A000, 2: $B000).
    pub fn write(&mut self, page: u8, select: u8, value: u8) {
        match (page, select) {
            (0, 3) => self.frequency_control = value & 0x07,
            (0 | 1, _) => self.pulse[usize::from(page)].write(select, value),
            (_, 3) => {}
            _ => self.saw.write(select, value),
        }
    }

    /// The DAC's level: the sum of the three channel outputs, 0-61.
    pub fn level(&self) -> u8 {
        self.pulse[0].output() + self.pulse[1].output() + self.saw.output()
    }

    /// The periods' right shift that $9003 selects (the 256x flag wins over the 16x one).
    fn shift(&self) -> u32 {
        match self.frequency_control {
            c if c & 0x04 != 0 => 8,
            c if c & 0x02 != 0 => 4,
            _ => 0,
        }
    }

    /// Runs the oscillators over `cycles` CPU cycles, in closed form.
    pub fn run(&mut self, cycles: u64) {
        if cycles == 0 || self.frequency_control & HALT != 0 {
            return;
        }
        let shift = self.shift();
        self.pulse[0].run(cycles, shift);
        self.pulse[1].run(cycles, shift);
        self.saw.run(cycles, shift);
    }

    /// One CPU cycle: the definition [`Vrc6Audio::run`] must equal.
    #[cfg(test)]
    fn step_cycle(&mut self) {
        if self.frequency_control & HALT != 0 {
            return;
        }
        let shift = self.shift();
        for pulse in &mut self.pulse {
            if !pulse.enabled() {
                continue;
            }
            if pulse.divider == 0 {
                pulse.divider =
                    (u16::from(pulse.period_high & 0x0F) << 8 | u16::from(pulse.period_low)) >> shift;
                pulse.step = (pulse.step + 1) & 0x0F;
            } else {
                pulse.divider -= 1;
            }
        }
        let saw = &mut self.saw;
        if saw.enabled() {
            if saw.divider == 0 {
                saw.divider = (u16::from(saw.period_high & 0x0F) << 8 | u16::from(saw.period_low)) >> shift;
                saw.step %= SAW_STEPS;
                saw.clock();
            } else {
                saw.divider -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nes::splitmix64_next as next;

    /// The cycles between rises of the level, over `cycles` single cycles.
    fn rise_intervals(audio: &mut Vrc6Audio, cycles: u64) -> Vec<u64> {
        let mut rises = Vec::new();
        let mut previous = audio.level();
        for cycle in 0..cycles {
            audio.step_cycle();
            let level = audio.level();
            if level > previous {
                rises.push(cycle);
            }
            previous = level;
        }
        rises.windows(2).map(|pair| pair[1] - pair[0]).collect()
    }

    #[test]
    fn pulse_period_and_duty_follow_the_wiki() {
        // Period 253, duty 7: CPU / (16 x 254) Hz, so a rise every 4064 cycles, high 8 steps of 16.
        let mut audio = Vrc6Audio::default();
        audio.write(0, 0, 0x7F);
        audio.write(0, 1, 253);
        audio.write(0, 2, 0x80);
        let intervals = rise_intervals(&mut audio, 40_000);
        assert!(intervals.len() >= 8);
        assert!(intervals.iter().all(|&n| n == 16 * 254), "{intervals:?}");
        let high = (0..16 * 254).filter(|_| {
            audio.step_cycle();
            audio.level() == 15
        });
        assert_eq!(high.count(), 8 * 254, "duty 7: (7 + 1) / 16 of the period");
        // Mode: the volume regardless of the step.
        audio.write(0, 0, 0x85);
        assert!((0..5000).all(|_| {
            audio.step_cycle();
            audio.level() == 5
        }));
    }

    #[test]
    fn saw_period_and_levels_follow_the_wiki() {
        // Rate 42, period 99: a clock every 100 cycles, every second one adds 42, the fourteenth
        // clears: levels (42 n) >> 3 for n = 0..6, i.e. 0, 5, 10, 15, 21, 26, 31, then 0 again.
        let mut audio = Vrc6Audio::default();
        audio.write(2, 0, 42);
        audio.write(2, 1, 99);
        audio.write(2, 2, 0x80);
        let mut seen = Vec::new();
        for _ in 0..1400 * 2 {
            audio.step_cycle();
            if seen.last() != Some(&audio.level()) {
                seen.push(audio.level());
            }
        }
        assert_eq!(&seen[..9], &[0, 5, 10, 15, 21, 26, 31, 0, 5]);
        // Rises 200 cycles apart within a ramp, 400 from its last to the next one's first: a ramp
        // every 14 x 100 cycles, CPU / (14 (P + 1)) Hz.
        let intervals = rise_intervals(&mut audio, 14_000);
        assert!(intervals.len() > 30);
        assert!(intervals.iter().all(|&n| n == 200 || n == 400), "{intervals:?}");
        assert!(intervals.windows(6).all(|w| w.iter().sum::<u64>() == 1400), "{intervals:?}");
    }

    #[test]
    fn frequency_control_shifts_and_halts() {
        let mut audio = Vrc6Audio::default();
        audio.write(1, 0, 0x3F);
        audio.write(1, 1, 0xFF);
        audio.write(1, 2, 0x8F); // period $FFF
        audio.write(0, 3, 0x02); // >> 4: $FF
        assert!(rise_intervals(&mut audio, 20_000).iter().all(|&n| n == 16 * 256));
        audio.write(0, 3, 0x06); // 256x wins: $F
        assert!(rise_intervals(&mut audio, 2_000).iter().all(|&n| n == 16 * 16));
        audio.write(0, 3, 0x07); // halt wins
        let held = audio;
        audio.run(100_000);
        assert_eq!(audio, held);
    }

    #[test]
    fn closed_form_equals_single_cycles_under_random_writes() {
        let mut seed = 0xA0D1_u64;
        let mut lazy = Vrc6Audio::default();
        let mut stepped = Vrc6Audio::default();
        let mut ran = 0u64;
        for cycle in 1..600_000u64 {
            stepped.step_cycle();
            let roll = next(&mut seed) % 512;
            if roll < 8 {
                lazy.run(cycle - ran);
                ran = cycle;
                assert_eq!(lazy, stepped, "cycle {cycle}");
                if roll < 3 {
                    let r = next(&mut seed);
                    let (page, select) = ((r % 3) as u8, ((r >> 8) % 4) as u8);
                    // Mostly short periods and rarely a halt, so the oscillators run through wraps.
                    let value = match select {
                        1 => (r >> 16) as u8 & 0x3F,
                        2 => ((r >> 16) as u8 & 0x01) | if r >> 30 & 15 == 0 { 0 } else { 0x80 },
                        3 if r >> 40 & 7 != 0 => 0,
                        _ => (r >> 16) as u8,
                    };
                    lazy.write(page, select, value);
                    stepped.write(page, select, value);
                }
            }
        }
        lazy.run(600_000 - 1 - ran);
        assert_eq!(lazy, stepped);
    }
}
