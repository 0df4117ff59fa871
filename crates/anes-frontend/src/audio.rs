//! Audio at any output rate: the core's mono `f32` samples (decimated to a whole-Hz rate) resampled
//! to interleaved stereo `i16` at a fractional rate that may change from one frame to the next, as
//! a frontend adjusts it to keep the audio buffer level (audio/video sync).
//!
//! The resampler is a windowed-sinc interpolator: each output sample is 16 input samples weighted by
//! one of 256 phases of a Blackman-windowed sinc kernel whose cutoff sits below the lower of the two
//! Nyquist frequencies. The phase table is built once when the nominal ratio is chosen; nudging the
//! rate by up to [`MAX_RATE_ADJUSTMENT`] only changes the step, so it allocates nothing. It is made
//! for ratios near 1 (the core already decimates to about the output rate, see
//! [`crate::Console::set_audio_rate`]); at larger ratios the cutoff follows the lower rate and the
//! 16 taps make the transition band proportionally wider.

use thiserror::Error;

/// Kernel taps: input samples weighed for each output sample.
const TAPS: usize = 16;
/// Phases of the kernel between two input samples.
const PHASES: usize = 256;
/// Cutoff as a fraction of the lower Nyquist frequency; the rest is the transition band.
const CUTOFF: f64 = 0.90;
/// Largest relative change of the output rate served without rebuilding the kernel (the cutoff
/// leaves this margin below Nyquist).
pub const MAX_RATE_ADJUSTMENT: f64 = 0.05;
/// Lowest and highest output rates accepted, in Hz.
pub const OUTPUT_RATE_RANGE: (f64, f64) = (8_000.0, 384_000.0);

/// An output rate outside what the resampler serves.
#[derive(Debug, Clone, Copy, PartialEq, Error)]
#[error("audio rate {rate} Hz is not a number between 8000 and 384000")]
pub struct AudioRateError {
    /// The rate asked for.
    pub rate: f64,
}

/// Checks an output rate.
pub(crate) fn check_rate(rate: f64) -> Result<f64, AudioRateError> {
    if rate.is_finite() && (OUTPUT_RATE_RANGE.0..=OUTPUT_RATE_RANGE.1).contains(&rate) {
        Ok(rate)
    } else {
        Err(AudioRateError { rate })
    }
}

/// Mono `f32` at a whole-Hz input rate in, interleaved stereo `i16` at a fractional output rate out.
///
/// ```
/// use anes_frontend::StereoResampler;
/// // 48 kHz in, 44.1 kHz out: a second of a 1 kHz tone becomes 44,100 stereo frames.
/// let mut resampler = StereoResampler::new(48_000, 44_100.0, 48_000)?;
/// let tone: Vec<f32> = (0..48_000).map(|i| (i as f32 * 1000.0 / 48_000.0 * std::f32::consts::TAU).sin() * 0.5).collect();
/// let mut out = Vec::with_capacity(2 * 45_000);
/// resampler.process(&tone, &mut out);
/// let frames = out.len() / 2;
/// assert!((44_090..=44_100).contains(&frames), "{frames}"); // less the kernel's delay
/// assert!(out.chunks_exact(2).all(|lr| lr[0] == lr[1]));
/// # Ok::<(), anes_frontend::AudioRateError>(())
/// ```
#[derive(Debug, Clone)]
pub struct StereoResampler {
    /// Hz; fractional for a PAL or Dendy console, whose core samples come at a fraction of the rate
    /// asked (see [`crate::Console::set_audio_rate`]).
    input_rate: f64,
    output_rate: f64,
    /// The output rate the kernel was designed for.
    nominal_rate: f64,
    /// Input samples per output sample.
    step: f64,
    /// `PHASES + 1` rows of `TAPS` weights; row `p` is for an output between input samples at
    /// fraction `p / PHASES`.
    kernel: Box<[[f32; TAPS]]>,
    /// Input samples not yet consumed; `history[0]` is input time `0.0` for `position`.
    history: Vec<f32>,
    /// Input time of the next output sample, relative to `history[0]`.
    position: f64,
}

impl StereoResampler {
    /// A resampler from `input_rate` Hz to `output_rate` Hz taking at most `max_input_per_call`
    /// samples a call to [`StereoResampler::process`] (more are taken in several passes).
    pub fn new(input_rate: u32, output_rate: f64, max_input_per_call: usize) -> Result<Self, AudioRateError> {
        StereoResampler::with_input_rate_hz(f64::from(input_rate.max(1)), output_rate, max_input_per_call)
    }

    /// [`StereoResampler::new`] from a fractional input rate (at least 1 Hz).
    pub fn with_input_rate_hz(
        input_rate: f64,
        output_rate: f64,
        max_input_per_call: usize,
    ) -> Result<Self, AudioRateError> {
        let output_rate = check_rate(output_rate)?;
        let input_rate = if input_rate.is_finite() { input_rate.max(1.0) } else { 1.0 };
        let mut resampler = StereoResampler {
            input_rate,
            output_rate,
            nominal_rate: output_rate,
            step: input_rate / output_rate,
            kernel: Vec::new().into_boxed_slice(),
            history: Vec::with_capacity(max_input_per_call + TAPS),
            position: 0.0,
        };
        resampler.build_kernel();
        resampler.history.resize(TAPS / 2 - 1, 0.0);
        resampler.position = (TAPS / 2 - 1) as f64;
        Ok(resampler)
    }

    /// The input rate in Hz.
    pub fn input_rate(&self) -> f64 {
        self.input_rate
    }

    /// The output rate in Hz.
    pub fn output_rate(&self) -> f64 {
        self.output_rate
    }

    /// Changes the output rate from the next sample on. Within [`MAX_RATE_ADJUSTMENT`] of the rate
    /// the kernel was built for this allocates nothing; beyond it the kernel is rebuilt.
    pub fn set_output_rate(&mut self, rate: f64) -> Result<(), AudioRateError> {
        let rate = check_rate(rate)?;
        self.output_rate = rate;
        self.step = self.input_rate / rate;
        if (rate / self.nominal_rate - 1.0).abs() > MAX_RATE_ADJUSTMENT {
            self.nominal_rate = rate;
            self.build_kernel();
        }
        Ok(())
    }

    /// Blackman-windowed sinc at a cutoff of [`CUTOFF`] times the lower Nyquist frequency, one
    /// normalized row (DC gain 1) per phase.
    fn build_kernel(&mut self) {
        let ratio = (self.nominal_rate / self.input_rate).min(1.0);
        let cutoff = CUTOFF * ratio / (1.0 + MAX_RATE_ADJUSTMENT);
        let half = TAPS as f64 / 2.0;
        let mut kernel = vec![[0f32; TAPS]; PHASES + 1];
        for (phase, row) in kernel.iter_mut().enumerate() {
            let fraction = phase as f64 / PHASES as f64;
            let mut weights = [0f64; TAPS];
            for (tap, weight) in weights.iter_mut().enumerate() {
                // Tap `tap` is input sample `floor(t) - (TAPS/2 - 1) + tap`; its distance from t:
                let x = fraction + (TAPS / 2 - 1) as f64 - tap as f64;
                let sinc = if x == 0.0 {
                    1.0
                } else {
                    let arg = core::f64::consts::PI * cutoff * x;
                    arg.sin() / arg
                };
                // Blackman over |x| < half: 0.42 + 0.5 cos(pi x / half) + 0.08 cos(2 pi x / half).
                let theta = core::f64::consts::PI * x / half;
                let window =
                    if x.abs() >= half { 0.0 } else { 0.42 + 0.5 * theta.cos() + 0.08 * (2.0 * theta).cos() };
                *weight = sinc * window;
            }
            let sum: f64 = weights.iter().sum();
            for (out, weight) in row.iter_mut().zip(weights) {
                *out = (weight / sum) as f32;
            }
        }
        self.kernel = kernel.into_boxed_slice();
    }

    /// Resamples `input` and appends interleaved stereo frames (left = right) to `out`, as many as
    /// the input reaches. Allocation-free while `input` fits the size given to
    /// [`StereoResampler::new`] and `out` has the capacity (about `2 * input.len() * output_rate /
    /// input_rate + 4`).
    pub fn process(&mut self, input: &[f32], out: &mut Vec<i16>) {
        let chunk = (self.history.capacity() - TAPS).max(1);
        for part in input.chunks(chunk) {
            self.history.extend_from_slice(part);
            self.drain_into(out);
        }
    }

    fn drain_into(&mut self, out: &mut Vec<i16>) {
        let before = TAPS / 2 - 1;
        loop {
            let base = self.position.floor();
            let first = base as usize - before;
            if first + TAPS > self.history.len() {
                break;
            }
            let phase = ((self.position - base) * PHASES as f64).round() as usize;
            let row = &self.kernel[phase];
            let window = &self.history[first..first + TAPS];
            let mut sum = 0f32;
            for (weight, sample) in row.iter().zip(window) {
                sum += weight * sample;
            }
            let value = (sum * 32767.0).clamp(-32768.0, 32767.0) as i16;
            out.push(value);
            out.push(value);
            self.position += self.step;
        }
        // Keep what the next outputs still need: from `floor(position) - before` on.
        let keep_from = (self.position.floor() as usize - before).min(self.history.len());
        self.history.drain(..keep_from);
        self.position -= keep_from as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(rate: u32, hz: f64, seconds: f64) -> Vec<f32> {
        let n = (f64::from(rate) * seconds) as usize;
        (0..n)
            .map(|i| ((i as f64 * hz / f64::from(rate)) * core::f64::consts::TAU).sin() as f32 * 0.5)
            .collect()
    }

    /// Amplitude of `hz` in a mono signal (a single-bin DFT).
    fn amplitude(samples: &[i16], rate: f64, hz: f64) -> f64 {
        let (mut re, mut im) = (0.0, 0.0);
        for (i, &s) in samples.iter().enumerate() {
            let angle = i as f64 * hz / rate * core::f64::consts::TAU;
            re += f64::from(s) * angle.cos();
            im += f64::from(s) * angle.sin();
        }
        2.0 * (re * re + im * im).sqrt() / samples.len() as f64 / 32767.0
    }

    #[test]
    fn sample_count_follows_the_fractional_rate() {
        let rate = 48_000.0 * 60.0988 / 60.0;
        let mut resampler = StereoResampler::new(48_000, rate, 1024).unwrap();
        let input = tone(48_000, 440.0, 10.0);
        let mut out = Vec::new();
        for chunk in input.chunks(800) {
            resampler.process(chunk, &mut out);
        }
        let expected = 10.0 * rate;
        let frames = (out.len() / 2) as f64;
        assert!((expected - frames).abs() < 10.0, "{frames} frames for {expected}");
    }

    #[test]
    fn tones_pass_and_aliases_are_suppressed() {
        // 96 kHz to 48 kHz: a 1 kHz tone keeps its level; a 40 kHz tone (above the output's
        // Nyquist frequency, so it would alias to 8 kHz) is removed.
        let mut resampler = StereoResampler::new(96_000, 48_000.0, 96_000).unwrap();
        let mut out = Vec::new();
        resampler.process(&tone(96_000, 1_000.0, 1.0), &mut out);
        let mono: Vec<i16> = out.chunks_exact(2).map(|lr| lr[0]).collect();
        let level = amplitude(&mono[100..], 48_000.0, 1_000.0);
        assert!((level - 0.5).abs() < 0.01, "1 kHz at {level}");
        let mut out = Vec::new();
        resampler.process(&tone(96_000, 40_000.0, 1.0), &mut out);
        let mono: Vec<i16> = out.chunks_exact(2).map(|lr| lr[0]).collect();
        let alias = amplitude(&mono[100..], 48_000.0, 8_000.0);
        assert!(alias < 0.001, "alias at {alias}");
    }

    #[test]
    fn small_adjustments_keep_the_kernel_and_allocate_nothing() {
        let mut resampler = StereoResampler::new(48_000, 48_000.0, 1024).unwrap();
        let kernel = resampler.kernel.as_ptr();
        resampler.set_output_rate(48_000.0 * 1.04).unwrap();
        resampler.set_output_rate(48_000.0 * 0.96).unwrap();
        assert_eq!(resampler.kernel.as_ptr(), kernel);
        resampler.set_output_rate(32_000.0).unwrap();
        assert_eq!(resampler.output_rate(), 32_000.0);
        for bad in [f64::NAN, f64::INFINITY, 0.0, 7_999.0, 400_000.0] {
            assert!(resampler.set_output_rate(bad).is_err(), "{bad}");
        }
    }
}
