//! The Namco 163's wavetable sound (nesdev "Namco 163 audio").
//!
//! The chip keeps everything in its 128 bytes of internal RAM: channel n (0-7) has eight registers
//! at $40 + 8n: frequency bits 0-7, phase bits 0-7, frequency bits 8-15, phase bits 8-15, `LLLL LLFF`
//! (frequency bits 16-17, wave length 256 - `LLLLLL00` samples), phase bits 16-23, the wave's first
//! sample address, and the volume (bits 0-3; in channel 7's, bits 4-6 are the number of enabled
//! channels less one). Samples are 4 bits, two a byte, the low nibble first.
//!
//! One channel is updated every 15 CPU cycles: channel 7 first, then 6, down to 8 - N, and around
//! again, so each of N channels advances once every 15 x N cycles. An update adds the frequency to
//! the 24-bit phase modulo the wave's length (in 1/65536 samples), writes the phase back to RAM,
//! and puts `(sample - 8) x volume` on the DAC, which holds it until the next update: the output is
//! the channels time-multiplexed, as on hardware. A channel plays at
//! `CPU clock x frequency / (15 x 65536 x N x length)` Hz.
//!
//! Lazy like the VRC6's sound: [`Namco163Audio::run`] advances over any number of cycles in closed
//! form (per channel, the number of its updates times its frequency, modulo its length), equal to
//! single cycles ([`Namco163Audio::step_cycle`], compared in the tests).

crate::layout::state_struct! {
    /// The sound's own state beside the internal RAM: where the update cadence stands, and the DAC.
    pub struct Namco163Audio {
        /// CPU cycles into the current 15-cycle update slot (0-14).
        pub divider: u8,
        /// The channel the current slot updates (7 down to 8 - N).
        pub channel: u8,
        /// The last updated channel's sample (0-15), on the DAC until the next update.
        pub sample: u8,
        /// That channel's volume (0-15): the DAC outputs `(sample - 8) x volume`.
        pub volume: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Namco163Audio>() == 4);

/// CPU cycles per channel update.
pub(super) const CYCLES_PER_UPDATE: u64 = 15;

/// The byte of channel 7's registers whose bits 4-6 hold the number of enabled channels less one.
const CHANNEL_COUNT_REGISTER: usize = 0x7F;

/// Enabled channels, 1-8, from the internal RAM.
#[inline]
fn channel_count(ram: &[u8; 128]) -> u8 {
    ((ram[CHANNEL_COUNT_REGISTER] >> 4) & 7) + 1
}

/// Channel `channel`'s register base in the internal RAM.
#[inline]
fn base(channel: u8) -> usize {
    0x40 + 8 * usize::from(channel & 7)
}

/// Channel `channel`'s 18-bit frequency.
#[inline]
fn frequency(ram: &[u8; 128], channel: u8) -> u64 {
    let b = base(channel);
    u64::from(ram[b]) | u64::from(ram[b + 2]) << 8 | u64::from(ram[b + 4] & 3) << 16
}

/// Channel `channel`'s wave length in 1/65536 samples: (256 - `LLLLLL00`) << 16.
#[inline]
fn length(ram: &[u8; 128], channel: u8) -> u64 {
    (256 - u64::from(ram[base(channel) + 4] & 0xFC)) << 16
}

#[inline]
fn phase(ram: &[u8; 128], channel: u8) -> u64 {
    let b = base(channel);
    u64::from(ram[b + 1]) | u64::from(ram[b + 3]) << 8 | u64::from(ram[b + 5]) << 16
}

#[inline]
fn set_phase(ram: &mut [u8; 128], channel: u8, phase: u64) {
    let b = base(channel);
    ram[b + 1] = phase as u8;
    ram[b + 3] = (phase >> 8) as u8;
    ram[b + 5] = (phase >> 16) as u8;
}

/// Channel `channel`'s sample at its current phase, and its volume.
#[inline]
fn output(ram: &[u8; 128], channel: u8) -> (u8, u8) {
    let b = base(channel);
    let address = ((phase(ram, channel) >> 16) as u8).wrapping_add(ram[b + 6]);
    let byte = ram[usize::from(address >> 1) & 0x7F];
    let sample = if address & 1 == 0 { byte & 0x0F } else { byte >> 4 };
    (sample, ram[b + 7] & 0x0F)
}

/// The channel after `channel` in the update order for `count` enabled channels. A channel above 7
/// (none is; a loaded snapshot may say so) wraps to 7 like one below the enabled ones.
#[inline]
fn next_channel(channel: u8, count: u8) -> u8 {
    if channel <= 8 - count || channel > 7 { 7 } else { channel - 1 }
}

impl Namco163Audio {
    /// The power-on state: the first slot updates channel 7.
    pub fn new() -> Self {
        Namco163Audio { divider: 0, channel: 7, sample: 8, volume: 0 }
    }

    /// The DAC's level: `(sample - 8) x volume`, -120 to 105.
    pub fn level(&self) -> i32 {
        (i32::from(self.sample) - 8) * i32::from(self.volume)
    }

    /// One update slot ends: channel `self.channel` advances and drives the DAC.
    fn update(&mut self, ram: &mut [u8; 128]) {
        let channel = self.channel;
        let advanced = (phase(ram, channel) + frequency(ram, channel)) % length(ram, channel);
        set_phase(ram, channel, advanced);
        (self.sample, self.volume) = output(ram, channel);
        self.channel = next_channel(channel, channel_count(ram));
    }

    /// One CPU cycle: the definition [`Namco163Audio::run`] must equal.
    #[cfg(test)]
    pub(super) fn step_cycle(&mut self, ram: &mut [u8; 128]) {
        self.divider += 1;
        if u64::from(self.divider) == CYCLES_PER_UPDATE {
            self.divider = 0;
            self.update(ram);
        }
    }

    /// Runs the sound `cycles` CPU cycles, in closed form.
    pub fn run(&mut self, cycles: u64, ram: &mut [u8; 128]) {
        let total = u64::from(self.divider) + cycles;
        self.divider = (total % CYCLES_PER_UPDATE) as u8;
        let mut slots = total / CYCLES_PER_UPDATE;
        if slots == 0 {
            return;
        }
        let count = channel_count(ram);
        // A channel below the enabled ones (the count was lowered under it) is updated once, then
        // the order is back in range; so is one above 7, which only a loaded snapshot holds.
        if self.channel < 8 - count || self.channel > 7 {
            self.update(ram);
            slots -= 1;
        }
        if slots == 0 {
            return;
        }
        let count64 = u64::from(count);
        // Position p in the order (0: channel 7); slot i updates position (p + i) mod N.
        let start = u64::from(7 - self.channel);
        let (rounds, rest) = (slots / count64, slots % count64);
        for position in 0..count64 {
            let ahead = (position + count64 - start) % count64;
            let updates = rounds + u64::from(ahead < rest);
            if updates == 0 {
                continue;
            }
            let channel = 7 - position as u8;
            let length = length(ram, channel);
            // (phase + u x f) mod L, with u reduced first: u < 2^64, f < 2^18, L <= 2^24.
            let step = (updates % length) * frequency(ram, channel) % length;
            set_phase(ram, channel, (phase(ram, channel) + step) % length);
        }
        let last = 7 - ((start + slots - 1) % count64) as u8;
        (self.sample, self.volume) = output(ram, last);
        self.channel = next_channel(last, count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RAM with a 16-sample square wave at sample 0 and `count` channels playing it at varied
    /// frequencies and lengths.
    fn ram(count: u8, seed: u64) -> [u8; 128] {
        let mut ram = [0u8; 128];
        for (i, byte) in ram[..8].iter_mut().enumerate() {
            *byte = if i < 4 { 0xFF } else { 0x00 };
        }
        let mut state = seed;
        for channel in 0..8u8 {
            let b = base(channel);
            for r in 0..8 {
                ram[b + r] = crate::nes::splitmix64_next(&mut state) as u8;
            }
            ram[b + 4] = (ram[b + 4] & 0xE3) | 0xE0 | (channel & 3) << 2;
            ram[b + 6] = (channel * 3) & 0x1F;
        }
        ram[CHANNEL_COUNT_REGISTER] = (ram[CHANNEL_COUNT_REGISTER] & 0x8F) | (count - 1) << 4;
        ram
    }

    #[test]
    fn closed_form_equals_single_cycles() {
        for count in 1..=8u8 {
            let mut stepped_ram = ram(count, u64::from(count) * 77);
            let mut stepped = Namco163Audio::new();
            let mut lazy_ram = stepped_ram;
            let mut lazy = stepped;
            for chunk in [1u64, 14, 15, 16, 119, 120, 121, 3, 1000, 7, 65_537] {
                for _ in 0..chunk {
                    stepped.step_cycle(&mut stepped_ram);
                }
                lazy.run(chunk, &mut lazy_ram);
                assert_eq!((lazy, lazy_ram), (stepped, stepped_ram), "{count} channels, chunk {chunk}");
            }
        }
    }

    #[test]
    fn a_lowered_count_below_the_current_channel_returns_to_seven() {
        let mut ram = ram(8, 5);
        let mut audio = Namco163Audio { channel: 2, ..Namco163Audio::new() };
        ram[CHANNEL_COUNT_REGISTER] &= 0x8F; // one channel
        let mut stepped = (audio, ram);
        for _ in 0..45 {
            stepped.0.step_cycle(&mut stepped.1);
        }
        audio.run(45, &mut ram);
        assert_eq!((audio, ram), stepped);
        assert_eq!(audio.channel, 7);
    }

    /// A channel byte above 7 (only a forged snapshot holds one) is updated once as channel
    /// `channel & 7`, then the order restarts at 7: the closed form and single cycles agree on it.
    #[test]
    fn a_channel_above_7_wraps_to_7() {
        for channel in 8..=255u8 {
            let mut ram = ram(3, u64::from(channel));
            let mut audio = Namco163Audio { channel, ..Namco163Audio::new() };
            let mut stepped = (audio, ram);
            for _ in 0..100 {
                stepped.0.step_cycle(&mut stepped.1);
            }
            audio.run(100, &mut ram);
            assert_eq!((audio, ram), stepped, "channel {channel}");
            assert!((5..=7).contains(&audio.channel), "channel {channel}: {}", audio.channel);
        }
    }

    #[test]
    fn the_phase_advances_by_the_frequency_modulo_the_length() {
        // One channel, length 16 samples, frequency $10000: one sample per update, so after 20
        // updates the phase is 4 samples; the output follows the square wave.
        let mut ram = [0u8; 128];
        ram[0] = 0xFF; // samples 0, 1: 15
        ram[0x7C] = 0x100u16.wrapping_sub(16) as u8 | 1; // length 16, frequency bit 16
        ram[0x7F] = 0x0F; // volume 15, one channel
        let mut audio = Namco163Audio::new();
        audio.run(15 * 20, &mut ram);
        assert_eq!(phase(&ram, 7), 4 << 16);
        assert_eq!(audio.level(), -8 * 15, "sample 4 is 0");
        audio.run(15 * 13, &mut ram);
        assert_eq!(phase(&ram, 7), 1 << 16, "33 samples modulo 16");
        assert_eq!(audio.level(), 7 * 15, "sample 1 is 15");
    }
}
