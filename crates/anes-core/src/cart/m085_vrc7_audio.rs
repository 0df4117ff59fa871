//! The VRC7's sound (nesdev "VRC7 audio"): a YM2413 (OPLL) derivative with six two-operator FM
//! channels, 15 instruments in ROM plus one custom instrument, and no rhythm mode.
//!
//! Registers, through $9010 (address) and $9030 (data):
//! - $00-$07: the custom instrument. $00 modulator, $01 carrier: `AVEK MMMM` (tremolo, vibrato,
//!   sustained envelope, key scale rate, frequency multiplier); $02 `KKTT TTTT` modulator key scale
//!   level and total level (0.75 dB steps); $03 `KK.C MFFF` carrier key scale level, rectified
//!   (half-sine) carrier C and modulator M, feedback F; $04/$05 attack and decay rates of the
//!   modulator/carrier; $06/$07 their sustain levels (3 dB steps) and release rates.
//! - $10-$15: F-number bits 0-7 of channels 0-5; $20-$25 `..ST BBBF`: sustain S, key on T, block
//!   (octave) B, F-number bit 8; $30-$35 `IIII VVVV`: instrument (0 custom) and volume (3 dB
//!   steps of attenuation).
//!
//! The chip makes one output sample per 72 clocks of its 3.58 MHz crystal: one per 36 CPU cycles
//! (49,716 Hz). Each sample every channel runs its two operators:
//! - Phase: a 19-bit accumulator per operator, advanced by `(F << B) * multiplier` (the multiplier
//!   doubled in [`MULTIPLIER_X2`]), so a channel sounds at `49716 * F / 2^(19 - B)` Hz times the
//!   carrier's multiplier. Its top 10 bits index a sine period.
//! - Level: a quarter sine in the log domain ([`LOG_SIN`], 1/256 octave units), plus the
//!   attenuation (envelope, total level or volume, key scale level, tremolo; 0.375 dB units = 16
//!   log units), turned linear by [`EXP`] and a shift: up to +/-4096.
//! - Modulation: the modulator's output shifts the carrier's phase (full scale +/-2 periods, 4 pi);
//!   the modulator's feedback adds the mean of its last two outputs scaled by 2^(FB - 8) (FB 7:
//!   4 pi, FB 1: pi/16, the wiki's table).
//! - Envelope: attack (exponential, to 0), decay (linear in dB, to the sustain level), sustain
//!   (held for a sustained instrument, else falling at the release rate), release after key off
//!   (rate 5 with the channel's sustain bit, the release rate for a sustained instrument, else 7).
//!   A rate R becomes `4 R` plus the key scale rate offset (block and F-number bit 8, divided by 4
//!   unless K is set); the global counter steps it as the OPL family does ([`envelope_step`]).
//! - LFOs: tremolo is a triangle of 0-13 attenuation units (4.9 dB) over 13,440 samples (3.7 Hz);
//!   vibrato moves the F-number by up to its top 3 bits' worth over 8 steps of 1,024 samples
//!   (6.07 Hz).
//!
//! The output level is the sum of the six carriers, updated once per sample. Lazy: [`Vrc7Audio::run`]
//! takes any number of CPU cycles and makes the samples whose 36th cycle falls in them; how the
//! cycles are split does not change the result.
//!
//! The tables are computed at compile time with integer arithmetic (`const fn`, 60-bit fixed
//! point): the log-sin and exponential tables from their formulas, rounded to nearest. They may
//! differ from the chip's ROM by one unit in some entries.
//!
//! Not modelled: the YM2413's damping phase at key on (the attack starts from the current level),
//! the delay the chip needs between register writes (writes take effect at once), and the
//! output's time multiplexing of the channels within a sample.

crate::layout::state_struct! {
    /// One operator (modulator or carrier) of a channel.
    pub struct Vrc7Operator {
        /// 19-bit phase accumulator.
        pub phase: u32,
        /// Envelope attenuation, 0 (loudest) to 127 (silent), in 0.375 dB steps.
        pub envelope: u8,
        /// Envelope stage: 0 attack, 1 decay, 2 sustain, 3 release.
        pub stage: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 2],
    }
}

crate::layout::state_struct! {
    /// One FM channel's registers and operators.
    pub struct Vrc7Channel {
        /// $1x: F-number bits 0-7.
        pub fnum_low: u8,
        /// $2x: sustain, key on, block, F-number bit 8.
        pub control: u8,
        /// $3x: instrument (bits 4-7) and volume (bits 0-3).
        pub instrument: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
        /// The modulator's last two outputs (two's complement), for feedback.
        pub feedback: [u16; 2],
        /// Modulator and carrier.
        pub operators: [Vrc7Operator; 2],
    }
}

crate::layout::state_struct! {
    /// The VRC7's sound registers, LFOs and channels.
    pub struct Vrc7Audio {
        /// $00-$07: the custom instrument.
        pub custom: [u8; 8],
        /// $9010: the register the next $9030 write reaches.
        pub address: u8,
        /// CPU cycles since the last sample, 0-35.
        pub divider: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 2],
        /// Tremolo position, 0 to 13,439 samples.
        pub am_counter: u16,
        /// Vibrato position, 0 to 8,191 samples.
        pub pm_counter: u16,
        /// The envelope generator's global sample counter.
        pub envelope_counter: u32,
        /// The sum of the six channels' outputs at the last sample (two's complement).
        pub output: u32,
        /// Channels 0-5.
        pub channels: [Vrc7Channel; 6],
    }
}

const _: () = assert!(core::mem::size_of::<Vrc7Operator>() == 8);
const _: () = assert!(core::mem::size_of::<Vrc7Channel>() == 24);
const _: () = assert!(core::mem::size_of::<Vrc7Audio>() == 168);

/// CPU cycles per output sample (72 clocks of the chip's crystal, twice the CPU's period).
pub const CYCLES_PER_SAMPLE: u8 = 36;

/// The built-in instruments 1-15, bytes as registers $00-$07 (nesdev "VRC7 audio", "Internal patch
/// set", as read from the die).
pub const INSTRUMENTS: [[u8; 8]; 15] = [
    [0x03, 0x21, 0x05, 0x06, 0xE8, 0x81, 0x42, 0x27], // 1 Buzzy bell
    [0x13, 0x41, 0x14, 0x0D, 0xD8, 0xF6, 0x23, 0x12], // 2 Guitar
    [0x11, 0x11, 0x08, 0x08, 0xFA, 0xB2, 0x20, 0x12], // 3 Wurly
    [0x31, 0x61, 0x0C, 0x07, 0xA8, 0x64, 0x61, 0x27], // 4 Flute
    [0x32, 0x21, 0x1E, 0x06, 0xE1, 0x76, 0x01, 0x28], // 5 Clarinet
    [0x02, 0x01, 0x06, 0x00, 0xA3, 0xE2, 0xF4, 0xF4], // 6 Synth
    [0x21, 0x61, 0x1D, 0x07, 0x82, 0x81, 0x11, 0x07], // 7 Trumpet
    [0x23, 0x21, 0x22, 0x17, 0xA2, 0x72, 0x01, 0x17], // 8 Organ
    [0x35, 0x11, 0x25, 0x00, 0x40, 0x73, 0x72, 0x01], // 9 Bells
    [0xB5, 0x01, 0x0F, 0x0F, 0xA8, 0xA5, 0x51, 0x02], // 10 Vibes
    [0x17, 0xC1, 0x24, 0x07, 0xF8, 0xF8, 0x22, 0x12], // 11 Vibraphone
    [0x71, 0x23, 0x11, 0x06, 0x65, 0x74, 0x18, 0x16], // 12 Tutti
    [0x01, 0x02, 0xD3, 0x05, 0xC9, 0x95, 0x03, 0x02], // 13 Fretless
    [0x61, 0x63, 0x0C, 0x00, 0x94, 0xC0, 0x33, 0xF6], // 14 Synth bass
    [0x21, 0x72, 0x0D, 0x00, 0xC1, 0xD5, 0x56, 0x06], // 15 Sweep
];

/// The frequency multipliers of `MMMM`, doubled (0 means 1/2).
const MULTIPLIER_X2: [u32; 16] = [1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 20, 24, 24, 30, 30];

/// Key scale level at block 7 by the F-number's top 4 bits, in 0.75 dB: about 18 dB + 20 log10(n)
/// for n above 0 (within a step; the OPL family's ROM curve, 6 dB per octave); each block below
/// takes 6 dB off.
const KEY_SCALE_LEVEL: [u8; 16] = [0, 24, 32, 37, 40, 43, 45, 47, 48, 50, 51, 52, 53, 54, 55, 56];

/// The envelope generator's step patterns by rate bits 0-1, over eight steps (OPL family).
const ENVELOPE_PATTERNS: [[u8; 8]; 4] =
    [[0, 1, 0, 1, 0, 1, 0, 1], [0, 1, 0, 1, 1, 1, 0, 1], [0, 1, 1, 1, 0, 1, 1, 1], [0, 1, 1, 1, 1, 1, 1, 1]];

/// Tremolo triangle steps per period (each 64 samples): up 0-104, down 104-0.
const AM_STEPS: u16 = 210;
const AM_PERIOD: u16 = AM_STEPS * 64;
const PM_PERIOD: u16 = 8 * 1024;

/// The largest attenuation (0.375 dB units): an operator at it or beyond is silent.
const MAX_ATTENUATION: u32 = 127;

const STAGE_ATTACK: u8 = 0;
const STAGE_DECAY: u8 = 1;
const STAGE_SUSTAIN: u8 = 2;
const STAGE_RELEASE: u8 = 3;

const KEY_ON: u8 = 0x10;
const CHANNEL_SUSTAIN: u8 = 0x20;

// Fixed point for the table generators: 60 fractional bits in an i128 (products of two values
// below 4 stay below 2^124).
const FRACTION_BITS: u32 = 60;
const ONE: i128 = 1 << FRACTION_BITS;
/// pi * 2^60 (hex digits of pi: 3.243F6A8885A308D3...).
const PI: i128 = 0x3243_F6A8_885A_308D;
/// ln 2 * 2^60 (0.B17217F7D1CF79AB...).
const LN_2: i128 = 0x0B17_217F_7D1C_F79B;

const fn fixed_mul(a: i128, b: i128) -> i128 {
    (a * b) >> FRACTION_BITS
}

/// sin(x) for 0 <= x <= pi/2, by its Taylor series to the last term above 2^-60.
const fn sin_fixed(x: i128) -> i128 {
    let x2 = fixed_mul(x, x);
    let mut term = x;
    let mut sum = x;
    let mut n = 1;
    while term != 0 {
        term = -fixed_mul(term, x2) / ((2 * n) * (2 * n + 1));
        sum += term;
        n += 1;
    }
    sum
}

/// -log2(s) for 0 < s <= 1, in units of 2^-20: the integer part by normalising s into [1, 2), the
/// fraction bit by bit by squaring.
const fn neg_log2_q20(s: i128) -> i128 {
    let mut y = s;
    let mut whole = 0;
    while y < ONE {
        y <<= 1;
        whole += 1;
    }
    let mut fraction = 0;
    let mut bit = 0;
    while bit < 20 {
        y = fixed_mul(y, y);
        fraction <<= 1;
        if y >= 2 * ONE {
            y >>= 1;
            fraction |= 1;
        }
        bit += 1;
    }
    (whole << 20) - fraction
}

/// e^x for -1 < x <= 0, by its Taylor series.
const fn exp_fixed(x: i128) -> i128 {
    let mut term = ONE;
    let mut sum = ONE;
    let mut n = 1;
    while term != 0 {
        term = fixed_mul(term, x) / n;
        sum += term;
        n += 1;
    }
    sum
}

/// `LOG_SIN[i]` = round(-log2(sin((2i + 1) pi / 1024)) * 256): a quarter period of the sine's
/// magnitude in the log domain, 1/256 octave units (2137 down to 0).
pub const LOG_SIN: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let x = (2 * i as i128 + 1) * PI / 1024;
        let log = neg_log2_q20(sin_fixed(x));
        table[i] = ((log + (1 << 11)) >> 12) as u16;
        i += 1;
    }
    table
};

/// `EXP[j]` = round(4096 * 2^(-j/256)): the linear value of attenuation j within an octave (4096
/// down to 2054); attenuation a is `EXP[a % 256] >> (a / 256)`.
pub const EXP: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut j = 0;
    while j < 256 {
        let value = exp_fixed(-(j as i128) * LN_2 / 256);
        table[j] = ((value * 4096 + ONE / 2) >> FRACTION_BITS) as u16;
        j += 1;
    }
    table
};

/// One operator's output for the 10-bit phase `phase` at `attenuation` (0.375 dB units): +/-4096
/// at most; a rectified operator is 0 over the sine's negative half.
#[inline]
fn operator_output(phase: u32, attenuation: u32, rectified: bool) -> i32 {
    if attenuation >= MAX_ATTENUATION {
        return 0;
    }
    let negative = phase & 0x200 != 0;
    if negative && rectified {
        return 0;
    }
    let index = if phase & 0x100 != 0 { !phase & 0xFF } else { phase & 0xFF };
    let log = u32::from(LOG_SIN[index as usize]) + (attenuation << 4);
    let shift = log >> 8;
    let magnitude = if shift > 12 { 0 } else { i32::from(EXP[(log & 0xFF) as usize] >> shift) };
    if negative { -magnitude } else { magnitude }
}

/// The envelope's step at `rate` (0-63) on global sample `counter`.
#[inline]
fn envelope_step(rate: u32, counter: u32) -> u32 {
    if rate < 4 {
        return 0;
    }
    let shift = rate >> 2;
    let pattern = &ENVELOPE_PATTERNS[(rate & 3) as usize];
    if shift < 13 {
        let quiet_bits = 13 - shift;
        if counter & ((1 << quiet_bits) - 1) != 0 {
            return 0;
        }
        u32::from(pattern[((counter >> quiet_bits) & 7) as usize])
    } else {
        (u32::from(pattern[(counter & 7) as usize]) + 1) << (shift - 13)
    }
}

impl Vrc7Operator {
    fn silent() -> Self {
        Vrc7Operator { envelope: MAX_ATTENUATION as u8, stage: STAGE_RELEASE, ..Vrc7Operator::default() }
    }
}

impl Vrc7Audio {
    /// The chip after power-on or a reset: every register 0, every operator silent in release.
    pub fn new() -> Self {
        let mut audio: Vrc7Audio = bytemuck::Zeroable::zeroed();
        for channel in &mut audio.channels {
            channel.operators = [Vrc7Operator::silent(); 2];
        }
        audio
    }

    /// A write to $9010: selects the register $9030 writes.
    pub fn write_address(&mut self, value: u8) {
        self.address = value;
    }

    /// A write to $9030: the selected register takes `value`.
    pub fn write_data(&mut self, value: u8) {
        let register = self.address;
        let channel = usize::from(register & 0x0F);
        match register {
            0x00..=0x07 => self.custom[usize::from(register)] = value,
            0x10..=0x15 => self.channels[channel].fnum_low = value,
            0x20..=0x25 => {
                let ch = &mut self.channels[channel];
                let was_on = ch.control & KEY_ON != 0;
                ch.control = value & 0x3F;
                match (was_on, value & KEY_ON != 0) {
                    (false, true) => {
                        for op in &mut ch.operators {
                            op.stage = STAGE_ATTACK;
                            op.phase = 0;
                        }
                    }
                    (true, false) => ch.operators.iter_mut().for_each(|op| op.stage = STAGE_RELEASE),
                    _ => {}
                }
            }
            0x30..=0x35 => self.channels[channel].instrument = value,
            _ => {}
        }
    }

    /// The output level: the sum of the six channels at the last sample, +/-24,576 at most.
    pub fn level(&self) -> i32 {
        self.output as i32
    }

    /// Runs the chip over `cycles` CPU cycles: one sample at each 36th.
    pub fn run(&mut self, cycles: u64) {
        let total = u64::from(self.divider) + cycles;
        let samples = total / u64::from(CYCLES_PER_SAMPLE);
        self.divider = (total % u64::from(CYCLES_PER_SAMPLE)) as u8;
        for _ in 0..samples {
            self.sample();
        }
    }

    /// The eight instrument bytes of channel `channel`.
    #[inline]
    fn instrument(&self, channel: usize) -> [u8; 8] {
        match self.channels[channel].instrument >> 4 {
            0 => self.custom,
            n => INSTRUMENTS[usize::from(n) - 1],
        }
    }

    /// One output sample.
    fn sample(&mut self) {
        self.envelope_counter = self.envelope_counter.wrapping_add(1);
        // A restored state may hold any counter: out-of-range ones wrap to the start.
        self.am_counter = if self.am_counter >= AM_PERIOD - 1 { 0 } else { self.am_counter + 1 };
        self.pm_counter = if self.pm_counter >= PM_PERIOD - 1 { 0 } else { self.pm_counter + 1 };
        let am_step = self.am_counter >> 6;
        let tremolo = u32::from(if am_step < AM_STEPS / 2 { am_step } else { AM_STEPS - 1 - am_step }) >> 3;
        let vibrato_step = self.pm_counter >> 10;
        let mut sum = 0;
        for channel in 0..6 {
            sum += self.channel_sample(channel, tremolo, vibrato_step);
        }
        self.output = sum as u32;
    }

    /// Runs channel `channel` for one sample and returns its output.
    fn channel_sample(&mut self, channel: usize, tremolo: u32, vibrato_step: u16) -> i32 {
        let patch = self.instrument(channel);
        let counter = self.envelope_counter;
        let ch = &mut self.channels[channel];
        let fnum = u32::from(ch.control & 1) << 8 | u32::from(ch.fnum_low);
        let block = u32::from(ch.control >> 1) & 7;
        let channel_sustain = ch.control & CHANNEL_SUSTAIN != 0;
        // Key scale level at 6 dB per octave in 0.375 dB units, before the KSL shift.
        let key_scale =
            (2 * i32::from(KEY_SCALE_LEVEL[(fnum >> 5) as usize]) - 16 * (7 - block as i32)).max(0) as u32;
        // Vibrato: the F-number (doubled) moves by up to its top 3 bits, by the step's sign.
        let vibrato = {
            let depth = [0i32, 1, 2, 1, 0, -1, -2, -1][usize::from(vibrato_step)];
            let moved = (depth.unsigned_abs() * (fnum >> 6)) as i32 >> 1;
            if depth < 0 { -moved } else { moved }
        };
        for (n, op) in ch.operators.iter_mut().enumerate() {
            let flags = patch[n];
            let rates = patch[4 + n];
            let levels = patch[6 + n];
            let sustained = flags & 0x20 != 0;
            let key_scale_rate = (block << 1 | fnum >> 8) >> if flags & 0x10 != 0 { 0 } else { 2 };
            let rate = |r: u8| if r == 0 { 0 } else { (4 * u32::from(r) + key_scale_rate).min(63) };
            match op.stage {
                STAGE_ATTACK => {
                    let attack = rate(rates >> 4);
                    if attack >= 60 {
                        op.envelope = 0;
                    } else {
                        let step = envelope_step(attack, counter);
                        if step != 0 {
                            let level = u32::from(op.envelope);
                            op.envelope = level.saturating_sub(((level * step) >> 3) + step) as u8;
                        }
                    }
                    if op.envelope == 0 {
                        op.stage = STAGE_DECAY;
                    }
                }
                STAGE_DECAY => {
                    let level = u32::from(op.envelope) + envelope_step(rate(rates & 0x0F), counter);
                    op.envelope = level.min(MAX_ATTENUATION) as u8;
                    if u32::from(op.envelope) >= u32::from(levels >> 4) << 3 {
                        op.stage = STAGE_SUSTAIN;
                    }
                }
                STAGE_SUSTAIN if sustained => {}
                _ => {
                    let release = match op.stage {
                        STAGE_SUSTAIN => rate(levels & 0x0F),
                        _ if channel_sustain => rate(5),
                        _ if sustained => rate(levels & 0x0F),
                        _ => rate(7),
                    };
                    let level = u32::from(op.envelope) + envelope_step(release, counter);
                    op.envelope = level.min(MAX_ATTENUATION) as u8;
                }
            }
            let vibrated = if flags & 0x40 != 0 { 2 * fnum as i32 + vibrato } else { 2 * fnum as i32 };
            let increment = (((vibrated as u32) << block) * MULTIPLIER_X2[usize::from(flags & 0x0F)]) >> 2;
            op.phase = op.phase.wrapping_add(increment) & 0x7FFFF;
        }
        let attenuation = |n: usize, base: u32, ksl: u8| {
            let am = if patch[n] & 0x80 != 0 { tremolo } else { 0 };
            let ksl = if ksl == 0 { 0 } else { key_scale >> (3 - ksl) };
            base + ksl + am
        };
        let [modulator, carrier] = ch.operators;
        let feedback = patch[3] & 7;
        let fed_back = if feedback == 0 {
            0
        } else {
            (i32::from(ch.feedback[0] as i16) + i32::from(ch.feedback[1] as i16)) >> (9 - feedback)
        };
        let modulator_attenuation =
            attenuation(0, u32::from(modulator.envelope) + 2 * u32::from(patch[2] & 0x3F), patch[2] >> 6);
        let modulator_out = operator_output(
            (modulator.phase >> 9).wrapping_add(fed_back as u32) & 0x3FF,
            modulator_attenuation,
            patch[3] & 0x08 != 0,
        );
        ch.feedback = [modulator_out as u16, ch.feedback[0]];
        let volume = u32::from(ch.instrument & 0x0F) << 3;
        let carrier_attenuation = attenuation(1, u32::from(carrier.envelope) + volume, patch[3] >> 6);
        operator_output(
            (carrier.phase >> 9).wrapping_add((modulator_out >> 1) as u32) & 0x3FF,
            carrier_attenuation,
            patch[3] & 0x10 != 0,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_equal_their_formulas() {
        // The const fn generators against f64 (in the test only): every entry within rounding.
        for (i, &entry) in LOG_SIN.iter().enumerate() {
            let exact = -((2 * i + 1) as f64 * core::f64::consts::PI / 1024.0).sin().log2() * 256.0;
            assert!((f64::from(entry) - exact).abs() <= 0.5 + 1e-9, "LOG_SIN[{i}] = {entry}, {exact}");
        }
        for (j, &entry) in EXP.iter().enumerate() {
            let exact = 4096.0 * (-(j as f64) / 256.0).exp2();
            assert!((f64::from(entry) - exact).abs() <= 0.5 + 1e-9, "EXP[{j}] = {entry}, {exact}");
        }
        assert_eq!((LOG_SIN[0], LOG_SIN[255], EXP[0], EXP[255]), (2137, 0, 4096, 2054));
        for (n, &entry) in KEY_SCALE_LEVEL.iter().enumerate().skip(1) {
            // The chip's curve follows the formula to within one step.
            let exact = (18.0 + 20.0 * (n as f64).log10()) / 0.75;
            assert!((f64::from(entry) - exact).abs() < 1.0, "KEY_SCALE_LEVEL[{n}] = {entry}, {exact}");
        }
    }

    /// A pure sine on channel 0: the custom instrument with the modulator silenced (total level
    /// 63 and the slowest attack), carrier multiplier 1, instant attack, sustained.
    fn sine(fnum: u16, block: u8) -> Vrc7Audio {
        let mut audio = Vrc7Audio::new();
        for (register, value) in [
            (0x00, 0x20),
            (0x01, 0x21),
            (0x02, 0x3F),
            (0x03, 0x00),
            (0x04, 0x00),
            (0x05, 0xF0),
            (0x06, 0x00),
            (0x07, 0x0F),
            (0x30, 0x00),
            (0x10, fnum as u8),
            (0x20, 0x10 | block << 1 | (fnum >> 8) as u8),
        ] {
            audio.write_address(register);
            audio.write_data(value);
        }
        audio
    }

    /// The output over `samples` samples.
    fn levels(audio: &mut Vrc7Audio, samples: usize) -> Vec<i32> {
        (0..samples)
            .map(|_| {
                audio.run(u64::from(CYCLES_PER_SAMPLE));
                audio.level()
            })
            .collect()
    }

    #[test]
    fn a_sine_sounds_at_the_f_number_formula_with_full_amplitude() {
        // F = 290, B = 4: 49,716 * 290 / 2^15 = 440.0 Hz, a period of 112.99 samples.
        let mut audio = sine(290, 4);
        let out = levels(&mut audio, 20_000);
        let rising: Vec<usize> = (1..out.len()).filter(|&i| out[i - 1] < 0 && out[i] >= 0).collect();
        let period = (rising[rising.len() - 1] - rising[0]) as f64 / (rising.len() - 1) as f64;
        assert!((period - 2f64.powi(15) / 290.0).abs() < 0.01, "{period}");
        let peak = out.iter().map(|level| level.abs()).max().unwrap();
        assert!((4080..=4096).contains(&peak), "peak {peak}");
    }

    #[test]
    fn volume_and_total_level_attenuate_in_their_steps() {
        // Volume 2 (6 dB): half the amplitude.
        let mut audio = sine(290, 4);
        audio.write_address(0x30);
        audio.write_data(0x02);
        let peak = levels(&mut audio, 2000).iter().map(|level| level.abs()).max().unwrap();
        assert!((2030..=2050).contains(&peak), "peak {peak}");
    }

    #[test]
    fn key_off_releases_to_silence_and_the_builtin_instruments_sound() {
        let mut audio = Vrc7Audio::new();
        for (register, value) in [(0x31, 0x30), (0x11, 0x20), (0x21, 0x19)] {
            audio.write_address(register);
            audio.write_data(value);
        }
        let out = levels(&mut audio, 5000);
        assert!(out.iter().any(|&level| level.abs() > 1000), "Wurly on channel 1 sounds");
        audio.write_address(0x21);
        audio.write_data(0x09);
        let out = levels(&mut audio, 60_000);
        assert_eq!(out[out.len() - 1000..], [0; 1000], "released to silence");
    }

    #[test]
    fn tremolo_and_vibrato_follow_the_lfo_rates_and_depths() {
        // Tremolo (carrier flag A): the peak of each 64-sample block follows a triangle of 13
        // attenuation steps (4.875 dB: a factor of 0.57) with a period of 13,440 samples (3.7 Hz).
        let mut audio = sine(290, 4);
        audio.write_address(0x01);
        audio.write_data(0xA1);
        let peaks: Vec<i32> = levels(&mut audio, 4 * 13_440)
            .chunks(64)
            .map(|block| block.iter().map(|level| level.abs()).max().unwrap())
            .collect();
        let (high, low) = (*peaks.iter().max().unwrap(), *peaks.iter().min().unwrap());
        let ratio = f64::from(low) / f64::from(high);
        assert!((ratio - 10f64.powf(-4.875 / 20.0)).abs() < 0.02, "{low} / {high}");
        // The quietest blocks come in runs (the triangle's two steps at 0); their starts repeat.
        let lows: Vec<usize> = (1..peaks.len()).filter(|&i| peaks[i] == low && peaks[i - 1] != low).collect();
        let gaps: Vec<usize> = lows.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(!gaps.is_empty() && gaps.iter().all(|&gap| gap == 13_440 / 64), "{gaps:?}");
        // Vibrato (carrier flag V) at F = 448 (top bits 7): F moves by up to 3.5 of 448 (0.78%, 13
        // cents), so the period between rising crossings spans about that much, over 8,192 samples.
        let mut audio = sine(448, 4);
        audio.write_address(0x01);
        audio.write_data(0x61);
        let out = levels(&mut audio, 4 * 8192);
        let rising: Vec<usize> = (1..out.len()).filter(|&i| out[i - 1] < 0 && out[i] >= 0).collect();
        let periods: Vec<f64> = rising.windows(9).map(|w| (w[8] - w[0]) as f64 / 8.0).collect();
        let (long, short) = periods.iter().fold((0.0f64, f64::MAX), |(a, b), &p| (a.max(p), b.min(p)));
        let swing = long / short - 1.0;
        assert!((0.010..0.018).contains(&swing), "periods {short:.3} to {long:.3}");
    }

    #[test]
    fn any_restored_bytes_run_without_panicking() {
        // A snapshot is input: counters, phases, stages and levels out of their ranges must run.
        let mut seed = 0x0B5E_u64;
        for _ in 0..200 {
            let mut audio = Vrc7Audio::new();
            for byte in bytemuck::bytes_of_mut(&mut audio) {
                *byte = crate::nes::splitmix64_next(&mut seed) as u8;
            }
            audio.run(36 * 50);
            audio.write_address(0x20);
            audio.write_data(0xFF);
            audio.run(36 * 50);
            assert!(audio.level().abs() <= 6 * 4096);
        }
    }

    #[test]
    fn any_split_of_the_cycles_gives_the_same_samples() {
        let mut whole = sine(0x1C0, 3);
        let mut split = whole;
        whole.run(100_000);
        let mut seed = 7u64;
        let mut ran = 0;
        while ran < 100_000 {
            let chunk = (crate::nes::splitmix64_next(&mut seed) % 97).min(100_000 - ran);
            split.run(chunk);
            ran += chunk;
        }
        assert_eq!(whole, split);
    }
}
