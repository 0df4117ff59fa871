//! The parts of the libretro API (`libretro.h`, API version 1) this core uses, and those a frontend
//! needs to drive a NES core headless (the peer bench's host in `benches/peer` uses this module): C
//! layouts and the numbers of the environment commands, devices, pixel formats and memory kinds.

use std::ffi::{c_char, c_uint, c_void};

/// `RETRO_API_VERSION`.
pub const API_VERSION: c_uint = 1;

/// `RETRO_REGION_NTSC`.
pub const REGION_NTSC: c_uint = 0;
/// `RETRO_REGION_PAL`: libretro's 50 Hz region, which the Dendy's timing is too.
pub const REGION_PAL: c_uint = 1;

/// Environment commands flagged experimental carry this bit.
const EXPERIMENTAL: c_uint = 0x10000;
/// `RETRO_ENVIRONMENT_GET_CAN_DUPE`: `bool *`.
pub const ENVIRONMENT_GET_CAN_DUPE: c_uint = 3;
/// `RETRO_ENVIRONMENT_SET_PERFORMANCE_LEVEL`: `const unsigned *`.
pub const ENVIRONMENT_SET_PERFORMANCE_LEVEL: c_uint = 8;
/// `RETRO_ENVIRONMENT_GET_SYSTEM_DIRECTORY`: `const char **`.
pub const ENVIRONMENT_GET_SYSTEM_DIRECTORY: c_uint = 9;
/// `RETRO_ENVIRONMENT_SET_PIXEL_FORMAT`: `const enum retro_pixel_format *`.
pub const ENVIRONMENT_SET_PIXEL_FORMAT: c_uint = 10;
/// `RETRO_ENVIRONMENT_SET_INPUT_DESCRIPTORS`: `const struct retro_input_descriptor *`.
pub const ENVIRONMENT_SET_INPUT_DESCRIPTORS: c_uint = 11;
/// `RETRO_ENVIRONMENT_GET_VARIABLE`: `struct retro_variable *`.
pub const ENVIRONMENT_GET_VARIABLE: c_uint = 15;
/// `RETRO_ENVIRONMENT_SET_VARIABLES`: `const struct retro_variable *` (the options a core offers).
pub const ENVIRONMENT_SET_VARIABLES: c_uint = 16;
/// `RETRO_ENVIRONMENT_GET_VARIABLE_UPDATE`: `bool *`.
pub const ENVIRONMENT_GET_VARIABLE_UPDATE: c_uint = 17;
/// `RETRO_ENVIRONMENT_GET_LOG_INTERFACE`: `struct retro_log_callback *`.
pub const ENVIRONMENT_GET_LOG_INTERFACE: c_uint = 27;
/// `RETRO_ENVIRONMENT_GET_SAVE_DIRECTORY`: `const char **`.
pub const ENVIRONMENT_GET_SAVE_DIRECTORY: c_uint = 31;
/// `RETRO_ENVIRONMENT_SET_CONTROLLER_INFO`: `const struct retro_controller_info *`.
pub const ENVIRONMENT_SET_CONTROLLER_INFO: c_uint = 35;
/// `RETRO_ENVIRONMENT_SET_MEMORY_MAPS`: `const struct retro_memory_map *`.
pub const ENVIRONMENT_SET_MEMORY_MAPS: c_uint = 36 | EXPERIMENTAL;
/// `RETRO_ENVIRONMENT_SET_GEOMETRY`: `const struct retro_game_geometry *`.
pub const ENVIRONMENT_SET_GEOMETRY: c_uint = 37;
/// `RETRO_ENVIRONMENT_SET_SUPPORT_ACHIEVEMENTS`: `const bool *`.
pub const ENVIRONMENT_SET_SUPPORT_ACHIEVEMENTS: c_uint = 42 | EXPERIMENTAL;
/// `RETRO_ENVIRONMENT_GET_INPUT_BITMASKS`: no data; true if `RETRO_DEVICE_ID_JOYPAD_MASK` works.
pub const ENVIRONMENT_GET_INPUT_BITMASKS: c_uint = 51 | EXPERIMENTAL;
/// `RETRO_ENVIRONMENT_SET_CORE_OPTIONS_DISPLAY`: which options a menu shows.
pub const ENVIRONMENT_SET_CORE_OPTIONS_DISPLAY: c_uint = 55;

/// `RETRO_PIXEL_FORMAT_0RGB1555`: a core's default until it asks for another.
pub const PIXEL_FORMAT_0RGB1555: c_uint = 0;
/// `RETRO_PIXEL_FORMAT_XRGB8888`.
pub const PIXEL_FORMAT_XRGB8888: c_uint = 1;
/// `RETRO_PIXEL_FORMAT_RGB565`.
pub const PIXEL_FORMAT_RGB565: c_uint = 2;

/// `RETRO_DEVICE_NONE`.
pub const DEVICE_NONE: c_uint = 0;
/// `RETRO_DEVICE_JOYPAD`.
pub const DEVICE_JOYPAD: c_uint = 1;
/// `RETRO_DEVICE_MASK`: the base device of a subclassed device id.
pub const DEVICE_MASK: c_uint = 0xFF;
/// `RETRO_DEVICE_ID_JOYPAD_MASK`: the `id` asking for all buttons at once as a bit set.
pub const DEVICE_ID_JOYPAD_MASK: c_uint = 256;

/// `RETRO_DEVICE_ID_JOYPAD_*`, in the numbering of `libretro.h`.
pub mod joypad {
    use std::ffi::c_uint;
    /// `RETRO_DEVICE_ID_JOYPAD_B`.
    pub const B: c_uint = 0;
    /// `RETRO_DEVICE_ID_JOYPAD_SELECT`.
    pub const SELECT: c_uint = 2;
    /// `RETRO_DEVICE_ID_JOYPAD_START`.
    pub const START: c_uint = 3;
    /// `RETRO_DEVICE_ID_JOYPAD_UP`.
    pub const UP: c_uint = 4;
    /// `RETRO_DEVICE_ID_JOYPAD_DOWN`.
    pub const DOWN: c_uint = 5;
    /// `RETRO_DEVICE_ID_JOYPAD_LEFT`.
    pub const LEFT: c_uint = 6;
    /// `RETRO_DEVICE_ID_JOYPAD_RIGHT`.
    pub const RIGHT: c_uint = 7;
    /// `RETRO_DEVICE_ID_JOYPAD_A`.
    pub const A: c_uint = 8;
}

/// `RETRO_MEMORY_SAVE_RAM`.
pub const MEMORY_SAVE_RAM: c_uint = 0;
/// `RETRO_MEMORY_SYSTEM_RAM`.
pub const MEMORY_SYSTEM_RAM: c_uint = 2;
/// `RETRO_MEMORY_VIDEO_RAM`.
pub const MEMORY_VIDEO_RAM: c_uint = 3;

/// `RETRO_MEMDESC_SYSTEM_RAM`.
pub const MEMDESC_SYSTEM_RAM: u64 = 1 << 2;
/// `RETRO_MEMDESC_SAVE_RAM`.
pub const MEMDESC_SAVE_RAM: u64 = 1 << 3;

/// `RETRO_LOG_INFO`.
pub const LOG_INFO: c_uint = 1;
/// `RETRO_LOG_WARN`.
pub const LOG_WARN: c_uint = 2;
/// `RETRO_LOG_ERROR`.
pub const LOG_ERROR: c_uint = 3;

/// `retro_environment_t`.
pub type EnvironmentFn = unsafe extern "C" fn(cmd: c_uint, data: *mut c_void) -> bool;
/// `retro_video_refresh_t`.
pub type VideoRefreshFn =
    unsafe extern "C" fn(data: *const c_void, width: c_uint, height: c_uint, pitch: usize);
/// `retro_audio_sample_t`.
pub type AudioSampleFn = unsafe extern "C" fn(left: i16, right: i16);
/// `retro_audio_sample_batch_t`.
pub type AudioSampleBatchFn = unsafe extern "C" fn(data: *const i16, frames: usize) -> usize;
/// `retro_input_poll_t`.
pub type InputPollFn = unsafe extern "C" fn();
/// `retro_input_state_t`.
pub type InputStateFn = unsafe extern "C" fn(port: c_uint, device: c_uint, index: c_uint, id: c_uint) -> i16;
/// `retro_log_printf_t`.
pub type LogPrintfFn = unsafe extern "C" fn(level: c_uint, fmt: *const c_char, ...);

/// `struct retro_log_callback`.
#[repr(C)]
#[derive(Debug)]
pub struct LogCallback {
    /// The frontend's printf-like logger.
    pub log: Option<LogPrintfFn>,
}

/// `struct retro_system_info`.
#[repr(C)]
#[derive(Debug)]
pub struct SystemInfo {
    /// Core name.
    pub library_name: *const c_char,
    /// Core version.
    pub library_version: *const c_char,
    /// Extensions, `|`-separated.
    pub valid_extensions: *const c_char,
    /// True when the core wants a path instead of the file's bytes.
    pub need_fullpath: bool,
    /// True when the frontend must not extract archives.
    pub block_extract: bool,
}

/// `struct retro_game_geometry`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct GameGeometry {
    /// Nominal width.
    pub base_width: c_uint,
    /// Nominal height.
    pub base_height: c_uint,
    /// Largest width.
    pub max_width: c_uint,
    /// Largest height.
    pub max_height: c_uint,
    /// Display aspect ratio (0: width / height).
    pub aspect_ratio: f32,
}

/// `struct retro_system_timing`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SystemTiming {
    /// Frames per second.
    pub fps: f64,
    /// Audio sample rate.
    pub sample_rate: f64,
}

/// `struct retro_system_av_info`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SystemAvInfo {
    /// Picture geometry.
    pub geometry: GameGeometry,
    /// Frame rate and audio sample rate.
    pub timing: SystemTiming,
}

/// `struct retro_game_info`.
#[repr(C)]
#[derive(Debug)]
pub struct GameInfo {
    /// Path of the file.
    pub path: *const c_char,
    /// The file's bytes (`need_fullpath` is false).
    pub data: *const c_void,
    /// Their size.
    pub size: usize,
    /// Frontend-specific metadata (unused here).
    pub meta: *const c_char,
}

/// `struct retro_input_descriptor`.
#[repr(C)]
#[derive(Debug)]
pub struct InputDescriptor {
    /// Controller port, from 0.
    pub port: c_uint,
    /// `RETRO_DEVICE_*` of the controller.
    pub device: c_uint,
    /// Sub-device index (0 for a joypad).
    pub index: c_uint,
    /// Button id.
    pub id: c_uint,
    /// Human-readable name.
    pub description: *const c_char,
}

/// `struct retro_controller_description`.
#[repr(C)]
#[derive(Debug)]
pub struct ControllerDescription {
    /// The controller's human-readable name.
    pub desc: *const c_char,
    /// Device id.
    pub id: c_uint,
}

/// `struct retro_controller_info`.
#[repr(C)]
#[derive(Debug)]
pub struct ControllerInfo {
    /// Devices a port takes.
    pub types: *const ControllerDescription,
    /// How many.
    pub num_types: c_uint,
}

/// `struct retro_memory_descriptor`.
#[repr(C)]
#[derive(Debug)]
pub struct MemoryDescriptor {
    /// `RETRO_MEMDESC_*`.
    pub flags: u64,
    /// Start of the memory.
    pub ptr: *mut c_void,
    /// Offset into `ptr`.
    pub offset: usize,
    /// Emulated address of the first byte.
    pub start: usize,
    /// Address bits that must match `start` (0: derived from `len`).
    pub select: usize,
    /// Address bits ignored.
    pub disconnect: usize,
    /// Length of the region in bytes.
    pub len: usize,
    /// Address space name (null: the main one).
    pub addrspace: *const c_char,
}

/// `struct retro_memory_map`.
#[repr(C)]
#[derive(Debug)]
pub struct MemoryMap {
    /// The regions, `num_descriptors` of them.
    pub descriptors: *const MemoryDescriptor,
    /// How many.
    pub num_descriptors: c_uint,
}

/// `struct retro_variable`: a core option the core asks for by key.
#[repr(C)]
#[derive(Debug)]
pub struct Variable {
    /// The option's key.
    pub key: *const c_char,
    /// Its value, set by the frontend.
    pub value: *const c_char,
}
