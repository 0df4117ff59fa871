//! Palette indices to RGB: a 64-colour NTSC palette computed at compile time from a model of the 2C02's
//! composite signal (nesdev "NTSC video"), and the emphasis bits.
//!
//! The model: colour `$LH` (level L 0-3, hue H 0-15) is a square wave sampled 12 times per colour
//! subcarrier cycle, alternating between a low and a high voltage of level L, high for the six samples
//! that hue H selects (hue 0 is all high, hue 13 all low, hues 14-15 black). An ideal decoder averages
//! the samples into luma and correlates them with the subcarrier into the U/V colour difference signals,
//! with the colour burst (the phase of hue 8) as the 180-degree reference; standard YUV-to-RGB gives the
//! colour. Values are the signal's own (gamma-encoded for a CRT), which is what RGB displays expect.

/// Signal voltages of the four levels when the wave is low, relative to sync (nesdev "NTSC video").
const LEVEL_LOW: [f64; 4] = [0.350, 0.518, 0.962, 1.550];
/// Signal voltages of the four levels when the wave is high.
const LEVEL_HIGH: [f64; 4] = [1.094, 1.506, 1.962, 1.962];
/// Black (the blanking level) and white, which map to 0 and 1.
const BLACK: f64 = 0.518;
const WHITE: f64 = 1.962;

/// cos 15 degrees (= sin 75).
const C15: f64 = 0.965_925_826_289_068_3;
/// cos 45 degrees (= sin 45).
const C45: f64 = core::f64::consts::FRAC_1_SQRT_2;
/// cos 75 degrees (= sin 15).
const C75: f64 = 0.258_819_045_102_520_7;
/// cos and sin of 15 + 30k degrees: the subcarrier phase of sample k (12 samples per cycle), offset
/// so that hue 8 decodes at 180 degrees.
const COS: [f64; 12] = [C15, C45, C75, -C75, -C45, -C15, -C15, -C45, -C75, C75, C45, C15];
const SIN: [f64; 12] = [C75, C45, C15, C15, C45, C75, -C75, -C45, -C15, -C15, -C45, -C75];

/// Attenuation of a channel whose colour is not emphasized while another is: the 2C02 lowers the signal
/// to about 74.6% during the other phases (nesdev "NTSC video"); 191/256 = 0.746.
const EMPHASIS_ATTENUATION: u16 = 191;

/// A channel value in 0.0-1.0 (clamped) to 0-255, rounded.
const fn to_byte(value: f64) -> u8 {
    let clamped = if value < 0.0 {
        0.0
    } else if value > 1.0 {
        1.0
    } else {
        value
    };
    (clamped * 255.0 + 0.5) as u8
}

/// The RGB colour of palette entry `index` (0-63) without emphasis.
const fn ntsc_color(index: usize) -> [u8; 3] {
    let hue = index & 15;
    let level = (index >> 4) & 3;
    if hue >= 14 {
        return [0, 0, 0];
    }
    let (mut y, mut u, mut v) = (0.0, 0.0, 0.0);
    let mut sample = 0;
    while sample < 12 {
        let high = match hue {
            0 => true,
            13 => false,
            _ => (hue + sample) % 12 < 6,
        };
        let volts = if high { LEVEL_HIGH[level] } else { LEVEL_LOW[level] };
        let signal = (volts - BLACK) / (WHITE - BLACK);
        // Sample k sits at subcarrier phase 15 - 30k degrees.
        let phase = (12 - sample) % 12;
        y += signal;
        u += signal * COS[phase];
        v += signal * SIN[phase];
        sample += 1;
    }
    let y = y / 12.0;
    let u = u * 2.0 / 12.0;
    let v = v * 2.0 / 12.0;
    [to_byte(y + 1.139_83 * v), to_byte(y - 0.394_65 * u - 0.580_60 * v), to_byte(y + 2.032_11 * u)]
}

const fn ntsc_palette() -> [[u8; 3]; 64] {
    let mut palette = [[0; 3]; 64];
    let mut index = 0;
    while index < 64 {
        palette[index] = ntsc_color(index);
        index += 1;
    }
    palette
}

/// The 64 NTSC colours, computed at compile time.
pub const NTSC_PALETTE: [[u8; 3]; 64] = ntsc_palette();

/// The RGB colour of a frame-buffer pixel (see [`super::Ppu::frame_buffer`]): palette index in bits
/// 0-5, PPUMASK emphasis bits (red, green, blue) in bits 6-8. Each emphasis bit set attenuates the
/// channels it does not emphasize; with all three set the whole picture darkens.
pub fn to_rgb(pixel: u16) -> [u8; 3] {
    emphasize(NTSC_PALETTE[usize::from(pixel & 0x3F)], (pixel >> 6) as u8)
}

/// `rgb` as the 2C02 shows it with the emphasis bits `emphasis` (bit 0 red, 1 green, 2 blue; higher
/// bits ignored): each bit set attenuates the channels it does not emphasize. Frontends apply it to
/// 64-colour palettes of their own to get all 512 entries.
pub fn emphasize(mut rgb: [u8; 3], emphasis: u8) -> [u8; 3] {
    let emphasis = emphasis & 7;
    if emphasis != 0 {
        for (channel, value) in rgb.iter_mut().enumerate() {
            if emphasis & !(1 << channel) != 0 {
                *value = (u16::from(*value) * EMPHASIS_ATTENUATION / 256) as u8;
            }
        }
    }
    rgb
}

/// Converts a whole frame (`frame`, as [`super::Ppu::frame_buffer`] returns it) to packed RGB24 in
/// `out`, 3 bytes per pixel. Converts as many pixels as both slices hold.
pub fn frame_to_rgb(frame: &[u16], out: &mut [u8]) {
    for (pixel, rgb) in frame.iter().zip(out.chunks_exact_mut(3)) {
        rgb.copy_from_slice(&to_rgb(*pixel));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greys_blacks_and_whites() {
        // $0F/$1F/$2F/$3F (and $xE) are black; $0D is below black; $20 and $30 are white.
        for index in [0x0E, 0x0F, 0x1E, 0x1F, 0x2F, 0x3F, 0x0D] {
            assert_eq!(to_rgb(index), [0, 0, 0], "{index:#04x}");
        }
        assert_eq!(to_rgb(0x20), [255, 255, 255]);
        assert_eq!(to_rgb(0x30), [255, 255, 255]);
        // Hue 0 is grey: all three channels equal, brighter with each level.
        let greys: Vec<[u8; 3]> = [0x00, 0x10].iter().map(|&i| to_rgb(i)).collect();
        for grey in &greys {
            assert!(grey[0] == grey[1] && grey[1] == grey[2], "{grey:?}");
        }
        assert!(greys[0][0] < greys[1][0]);
    }

    #[test]
    fn hues_point_where_nesdev_names_them() {
        // nesdev "PPU palettes": $x1/$x2 blue, $x6 red, $x9/$xA green.
        let [r, g, b] = to_rgb(0x12);
        assert!(b > r && b > g, "$12 {r} {g} {b}");
        let [r, g, b] = to_rgb(0x16);
        assert!(r > g && r > b, "$16 {r} {g} {b}");
        let [r, g, b] = to_rgb(0x1A);
        assert!(g > r && g > b, "$1A {r} {g} {b}");
    }

    #[test]
    fn emphasis_attenuates_the_other_channels() {
        let white = 0x30;
        // Red emphasis (PPUMASK bit 5 -> pixel bit 6): green and blue drop, red stays.
        let [r, g, b] = to_rgb(white | 1 << 6);
        assert_eq!(r, 255);
        assert!(g < 255 && b < 255);
        // All three: everything drops.
        let [r, g, b] = to_rgb(white | 7 << 6);
        assert!(r < 255 && g < 255 && b < 255);
    }
}
