//! anes as a libretro core: `libanes_libretro.so`, which RetroArch (or any libretro frontend) loads.
//!
//! It implements the libretro API version 1: video (256x240, XRGB8888, or RGB565 when the frontend
//! refuses that), audio in batches (interleaved stereo `i16` at 48 kHz), both controller ports as
//! joypads, fixed-size serialization (save states, rewind, run-ahead), save RAM and system RAM
//! through `retro_get_memory_data` and a memory map, reset, AV info (60.0988 frames/s on NTSC,
//! 50.0070 on PAL and Dendy; 8:7 pixels), the core options `anes_region` (the console of a
//! multi-region ROM: auto, ntsc, pal or dendy) and `anes_power_on` (the power-on profile, read when a
//! game loads: default, vblank-set, warm-up, quick-power-cycle, console-palette, ram-ff, phase-1..3,
//! random:1..4) and cheats (Game Genie letters, or `AAAA:VV` / `AAAA?CC:VV`, joined by `+`).
//!
//! Cheats change what the CPU reads, so they are part of the machine: of its identity, its state
//! hash and its save states. A state restores the cheats it was saved with.
//!
//! The libretro API is a set of global C functions, so this crate keeps its game and the frontend's
//! callbacks in two mutex-guarded statics. A callback may call back into the core: the input and
//! log callbacks run with no lock held, so such a call gets its usual answer; the video and audio
//! callbacks run while `retro_run` holds the game, so a call from them (which would otherwise wait
//! for its own caller) is answered as if no game were loaded (`retro_get_memory_size` 0, a null
//! `retro_get_memory_data`, `retro_serialize` false, NTSC), and `retro_load_game`,
//! `retro_unload_game` and `retro_deinit` from them are refused with a log line. A call from another
//! thread waits for the lock. The crate is allowed `unsafe` (as are the host side, `anes-retro-host`,
//! and the test allocator `anes-alloc-count`, and no other crate), which it uses to call the
//! frontend's callbacks and to read and write the buffers the frontend passes, each block with its
//! reason. Install: see the README's "RetroArch" section.

#![allow(clippy::missing_safety_doc)] // The safety contract of every export is libretro.h's.

pub mod cheat;
pub mod ffi;
pub mod game;

use std::cell::Cell;
use std::ffi::{CStr, CString, c_char, c_uint, c_void};
use std::io::Write;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard, PoisonError};

use anes_frontend::anes_core::{PowerOnError, PowerOnProfile, Region};
use anes_frontend::{Overscan, PICTURE_HEIGHT, PICTURE_WIDTH, PixelFormat, frames_per_second_of};

use ffi::*;
use game::{LoadedGame, SAMPLE_RATE};

/// What the frontend gave us: its callbacks, and which ports have a joypad.
#[derive(Debug, Clone, Copy)]
struct Frontend {
    environment: Option<EnvironmentFn>,
    video_refresh: Option<VideoRefreshFn>,
    audio_sample_batch: Option<AudioSampleBatchFn>,
    input_poll: Option<InputPollFn>,
    input_state: Option<InputStateFn>,
    log: Option<LogPrintfFn>,
    plugged: [bool; 2],
}

static FRONTEND: Mutex<Frontend> = Mutex::new(Frontend {
    environment: None,
    video_refresh: None,
    audio_sample_batch: None,
    input_poll: None,
    input_state: None,
    log: None,
    plugged: [true; 2],
});

static GAME: Mutex<Option<Box<LoadedGame>>> = Mutex::new(None);

thread_local! {
    /// This thread holds `GAME`: a callback it is running has called back into the core.
    static HOLDING_GAME: Cell<bool> = const { Cell::new(false) };
    /// This thread is in the frontend's log callback.
    static LOGGING: Cell<bool> = const { Cell::new(false) };
}

/// `GAME`, locked by this thread.
struct GameGuard(MutexGuard<'static, Option<Box<LoadedGame>>>);

impl Drop for GameGuard {
    fn drop(&mut self) {
        HOLDING_GAME.set(false);
    }
}

impl Deref for GameGuard {
    type Target = Option<Box<LoadedGame>>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for GameGuard {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// The game slot, locked; `None` when this thread holds it already (a call from a callback the
/// holder is running), which would otherwise wait for itself forever.
fn lock_game() -> Option<GameGuard> {
    if HOLDING_GAME.get() {
        return None;
    }
    let guard = lock(&GAME);
    HOLDING_GAME.set(true);
    Some(GameGuard(guard))
}

/// A panic cannot cross the C boundary (it aborts there), so a poisoned lock only means an earlier
/// call aborted; the data is still the last consistent one.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A copy of the callbacks, so `FRONTEND` is not locked while they run.
fn frontend() -> Frontend {
    *lock(&FRONTEND)
}

/// Sends a line to the frontend's log (stderr when it has none). Cold path: allocates.
fn log(level: c_uint, message: &str) {
    let line = format!("[anes] {message}\n");
    match frontend().log {
        Some(log) => {
            // A line logged by a call the log callback makes would call it again, without end.
            if LOGGING.get() {
                return;
            }
            let Ok(line) = CString::new(line.replace('\0', " ")) else { return };
            LOGGING.set(true);
            // SAFETY: the frontend's printf-like logger gets a "%s" format and one NUL-terminated
            // string argument that outlives the call.
            unsafe { log(level, c"%s".as_ptr(), line.as_ptr()) };
            LOGGING.set(false);
        }
        // Not `eprint!`: it panics when stderr cannot be written (full, a closed pipe), and a panic
        // here aborts the frontend.
        None => {
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        }
    }
}

/// The largest buffer a slice can describe; a frontend's size above it is refused, not trusted.
const MAX_BUFFER: usize = isize::MAX as usize;

/// Calls the frontend's environment callback; false when there is none or it refused.
fn environment<T>(cmd: c_uint, data: *mut T) -> bool {
    match frontend().environment {
        // SAFETY: `data` points to the type libretro.h documents for `cmd` (each caller passes
        // the matching struct, alive for the duration of the call).
        Some(env) => unsafe { env(cmd, data.cast()) },
        None => false,
    }
}

/// `retro_api_version`.
#[unsafe(no_mangle)]
pub extern "C" fn retro_api_version() -> c_uint {
    API_VERSION
}

/// `retro_init`.
#[unsafe(no_mangle)]
pub extern "C" fn retro_init() {}

/// `retro_deinit`: drops the game, if one is still loaded.
#[unsafe(no_mangle)]
pub extern "C" fn retro_deinit() {
    match lock_game() {
        Some(mut slot) => *slot = None,
        None => log(LOG_WARN, "retro_deinit from a callback of retro_run refused: the frame is running"),
    }
}

/// `retro_get_system_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn retro_get_system_info(info: *mut SystemInfo) {
    if info.is_null() {
        return;
    }
    let value = SystemInfo {
        library_name: c"anes".as_ptr(),
        library_version: concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast(),
        valid_extensions: c"nes".as_ptr(),
        need_fullpath: false,
        block_extract: false,
    };
    // SAFETY: the frontend passes a valid, writable `retro_system_info` (checked non-null); the
    // strings are static.
    unsafe { info.write(value) };
}

/// `retro_get_system_av_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn retro_get_system_av_info(info: *mut SystemAvInfo) {
    if info.is_null() {
        return;
    }
    let value = SystemAvInfo {
        geometry: GameGeometry {
            base_width: PICTURE_WIDTH as u32,
            base_height: PICTURE_HEIGHT as u32,
            max_width: PICTURE_WIDTH as u32,
            max_height: PICTURE_HEIGHT as u32,
            aspect_ratio: Overscan::NONE.display_aspect_ratio() as f32,
        },
        timing: SystemTiming { fps: frames_per_second_of(loaded_region()), sample_rate: SAMPLE_RATE },
    };
    // SAFETY: the frontend passes a valid, writable `retro_system_av_info` (checked non-null).
    unsafe { info.write(value) };
}

/// `retro_set_environment`: keeps the callback, declares the controllers, asks for a logger.
#[unsafe(no_mangle)]
pub extern "C" fn retro_set_environment(callback: Option<EnvironmentFn>) {
    lock(&FRONTEND).environment = callback;
    let pads = [
        ControllerDescription { desc: c"NES Controller".as_ptr(), id: DEVICE_JOYPAD },
        ControllerDescription { desc: c"None".as_ptr(), id: DEVICE_NONE },
    ];
    let ports = [
        ControllerInfo { types: pads.as_ptr(), num_types: 2 },
        ControllerInfo { types: pads.as_ptr(), num_types: 2 },
        ControllerInfo { types: std::ptr::null(), num_types: 0 },
    ];
    environment(ENVIRONMENT_SET_CONTROLLER_INFO, ports.as_ptr().cast_mut());
    let mut options = [
        Variable { key: REGION_OPTION.as_ptr(), value: REGION_OPTION_CHOICES.as_ptr() },
        Variable { key: POWER_ON_OPTION.as_ptr(), value: POWER_ON_OPTION_CHOICES.as_ptr() },
        Variable { key: std::ptr::null(), value: std::ptr::null() },
    ];
    environment(ENVIRONMENT_SET_VARIABLES, options.as_mut_ptr());
    let mut logger = LogCallback { log: None };
    if environment(ENVIRONMENT_GET_LOG_INTERFACE, &mut logger) {
        lock(&FRONTEND).log = logger.log;
    }
}

/// The core option choosing the console of a multi-region ROM (NES 2.0 byte 12 = 2).
const REGION_OPTION: &CStr = c"anes_region";
/// Its description and values (libretro's `Description; first|second|...`, the first the default).
const REGION_OPTION_CHOICES: &CStr = c"Region of multi-region games (on load); auto|ntsc|pal|dendy";

/// The core option choosing the power-on profile.
const POWER_ON_OPTION: &CStr = c"anes_power_on";
/// Its description and values: the named profiles (the default first) and four drawn ones.
const POWER_ON_OPTION_CHOICES: &CStr = c"Power-on state (on load); default|vblank-set|warm-up|quick-power-cycle|console-palette|ram-ff|phase-1|phase-2|phase-3|random:1|random:2|random:3|random:4";

/// The `anes_power_on` option's profile (unset or unknown: the default, logged when unknown).
fn power_on_option() -> PowerOnProfile {
    let mut variable = Variable { key: POWER_ON_OPTION.as_ptr(), value: std::ptr::null() };
    if !environment(ENVIRONMENT_GET_VARIABLE, &mut variable) || variable.value.is_null() {
        return PowerOnProfile::Default;
    }
    // SAFETY: the frontend set `value` to a NUL-terminated string valid until the next call.
    let value = unsafe { CStr::from_ptr(variable.value) };
    match value
        .to_str()
        .map_err(|_| "not UTF-8".to_string())
        .and_then(|t| t.parse().map_err(|e: PowerOnError| e.to_string()))
    {
        Ok(profile) => profile,
        Err(why) => {
            log(LOG_WARN, &format!("anes_power_on: {why}; powering on with the default"));
            PowerOnProfile::Default
        }
    }
}

/// The console region for `rom`: the `anes_region` option's for a multi-region ROM (`auto`, unset or
/// unknown: the header's, NTSC), otherwise the header's.
fn region_for(rom: &[u8]) -> Option<Region> {
    let multi = anes_frontend::anes_core::Cartridge::from_ines(rom)
        .is_ok_and(|cart| cart.info().region == anes_frontend::anes_core::HeaderRegion::Multi);
    if !multi {
        return None;
    }
    let mut variable = Variable { key: REGION_OPTION.as_ptr(), value: std::ptr::null() };
    if !environment(ENVIRONMENT_GET_VARIABLE, &mut variable) || variable.value.is_null() {
        return None;
    }
    // SAFETY: the frontend set `value` to a NUL-terminated string valid until the next call.
    let value = unsafe { CStr::from_ptr(variable.value) };
    value.to_str().ok().and_then(Region::from_name)
}

/// `retro_set_video_refresh`.
#[unsafe(no_mangle)]
pub extern "C" fn retro_set_video_refresh(callback: Option<VideoRefreshFn>) {
    lock(&FRONTEND).video_refresh = callback;
}

/// `retro_set_audio_sample`: unused, audio goes in batches.
#[unsafe(no_mangle)]
pub extern "C" fn retro_set_audio_sample(_callback: Option<AudioSampleFn>) {}

/// `retro_set_audio_sample_batch`.
#[unsafe(no_mangle)]
pub extern "C" fn retro_set_audio_sample_batch(callback: Option<AudioSampleBatchFn>) {
    lock(&FRONTEND).audio_sample_batch = callback;
}

/// `retro_set_input_poll`.
#[unsafe(no_mangle)]
pub extern "C" fn retro_set_input_poll(callback: Option<InputPollFn>) {
    lock(&FRONTEND).input_poll = callback;
}

/// `retro_set_input_state`.
#[unsafe(no_mangle)]
pub extern "C" fn retro_set_input_state(callback: Option<InputStateFn>) {
    lock(&FRONTEND).input_state = callback;
}

/// `retro_set_controller_port_device`: a joypad (or a subclass of one) plugs the port, anything
/// else unplugs it.
#[unsafe(no_mangle)]
pub extern "C" fn retro_set_controller_port_device(port: c_uint, device: c_uint) {
    if let Some(plugged) = lock(&FRONTEND).plugged.get_mut(port as usize) {
        *plugged = device & 0xFF == DEVICE_JOYPAD;
    }
}

/// `retro_load_game`: the ROM's bytes in, a console powered on.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn retro_load_game(game: *const GameInfo) -> bool {
    // SAFETY: the frontend passes null or a valid `retro_game_info` for the duration of the call.
    let Some(game) = (unsafe { game.as_ref() }) else {
        log(LOG_ERROR, "no game given; this core needs a ROM");
        return false;
    };
    if game.data.is_null() {
        log(LOG_ERROR, "the frontend passed no ROM bytes (need_fullpath is false)");
        return false;
    }
    if game.size > MAX_BUFFER {
        log(LOG_ERROR, &format!("ROM size {} is larger than any buffer can be", game.size));
        return false;
    }
    if HOLDING_GAME.get() {
        log(LOG_ERROR, "retro_load_game from a callback of retro_run refused: the frame is running");
        return false;
    }
    // SAFETY: with need_fullpath false, `data` holds the file's `size` bytes for this call.
    let rom = unsafe { std::slice::from_raw_parts(game.data.cast::<u8>(), game.size) };
    let mut format = PIXEL_FORMAT_XRGB8888;
    let pixel_format = if environment(ENVIRONMENT_SET_PIXEL_FORMAT, &mut format) {
        PixelFormat::Xrgb8888
    } else {
        format = PIXEL_FORMAT_RGB565;
        if !environment(ENVIRONMENT_SET_PIXEL_FORMAT, &mut format) {
            log(LOG_ERROR, "the frontend accepts neither XRGB8888 nor RGB565 pictures");
            return false;
        }
        PixelFormat::Rgb565
    };
    let region = region_for(rom);
    let mut loaded = match LoadedGame::new(rom, pixel_format, region, power_on_option()) {
        Ok(loaded) => Box::new(loaded),
        Err(error) => {
            log(LOG_ERROR, &format!("ROM refused: {error}"));
            return false;
        }
    };
    declare_inputs();
    let mut achievements = true;
    environment(ENVIRONMENT_SET_SUPPORT_ACHIEVEMENTS, &mut achievements);
    declare_memory_map(&mut loaded);
    let region = loaded.console.nes().region();
    let Some(mut slot) = lock_game() else { return false };
    *slot = Some(loaded);
    drop(slot);
    log(LOG_INFO, &format!("loaded a {} byte ROM, a {region} console, {pixel_format:?} pictures", rom.len()));
    true
}

/// Names the joypad buttons both ports use.
fn declare_inputs() {
    let names = [
        (joypad::A, c"A"),
        (joypad::B, c"B"),
        (joypad::SELECT, c"Select"),
        (joypad::START, c"Start"),
        (joypad::UP, c"Up"),
        (joypad::DOWN, c"Down"),
        (joypad::LEFT, c"Left"),
        (joypad::RIGHT, c"Right"),
    ];
    let mut descriptors = Vec::with_capacity(2 * names.len() + 1);
    for port in 0..2 {
        for (id, name) in names {
            descriptors.push(InputDescriptor {
                port,
                device: DEVICE_JOYPAD,
                index: 0,
                id,
                description: name.as_ptr(),
            });
        }
    }
    descriptors.push(InputDescriptor { port: 0, device: 0, index: 0, id: 0, description: std::ptr::null() });
    environment(ENVIRONMENT_SET_INPUT_DESCRIPTORS, descriptors.as_mut_ptr());
}

/// Tells the frontend where the work RAM ($0000, 2 KiB) and the battery-backed cartridge RAM
/// ($6000, or $7000 on the MMC6) are, for cheat searches and achievements.
fn declare_memory_map(game: &mut LoadedGame) {
    let battery = game.console.battery_ram().is_some();
    let nes = game.console.nes_mut();
    let mut descriptors = vec![MemoryDescriptor {
        flags: MEMDESC_SYSTEM_RAM,
        ptr: nes.ram_mut().as_mut_ptr().cast(),
        offset: 0,
        start: 0x0000,
        select: 0,
        disconnect: 0,
        len: 0x800,
        addrspace: std::ptr::null(),
    }];
    let prg_ram = nes_prg_ram(nes);
    if let Some((ptr, start, len)) = prg_ram {
        descriptors.push(MemoryDescriptor {
            flags: if battery { MEMDESC_SAVE_RAM } else { 0 },
            ptr,
            offset: 0,
            start,
            select: 0,
            disconnect: 0,
            len,
            addrspace: std::ptr::null(),
        });
    }
    let mut map =
        MemoryMap { descriptors: descriptors.as_ptr(), num_descriptors: descriptors.len() as c_uint };
    // The frontend copies the descriptors; the memory they point to lives as long as the game.
    environment(ENVIRONMENT_SET_MEMORY_MAPS, &mut map);
}

/// The battery-backed cartridge RAM as the CPU sees it (its first 8 KiB from $6000, the MMC6's
/// 1 KiB from $7000) and where, if the battery memory is PRG RAM. (Volatile cartridge RAM is not
/// declared: the core gives no mutable access to it. Nor is battery memory the CPU does not address:
/// a flash board's PRG flash, the Bandai boards' serial EEPROM, the Namco 163's internal RAM; save
/// RAM still exposes those.)
fn nes_prg_ram(nes: &mut anes_frontend::anes_core::Nes) -> Option<(*mut c_void, usize, usize)> {
    let cartridge = nes.cartridge();
    if !cartridge.battery_ram_is_prg_ram() {
        return None;
    }
    let start = usize::from(cartridge.prg_ram_cpu_address());
    nes.battery_ram_mut()
        .map(|ram| (ram.as_mut_ptr().cast(), start, ram.len().min(0x8000usize.saturating_sub(start))))
}

/// `retro_load_game_special`: no special content kinds.
#[unsafe(no_mangle)]
pub extern "C" fn retro_load_game_special(_kind: c_uint, _info: *const GameInfo, _count: usize) -> bool {
    false
}

/// `retro_unload_game`.
#[unsafe(no_mangle)]
pub extern "C" fn retro_unload_game() {
    match lock_game() {
        Some(mut slot) => *slot = None,
        None => log(LOG_WARN, "retro_unload_game from a callback of retro_run refused: the frame is running"),
    }
}

/// The loaded game's console region (NTSC before a game is loaded).
fn loaded_region() -> Region {
    lock_game().and_then(|slot| slot.as_ref().map(|game| game.console.nes().region())).unwrap_or(Region::Ntsc)
}

/// `retro_get_region`: PAL for PAL and Dendy consoles (both run at about 50 frames a second).
#[unsafe(no_mangle)]
pub extern "C" fn retro_get_region() -> c_uint {
    match loaded_region() {
        Region::Ntsc => REGION_NTSC,
        Region::Pal | Region::Dendy => REGION_PAL,
    }
}

/// `retro_run`: polls input, runs one frame, hands over its picture and audio.
#[unsafe(no_mangle)]
pub extern "C" fn retro_run() {
    let frontend = frontend();
    if let Some(poll) = frontend.input_poll {
        // SAFETY: a frontend callback taking no arguments.
        unsafe { poll() };
    }
    // Read before the game is locked, so the input callbacks may call into the core.
    let pads = game::pads(frontend.plugged, |port: c_uint, id: c_uint| match frontend.input_state {
        // SAFETY: a frontend callback taking plain integers.
        Some(state) => unsafe { state(port, DEVICE_JOYPAD, 0, id) != 0 },
        None => false,
    });
    let Some(mut guard) = lock_game() else { return };
    let Some(game) = guard.as_mut() else { return };
    game.run_frame(pads);
    if let Some(video) = frontend.video_refresh {
        // SAFETY: the picture buffer holds 240 rows of `pitch` bytes and outlives the call; the
        // frontend only reads it.
        unsafe {
            video(game.video.as_ptr().cast(), PICTURE_WIDTH as u32, PICTURE_HEIGHT as u32, game.pitch())
        };
    }
    if let Some(batch) = frontend.audio_sample_batch {
        let samples = game.console.audio();
        let frames = samples.len() / 2;
        let mut done = 0usize;
        while done < frames {
            let offered = frames - done;
            let rest = &samples[2 * done..];
            // SAFETY: `rest` holds `offered` interleaved stereo frames and outlives the call; the
            // frontend only reads them.
            let taken = unsafe { batch(rest.as_ptr(), offered) };
            // A frontend that takes nothing would be offered the same frames forever; one that
            // claims more than it was offered (up to SIZE_MAX) is held to the offer.
            if taken == 0 {
                break;
            }
            done = done.saturating_add(taken.min(offered));
        }
    }
}

/// `retro_reset`: the reset button.
#[unsafe(no_mangle)]
pub extern "C" fn retro_reset() {
    if let Some(game) = lock_game().as_mut().and_then(|slot| slot.as_mut()) {
        game.console.reset();
    }
}

/// `retro_serialize_size`: fixed for a loaded game.
#[unsafe(no_mangle)]
pub extern "C" fn retro_serialize_size() -> usize {
    lock_game().and_then(|slot| slot.as_ref().map(|game| game.console.snapshot_len())).unwrap_or(0)
}

/// `retro_serialize`: a console snapshot (cheats included) into the frontend's buffer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn retro_serialize(data: *mut c_void, size: usize) -> bool {
    if size > MAX_BUFFER {
        log(LOG_ERROR, &format!("save state refused: buffer size {size} is larger than any buffer can be"));
        return false;
    }
    let Some(slot) = lock_game() else { return false };
    let Some(game) = slot.as_ref() else { return false };
    if data.is_null() {
        return false;
    }
    // SAFETY: the frontend passes a writable buffer of `size` bytes (checked non-null, and at
    // most isize::MAX) for the duration of the call.
    let out = unsafe { std::slice::from_raw_parts_mut(data.cast::<u8>(), size) };
    let result = game.console.save_state_into(out);
    drop(slot);
    match result {
        Ok(_) => true,
        Err(error) => {
            log(LOG_ERROR, &format!("save state: {error}"));
            false
        }
    }
}

/// `retro_unserialize`: restores a snapshot, its cheats included; refuses anything else whole.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn retro_unserialize(data: *const c_void, size: usize) -> bool {
    if size > MAX_BUFFER {
        log(LOG_ERROR, &format!("load state refused: state size {size} is larger than any buffer can be"));
        return false;
    }
    let Some(mut slot) = lock_game() else { return false };
    let Some(game) = slot.as_mut() else { return false };
    if data.is_null() {
        return false;
    }
    // SAFETY: the frontend passes a readable buffer of `size` bytes (checked non-null, and at
    // most isize::MAX) for the duration of the call.
    let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) };
    let result = game.console.load_state(bytes);
    drop(slot);
    match result {
        Ok(()) => true,
        Err(error) => {
            log(LOG_ERROR, &format!("load state refused: {error}"));
            false
        }
    }
}

/// `retro_cheat_reset`.
#[unsafe(no_mangle)]
pub extern "C" fn retro_cheat_reset() {
    let Some(mut slot) = lock_game() else { return };
    let Some(game) = slot.as_mut() else { return };
    game.cheats.clear();
    let result = game.apply_cheats();
    drop(slot);
    if let Err(why) = result {
        log(LOG_ERROR, &format!("cheats: {why}"));
    }
}

/// `retro_cheat_set`: Game Genie letters or `AAAA:VV` / `AAAA?CC:VV`, joined by `+`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn retro_cheat_set(index: c_uint, enabled: bool, code: *const c_char) {
    if code.is_null() {
        return;
    }
    // SAFETY: the frontend passes a NUL-terminated string (checked non-null) for this call.
    let code = unsafe { CStr::from_ptr(code) }.to_string_lossy();
    let Some(mut slot) = lock_game() else { return };
    let Some(game) = slot.as_mut() else { return };
    let refused = match cheat::parse(&code) {
        Ok(codes) => {
            let previous = game.cheats.set(index, enabled, codes);
            // A refused apply leaves the console's codes as they were; the table goes back too, so
            // the refusal changes nothing (not even the cheat this index held).
            match game.apply_cheats() {
                Ok(()) => None,
                Err(why) => {
                    game.cheats.put_back(index, previous);
                    Some(why)
                }
            }
        }
        Err(why) => Some(why),
    };
    drop(slot);
    if let Some(why) = refused {
        log(LOG_WARN, &format!("cheat {index} ignored: {why}"));
    }
}

/// `retro_get_memory_data`: save RAM (the battery-backed RAM) and system RAM (2 KiB of work RAM).
/// The pointers stay valid until the game is unloaded.
#[unsafe(no_mangle)]
pub extern "C" fn retro_get_memory_data(id: c_uint) -> *mut c_void {
    let Some(mut slot) = lock_game() else { return std::ptr::null_mut() };
    let Some(game) = slot.as_mut() else { return std::ptr::null_mut() };
    let nes = game.console.nes_mut();
    match id {
        MEMORY_SAVE_RAM => nes.battery_ram_mut().map_or(std::ptr::null_mut(), |ram| ram.as_mut_ptr().cast()),
        MEMORY_SYSTEM_RAM => nes.ram_mut().as_mut_ptr().cast(),
        _ => std::ptr::null_mut(),
    }
}

/// `retro_get_memory_size`.
#[unsafe(no_mangle)]
pub extern "C" fn retro_get_memory_size(id: c_uint) -> usize {
    let Some(slot) = lock_game() else { return 0 };
    let Some(game) = slot.as_ref() else { return 0 };
    match id {
        MEMORY_SAVE_RAM => game.console.battery_ram().map_or(0, <[u8]>::len),
        MEMORY_SYSTEM_RAM => game.console.system_ram().len(),
        _ => 0,
    }
}
