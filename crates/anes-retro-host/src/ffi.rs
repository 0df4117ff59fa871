//! The libretro API's layouts and numbers a frontend needs (libretro.h, API version 1), written
//! from its documented declarations.

#![allow(missing_docs)] // Each item is the libretro.h name in Rust casing; the header documents it.

use std::ffi::{c_char, c_uint, c_void};

pub const API_VERSION: c_uint = 1;
pub const ENVIRONMENT_EXPERIMENTAL: c_uint = 0x10000;

pub const ENVIRONMENT_SET_ROTATION: c_uint = 1;
pub const ENVIRONMENT_GET_OVERSCAN: c_uint = 2;
pub const ENVIRONMENT_GET_CAN_DUPE: c_uint = 3;
pub const ENVIRONMENT_SET_MESSAGE: c_uint = 6;
pub const ENVIRONMENT_SHUTDOWN: c_uint = 7;
pub const ENVIRONMENT_SET_PERFORMANCE_LEVEL: c_uint = 8;
pub const ENVIRONMENT_GET_SYSTEM_DIRECTORY: c_uint = 9;
pub const ENVIRONMENT_SET_PIXEL_FORMAT: c_uint = 10;
pub const ENVIRONMENT_SET_INPUT_DESCRIPTORS: c_uint = 11;
pub const ENVIRONMENT_SET_HW_RENDER: c_uint = 14;
pub const ENVIRONMENT_GET_VARIABLE: c_uint = 15;
pub const ENVIRONMENT_SET_VARIABLES: c_uint = 16;
pub const ENVIRONMENT_GET_VARIABLE_UPDATE: c_uint = 17;
pub const ENVIRONMENT_SET_SUPPORT_NO_GAME: c_uint = 18;
pub const ENVIRONMENT_GET_LIBRETRO_PATH: c_uint = 19;
pub const ENVIRONMENT_GET_RUMBLE_INTERFACE: c_uint = 23;
pub const ENVIRONMENT_GET_INPUT_DEVICE_CAPABILITIES: c_uint = 24;
pub const ENVIRONMENT_GET_LOG_INTERFACE: c_uint = 27;
pub const ENVIRONMENT_GET_CORE_ASSETS_DIRECTORY: c_uint = 30;
pub const ENVIRONMENT_GET_SAVE_DIRECTORY: c_uint = 31;
pub const ENVIRONMENT_SET_SYSTEM_AV_INFO: c_uint = 32;
pub const ENVIRONMENT_SET_SUBSYSTEM_INFO: c_uint = 34;
pub const ENVIRONMENT_SET_CONTROLLER_INFO: c_uint = 35;
pub const ENVIRONMENT_SET_MEMORY_MAPS: c_uint = 36 | ENVIRONMENT_EXPERIMENTAL;
pub const ENVIRONMENT_SET_GEOMETRY: c_uint = 37;
pub const ENVIRONMENT_GET_USERNAME: c_uint = 38;
pub const ENVIRONMENT_GET_LANGUAGE: c_uint = 39;
pub const ENVIRONMENT_SET_SUPPORT_ACHIEVEMENTS: c_uint = 42 | ENVIRONMENT_EXPERIMENTAL;
pub const ENVIRONMENT_SET_SERIALIZATION_QUIRKS: c_uint = 44;
pub const ENVIRONMENT_GET_AUDIO_VIDEO_ENABLE: c_uint = 47 | ENVIRONMENT_EXPERIMENTAL;
pub const ENVIRONMENT_GET_FASTFORWARDING: c_uint = 49 | ENVIRONMENT_EXPERIMENTAL;
pub const ENVIRONMENT_GET_INPUT_BITMASKS: c_uint = 51 | ENVIRONMENT_EXPERIMENTAL;
pub const ENVIRONMENT_GET_CORE_OPTIONS_VERSION: c_uint = 52;
pub const ENVIRONMENT_SET_CORE_OPTIONS: c_uint = 53;
pub const ENVIRONMENT_SET_CORE_OPTIONS_INTL: c_uint = 54;
pub const ENVIRONMENT_SET_CORE_OPTIONS_DISPLAY: c_uint = 55;
pub const ENVIRONMENT_GET_MESSAGE_INTERFACE_VERSION: c_uint = 59;
pub const ENVIRONMENT_SET_MESSAGE_EXT: c_uint = 60;
pub const ENVIRONMENT_GET_INPUT_MAX_USERS: c_uint = 61;
pub const ENVIRONMENT_SET_CONTENT_INFO_OVERRIDE: c_uint = 65;
pub const ENVIRONMENT_GET_GAME_INFO_EXT: c_uint = 66;
pub const ENVIRONMENT_SET_CORE_OPTIONS_V2: c_uint = 67;
pub const ENVIRONMENT_SET_CORE_OPTIONS_V2_INTL: c_uint = 68;
pub const ENVIRONMENT_SET_CORE_OPTIONS_UPDATE_DISPLAY_CALLBACK: c_uint = 69;
pub const ENVIRONMENT_SET_VARIABLE: c_uint = 70;
pub const ENVIRONMENT_GET_SAVESTATE_CONTEXT: c_uint = 72 | ENVIRONMENT_EXPERIMENTAL;

/// `RETRO_SAVESTATE_CONTEXT_NORMAL`: what this host answers (it never hides a state's use).
pub const SAVESTATE_CONTEXT_NORMAL: i32 = 0;

pub const PIXEL_FORMAT_0RGB1555: c_uint = 0;
pub const PIXEL_FORMAT_XRGB8888: c_uint = 1;
pub const PIXEL_FORMAT_RGB565: c_uint = 2;

pub const DEVICE_NONE: c_uint = 0;
pub const DEVICE_JOYPAD: c_uint = 1;
pub const DEVICE_MASK: c_uint = 0xFF;
pub const DEVICE_ID_JOYPAD_MASK: c_uint = 256;

/// RetroPad button ids (`RETRO_DEVICE_ID_JOYPAD_*`).
pub mod joypad {
    use std::ffi::c_uint;
    pub const B: c_uint = 0;
    pub const Y: c_uint = 1;
    pub const SELECT: c_uint = 2;
    pub const START: c_uint = 3;
    pub const UP: c_uint = 4;
    pub const DOWN: c_uint = 5;
    pub const LEFT: c_uint = 6;
    pub const RIGHT: c_uint = 7;
    pub const A: c_uint = 8;
    pub const X: c_uint = 9;
    pub const L: c_uint = 10;
    pub const R: c_uint = 11;
}

pub const MEMORY_SAVE_RAM: c_uint = 0;
pub const MEMORY_RTC: c_uint = 1;
pub const MEMORY_SYSTEM_RAM: c_uint = 2;
pub const MEMORY_VIDEO_RAM: c_uint = 3;

pub const MEMDESC_CONST: u64 = 1 << 0;
pub const MEMDESC_SYSTEM_RAM: u64 = 1 << 2;
pub const MEMDESC_SAVE_RAM: u64 = 1 << 3;
pub const MEMDESC_VIDEO_RAM: u64 = 1 << 4;

/// Serialization quirks (`RETRO_SERIALIZATION_QUIRK_*`).
pub const SERIALIZATION_QUIRK_INCOMPLETE: u64 = 1 << 0;
pub const SERIALIZATION_QUIRK_MUST_INITIALIZE: u64 = 1 << 1;
pub const SERIALIZATION_QUIRK_CORE_VARIABLE_SIZE: u64 = 1 << 2;
pub const SERIALIZATION_QUIRK_FRONT_VARIABLE_SIZE: u64 = 1 << 3;
pub const SERIALIZATION_QUIRK_SINGLE_SESSION: u64 = 1 << 4;
pub const SERIALIZATION_QUIRK_ENDIAN_DEPENDENT: u64 = 1 << 5;
pub const SERIALIZATION_QUIRK_PLATFORM_DEPENDENT: u64 = 1 << 6;

/// `RETRO_NUM_CORE_OPTION_VALUES_MAX`.
pub const NUM_CORE_OPTION_VALUES_MAX: usize = 128;

pub type EnvironmentFn = unsafe extern "C" fn(cmd: c_uint, data: *mut c_void) -> bool;
pub type VideoRefreshFn =
    unsafe extern "C" fn(data: *const c_void, width: c_uint, height: c_uint, pitch: usize);
pub type AudioSampleFn = unsafe extern "C" fn(left: i16, right: i16);
pub type AudioSampleBatchFn = unsafe extern "C" fn(data: *const i16, frames: usize) -> usize;
pub type InputPollFn = unsafe extern "C" fn();
pub type InputStateFn = unsafe extern "C" fn(port: c_uint, device: c_uint, index: c_uint, id: c_uint) -> i16;

#[repr(C)]
#[derive(Debug)]
pub struct LogCallback {
    /// `retro_log_printf_t`: printf-like, so it is the C shim's `anes_retro_log_printf`.
    pub log: Option<unsafe extern "C" fn()>,
}

#[repr(C)]
#[derive(Debug)]
pub struct SystemInfo {
    pub library_name: *const c_char,
    pub library_version: *const c_char,
    pub valid_extensions: *const c_char,
    pub need_fullpath: bool,
    pub block_extract: bool,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct GameGeometry {
    pub base_width: c_uint,
    pub base_height: c_uint,
    pub max_width: c_uint,
    pub max_height: c_uint,
    pub aspect_ratio: f32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemTiming {
    pub fps: f64,
    pub sample_rate: f64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemAvInfo {
    pub geometry: GameGeometry,
    pub timing: SystemTiming,
}

#[repr(C)]
#[derive(Debug)]
pub struct GameInfo {
    pub path: *const c_char,
    pub data: *const c_void,
    pub size: usize,
    pub meta: *const c_char,
}

#[repr(C)]
#[derive(Debug)]
pub struct MemoryDescriptor {
    pub flags: u64,
    pub ptr: *mut c_void,
    pub offset: usize,
    pub start: usize,
    pub select: usize,
    pub disconnect: usize,
    pub len: usize,
    pub addrspace: *const c_char,
}

#[repr(C)]
#[derive(Debug)]
pub struct MemoryMap {
    pub descriptors: *const MemoryDescriptor,
    pub num_descriptors: c_uint,
}

#[repr(C)]
#[derive(Debug)]
pub struct Variable {
    pub key: *const c_char,
    pub value: *const c_char,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CoreOptionValue {
    pub value: *const c_char,
    pub label: *const c_char,
}

#[repr(C)]
#[derive(Debug)]
pub struct CoreOptionDefinition {
    pub key: *const c_char,
    pub desc: *const c_char,
    pub info: *const c_char,
    pub values: [CoreOptionValue; NUM_CORE_OPTION_VALUES_MAX],
    pub default_value: *const c_char,
}

#[repr(C)]
#[derive(Debug)]
pub struct CoreOptionsIntl {
    pub us: *const CoreOptionDefinition,
    pub local: *const CoreOptionDefinition,
}

#[repr(C)]
#[derive(Debug)]
pub struct CoreOptionV2Definition {
    pub key: *const c_char,
    pub desc: *const c_char,
    pub desc_categorized: *const c_char,
    pub info: *const c_char,
    pub info_categorized: *const c_char,
    pub category_key: *const c_char,
    pub values: [CoreOptionValue; NUM_CORE_OPTION_VALUES_MAX],
    pub default_value: *const c_char,
}

#[repr(C)]
#[derive(Debug)]
pub struct CoreOptionsV2 {
    pub categories: *const c_void,
    pub definitions: *const CoreOptionV2Definition,
}

#[repr(C)]
#[derive(Debug)]
pub struct CoreOptionsV2Intl {
    pub us: *const CoreOptionsV2,
    pub local: *const CoreOptionsV2,
}

#[repr(C)]
#[derive(Debug)]
pub struct Message {
    pub msg: *const c_char,
    pub frames: c_uint,
}
