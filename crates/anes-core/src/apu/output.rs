//! Audio output: the mixer's per-CPU-cycle output decimated to a caller-chosen sample rate and kept in
//! a fixed ring until drained. Not emulated state: nothing here feeds back into the APU.

use super::mixer::Mixer;

/// Ring capacity in seconds of audio: a caller draining once per frame (1/60 s) has ample slack.
const RING_SECONDS_DIVISOR: usize = 4;

/// A first-order filter stage (one pole), run at the output rate.
#[derive(Debug, Clone, Copy)]
struct OnePole {
    alpha: f32,
    prev_in: f32,
    prev_out: f32,
}

impl OnePole {
    fn high_pass(cutoff_hz: f32, rate_hz: f32) -> OnePole {
        let rc = 1.0 / (2.0 * core::f32::consts::PI * cutoff_hz);
        OnePole { alpha: rc / (rc + 1.0 / rate_hz), prev_in: 0.0, prev_out: 0.0 }
    }

    fn run_high_pass(&mut self, x: f32) -> f32 {
        let y = self.alpha * (self.prev_out + x - self.prev_in);
        self.prev_in = x;
        self.prev_out = y;
        y
    }
}

/// Box-filter decimator, DC-removing high-pass filters (the NES's 90 Hz and 440 Hz stages) and a ring
/// of f32 samples.
///
/// Made only by the APU, for a region's CPU clock: outside the crate no clock can be given (one
/// with a zero denominator, or under 1 Hz, would panic).
///
/// ```compile_fail
/// let _ = anes_core::apu::output::AudioOutput::new(48_000, (1, 0));
/// ```
#[derive(Debug, Clone)]
pub struct AudioOutput {
    mixer: Mixer,
    /// Output samples per second.
    sample_rate: u32,
    /// The console's CPU clock as a ratio ([`crate::Region::cpu_clock`]): the phase below counts
    /// against it, so every region emits `sample_rate` samples per emulated second.
    cpu_clock: (u64, u64),
    /// Phase accumulator: advances by `sample_rate * 132` per CPU cycle; one sample per 236_250_000.
    phase: u64,
    /// Sum and count of the mixer outputs since the last sample.
    sum: f32,
    count: u32,
    /// The board's sound chip: mixer output per unit of its DAC level (0 without one).
    expansion_gain: f32,
    /// The chip's contribution to the mix now: its level times `expansion_gain`.
    expansion: f32,
    high_pass_90: OnePole,
    high_pass_440: OnePole,
    ring: Vec<f32>,
    /// Index of the oldest sample.
    read: usize,
    /// Samples in the ring.
    len: usize,
    /// Samples dropped because the ring was full (the oldest go first).
    dropped: u64,
}

impl AudioOutput {
    /// Output at `sample_rate` Hz (clamped to 1 Hz .. the CPU clock) from a CPU clocked at
    /// `cpu_clock` (numerator, denominator) Hz; allocates the ring. Crate-private: it takes the
    /// clock of a [`crate::Region`] only (a zero denominator or a clock under 1 Hz would panic).
    pub(crate) fn new(sample_rate: u32, cpu_clock: (u64, u64)) -> AudioOutput {
        let sample_rate = sample_rate.clamp(1, (cpu_clock.0 / cpu_clock.1) as u32);
        let rate = sample_rate as f32;
        let capacity = (sample_rate as usize / RING_SECONDS_DIVISOR).max(64);
        AudioOutput {
            mixer: Mixer::new(),
            sample_rate,
            cpu_clock,
            phase: 0,
            sum: 0.0,
            count: 0,
            expansion_gain: 0.0,
            expansion: 0.0,
            high_pass_90: OnePole::high_pass(90.0, rate),
            high_pass_440: OnePole::high_pass(440.0, rate),
            ring: vec![0.0; capacity],
            read: 0,
            len: 0,
            dropped: 0,
        }
    }

    /// The output rate in Hz.
    pub fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    /// Samples dropped so far because the ring was not drained in time.
    pub fn dropped_samples(&self) -> u64 {
        self.dropped
    }

    /// Mixes a board's sound chip at `gain` per unit of its level (0.0: none; see
    /// [`super::mixer::expansion_gain`]).
    pub fn set_expansion_gain(&mut self, gain: f32) {
        self.expansion_gain = gain;
        self.expansion = 0.0;
    }

    /// The board's sound chip's DAC level for the cycles pushed from now on.
    #[inline]
    pub fn set_expansion_level(&mut self, level: i32) {
        self.expansion = self.expansion_gain * level as f32;
    }

    /// One CPU cycle's channel levels (the board's sound chip's as last set).
    #[inline]
    pub fn push_cycle(&mut self, levels: [u8; 5]) {
        let [p1, p2, t, n, d] = levels;
        self.sum += self.mixer.mix(p1, p2, t, n, d) + self.expansion;
        self.count += 1;
        self.phase += u64::from(self.sample_rate) * self.cpu_clock.1;
        if self.phase >= self.cpu_clock.0 {
            self.phase -= self.cpu_clock.0;
            let average = self.sum / self.count as f32;
            self.sum = 0.0;
            self.count = 0;
            let filtered = self.high_pass_440.run_high_pass(self.high_pass_90.run_high_pass(average));
            self.push_sample(filtered);
        }
    }

    fn push_sample(&mut self, sample: f32) {
        let capacity = self.ring.len();
        if self.len == capacity {
            self.read = (self.read + 1) % capacity;
            self.len -= 1;
            self.dropped += 1;
        }
        let write = (self.read + self.len) % capacity;
        self.ring[write] = sample;
        self.len += 1;
    }

    /// Moves up to `out.len()` of the oldest samples into `out`; returns how many.
    pub fn drain(&mut self, out: &mut [f32]) -> usize {
        let n = out.len().min(self.len);
        let capacity = self.ring.len();
        for slot in out.iter_mut().take(n) {
            *slot = self.ring[self.read];
            self.read = (self.read + 1) % capacity;
        }
        self.len -= n;
        n
    }

    /// Samples waiting in the ring.
    pub fn available(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_second_of_cycles_gives_the_sample_rate() {
        let mut out = AudioOutput::new(44_100, crate::Region::Ntsc.cpu_clock());
        let mut total = 0;
        let mut buf = vec![0.0; 4096];
        // 1_789_772.7 CPU cycles per second: 236_250_000 / 132.
        for _ in 0..1_789_773 {
            out.push_cycle([0; 5]);
            if out.available() >= 4096 {
                total += out.drain(&mut buf);
            }
        }
        total += out.drain(&mut buf);
        assert_eq!(total, 44_100);
        assert_eq!(out.dropped_samples(), 0);
    }

    /// The clamp `Apu::set_output_sample_rate` documents: 1 Hz .. each region's CPU clock in whole Hz.
    #[test]
    fn the_rate_is_clamped_to_1_hz_and_the_cpu_clock() {
        use crate::Region;
        for (region, top) in [(Region::Ntsc, 1_789_772), (Region::Pal, 1_662_607), (Region::Dendy, 1_773_447)]
        {
            let rate = |asked| AudioOutput::new(asked, region.cpu_clock()).sample_rate();
            assert_eq!([rate(0), rate(1), rate(top), rate(top + 1), rate(u32::MAX)], [1, 1, top, top, top]);
        }
    }

    #[test]
    fn full_ring_drops_oldest() {
        let mut out = AudioOutput::new(64 * RING_SECONDS_DIVISOR as u32, crate::Region::Ntsc.cpu_clock());
        for i in 0..70 {
            out.push_sample(i as f32);
        }
        let mut buf = [0.0; 64];
        assert_eq!(out.drain(&mut buf), 64);
        assert_eq!(buf[0], 6.0);
        assert_eq!(out.dropped_samples(), 6);
    }
}
