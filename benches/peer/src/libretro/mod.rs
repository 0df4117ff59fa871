//! A minimal libretro frontend: loads a core (a shared library with the libretro C ABI), hands it a
//! ROM's bytes, plugs RetroPads into the first ports, runs frames, and reads the memory the core
//! exposes (`retro_get_memory_data`). No window, no audio device: the video callback keeps the last
//! picture (one copy per frame, as a frontend uploads it) and the audio callbacks count the samples
//! and drop them; the core synthesizes them as it always does.
//!
//! A libretro core keeps its state in globals (it has no instance handle), so one process runs one
//! host at a time: a second [`LibretroHost::new`] while one is alive returns [`HostError::Busy`].
//! The callbacks reach the host's data through a process-wide slot for the same reason.
//!
//! ```no_run
//! use anes_peer_bench::libretro::{HostConfig, LibretroHost};
//! let rom = std::fs::read("roms/demo/demo.nes")?;
//! let core = std::path::Path::new("/usr/lib/x86_64-linux-gnu/libretro/nestopia_libretro.so");
//! let mut host = LibretroHost::new(core, &rom, &HostConfig::default())?;
//! host.run_frame();
//! let ram = host.system_ram().expect("the core exposes system RAM");
//! println!("frame counter ${:02X}{:02X}", ram[4], ram[3]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod console;
/// libretro.h's layouts and numbers, from the anes core's own libretro crate.
pub use anes_libretro::ffi;

use std::ffi::{CStr, CString, c_char, c_uint, c_void};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use libloading::Library;

use self::ffi::{GameInfo, SystemInfo, Variable};

/// RetroPads a host can plug in (libretro numbers ports from 0; the NES has two).
pub const MAX_JOYPAD_PORTS: usize = 2;

/// Why a core could not be loaded or could not load the ROM.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// No file at the core's path.
    #[error("libretro core {path}: no such file")]
    CoreNotFound {
        /// The path tried.
        path: PathBuf,
    },
    /// The named core is installed in none of the usual folders.
    #[error("{core} is not installed (looked in {searched}); {hint}")]
    CoreNotInstalled {
        /// The core's file name.
        core: &'static str,
        /// The folders searched, comma-separated.
        searched: String,
        /// How to install it.
        hint: &'static str,
    },
    /// The dynamic loader refused the file.
    #[error("libretro core {path}: cannot load it: {message}")]
    Open {
        /// The core's path.
        path: PathBuf,
        /// The loader's message.
        message: String,
    },
    /// The library lacks an entry point of the libretro API: not a libretro core.
    #[error("libretro core {path}: no symbol {symbol} (not a libretro core?): {message}")]
    MissingSymbol {
        /// The core's path.
        path: PathBuf,
        /// The entry point.
        symbol: &'static str,
        /// The loader's message.
        message: String,
    },
    /// The core implements another version of the API.
    #[error("libretro core {path}: API version {version}, this host speaks version {}", ffi::API_VERSION)]
    ApiVersion {
        /// The core's path.
        path: PathBuf,
        /// What `retro_api_version` returned.
        version: c_uint,
    },
    /// The core wants a file path instead of the ROM's bytes, which this host does not give.
    #[error("libretro core {path}: wants a file path (need_fullpath), this host passes the ROM's bytes")]
    NeedsFullPath {
        /// The core's path.
        path: PathBuf,
    },
    /// `retro_load_game` returned false.
    #[error("libretro core {path} ({core}) refused the ROM")]
    LoadGame {
        /// The core's path.
        path: PathBuf,
        /// The core's name and version.
        core: String,
    },
    /// Another host is alive in this process (a core's state is global).
    #[error("another libretro host is running in this process (a core keeps its state in globals)")]
    Busy,
    /// A core option's key or value contains a NUL byte.
    #[error("core option {key:?} = {value:?} contains a NUL byte")]
    Option {
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
    /// More RetroPads asked for than the host has ports.
    #[error("{asked} joypad ports asked for, at most {MAX_JOYPAD_PORTS}")]
    Ports {
        /// How many were asked for.
        asked: usize,
    },
    /// The empty system/save folder the host hands the core could not be made.
    #[error("cannot create the core's system folder {path}: {source}")]
    SystemDir {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// How the host sets the core up.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// Core options answered to `RETRO_ENVIRONMENT_GET_VARIABLE`, as (key, value); the core keeps
    /// its own default for any key not listed.
    pub options: Vec<(String, String)>,
    /// Ports 0..joypad_ports get a RetroPad (`retro_set_controller_port_device`). Some cores
    /// (Nestopia) leave a port unplugged until this is called, and an unplugged port reads as no
    /// buttons at all.
    pub joypad_ports: usize,
}

impl Default for HostConfig {
    /// No options, both ports plugged.
    fn default() -> HostConfig {
        HostConfig { options: Vec::new(), joypad_ports: MAX_JOYPAD_PORTS }
    }
}

/// The last picture the core handed over, rows packed (no padding).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Picture {
    /// Pixels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// `ffi::PIXEL_FORMAT_*` the core asked for.
    pub format: c_uint,
    /// `width * height` pixels of 2 or 4 bytes each, in the host's byte order.
    pub bytes: Vec<u8>,
}

/// The core's entry points, copied out of the library (valid while it stays loaded).
#[derive(Clone, Copy)]
struct Api {
    set_environment: unsafe extern "C" fn(ffi::EnvironmentFn),
    set_video_refresh: unsafe extern "C" fn(ffi::VideoRefreshFn),
    set_audio_sample: unsafe extern "C" fn(ffi::AudioSampleFn),
    set_audio_sample_batch: unsafe extern "C" fn(ffi::AudioSampleBatchFn),
    set_input_poll: unsafe extern "C" fn(ffi::InputPollFn),
    set_input_state: unsafe extern "C" fn(ffi::InputStateFn),
    init: unsafe extern "C" fn(),
    deinit: unsafe extern "C" fn(),
    api_version: unsafe extern "C" fn() -> c_uint,
    get_system_info: unsafe extern "C" fn(*mut SystemInfo),
    set_controller_port_device: unsafe extern "C" fn(c_uint, c_uint),
    reset: unsafe extern "C" fn(),
    run: unsafe extern "C" fn(),
    load_game: unsafe extern "C" fn(*const GameInfo) -> bool,
    unload_game: unsafe extern "C" fn(),
    get_memory_data: unsafe extern "C" fn(c_uint) -> *mut c_void,
    get_memory_size: unsafe extern "C" fn(c_uint) -> usize,
}

impl Api {
    fn load(library: &Library, path: &Path) -> Result<Api, HostError> {
        /// One entry point, with the C type `libretro.h` gives it.
        fn symbol<T: Copy>(library: &Library, path: &Path, name: &'static str) -> Result<T, HostError> {
            // SAFETY: each call below names a libretro entry point together with the function type
            // libretro.h declares for it, so the pointer is used with its real signature. The
            // pointer is copied out; `LibretroHost` keeps the library loaded while it holds it.
            let found = unsafe { library.get::<T>(name.as_bytes()) };
            found.map(|symbol| *symbol).map_err(|err| HostError::MissingSymbol {
                path: path.to_owned(),
                symbol: name,
                message: err.to_string(),
            })
        }
        Ok(Api {
            set_environment: symbol(library, path, "retro_set_environment")?,
            set_video_refresh: symbol(library, path, "retro_set_video_refresh")?,
            set_audio_sample: symbol(library, path, "retro_set_audio_sample")?,
            set_audio_sample_batch: symbol(library, path, "retro_set_audio_sample_batch")?,
            set_input_poll: symbol(library, path, "retro_set_input_poll")?,
            set_input_state: symbol(library, path, "retro_set_input_state")?,
            init: symbol(library, path, "retro_init")?,
            deinit: symbol(library, path, "retro_deinit")?,
            api_version: symbol(library, path, "retro_api_version")?,
            get_system_info: symbol(library, path, "retro_get_system_info")?,
            set_controller_port_device: symbol(library, path, "retro_set_controller_port_device")?,
            reset: symbol(library, path, "retro_reset")?,
            run: symbol(library, path, "retro_run")?,
            load_game: symbol(library, path, "retro_load_game")?,
            unload_game: symbol(library, path, "retro_unload_game")?,
            get_memory_data: symbol(library, path, "retro_get_memory_data")?,
            get_memory_size: symbol(library, path, "retro_get_memory_size")?,
        })
    }
}

/// What the callbacks read and write: the host's answers to the core and what the core handed over.
#[derive(Debug)]
struct Shared {
    /// Answered to `GET_SYSTEM_DIRECTORY` and `GET_SAVE_DIRECTORY`: an empty folder of the host's.
    system_dir: CString,
    options: Vec<(CString, CString)>,
    pixel_format: c_uint,
    picture: Picture,
    pictures: u64,
    audio_frames: u64,
    /// Buttons held per port, bit `ffi::joypad::*`.
    joypads: [u16; MAX_JOYPAD_PORTS],
}

/// The one host of this process, reached by the callbacks (which get no user data).
static SHARED: Mutex<Option<Shared>> = Mutex::new(None);

/// The slot, whatever happened to an earlier holder: a poisoned lock would otherwise make every
/// later callback panic, and a panic must not unwind into the core's C code.
fn shared() -> MutexGuard<'static, Option<Shared>> {
    SHARED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The process's right to run a core, with the empty folder handed to it; given back on drop.
#[derive(Debug)]
struct Claim {
    dir: PathBuf,
}

impl Claim {
    fn take(options: Vec<(CString, CString)>) -> Result<Claim, HostError> {
        let mut slot = shared();
        if slot.is_some() {
            return Err(HostError::Busy);
        }
        let dir = std::env::temp_dir().join(format!("anes-libretro-host-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|source| HostError::SystemDir { path: dir.clone(), source })?;
        let system_dir =
            CString::new(dir.as_os_str().as_encoded_bytes()).map_err(|_| HostError::SystemDir {
                path: dir.clone(),
                source: std::io::Error::other("the path contains a NUL byte"),
            })?;
        *slot = Some(Shared {
            system_dir,
            options,
            pixel_format: ffi::PIXEL_FORMAT_0RGB1555,
            picture: Picture::default(),
            pictures: 0,
            audio_frames: 0,
            joypads: [0; MAX_JOYPAD_PORTS],
        });
        Ok(Claim { dir })
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        *shared() = None;
        // Only if still empty: the folder is ours, whatever a core left in it is not deleted.
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// A libretro core with a ROM loaded.
pub struct LibretroHost {
    api: Api,
    core_path: PathBuf,
    /// `library_name library_version`.
    core_name: String,
    /// The ROM's bytes, kept for the core's lifetime (a core may keep the pointer it was given).
    _rom: Box<[u8]>,
    initialized: bool,
    game_loaded: bool,
    frames: u64,
    /// First CPU address the protocols asked for that the core's memory does not cover.
    unreadable_cpu: std::cell::Cell<Option<u16>>,
    /// First PPU address asked for (the core exposes no video memory a CPU address can name).
    unreadable_ppu: std::cell::Cell<Option<u16>>,
    // Drop order: the core is shut down in `drop`, then the library closed, then the claim given back.
    _library: Library,
    _claim: Claim,
}

impl std::fmt::Debug for LibretroHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LibretroHost")
            .field("core_path", &self.core_path)
            .field("core_name", &self.core_name)
            .field("frames", &self.frames)
            .finish_non_exhaustive()
    }
}

impl LibretroHost {
    /// Loads the core at `core_path`, sets it up with `config` and loads `rom` (the file's bytes).
    pub fn new(core_path: &Path, rom: &[u8], config: &HostConfig) -> Result<LibretroHost, HostError> {
        if !core_path.is_file() {
            return Err(HostError::CoreNotFound { path: core_path.to_owned() });
        }
        if config.joypad_ports > MAX_JOYPAD_PORTS {
            return Err(HostError::Ports { asked: config.joypad_ports });
        }
        let options = config
            .options
            .iter()
            .map(|(key, value)| match (CString::new(key.as_str()), CString::new(value.as_str())) {
                (Ok(k), Ok(v)) => Ok((k, v)),
                _ => Err(HostError::Option { key: key.clone(), value: value.clone() }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let claim = Claim::take(options)?;
        // SAFETY: loading a library runs its initializers; a libretro core's (C++ static
        // constructors) need nothing from the host. The path names the file checked above.
        let library = unsafe { Library::new(core_path) }
            .map_err(|err| HostError::Open { path: core_path.to_owned(), message: err.to_string() })?;
        let api = Api::load(&library, core_path)?;
        // SAFETY: `retro_api_version` takes nothing and may be called before `retro_init`.
        let version = unsafe { (api.api_version)() };
        if version != ffi::API_VERSION {
            return Err(HostError::ApiVersion { path: core_path.to_owned(), version });
        }
        let mut host = LibretroHost {
            api,
            core_path: core_path.to_owned(),
            core_name: String::new(),
            _rom: rom.into(),
            initialized: false,
            game_loaded: false,
            frames: 0,
            unreadable_cpu: std::cell::Cell::new(None),
            unreadable_ppu: std::cell::Cell::new(None),
            _library: library,
            _claim: claim,
        };
        // SAFETY: the order libretro.h prescribes: the environment first (a core may call it at
        // once), then `retro_init`, then the other callbacks. Each callback is a Rust function of
        // the declared type that lives as long as the process and never unwinds.
        unsafe {
            (api.set_environment)(environment);
            (api.init)();
        }
        host.initialized = true;
        // SAFETY: as above.
        unsafe {
            (api.set_video_refresh)(video_refresh);
            (api.set_audio_sample)(audio_sample);
            (api.set_audio_sample_batch)(audio_sample_batch);
            (api.set_input_poll)(input_poll);
            (api.set_input_state)(input_state);
        }
        let mut info = SystemInfo {
            library_name: std::ptr::null(),
            library_version: std::ptr::null(),
            valid_extensions: std::ptr::null(),
            need_fullpath: false,
            block_extract: false,
        };
        // SAFETY: `info` is a valid `struct retro_system_info` for the core to fill in.
        unsafe { (api.get_system_info)(&mut info) };
        host.core_name = format!("{} {}", c_text(info.library_name), c_text(info.library_version).trim());
        if info.need_fullpath {
            return Err(HostError::NeedsFullPath { path: core_path.to_owned() });
        }
        let game = GameInfo {
            path: std::ptr::null(),
            data: host._rom.as_ptr().cast(),
            size: host._rom.len(),
            meta: std::ptr::null(),
        };
        // SAFETY: `game` points at the ROM's bytes, which the host keeps until it unloads the game.
        if !unsafe { (api.load_game)(&game) } {
            return Err(HostError::LoadGame { path: core_path.to_owned(), core: host.core_name.clone() });
        }
        host.game_loaded = true;
        for port in 0..config.joypad_ports {
            // SAFETY: a game is loaded; ports are numbered from 0 and `port` < 2.
            unsafe { (api.set_controller_port_device)(port as c_uint, ffi::DEVICE_JOYPAD) };
        }
        Ok(host)
    }

    /// The core's `library_name library_version`.
    pub fn core_name(&self) -> &str {
        &self.core_name
    }

    /// Runs one frame (`retro_run`).
    pub fn run_frame(&mut self) {
        // SAFETY: a game is loaded (`new` returns only then) and no borrow of the core's memory is
        // alive (those borrow `self`, this takes it mutably).
        unsafe { (self.api.run)() };
        self.frames += 1;
    }

    /// Frames run since the game was loaded.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Presses the console's reset button (`retro_reset`).
    pub fn reset(&mut self) {
        // SAFETY: a game is loaded, and no borrow of the core's memory is alive.
        unsafe { (self.api.reset)() };
    }

    /// Holds `buttons` (bits numbered as `ffi::joypad::*`) on `port` for the next frames.
    pub fn set_joypad(&mut self, port: usize, buttons: u16) {
        if let Some(slot) = shared().as_mut().and_then(|s| s.joypads.get_mut(port)) {
            *slot = buttons;
        }
    }

    /// The console's work RAM as the core exposes it (`RETRO_MEMORY_SYSTEM_RAM`), if it does.
    pub fn system_ram(&self) -> Option<&[u8]> {
        self.memory(ffi::MEMORY_SYSTEM_RAM)
    }

    /// Battery-backed cartridge RAM (`RETRO_MEMORY_SAVE_RAM`), if the core exposes it for this
    /// cartridge.
    pub fn save_ram(&self) -> Option<&[u8]> {
        self.memory(ffi::MEMORY_SAVE_RAM)
    }

    /// Video RAM (`RETRO_MEMORY_VIDEO_RAM`), if the core exposes it.
    pub fn video_ram(&self) -> Option<&[u8]> {
        self.memory(ffi::MEMORY_VIDEO_RAM)
    }

    fn memory(&self, id: c_uint) -> Option<&[u8]> {
        // SAFETY: a game is loaded; both calls only report where the core keeps that memory.
        let (data, size) = unsafe { ((self.api.get_memory_data)(id), (self.api.get_memory_size)(id)) };
        if data.is_null() || size == 0 {
            return None;
        }
        // SAFETY: the core owns `size` bytes at `data` while the game stays loaded. The slice
        // borrows `self`, so no `run_frame` or `reset` (which take `&mut self`) can change or move
        // them while it lives, and the core runs only when this host calls it.
        Some(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) })
    }

    /// The last picture the core handed over (empty before the first frame).
    pub fn picture(&self) -> Picture {
        shared().as_ref().map(|s| s.picture.clone()).unwrap_or_default()
    }

    /// Pictures handed over since the game was loaded (a core may skip the callback or dupe).
    pub fn pictures(&self) -> u64 {
        shared().as_ref().map_or(0, |s| s.pictures)
    }

    /// Stereo audio frames the core produced since it was loaded (dropped by the host).
    pub fn audio_frames(&self) -> u64 {
        shared().as_ref().map_or(0, |s| s.audio_frames)
    }
}

impl Drop for LibretroHost {
    fn drop(&mut self) {
        // SAFETY: the reverse of `new`: unload the game if one was loaded, then `retro_deinit`
        // if `retro_init` ran. The library is still loaded (fields drop after this).
        unsafe {
            if self.game_loaded {
                (self.api.unload_game)();
            }
            if self.initialized {
                (self.api.deinit)();
            }
        }
    }
}

/// A C string from the core, or "?" for null.
fn c_text(text: *const c_char) -> String {
    if text.is_null() {
        return "?".to_owned();
    }
    // SAFETY: the core hands over NUL-terminated strings that live as long as the library.
    unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
}

/// Writes `value` through the core's pointer `data` (`T *`); false for a null pointer.
///
/// # Safety
/// `data` is null or points at a writable `T`.
unsafe fn answer<T>(data: *mut c_void, value: T) -> bool {
    if data.is_null() {
        return false;
    }
    // SAFETY: the caller's contract.
    unsafe { data.cast::<T>().write(value) };
    true
}

/// `retro_environment_t`: the host's answers to the core.
unsafe extern "C" fn environment(cmd: c_uint, data: *mut c_void) -> bool {
    let mut slot = shared();
    let Some(shared) = slot.as_mut() else { return false };
    match cmd {
        // SAFETY: for this command `data` is a `bool *`.
        ffi::ENVIRONMENT_GET_CAN_DUPE => unsafe { answer(data, true) },
        // SAFETY: for these commands `data` is a `const char **`; the string lives in the slot
        // until the host is dropped.
        ffi::ENVIRONMENT_GET_SYSTEM_DIRECTORY | ffi::ENVIRONMENT_GET_SAVE_DIRECTORY => unsafe {
            answer(data, shared.system_dir.as_ptr())
        },
        ffi::ENVIRONMENT_SET_PIXEL_FORMAT => {
            if data.is_null() {
                return false;
            }
            // SAFETY: for this command `data` is a `const enum retro_pixel_format *` (an int).
            let format = unsafe { data.cast::<c_uint>().read() };
            let known = matches!(
                format,
                ffi::PIXEL_FORMAT_0RGB1555 | ffi::PIXEL_FORMAT_XRGB8888 | ffi::PIXEL_FORMAT_RGB565
            );
            if known {
                shared.pixel_format = format;
            }
            known
        }
        ffi::ENVIRONMENT_GET_VARIABLE => {
            if data.is_null() {
                return false;
            }
            // SAFETY: for this command `data` is a `struct retro_variable *` whose key is a C string.
            let variable = unsafe { &mut *data.cast::<Variable>() };
            if variable.key.is_null() {
                return false;
            }
            // SAFETY: the key is a NUL-terminated string of the core's.
            let key = unsafe { CStr::from_ptr(variable.key) };
            match shared.options.iter().find(|(k, _)| k.as_c_str() == key) {
                Some((_, value)) => {
                    // The value lives in the slot until the host is dropped.
                    variable.value = value.as_ptr();
                    true
                }
                None => false,
            }
        }
        // The options never change while the host runs.
        // SAFETY: for this command `data` is a `bool *`.
        ffi::ENVIRONMENT_GET_VARIABLE_UPDATE => unsafe { answer(data, false) },
        // Bit sets of buttons in one `input_state` call are supported.
        ffi::ENVIRONMENT_GET_INPUT_BITMASKS => true,
        // Announcements a headless host takes note of and has no use for.
        ffi::ENVIRONMENT_SET_PERFORMANCE_LEVEL
        | ffi::ENVIRONMENT_SET_INPUT_DESCRIPTORS
        | ffi::ENVIRONMENT_SET_VARIABLES
        | ffi::ENVIRONMENT_SET_CONTROLLER_INFO
        | ffi::ENVIRONMENT_SET_GEOMETRY
        | ffi::ENVIRONMENT_SET_CORE_OPTIONS_DISPLAY => true,
        _ => false,
    }
}

/// `retro_video_refresh_t`: keeps the picture (null `data`: the previous one again).
unsafe extern "C" fn video_refresh(data: *const c_void, width: c_uint, height: c_uint, pitch: usize) {
    let mut slot = shared();
    let Some(shared) = slot.as_mut() else { return };
    if data.is_null() {
        return;
    }
    let bytes_per_pixel = if shared.pixel_format == ffi::PIXEL_FORMAT_XRGB8888 { 4 } else { 2 };
    let row_bytes = width as usize * bytes_per_pixel;
    if row_bytes > pitch {
        return;
    }
    let picture = &mut shared.picture;
    picture.width = width;
    picture.height = height;
    picture.format = shared.pixel_format;
    // Same size every frame: after the first, no allocation.
    picture.bytes.resize(row_bytes * height as usize, 0);
    for (y, row) in picture.bytes.chunks_exact_mut(row_bytes).enumerate() {
        // SAFETY: the core hands over `height` rows `pitch` bytes apart, each at least
        // `row_bytes` long (checked above), valid during this call.
        let source = unsafe { std::slice::from_raw_parts(data.cast::<u8>().add(y * pitch), row_bytes) };
        row.copy_from_slice(source);
    }
    shared.pictures += 1;
}

/// `retro_audio_sample_t`: one stereo frame, dropped.
unsafe extern "C" fn audio_sample(_left: i16, _right: i16) {
    if let Some(shared) = shared().as_mut() {
        shared.audio_frames += 1;
    }
}

/// `retro_audio_sample_batch_t`: `frames` stereo frames, dropped (all taken).
unsafe extern "C" fn audio_sample_batch(_data: *const i16, frames: usize) -> usize {
    if let Some(shared) = shared().as_mut() {
        shared.audio_frames += frames as u64;
    }
    frames
}

/// `retro_input_poll_t`: the buttons are already in the slot.
unsafe extern "C" fn input_poll() {}

/// `retro_input_state_t`: the buttons held on a RetroPad port, one or all (`JOYPAD_MASK`).
unsafe extern "C" fn input_state(port: c_uint, device: c_uint, index: c_uint, id: c_uint) -> i16 {
    if device & ffi::DEVICE_MASK != ffi::DEVICE_JOYPAD || index != 0 {
        return 0;
    }
    let buttons = shared().as_ref().and_then(|s| s.joypads.get(port as usize).copied()).unwrap_or(0);
    match id {
        ffi::DEVICE_ID_JOYPAD_MASK => buttons as i16,
        0..16 => i16::from(buttons >> id & 1 == 1),
        _ => 0,
    }
}
