//! Timing and geometry of the NTSC NES picture, for frontends that size windows, pace frames and
//! choose audio rates.

use anes_core::Region;

/// The master clock: 236.25 MHz / 11 = 21.477272... MHz, as a ratio (numerator, denominator) in Hz.
pub const MASTER_CLOCK_HZ: (u64, u64) = (236_250_000, 11);

/// Master clocks in a frame pair: 262 lines of 341 dots at 4 master clocks a dot, less the dot the
/// 2C02 skips on every other frame while rendering (nesdev "PPU frame timing"): 2 * 357,368 - 4.
const MASTER_CLOCKS_PER_TWO_FRAMES: u64 = 2 * 262 * 341 * 4 - 4;

/// Frames per second as an exact ratio (numerator, denominator): 236,250,000 / 3,931,026.
pub const FRAME_RATE: (u64, u64) = (MASTER_CLOCK_HZ.0 * 2, MASTER_CLOCK_HZ.1 * MASTER_CLOCKS_PER_TWO_FRAMES);

/// Frames per second, about 60.0988 (with rendering on; a program that leaves rendering off runs a
/// hair slower, 60.0985, because no dot is skipped).
pub const FRAMES_PER_SECOND: f64 = FRAME_RATE.0 as f64 / FRAME_RATE.1 as f64;

/// The PAL (and Dendy) master clock: 26.6017125 MHz, as a ratio in Hz.
const PAL_MASTER_CLOCK_HZ: (u64, u64) = (53_203_425, 2);

/// Master clocks in a PAL or Dendy frame: 312 lines of 341 dots at 5 master clocks a dot; neither
/// skips a dot (nesdev "Clock rate", "Cycle reference chart").
const PAL_MASTER_CLOCKS_PER_FRAME: u64 = 312 * 341 * 5;

/// Frames per second of a console of `region`, as an exact ratio (numerator, denominator): NTSC's is
/// [`FRAME_RATE`]; PAL and the Dendy share a master clock and a frame length, about 50.0070.
///
/// ```
/// use anes_frontend::{anes_core::Region, frame_rate_of, FRAME_RATE};
/// assert_eq!(frame_rate_of(Region::Ntsc), FRAME_RATE);
/// let (n, d) = frame_rate_of(Region::Pal);
/// assert!((n as f64 / d as f64 - 50.007).abs() < 1e-3);
/// ```
pub const fn frame_rate_of(region: Region) -> (u64, u64) {
    match region {
        Region::Ntsc => FRAME_RATE,
        Region::Pal | Region::Dendy => {
            (PAL_MASTER_CLOCK_HZ.0, PAL_MASTER_CLOCK_HZ.1 * PAL_MASTER_CLOCKS_PER_FRAME)
        }
    }
}

/// CPU cycles per second of a console of `region`, as an exact ratio (numerator, denominator):
/// the master clock divided by 12 (NTSC, 1.789773 MHz), 16 (PAL, 1.662607 MHz) or 15 (Dendy,
/// 1.773448 MHz) (nesdev "Clock rate").
pub const fn cpu_clock_of(region: Region) -> (u64, u64) {
    region.cpu_clock()
}

/// [`frame_rate_of`] as frames per second.
pub fn frames_per_second_of(region: Region) -> f64 {
    let (n, d) = frame_rate_of(region);
    n as f64 / d as f64
}

pub use anes_core::ppu::{PICTURE_HEIGHT, PICTURE_WIDTH};

/// Shape of an NTSC NES pixel: 8 wide for 7 tall (the 2C02's dot clock against NTSC's square-pixel
/// rate, 12.27 MHz / 10.74 MHz).
pub const PIXEL_ASPECT_RATIO: f64 = 8.0 / 7.0;

/// Lines and columns to hide at each edge of the picture. An NTSC television hides some of the
/// 240 lines under its bezel; games keep their important content away from the edges, and some draw
/// garbage there.
///
/// ```
/// use anes_frontend::Overscan;
/// assert_eq!(Overscan::NONE.visible_size(), (256, 240));
/// assert_eq!(Overscan::NTSC_TV.visible_size(), (256, 224));
/// // 256 pixels of 8/7 over 224 lines.
/// assert!((Overscan::NTSC_TV.display_aspect_ratio() - 1.3061).abs() < 1e-4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Overscan {
    /// Lines hidden at the top.
    pub top: u16,
    /// Lines hidden at the bottom.
    pub bottom: u16,
    /// Columns hidden at the left.
    pub left: u16,
    /// Columns hidden at the right.
    pub right: u16,
}

impl Overscan {
    /// The whole 256x240 picture.
    pub const NONE: Overscan = Overscan { top: 0, bottom: 0, left: 0, right: 0 };
    /// 8 lines off the top and the bottom (256x224), what most NTSC sets hid and the crop most
    /// emulators default to.
    pub const NTSC_TV: Overscan = Overscan { top: 8, bottom: 8, left: 0, right: 0 };

    /// Width and height left after the crop (0 when the crop covers everything).
    pub const fn visible_size(&self) -> (u32, u32) {
        let width = (PICTURE_WIDTH as u32).saturating_sub(self.left as u32 + self.right as u32);
        let height = (PICTURE_HEIGHT as u32).saturating_sub(self.top as u32 + self.bottom as u32);
        (width, height)
    }

    /// Width over height of the visible picture on an NTSC screen (pixels 8/7 wide).
    pub fn display_aspect_ratio(&self) -> f64 {
        let (width, height) = self.visible_size();
        if height == 0 { 0.0 } else { f64::from(width) * PIXEL_ASPECT_RATIO / f64::from(height) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_rate_is_the_ntsc_figure() {
        assert_eq!(FRAME_RATE, (472_500_000, 7_862_052));
        assert!((FRAMES_PER_SECOND - 60.098_8).abs() < 1e-4, "{FRAMES_PER_SECOND}");
    }

    #[test]
    fn pal_and_dendy_frame_rates_are_the_wikis() {
        // nesdev "Cycle reference chart": PAL master clock 26.6017125 MHz, a frame 312 x 341 dots of
        // 5 master clocks, 50.0070 frames per second; the Dendy runs the same clock and frame length.
        for region in [Region::Pal, Region::Dendy] {
            let (n, d) = frame_rate_of(region);
            assert_eq!(n as u128 * 531_960 * 10, d as u128 * 266_017_125, "{region}");
            assert!((frames_per_second_of(region) - 50.007).abs() < 1e-3, "{region}");
        }
        assert_eq!(frame_rate_of(Region::Ntsc), FRAME_RATE);
    }

    #[test]
    fn a_crop_larger_than_the_picture_leaves_nothing() {
        let all = Overscan { top: 200, bottom: 200, left: 0, right: 0 };
        assert_eq!(all.visible_size(), (256, 0));
        assert_eq!(all.display_aspect_ratio(), 0.0);
    }
}
