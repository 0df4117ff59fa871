//! The Sunsoft 5B's sound (nesdev "Sunsoft 5B audio"): a YM2149F with its SEL pin low inside the
//! mapper, clocked by the CPU. $C000 selects one of 16 internal registers (a value with any of bits
//! 4-7 set disables writes, as on the AY-3-8910), $E000 writes it.
//!
//! The chip's clock divider makes every generator step on a tick of 16 CPU cycles:
//! - three tones: a 12-bit period P ($00-$05) counted in ticks; the output flips every P ticks, so
//!   a square wave of CPU / (32 P) Hz (period 0 acts as 1: the wiki notes no division by zero);
//! - one noise: a 17-bit LFSR (bit 0 out; the new bit 16 is bit 0 XOR bit 3) shifted every 2 N
//!   ticks, N the 5-bit period in $06 (CPU / (32 N) Hz; 0 acts as 1);
//! - one envelope: a 5-bit ramp of 32 steps, a step every E ticks (E the 16-bit period in
//!   $0B-$0C, 0 acting as 1; a ramp every 512 E CPU cycles). A write of $0D restarts it with the
//!   shape `CAaH`: A set ramps up; at a ramp's end C clear holds 0, else H holds (at the ramp's end
//!   level, or its start with a set), else the ramp repeats (reversed each time with a set).
//!
//! $07 `..CBAcba` disables each channel's noise (CBA) and tone (cba): a channel is on while (tone
//! or tone disabled) and (noise or noise disabled), so with both disabled it holds its level. Its
//! level is its volume V ($08-$0A bits 0-3) or, with bit 4 set, the envelope's: on the chip's
//! logarithmic DAC of 32 steps of 1.5 dB, V sits at step 2V + 1 (3 dB a step of V) and 0 is
//! silence. [`DAC_LEVELS`] holds the DAC as integers; the three channels add.
//!
//! Lazy: [`Sunsoft5bAudio::run`] advances the chip over any number of CPU cycles, tones in closed
//! form, the noise and the envelope step by step but at most one envelope cycle (64 steps) at a
//! time; equal to single cycles ([`Sunsoft5bAudio::step_cycle`], compared in the tests).

crate::layout::state_struct! {
    /// The Sunsoft 5B's registers and generators.
    pub struct Sunsoft5bAudio {
        /// The internal registers $00-$0F as last written.
        pub registers: [u8; 16],
        /// $C000: the selected register (bits 0-3); writes pass only while bits 4-7 are clear.
        pub select: u8,
        /// CPU cycles into the current 16-cycle tick (0-15).
        pub prescaler: u8,
        /// Bits 0-2: tones A-C's square outputs.
        pub tone_outputs: u8,
        /// Envelope position in its ramp (0-31).
        pub envelope_step: u8,
        /// Ticks counted toward each tone's next flip.
        pub tone_counters: [u16; 3],
        /// Ticks counted toward the next noise shift.
        pub noise_counter: u16,
        /// Ticks counted toward the next envelope step.
        pub envelope_counter: u16,
        /// 0 while the envelope ramps up from its step, 31 while down (the level is step XOR this).
        pub envelope_invert: u8,
        /// 1 once the envelope holds its level.
        pub envelope_holding: u8,
        /// The noise LFSR (17 bits; bit 0 is the output).
        pub noise_lfsr: u32,
    }
}

const _: () = assert!(core::mem::size_of::<Sunsoft5bAudio>() == 36);

/// CPU cycles per tick of the generators (the YM2149F's /8 with SEL low's extra /2).
const TICK_CYCLES: u8 = 16;
/// Steps in one envelope ramp.
const ENVELOPE_STEPS: u8 = 32;
/// The LFSR at power-on (any non-zero seed; zero would stay zero).
const NOISE_SEED: u32 = 1;

const SHAPE_HOLD: u8 = 0x01;
const SHAPE_ALTERNATE: u8 = 0x02;
const SHAPE_ATTACK: u8 = 0x04;
const SHAPE_CONTINUE: u8 = 0x08;

/// The DAC output of each of the 32 logarithmic steps: 8191 at the top, 1.5 dB less each step
/// down (rounded: 8191 x 10^(-1.5 (31 - n) / 20)), step 0 silent.
pub(crate) const DAC_LEVELS: [u16; 32] = [
    0, 46, 55, 65, 77, 92, 109, 130, 154, 183, 218, 259, 308, 366, 435, 517, 614, 730, 868, 1031, 1226, 1457,
    1731, 2057, 2445, 2906, 3454, 4105, 4879, 5799, 6892, 8191,
];

/// A counter of ticks that fires on reaching `period` (then restarts at 0): after `ticks` more
/// ticks, the number of times it fired and its new count. A count already at or past the period (a
/// period just lowered) fires on the next tick.
#[inline]
fn run_counter(counter: u16, period: u16, ticks: u64) -> (u64, u16) {
    let period = u64::from(period.max(1));
    let first = period.saturating_sub(u64::from(counter)).max(1);
    if ticks < first {
        return (0, (u64::from(counter) + ticks) as u16);
    }
    let after = ticks - first;
    (1 + after / period, (after % period) as u16)
}

impl Sunsoft5bAudio {
    /// The chip at power-on: every register 0, the LFSR seeded (`Default` leaves it 0, stuck).
    pub const fn new() -> Self {
        Sunsoft5bAudio {
            registers: [0; 16],
            select: 0,
            prescaler: 0,
            tone_outputs: 0,
            envelope_step: 0,
            tone_counters: [0; 3],
            noise_counter: 0,
            envelope_counter: 0,
            envelope_invert: 0,
            envelope_holding: 0,
            noise_lfsr: NOISE_SEED,
        }
    }

    /// A write of $C000-$DFFF.
    pub fn write_select(&mut self, value: u8) {
        self.select = value;
    }

    /// A write of $E000-$FFFF: the selected register, unless the select's high bits disable it.
    pub fn write_data(&mut self, value: u8) {
        if self.select & 0xF0 != 0 {
            return;
        }
        let register = usize::from(self.select & 0x0F);
        self.registers[register] = value;
        if register == 0x0D {
            // A shape write restarts the envelope (nesdev: "Envelope reset and shape").
            self.envelope_step = 0;
            self.envelope_counter = 0;
            self.envelope_holding = 0;
            self.envelope_invert = if value & SHAPE_ATTACK != 0 { 0 } else { ENVELOPE_STEPS - 1 };
        }
    }

    fn tone_period(&self, channel: usize) -> u16 {
        u16::from(self.registers[channel * 2 + 1] & 0x0F) << 8 | u16::from(self.registers[channel * 2])
    }

    fn noise_period(&self) -> u16 {
        2 * u16::from((self.registers[6] & 0x1F).max(1))
    }

    fn envelope_period(&self) -> u16 {
        u16::from(self.registers[0x0C]) << 8 | u16::from(self.registers[0x0B])
    }

    /// The envelope's level now (0-31).
    fn envelope_level(&self) -> u8 {
        (self.envelope_step ^ self.envelope_invert) & (ENVELOPE_STEPS - 1)
    }

    /// One step of the envelope ramp.
    fn step_envelope(&mut self) {
        if self.envelope_holding != 0 {
            return;
        }
        let step = (self.envelope_step & (ENVELOPE_STEPS - 1)) + 1;
        if step < ENVELOPE_STEPS {
            self.envelope_step = step;
            return;
        }
        let shape = self.registers[0x0D];
        let flip = if shape & SHAPE_ALTERNATE != 0 { ENVELOPE_STEPS - 1 } else { 0 };
        if shape & SHAPE_CONTINUE == 0 {
            // Every shape without C ends at 0 and stays there.
            (self.envelope_step, self.envelope_invert, self.envelope_holding) = (0, 0, 1);
        } else if shape & SHAPE_HOLD != 0 {
            // Held at the ramp's last level, or with a at its first.
            self.envelope_step = ENVELOPE_STEPS - 1;
            self.envelope_invert ^= flip;
            self.envelope_holding = 1;
        } else {
            self.envelope_step = 0;
            self.envelope_invert ^= flip;
        }
    }

    /// One shift of the noise LFSR.
    fn step_noise(&mut self) {
        let lfsr = self.noise_lfsr & 0x1_FFFF;
        let feedback = (lfsr ^ (lfsr >> 3)) & 1;
        self.noise_lfsr = (lfsr >> 1) | feedback << 16;
    }

    /// `ticks` ticks of every generator.
    fn run_ticks(&mut self, ticks: u64) {
        for channel in 0..3 {
            let (flips, counter) = run_counter(self.tone_counters[channel], self.tone_period(channel), ticks);
            self.tone_counters[channel] = counter;
            if flips & 1 != 0 {
                self.tone_outputs ^= 1 << channel;
            }
        }
        let (shifts, counter) = run_counter(self.noise_counter, self.noise_period(), ticks);
        self.noise_counter = counter;
        for _ in 0..shifts {
            self.step_noise();
        }
        let (steps, counter) = run_counter(self.envelope_counter, self.envelope_period(), ticks);
        self.envelope_counter = counter;
        // Within 64 steps the envelope holds, or is back where it was (a ramp up and one down).
        let steps = if steps > 2 * u64::from(ENVELOPE_STEPS) {
            2 * u64::from(ENVELOPE_STEPS) + steps % (2 * u64::from(ENVELOPE_STEPS))
        } else {
            steps
        };
        for _ in 0..steps {
            if self.envelope_holding != 0 {
                break;
            }
            self.step_envelope();
        }
    }

    /// Runs the chip over `cycles` CPU cycles, in closed form for the tones.
    pub fn run(&mut self, cycles: u64) {
        if cycles == 0 {
            return;
        }
        let elapsed = u64::from(self.prescaler % TICK_CYCLES) + cycles;
        self.prescaler = (elapsed % u64::from(TICK_CYCLES)) as u8;
        let ticks = elapsed / u64::from(TICK_CYCLES);
        if ticks != 0 {
            self.run_ticks(ticks);
        }
    }

    /// One CPU cycle: the definition [`Sunsoft5bAudio::run`] must equal.
    #[cfg(test)]
    fn step_cycle(&mut self) {
        self.prescaler = (self.prescaler % TICK_CYCLES) + 1;
        if self.prescaler < TICK_CYCLES {
            return;
        }
        self.prescaler = 0;
        // Saturating: a restored state may hold any count (at or past the period it fires next).
        for channel in 0..3 {
            self.tone_counters[channel] = self.tone_counters[channel].saturating_add(1);
            if self.tone_counters[channel] >= self.tone_period(channel).max(1) {
                self.tone_counters[channel] = 0;
                self.tone_outputs ^= 1 << channel;
            }
        }
        self.noise_counter = self.noise_counter.saturating_add(1);
        if self.noise_counter >= self.noise_period() {
            self.noise_counter = 0;
            self.step_noise();
        }
        self.envelope_counter = self.envelope_counter.saturating_add(1);
        if self.envelope_counter >= self.envelope_period().max(1) {
            self.envelope_counter = 0;
            self.step_envelope();
        }
    }

    /// The DAC step (0-31) channel `channel` (0-2) outputs now.
    pub fn channel_step(&self, channel: usize) -> u8 {
        let mixer = self.registers[7];
        let tone = (self.tone_outputs | mixer) >> channel & 1 != 0;
        let noise = (self.noise_lfsr as u8 | mixer >> (3 + channel)) & 1 != 0;
        if !(tone && noise) {
            return 0;
        }
        let volume = self.registers[8 + channel];
        if volume & 0x10 != 0 {
            self.envelope_level()
        } else if volume & 0x0F == 0 {
            0
        } else {
            (volume & 0x0F) * 2 + 1
        }
    }

    /// The DAC's output: the three channels' levels added (0-24573).
    pub fn level(&self) -> u16 {
        (0..3).map(|channel| DAC_LEVELS[usize::from(self.channel_step(channel))]).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nes::splitmix64_next as next;

    fn write(audio: &mut Sunsoft5bAudio, register: u8, value: u8) {
        audio.write_select(register);
        audio.write_data(value);
    }

    /// The cycles between rises of the level over `cycles` single cycles.
    fn rise_intervals(audio: &mut Sunsoft5bAudio, cycles: u64) -> Vec<u64> {
        let mut rises = Vec::new();
        let mut previous = audio.level();
        for cycle in 0..cycles {
            audio.step_cycle();
            if audio.level() > previous {
                rises.push(cycle);
            }
            previous = audio.level();
        }
        rises.windows(2).map(|pair| pair[1] - pair[0]).collect()
    }

    #[test]
    fn a_tone_is_a_square_of_cpu_over_32_p() {
        // Period 127, volume 15, tone A only: a rise every 32 x 127 cycles, high half the time.
        let mut audio = Sunsoft5bAudio::new();
        write(&mut audio, 0, 127);
        write(&mut audio, 7, 0b0011_1110);
        write(&mut audio, 8, 15);
        let intervals = rise_intervals(&mut audio, 40_000);
        assert!(intervals.len() >= 8);
        assert!(intervals.iter().all(|&n| n == 32 * 127), "{intervals:?}");
        let high = (0..32 * 127).filter(|_| {
            audio.step_cycle();
            audio.level() != 0
        });
        assert_eq!(high.count(), 16 * 127);
        // Period 0 sounds as period 1.
        write(&mut audio, 0, 0);
        assert!(rise_intervals(&mut audio, 2_000).iter().all(|&n| n == 32));
    }

    #[test]
    fn the_volume_is_logarithmic_3_db_a_step() {
        let mut audio = Sunsoft5bAudio::new();
        write(&mut audio, 7, 0xFF); // tone and noise off: the channel holds its level
        let mut levels = Vec::new();
        for volume in 0..16 {
            write(&mut audio, 8, volume);
            levels.push(f64::from(audio.level()));
        }
        assert_eq!(levels[0], 0.0);
        assert_eq!(levels[15], 8191.0);
        for pair in levels[1..].windows(2) {
            let db = 20.0 * (pair[1] / pair[0]).log10();
            assert!((db - 3.0).abs() < 0.1, "{db:.3} dB between steps");
        }
    }

    #[test]
    fn envelope_shapes_follow_the_wiki() {
        // Period 1: a step every 16 cycles. The level (via channel A at envelope volume) sampled at
        // each step: the first ramp, then what follows it.
        let levels_of = |shape: u8| {
            let mut audio = Sunsoft5bAudio::new();
            write(&mut audio, 7, 0xFF);
            write(&mut audio, 8, 0x10);
            write(&mut audio, 0x0B, 1);
            write(&mut audio, 0x0D, shape);
            let mut steps = vec![audio.channel_step(0)];
            for _ in 0..95 {
                audio.run(16);
                steps.push(audio.channel_step(0));
            }
            steps
        };
        let down: Vec<u8> = (0..32).rev().collect();
        let up: Vec<u8> = (0..32).collect();
        let cat = |parts: &[&[u8]]| parts.concat();
        let hold = |level: u8| vec![level; 64];
        for shape in 0..4 {
            assert_eq!(levels_of(shape), cat(&[&down, &hold(0)]), "shape {shape}");
        }
        for shape in 4..8 {
            assert_eq!(levels_of(shape), cat(&[&up, &hold(0)]), "shape {shape}");
        }
        assert_eq!(levels_of(8), cat(&[&down, &down, &down]));
        assert_eq!(levels_of(9), cat(&[&down, &hold(0)]));
        assert_eq!(levels_of(10), cat(&[&down, &up, &down]));
        assert_eq!(levels_of(11), cat(&[&down, &hold(31)]));
        assert_eq!(levels_of(12), cat(&[&up, &up, &up]));
        assert_eq!(levels_of(13), cat(&[&up, &hold(31)]));
        assert_eq!(levels_of(14), cat(&[&up, &down, &up]));
        assert_eq!(levels_of(15), cat(&[&up, &hold(0)]));
    }

    #[test]
    fn the_noise_is_the_17_bit_lfsr_and_the_mixer_ands() {
        // The LFSR's period is 2^17 - 1 shifts.
        let mut audio = Sunsoft5bAudio::new();
        let seed = audio.noise_lfsr;
        let mut shifts = 0u32;
        loop {
            audio.step_noise();
            shifts += 1;
            if audio.noise_lfsr == seed {
                break;
            }
        }
        assert_eq!(shifts, (1 << 17) - 1);
        // Noise period 3: a shift every 2 x 3 ticks (96 cycles); tone on too: the output is their AND.
        let mut audio = Sunsoft5bAudio::new();
        write(&mut audio, 6, 3);
        write(&mut audio, 7, 0b0011_0110); // channel A: tone and noise on
        write(&mut audio, 8, 15);
        let mut probe = audio;
        for _ in 0..20_000 {
            audio.step_cycle();
            probe.step_cycle();
            let expected = probe.tone_outputs & 1 != 0 && probe.noise_lfsr & 1 != 0;
            assert_eq!(audio.level() != 0, expected);
        }
        let mut noise = Sunsoft5bAudio::new();
        write(&mut noise, 6, 3);
        let lfsr = noise.noise_lfsr;
        noise.run(95);
        assert_eq!(noise.noise_lfsr, lfsr);
        noise.run(1);
        assert_ne!(noise.noise_lfsr, lfsr);
    }

    #[test]
    fn closed_form_equals_single_cycles_under_random_writes() {
        let mut seed = 0x5B5B_u64;
        let mut lazy = Sunsoft5bAudio::new();
        let mut stepped = lazy;
        let mut ran = 0u64;
        for cycle in 1..600_000u64 {
            stepped.step_cycle();
            let roll = next(&mut seed) % 512;
            if roll < 8 {
                lazy.run(cycle - ran);
                ran = cycle;
                assert_eq!(lazy, stepped, "cycle {cycle}");
                if roll < 4 {
                    let r = next(&mut seed);
                    let register = (r % 16) as u8;
                    // Short periods, so generators wrap between the catch-ups.
                    let value = match register {
                        1 | 3 | 5 | 0x0C => 0,
                        0 | 2 | 4 | 0x0B => (r >> 8) as u8 & 0x1F,
                        _ => (r >> 8) as u8,
                    };
                    let select = if r >> 40 & 31 == 0 { register | 0x10 } else { register };
                    for audio in [&mut lazy, &mut stepped] {
                        audio.write_select(select);
                        audio.write_data(value);
                    }
                }
            }
        }
        lazy.run(600_000 - 1 - ran);
        assert_eq!(lazy, stepped);
    }
}
