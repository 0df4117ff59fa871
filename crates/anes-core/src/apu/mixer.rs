//! The APU's nonlinear mixer (nesdev "APU Mixer", lookup-table form). Floats live only here and in
//! [`super::output`]: they describe the analog output, never emulated state. Expansion sound chips
//! are mixed linearly after the APU's mix, each at its gain ([`expansion_gain`]).

use crate::cart::expansion_audio::ExpansionChip;

/// The APU's output for one pulse channel at volume 15 (pulse table entry 15).
fn apu_pulse_full() -> f32 {
    95.52 / (8128.0 / 15.0 + 100.0)
}

/// The mixer output per unit of `chip`'s DAC level, relative to the APU's mix (nesdev "VRC6 audio",
/// "Mixing": a VRC6 pulse at volume 15 is about as loud as an APU pulse at 15, its DAC is linear, and
/// its polarity is the opposite of the APU's).
///
/// MMC5 (nesdev "MMC5 audio": every channel inverted against the APU; a pulse as loud as an APU
/// pulse, the PCM as the DMC for the same input, twice as loud with its eighth bit): mixed linearly,
/// a pulse step at an APU pulse at 15 over 15 and a PCM step at the DMC at 127 over 127. Those two
/// are in the ratio 2.245 (`apu_pulse_full() / 15` over `apu_dmc_full() / 127`), which the chip's
/// level carries as 9 : 4 quarter steps (0.24% off), so one gain serves both. The pulses are
/// summed linearly, not through the APU's pulse table: a documented simplification (two MMC5
/// pulses at 15 come out 1.3 dB louder than the table would make them).
pub fn expansion_gain(chip: ExpansionChip) -> f32 {
    match chip {
        ExpansionChip::Vrc6 => -apu_pulse_full() / 15.0,
        // A channel at full scale (+/-4096) swings as far as an APU pulse at volume 15 does (0 to
        // full): an estimate, not a measurement (see `m085_vrc7_audio.rs`).
        ExpansionChip::Vrc7 => apu_pulse_full() / 8192.0,
        ExpansionChip::Mmc5 => -apu_dmc_full() / 127.0 / 4.0,
        // FIXME: the wiki's measured 5B level (nesdev "Sunsoft 5B audio", "Output") could not be
        // read when this was written; until it is, one 5B channel at volume 15 (its DAC's top, 8191)
        // is set as loud as an APU pulse at 15, same polarity.
        ExpansionChip::Sunsoft5B => apu_pulse_full() / 8191.0,
        // nesdev "INES Mapper 019": a channel's full swing (a wave from sample 0 to 15 at volume
        // 15: -120 to 105, 225 steps) is the submapper's decibels louder than an APU pulse at 15.
        ExpansionChip::Namco163(mix) => {
            apu_pulse_full() * 10f32.powf(mix.decibels_x100() as f32 / 2000.0) / 225.0
        }
    }
}

/// The APU's output for the DMC alone at 127 (tnd table entry 127).
fn apu_dmc_full() -> f32 {
    163.67 / (24329.0 / 127.0 + 100.0)
}

/// Mixer lookup tables, built once when audio output is enabled.
#[derive(Debug, Clone)]
pub struct Mixer {
    /// Output for the sum of the two pulse levels (0-30).
    pulse_table: [f32; 31],
    /// Output for 3 * triangle + 2 * noise + DMC (0-202).
    tnd_table: [f32; 203],
}

impl Mixer {
    /// Builds the tables from the wiki's formulas: pulse = 95.52 / (8128 / n + 100) and
    /// tnd = 163.67 / (24329 / n + 100), both 0 for n = 0.
    pub fn new() -> Mixer {
        let mut pulse_table = [0.0; 31];
        for (n, entry) in pulse_table.iter_mut().enumerate().skip(1) {
            *entry = 95.52 / (8128.0 / n as f32 + 100.0);
        }
        let mut tnd_table = [0.0; 203];
        for (n, entry) in tnd_table.iter_mut().enumerate().skip(1) {
            *entry = 163.67 / (24329.0 / n as f32 + 100.0);
        }
        Mixer { pulse_table, tnd_table }
    }

    /// The mixed output (0.0 to about 1.0) for the five channel levels.
    #[inline]
    pub fn mix(&self, pulse1: u8, pulse2: u8, triangle: u8, noise: u8, dmc: u8) -> f32 {
        let pulse = usize::from(pulse1) + usize::from(pulse2);
        let tnd = 3 * usize::from(triangle) + 2 * usize::from(noise) + usize::from(dmc);
        // Levels come from state that may have been restored from arbitrary bytes: never index out.
        self.pulse_table.get(pulse).copied().unwrap_or(0.0) + self.tnd_table.get(tnd).copied().unwrap_or(0.0)
    }
}

impl Default for Mixer {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silence_is_zero_and_full_scale_is_near_one() {
        let mixer = Mixer::new();
        assert_eq!(mixer.mix(0, 0, 0, 0, 0), 0.0);
        let full = mixer.mix(15, 15, 15, 15, 127);
        assert!((full - 1.0).abs() < 0.01, "{full}");
    }

    #[test]
    fn a_vrc6_pulse_at_15_is_an_apu_pulse_at_15_inverted() {
        // nesdev "VRC6 audio": equivalent at maximum volume, opposite polarity, linear DAC.
        let apu = Mixer::new().mix(15, 0, 0, 0, 0);
        let vrc6 = expansion_gain(ExpansionChip::Vrc6) * 15.0;
        assert!((vrc6 + apu).abs() < 1e-6, "{vrc6} against {apu}");
    }

    #[test]
    fn an_mmc5_pulse_step_is_an_apu_pulse_step_and_a_pcm_step_a_dmc_step_inverted() {
        let unit = expansion_gain(ExpansionChip::Mmc5);
        let pulse = Mixer::new().mix(15, 0, 0, 0, 0) / 15.0;
        assert!(((9.0 * unit + pulse) / pulse).abs() < 3e-3, "{} against {pulse}", 9.0 * unit);
        let dmc = Mixer::new().mix(0, 0, 0, 0, 127) / 127.0;
        assert!(((4.0 * unit + dmc) / dmc).abs() < 1e-6, "{} against {dmc}", 4.0 * unit);
    }

    #[test]
    fn a_namco_163_channel_swing_is_the_submappers_decibels_above_an_apu_pulse() {
        // nesdev "INES Mapper 019": submapper 3 is 11-13 dB louder, 4 16-17 dB, 5 18-19.5 dB.
        use crate::cart::Namco163Mix;
        let apu = Mixer::new().mix(15, 0, 0, 0, 0);
        for (mix, low, high) in [
            (Namco163Mix::Db12, 11.0, 13.0),
            (Namco163Mix::Db16_5, 16.0, 17.0),
            (Namco163Mix::Db18_75, 18.0, 19.5),
        ] {
            let swing = expansion_gain(ExpansionChip::Namco163(mix)) * 225.0;
            let decibels = 20.0 * (swing / apu).log10();
            assert!((low..=high).contains(&decibels), "{mix:?}: {decibels} dB");
        }
    }

    #[test]
    fn pulse_table_matches_formula() {
        let mixer = Mixer::new();
        assert!((mixer.mix(15, 0, 0, 0, 0) - 95.52 / (8128.0 / 15.0 + 100.0)).abs() < 1e-6);
    }
}
