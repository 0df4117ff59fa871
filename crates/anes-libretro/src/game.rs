//! The loaded game: a [`Console`] and what the libretro calls need around it (the picture buffer in
//! the negotiated pixel format, the controller ports, the cheat list). Safe code; `lib.rs` is the
//! C boundary around it.

use anes_frontend::anes_core::input::buttons;
use anes_frontend::anes_core::movie::FrameInput;
use anes_frontend::anes_core::{PowerOnProfile, Region};
use anes_frontend::{Console, ConsoleError, Overscan, PICTURE_HEIGHT, PICTURE_WIDTH, PixelFormat};

use crate::cheat::CheatTable;
use crate::ffi::joypad;

/// The audio rate this core reports and produces.
pub const SAMPLE_RATE: f64 = 48_000.0;

/// NES buttons and the libretro joypad buttons that press them.
const BUTTON_MAP: [(u8, std::ffi::c_uint); 8] = [
    (buttons::A, joypad::A),
    (buttons::B, joypad::B),
    (buttons::SELECT, joypad::SELECT),
    (buttons::START, joypad::START),
    (buttons::UP, joypad::UP),
    (buttons::DOWN, joypad::DOWN),
    (buttons::LEFT, joypad::LEFT),
    (buttons::RIGHT, joypad::RIGHT),
];

/// The NES buttons held on each port `plugged` says has a joypad, from the libretro buttons
/// `pressed(port, id)` reports held.
pub fn pads(plugged: [bool; 2], pressed: impl Fn(std::ffi::c_uint, std::ffi::c_uint) -> bool) -> [u8; 2] {
    let mut pads = [0u8; 2];
    for (port, pad) in pads.iter_mut().enumerate() {
        if plugged[port] {
            for (bit, id) in BUTTON_MAP {
                if pressed(port as std::ffi::c_uint, id) {
                    *pad |= bit;
                }
            }
        }
    }
    pads
}

/// A game running in the core.
#[derive(Debug)]
pub struct LoadedGame {
    /// The console.
    pub console: Console,
    /// The pixel format the frontend accepted (XRGB8888, or RGB565 when it refused that).
    pub pixel_format: PixelFormat,
    /// The last picture, in `pixel_format`, 256x240, no padding.
    pub video: Vec<u8>,
    /// The frontend's cheats.
    pub cheats: CheatTable,
}

impl LoadedGame {
    /// Powers the console on with the ROM's bytes, of `region` (`None`: the ROM header's), with the
    /// `power_on` profile.
    pub fn new(
        rom: &[u8],
        pixel_format: PixelFormat,
        region: Option<Region>,
        power_on: PowerOnProfile,
    ) -> Result<LoadedGame, ConsoleError> {
        let console = Console::with_region(rom, power_on.config(), region, Some(SAMPLE_RATE))?;
        let video = vec![0; PICTURE_WIDTH * PICTURE_HEIGHT * pixel_format.bytes_per_pixel()];
        Ok(LoadedGame { console, pixel_format, video, cheats: CheatTable::default() })
    }

    /// Runs a frame with `pads` held (see [`pads`]) and converts its picture.
    pub fn run_frame(&mut self, pads: [u8; 2]) {
        self.console.run_frame(FrameInput { pads, ..FrameInput::default() });
        self.console
            .write_picture(self.pixel_format, Overscan::NONE, &mut self.video)
            .expect("the video buffer holds a 256x240 picture");
    }

    /// Bytes per picture row.
    pub fn pitch(&self) -> usize {
        PICTURE_WIDTH * self.pixel_format.bytes_per_pixel()
    }

    /// Applies the cheat list to the console; the error says why it was not applied.
    pub fn apply_cheats(&mut self) -> Result<(), String> {
        let codes = self.cheats.codes()?;
        self.console.set_game_genie_codes(&codes).map_err(|error| error.to_string())
    }
}
