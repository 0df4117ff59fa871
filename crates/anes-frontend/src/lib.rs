//! anes-frontend: what an emulator frontend needs around the anes core.
//!
//! - [`timing`]: frame rate (NTSC, 60.0988 frames/s as an exact ratio), picture size, pixel aspect
//!   (8:7) and [`Overscan`] crops.
//! - [`palette`]: the picture in RGBA8888, XRGB8888 or RGB565 through a [`Palette`], the built-in
//!   one or a standard `.pal` file (192 or 1536 bytes).
//! - [`audio`]: a [`StereoResampler`] from the core's mono `f32` to interleaved stereo `i16` at any
//!   rate, fractional and adjusted on the fly.
//! - [`Console`]: all of it around one machine, plus snapshots into fixed-size buffers (Game Genie
//!   codes included), battery RAM with a dirty flag and the work RAM for cheats and achievements.
//!
//! Nothing runs per frame that allocates. The core's rules hold: no clock, no randomness; audio is
//! output, never state.
//!
//! ```
//! use anes_frontend::{Console, Overscan, PixelFormat, FRAMES_PER_SECOND};
//! # let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap();
//! let mut console = Console::new(&rom)?;
//! let (width, height) = Overscan::NTSC_TV.visible_size();
//! let mut rgba = vec![0u8; (width * height * 4) as usize];
//! for _ in 0..60 {
//!     console.run_frame(Default::default());
//!     console.write_picture(PixelFormat::Rgba8888, Overscan::NTSC_TV, &mut rgba)?;
//!     let _stereo: &[i16] = console.audio();
//! }
//! assert!((FRAMES_PER_SECOND - 60.0988).abs() < 1e-4);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod audio;
mod console;
pub mod palette;
pub mod timing;

pub use anes_core;
pub use anes_core::cart::{GameGenieCode, GameGenieError, MAX_GAME_GENIE_CODES};
pub use audio::{AudioRateError, StereoResampler};
pub use console::{
    CONSOLE_STATE_HEADER_LEN, CONSOLE_STATE_MAGIC, CONSOLE_STATE_VERSION, Console, ConsoleError,
    ConsoleStateError, DEFAULT_AUDIO_RATE, machine_snapshot,
};
pub use palette::{Palette, PaletteError, PictureError, PixelFormat};
pub use timing::{
    FRAME_RATE, FRAMES_PER_SECOND, Overscan, PICTURE_HEIGHT, PICTURE_WIDTH, PIXEL_ASPECT_RATIO, cpu_clock_of,
    frame_rate_of, frames_per_second_of,
};
