//! Pictures in the pixel formats frontends use, through a palette: the core's built-in NTSC palette
//! or a standard `.pal` file.
//!
//! The core's picture is one `u16` a pixel: palette index in bits 0-5, PPUMASK emphasis (red, green,
//! blue) in bits 6-8. A [`Palette`] maps all 512 combinations to colours, precomputed for each
//! output format, so converting a frame is one table lookup a pixel.

use std::path::Path;

use anes_core::ppu::rgb::{emphasize, to_rgb};
use thiserror::Error;

use crate::timing::{Overscan, PICTURE_HEIGHT, PICTURE_WIDTH};

/// Entries of a palette: 64 colours times 8 emphasis combinations.
pub const PALETTE_ENTRIES: usize = 512;
/// A `.pal` file of 64 RGB colours (emphasis computed as the 2C02 applies it).
pub const PAL_64_LEN: usize = 64 * 3;
/// A `.pal` file of 512 RGB colours: 64 per emphasis combination, combination `e` (bit 0 red, 1
/// green, 2 blue, as in PPUMASK bits 5-7) at entries `64 e ..`.
pub const PAL_512_LEN: usize = PALETTE_ENTRIES * 3;

/// The pixel formats a picture can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PixelFormat {
    /// Four bytes a pixel in memory order red, green, blue, alpha (255).
    Rgba8888,
    /// One `u32` a pixel, `0x00RRGGBB` (libretro's XRGB8888, many window crates' 0RGB).
    Xrgb8888,
    /// One `u16` a pixel, 5 bits red, 6 green, 5 blue from the top (libretro's RGB565).
    Rgb565,
}

impl PixelFormat {
    /// Bytes one pixel takes.
    pub const fn bytes_per_pixel(self) -> usize {
        match self {
            PixelFormat::Rgba8888 | PixelFormat::Xrgb8888 => 4,
            PixelFormat::Rgb565 => 2,
        }
    }
}

/// Why a palette file was refused.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum PaletteError {
    /// Neither of the two standard sizes.
    #[error(
        "palette is {len} bytes; a .pal file holds 64 RGB colours ({PAL_64_LEN} bytes) or 512 \
         ({PAL_512_LEN} bytes, 64 per emphasis combination)"
    )]
    Length {
        /// Bytes given: for [`Palette::load`] the file's size, also when it is larger than any
        /// palette (the file is then not read past that; `usize::MAX` if the size does not fit).
        len: usize,
    },
    /// The file could not be read or is not a regular file (a FIFO, a directory, a device).
    #[error("cannot read palette {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// Why a picture could not be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PictureError {
    /// The frame is not 256x240 pixels.
    #[error("frame has {len} pixels; a picture has 256 x 240 = 61440")]
    FrameSize {
        /// Pixels given.
        len: usize,
    },
    /// The output buffer is too small for the cropped picture.
    #[error("output holds {len} pixels but the picture is {needed} ({width} x {height})")]
    OutputTooSmall {
        /// Pixels (elements of the output's unit) needed.
        needed: usize,
        /// Pixels the output holds.
        len: usize,
        /// Visible width.
        width: u32,
        /// Visible height.
        height: u32,
    },
}

/// 512 colours, precomputed for every [`PixelFormat`].
///
/// ```
/// use anes_frontend::{Overscan, Palette};
/// let palette = Palette::builtin();
/// let frame = vec![0x30u16; 256 * 240]; // colour $30: white
/// let mut rgba = vec![0u8; 256 * 224 * 4];
/// palette.write_rgba8888(&frame, Overscan::NTSC_TV, &mut rgba)?;
/// assert_eq!(&rgba[..4], &[255, 255, 255, 255]);
/// # Ok::<(), anes_frontend::PictureError>(())
/// ```
#[derive(Clone)]
pub struct Palette {
    rgb: [[u8; 3]; PALETTE_ENTRIES],
    /// `[r, g, b, 255]` read as a native-endian `u32`, so writing it writes the bytes in that order.
    rgba: [u32; PALETTE_ENTRIES],
    xrgb: [u32; PALETTE_ENTRIES],
    rgb565: [u16; PALETTE_ENTRIES],
}

impl core::fmt::Debug for Palette {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Palette").field("entry_0", &self.rgb[0]).finish_non_exhaustive()
    }
}

impl Default for Palette {
    fn default() -> Self {
        Palette::builtin()
    }
}

impl Palette {
    /// The core's own NTSC palette (computed from a model of the 2C02's composite signal), the
    /// colours `anes run --screenshot` writes.
    pub fn builtin() -> Palette {
        Palette::from_entries(|entry| to_rgb(entry as u16))
    }

    /// A palette from the bytes of a `.pal` file: 192 bytes (64 colours; emphasis applied as the
    /// 2C02 does) or 1536 bytes (all 512 entries).
    ///
    /// ```
    /// use anes_frontend::{Palette, PaletteError};
    /// let grey: Vec<u8> = (0..64u8).flat_map(|i| [i * 4; 3]).collect();
    /// let palette = Palette::from_pal(&grey)?;
    /// assert_eq!(palette.rgb(0x21), [0x84; 3]);
    /// assert!(matches!(Palette::from_pal(&grey[..191]), Err(PaletteError::Length { len: 191 })));
    /// # Ok::<(), PaletteError>(())
    /// ```
    pub fn from_pal(bytes: &[u8]) -> Result<Palette, PaletteError> {
        match bytes.len() {
            PAL_64_LEN => Ok(Palette::from_entries(|entry| {
                let base = (entry & 63) * 3;
                let rgb = [bytes[base], bytes[base + 1], bytes[base + 2]];
                emphasize(rgb, (entry >> 6) as u8)
            })),
            PAL_512_LEN => Ok(Palette::from_entries(|entry| {
                let base = entry * 3;
                [bytes[base], bytes[base + 1], bytes[base + 2]]
            })),
            len => Err(PaletteError::Length { len }),
        }
    }

    /// Reads a `.pal` file: a regular file of at most the largest valid size (a FIFO, a device or a
    /// directory is refused without waiting on it). A file of another size is
    /// [`PaletteError::Length`], a larger one too (without reading it).
    pub fn load(path: &Path) -> Result<Palette, PaletteError> {
        let bytes = anes_fs::read_capped(path, PAL_512_LEN as u64, "palette").map_err(|e| {
            let source = match e {
                // Too large is a wrong size like any other, as `from_pal` and the docs say.
                anes_fs::ReadError::TooLarge { size, .. } => {
                    return PaletteError::Length { len: usize::try_from(size).unwrap_or(usize::MAX) };
                }
                // The operating system's own error, as before.
                anes_fs::ReadError::Open { error, .. } | anes_fs::ReadError::Read { error, .. } => error,
                // What was refused and why, without the path the message repeats.
                other => std::io::Error::new(std::io::ErrorKind::InvalidInput, other.problem()),
            };
            PaletteError::Io { path: path.display().to_string(), source }
        })?;
        Palette::from_pal(&bytes)
    }

    fn from_entries(colour: impl Fn(usize) -> [u8; 3]) -> Palette {
        let mut palette = Palette {
            rgb: [[0; 3]; PALETTE_ENTRIES],
            rgba: [0; PALETTE_ENTRIES],
            xrgb: [0; PALETTE_ENTRIES],
            rgb565: [0; PALETTE_ENTRIES],
        };
        for entry in 0..PALETTE_ENTRIES {
            let [r, g, b] = colour(entry);
            palette.rgb[entry] = [r, g, b];
            palette.rgba[entry] = u32::from_ne_bytes([r, g, b, 255]);
            palette.xrgb[entry] = u32::from_be_bytes([0, r, g, b]);
            palette.rgb565[entry] = (u16::from(r >> 3) << 11) | (u16::from(g >> 2) << 5) | u16::from(b >> 3);
        }
        palette
    }

    /// The colour of a picture pixel (palette index in bits 0-5, emphasis in bits 6-8).
    pub fn rgb(&self, pixel: u16) -> [u8; 3] {
        self.rgb[usize::from(pixel) % PALETTE_ENTRIES]
    }

    /// Writes `frame` (256x240 core pixels) cropped by `crop` as RGBA8888 bytes, row after row with
    /// no padding, into the start of `out`.
    pub fn write_rgba8888(&self, frame: &[u16], crop: Overscan, out: &mut [u8]) -> Result<(), PictureError> {
        let (rows, width, height) = check(frame, crop, out.len() / 4)?;
        let out = out.chunks_exact_mut(4 * width).take(height);
        for (row, out_row) in rows.zip(out) {
            for (pixel, rgba) in row.iter().zip(out_row.chunks_exact_mut(4)) {
                rgba.copy_from_slice(&self.rgba[usize::from(*pixel) % PALETTE_ENTRIES].to_ne_bytes());
            }
        }
        Ok(())
    }

    /// Writes `frame` cropped by `crop` as XRGB8888 words (`0x00RRGGBB`) into the start of `out`.
    pub fn write_xrgb8888(&self, frame: &[u16], crop: Overscan, out: &mut [u32]) -> Result<(), PictureError> {
        let (rows, width, height) = check(frame, crop, out.len())?;
        for (row, out_row) in rows.zip(out.chunks_exact_mut(width).take(height)) {
            for (pixel, word) in row.iter().zip(out_row) {
                *word = self.xrgb[usize::from(*pixel) % PALETTE_ENTRIES];
            }
        }
        Ok(())
    }

    /// Writes `frame` cropped by `crop` as RGB565 words into the start of `out`.
    pub fn write_rgb565(&self, frame: &[u16], crop: Overscan, out: &mut [u16]) -> Result<(), PictureError> {
        let (rows, width, height) = check(frame, crop, out.len())?;
        for (row, out_row) in rows.zip(out.chunks_exact_mut(width).take(height)) {
            for (pixel, word) in row.iter().zip(out_row) {
                *word = self.rgb565[usize::from(*pixel) % PALETTE_ENTRIES];
            }
        }
        Ok(())
    }

    /// Writes `frame` cropped by `crop` in `format` into the start of `out` as bytes (the `u32` and
    /// `u16` formats in native byte order, as a frontend hands them to a graphics API).
    pub fn write(
        &self,
        format: PixelFormat,
        frame: &[u16],
        crop: Overscan,
        out: &mut [u8],
    ) -> Result<(), PictureError> {
        let bytes = format.bytes_per_pixel();
        let (rows, width, height) = check(frame, crop, out.len() / bytes)?;
        for (row, out_row) in rows.zip(out.chunks_exact_mut(bytes * width).take(height)) {
            match format {
                PixelFormat::Rgba8888 => {
                    for (pixel, out) in row.iter().zip(out_row.chunks_exact_mut(4)) {
                        out.copy_from_slice(&self.rgba[usize::from(*pixel) % PALETTE_ENTRIES].to_ne_bytes());
                    }
                }
                PixelFormat::Xrgb8888 => {
                    for (pixel, out) in row.iter().zip(out_row.chunks_exact_mut(4)) {
                        out.copy_from_slice(&self.xrgb[usize::from(*pixel) % PALETTE_ENTRIES].to_ne_bytes());
                    }
                }
                PixelFormat::Rgb565 => {
                    for (pixel, out) in row.iter().zip(out_row.chunks_exact_mut(2)) {
                        out.copy_from_slice(
                            &self.rgb565[usize::from(*pixel) % PALETTE_ENTRIES].to_ne_bytes(),
                        );
                    }
                }
            }
        }
        Ok(())
    }
}

/// Checks sizes; returns the visible part of each row, the visible width and height.
fn check(
    frame: &[u16],
    crop: Overscan,
    out_pixels: usize,
) -> Result<(impl Iterator<Item = &[u16]>, usize, usize), PictureError> {
    let full_width = PICTURE_WIDTH;
    if frame.len() != full_width * PICTURE_HEIGHT {
        return Err(PictureError::FrameSize { len: frame.len() });
    }
    let (width, height) = crop.visible_size();
    let needed = width as usize * height as usize;
    if out_pixels < needed {
        return Err(PictureError::OutputTooSmall { needed, len: out_pixels, width, height });
    }
    let (left, top) = (usize::from(crop.left), usize::from(crop.top));
    let (w, h) = (width as usize, height as usize);
    // With an empty crop result `w` or `h` is 0 and nothing is written (no slicing out of range:
    // `left` only matters when `w > 0`, which means `left + w <= 256`).
    let rows =
        frame.chunks_exact(full_width).skip(top).take(h).map(move |row| &row[left.min(full_width)..][..w]);
    Ok((rows, w.max(1), h))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_frame() -> Vec<u16> {
        (0..256 * 240).map(|i| (i % 512) as u16).collect()
    }

    #[test]
    fn every_format_agrees_with_the_rgb_table() {
        let palette = Palette::builtin();
        let frame = test_frame();
        let mut rgba = vec![0u8; 256 * 240 * 4];
        let mut xrgb = vec![0u32; 256 * 240];
        let mut rgb565 = vec![0u16; 256 * 240];
        palette.write_rgba8888(&frame, Overscan::NONE, &mut rgba).unwrap();
        palette.write_xrgb8888(&frame, Overscan::NONE, &mut xrgb).unwrap();
        palette.write_rgb565(&frame, Overscan::NONE, &mut rgb565).unwrap();
        for (i, &pixel) in frame.iter().enumerate() {
            let [r, g, b] = to_rgb(pixel);
            assert_eq!(&rgba[4 * i..4 * i + 4], &[r, g, b, 255]);
            assert_eq!(xrgb[i], u32::from(r) << 16 | u32::from(g) << 8 | u32::from(b));
            let word = rgb565[i];
            assert_eq!(
                ((word >> 11) as u8, (word >> 5 & 63) as u8, (word & 31) as u8),
                (r >> 3, g >> 2, b >> 3)
            );
        }
        for format in [PixelFormat::Rgba8888, PixelFormat::Xrgb8888, PixelFormat::Rgb565] {
            let mut bytes = vec![0u8; 256 * 240 * format.bytes_per_pixel()];
            palette.write(format, &frame, Overscan::NONE, &mut bytes).unwrap();
            let typed: Vec<u8> = match format {
                PixelFormat::Rgba8888 => rgba.clone(),
                PixelFormat::Xrgb8888 => xrgb.iter().flat_map(|w| w.to_ne_bytes()).collect(),
                PixelFormat::Rgb565 => rgb565.iter().flat_map(|w| w.to_ne_bytes()).collect(),
            };
            assert_eq!(bytes, typed, "{format:?}");
        }
    }

    #[test]
    fn crop_takes_the_inner_rectangle() {
        let palette = Palette::builtin();
        let frame = test_frame();
        let crop = Overscan { top: 8, bottom: 16, left: 3, right: 5 };
        let (width, height) = crop.visible_size();
        let mut out = vec![0u32; (width * height) as usize];
        palette.write_xrgb8888(&frame, crop, &mut out).unwrap();
        for y in 0..height as usize {
            for x in 0..width as usize {
                let [r, g, b] = palette.rgb(frame[(y + 8) * 256 + x + 3]);
                assert_eq!(out[y * width as usize + x], u32::from_be_bytes([0, r, g, b]));
            }
        }
    }

    #[test]
    fn bad_sizes_are_errors_not_panics() {
        let palette = Palette::builtin();
        let frame = test_frame();
        let mut small = vec![0u32; 100];
        assert_eq!(
            palette.write_xrgb8888(&frame, Overscan::NONE, &mut small),
            Err(PictureError::OutputTooSmall { needed: 61440, len: 100, width: 256, height: 240 })
        );
        assert_eq!(
            palette.write_xrgb8888(&frame[1..], Overscan::NONE, &mut small),
            Err(PictureError::FrameSize { len: 61439 })
        );
        let everything = Overscan { top: 0, bottom: 0, left: 200, right: 200 };
        palette.write_xrgb8888(&frame, everything, &mut small).unwrap();
        let mut bytes = vec![0u8; 7];
        palette.write(PixelFormat::Rgb565, &frame, everything, &mut bytes).unwrap();
        for len in [0, 191, 193, 1535, 1537] {
            assert!(
                matches!(Palette::from_pal(&vec![0; len]), Err(PaletteError::Length { len: l }) if l == len)
            );
        }
    }

    /// A FIFO with no writer is refused at once (a plain open would wait for a writer forever),
    /// naming the path and what it is; a file past the largest size is refused by its size, as
    /// [`PaletteError::Length`] like any other wrong size.
    #[test]
    fn a_fifo_or_an_oversized_file_is_refused_without_blocking() {
        let dir = std::env::temp_dir().join(format!("anes-palette-load-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo.pal");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
        assert!(made.success(), "mkfifo {}", fifo.display());
        // On a thread, so a regression fails the test instead of hanging it.
        let (send, receive) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || send.send(Palette::load(&path).map(|_| ())));
        let result = receive.recv_timeout(std::time::Duration::from_secs(5));
        let err = result.expect("loading a FIFO must not block").unwrap_err();
        assert!(
            matches!(&err, PaletteError::Io { path, .. } if *path == fifo.display().to_string()),
            "{err:?}"
        );
        assert!(err.to_string().contains("is a FIFO (named pipe), not a regular file"), "{err}");
        let big = dir.join("big.pal");
        std::fs::write(&big, vec![0u8; PAL_512_LEN + 1]).unwrap();
        let err = Palette::load(&big).unwrap_err();
        assert!(matches!(err, PaletteError::Length { len: 1537 }), "{err:?}");
        assert!(err.to_string().starts_with("palette is 1537 bytes;"), "{err}");
        std::fs::write(&big, vec![0u8; PAL_64_LEN + 1]).unwrap();
        assert!(matches!(Palette::load(&big), Err(PaletteError::Length { len: 193 })));
        std::fs::write(&big, vec![0u8; PAL_512_LEN]).unwrap();
        assert!(Palette::load(&big).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_512_colour_file_is_taken_as_is() {
        let bytes: Vec<u8> = (0..PAL_512_LEN).map(|i| (i % 251) as u8).collect();
        let palette = Palette::from_pal(&bytes).unwrap();
        assert_eq!(palette.rgb(0x1FF), [bytes[1533], bytes[1534], bytes[1535]]);
        let builtin_64: Vec<u8> = (0..64).flat_map(to_rgb).collect();
        let from_64 = Palette::from_pal(&builtin_64).unwrap();
        for pixel in 0..512 {
            assert_eq!(from_64.rgb(pixel), to_rgb(pixel), "entry {pixel}");
        }
    }
}
