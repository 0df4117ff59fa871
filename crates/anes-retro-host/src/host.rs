//! [`RetroCore`]: one libretro core with its content loaded, and the environment a frontend answers.
//!
//! A libretro core has no instance handle and keeps its state in globals, so one process holds one
//! core at a time ([`HostError::Busy`] for a second), and the callbacks reach the host through a
//! process-wide slot. Two instances of a core run in two processes (`anes worker --libretro`).

use std::ffi::{CStr, CString, c_char, c_uint, c_void};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, Once, PoisonError};

use libloading::Library;

use crate::error::HostError;
use crate::ffi;

/// The largest content file read into memory (a CD image is passed by path: `need_fullpath`).
pub const MAX_CONTENT_LEN: u64 = 256 << 20;
/// The largest state a core may ask for ([`HostConfig::max_state_len`]'s default).
pub const MAX_STATE_LEN: usize = 64 << 20;
/// RetroPads the host can plug in.
pub const MAX_PORTS: usize = 2;
/// Samples (i16, both channels counted) kept per frame; more are counted and dropped.
const MAX_AUDIO_SAMPLES_PER_FRAME: usize = 1 << 20;
/// Log lines kept (the newest); older ones are counted.
const MAX_LOG_LINES: usize = 256;
/// The largest picture taken (pixels); a larger one is counted and dropped.
const MAX_PICTURE_PIXELS: usize = 4096 * 4096;
/// The most bytes a picture's rows may span, padding between them included; a wider spread is a
/// pitch no frame buffer has, counted and dropped.
const MAX_PICTURE_SPAN: usize = MAX_PICTURE_PIXELS * 16;
/// The largest memory region read (`retro_get_memory_size`, a memory descriptor's length): each is
/// hashed every frame and kept in snapshots, and a length past `isize::MAX` is no slice at all. A
/// larger one is left out, and why recorded ([`RetroCore::ignored_regions`]).
const MAX_REGION_LEN: usize = MAX_STATE_LEN;
/// Descriptors of a memory map taken: each kept block is a snapshot section, with room for the
/// machine's other sections under `snapshot::MAX_SECTIONS`. A larger map is left out.
const MAX_MAP_DESCRIPTORS: usize = 1000;
const _: () = assert!(MAX_MAP_DESCRIPTORS + 16 <= crate::snapshot::MAX_SECTIONS);
/// Characters of an address space's name kept in a section name.
const MAX_SPACE_NAME_CHARS: usize = 64;
/// Reasons for left-out regions kept (distinct ones).
const MAX_IGNORED: usize = 64;
/// The core's last log lines quoted when it refuses its content.
const REFUSAL_LOG_LINES: usize = 5;

/// How the host sets a core up.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// Core options as (key, value): each must be one the core declares, with a value it lists.
    /// Every other option keeps the core's default.
    pub options: Vec<(String, String)>,
    /// Answered to `GET_SYSTEM_DIRECTORY` (BIOS files). `None`: an empty folder of the process's.
    pub system_dir: Option<PathBuf>,
    /// Answered to `GET_SAVE_DIRECTORY`. `None`: the system folder.
    pub save_dir: Option<PathBuf>,
    /// Ports 0..joypad_ports get a RetroPad (`retro_set_controller_port_device`).
    pub joypad_ports: usize,
    /// The largest state accepted from `retro_serialize_size`.
    pub max_state_len: usize,
}

impl Default for HostConfig {
    fn default() -> HostConfig {
        HostConfig {
            options: Vec::new(),
            system_dir: None,
            save_dir: None,
            joypad_ports: MAX_PORTS,
            max_state_len: MAX_STATE_LEN,
        }
    }
}

/// A core option as the core declared it, with the value the host answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreOption {
    /// The key (`nestopia_palette`).
    pub key: String,
    /// The core's description.
    pub description: String,
    /// The values it lists, in its order.
    pub values: Vec<String>,
    /// Its default (the declared default, or the first value).
    pub default: String,
    /// What the host answers: the value set in [`HostConfig::options`], else the default.
    pub value: String,
}

/// A region of the core's memory from `RETRO_ENVIRONMENT_SET_MEMORY_MAPS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapRegion {
    /// `map.`, the descriptor's address space name (or its index), `.` and its start address in hex
    /// (`map.ram.0`).
    pub name: String,
    /// `RETRO_MEMDESC_*` flags.
    pub flags: u64,
    /// Emulated address of its first byte.
    pub start: usize,
    /// Length in bytes.
    pub len: usize,
    ptr: usize,
    /// The map it came from: a region of an earlier one (before a reload) is not read.
    generation: u64,
}

/// The last picture the core handed over, rows packed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Picture {
    /// Pixels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// `ffi::PIXEL_FORMAT_*`.
    pub format: u32,
    /// `width * height` pixels of 2 or 4 bytes each, little-endian.
    pub bytes: Vec<u8>,
}

impl Picture {
    /// Bytes per pixel of `format`.
    pub fn bytes_per_pixel(format: u32) -> usize {
        if format == ffi::PIXEL_FORMAT_XRGB8888 { 4 } else { 2 }
    }

    /// The picture as 8-bit RGB triples, row by row, into `out` (replacing its contents).
    pub fn to_rgb(&self, out: &mut Vec<u8>) {
        out.clear();
        let bpp = Picture::bytes_per_pixel(self.format);
        for pixel in self.bytes.chunks_exact(bpp) {
            let rgb = match self.format {
                ffi::PIXEL_FORMAT_XRGB8888 => [pixel[2], pixel[1], pixel[0]],
                ffi::PIXEL_FORMAT_RGB565 => {
                    let v = u16::from_le_bytes([pixel[0], pixel[1]]);
                    let (r, g, b) = ((v >> 11) & 0x1F, (v >> 5) & 0x3F, v & 0x1F);
                    [(r << 3 | r >> 2) as u8, (g << 2 | g >> 4) as u8, (b << 3 | b >> 2) as u8]
                }
                _ => {
                    let v = u16::from_le_bytes([pixel[0], pixel[1]]);
                    let (r, g, b) = ((v >> 10) & 0x1F, (v >> 5) & 0x1F, v & 0x1F);
                    [(r << 3 | r >> 2) as u8, (g << 3 | g >> 2) as u8, (b << 3 | b >> 2) as u8]
                }
            };
            out.extend_from_slice(&rgb);
        }
    }
}

/// One line the core logged through the log interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// `RETRO_LOG_*`: 0 debug, 1 info, 2 warn, 3 error.
    pub level: u32,
    /// The text, without its line end.
    pub text: String,
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
    get_system_info: unsafe extern "C" fn(*mut ffi::SystemInfo),
    get_system_av_info: unsafe extern "C" fn(*mut ffi::SystemAvInfo),
    set_controller_port_device: unsafe extern "C" fn(c_uint, c_uint),
    reset: unsafe extern "C" fn(),
    run: unsafe extern "C" fn(),
    serialize_size: unsafe extern "C" fn() -> usize,
    serialize: unsafe extern "C" fn(*mut c_void, usize) -> bool,
    unserialize: unsafe extern "C" fn(*const c_void, usize) -> bool,
    load_game: unsafe extern "C" fn(*const ffi::GameInfo) -> bool,
    unload_game: unsafe extern "C" fn(),
    get_memory_data: unsafe extern "C" fn(c_uint) -> *mut c_void,
    get_memory_size: unsafe extern "C" fn(c_uint) -> usize,
}

impl Api {
    fn load(library: &Library, path: &Path) -> Result<Api, HostError> {
        fn symbol<T: Copy>(library: &Library, path: &Path, name: &'static str) -> Result<T, HostError> {
            // SAFETY: each call below names a libretro entry point with the function type libretro.h
            // declares for it. The pointer is copied out; `RetroCore` keeps the library loaded while
            // it holds it.
            let found = unsafe { library.get::<T>(name.as_bytes()) };
            found.map(|s| *s).map_err(|_| HostError::MissingSymbol { path: path.to_owned(), symbol: name })
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
            get_system_av_info: symbol(library, path, "retro_get_system_av_info")?,
            set_controller_port_device: symbol(library, path, "retro_set_controller_port_device")?,
            reset: symbol(library, path, "retro_reset")?,
            run: symbol(library, path, "retro_run")?,
            serialize_size: symbol(library, path, "retro_serialize_size")?,
            serialize: symbol(library, path, "retro_serialize")?,
            unserialize: symbol(library, path, "retro_unserialize")?,
            load_game: symbol(library, path, "retro_load_game")?,
            unload_game: symbol(library, path, "retro_unload_game")?,
            get_memory_data: symbol(library, path, "retro_get_memory_data")?,
            get_memory_size: symbol(library, path, "retro_get_memory_size")?,
        })
    }
}

/// A declared option in the slot: C strings handed to the core live here.
#[derive(Debug)]
struct OptionSlot {
    option: CoreOption,
    value: CString,
}

/// What the callbacks read and write.
#[derive(Debug)]
struct Shared {
    system_dir: CString,
    save_dir: CString,
    core_path: CString,
    /// Values set by the host's config, kept until the core declares its options.
    wanted: Vec<(String, String)>,
    options: Vec<OptionSlot>,
    options_changed: bool,
    pixel_format: c_uint,
    picture: Picture,
    pictures: u64,
    dropped_pictures: u64,
    audio: Vec<i16>,
    dropped_audio: u64,
    joypads: [u16; MAX_PORTS],
    joypad_ports: usize,
    log: Vec<LogLine>,
    log_dropped: u64,
    maps: Vec<MapRegion>,
    /// Bumped whenever `maps` changes (`Shared::replace_maps`).
    maps_generation: u64,
    /// Why regions the core declared were left out.
    ignored: Vec<String>,
    quirks: u64,
    av_info: ffi::SystemAvInfo,
    unanswered: Vec<c_uint>,
}

static SHARED: Mutex<Option<Shared>> = Mutex::new(None);

/// The slot, whatever happened to an earlier holder: a panic must not unwind into the core's C code,
/// and a poisoned lock would make every later callback panic.
fn shared() -> MutexGuard<'static, Option<Shared>> {
    SHARED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The process's right to hold a core; given back on drop.
#[derive(Debug)]
struct Claim {
    made_dir: Option<PathBuf>,
}

impl Drop for Claim {
    fn drop(&mut self) {
        *shared() = None;
        if let Some(dir) = &self.made_dir {
            // Only if still empty: what a core left there is not deleted.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The default system folder is this followed by the process's PID, in its temporary folder.
const DEFAULT_SYSTEM_DIR_PREFIX: &str = "anes-retro-host-";

/// Removes the empty default system folders in `parent` whose process is gone: it was killed before
/// its core was dropped (an `anes worker --libretro` run by hand or on a remote host, or an
/// embedder). What a core left in one is not deleted, as on a drop.
fn sweep_orphaned_system_dirs(parent: &Path) {
    for dir in anes_fs::orphaned_process_folders(parent, DEFAULT_SYSTEM_DIR_PREFIX, anes_fs::FolderName::Pid)
    {
        let _ = std::fs::remove_dir(dir);
    }
}

fn c_path(path: &Path, what: &'static str) -> Result<CString, HostError> {
    CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| HostError::Nul { what, text: path.display().to_string() })
}

/// A libretro core with its content loaded.
pub struct RetroCore {
    api: Api,
    core_path: PathBuf,
    content_path: PathBuf,
    name: String,
    /// The content's bytes (empty when the core takes a path), kept while the game is loaded.
    content: Box<[u8]>,
    content_c_path: CString,
    need_fullpath: bool,
    initialized: bool,
    game_loaded: bool,
    max_state_len: usize,
    // Drop order: the core is shut down in `drop`, then the library closed, then the claim given back.
    _library: Library,
    _claim: Claim,
}

impl std::fmt::Debug for RetroCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetroCore")
            .field("core_path", &self.core_path)
            .field("content_path", &self.content_path)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl RetroCore {
    /// Loads the core at `core_path`, sets it up with `config` and loads the content at
    /// `content_path` (its bytes, or its path for a core that asks for one).
    pub fn load(core_path: &Path, content_path: &Path, config: &HostConfig) -> Result<RetroCore, HostError> {
        if !core_path.is_file() {
            return Err(if core_path.exists() {
                HostError::CoreNotAFile { path: core_path.to_owned() }
            } else {
                HostError::CoreNotFound { path: core_path.to_owned() }
            });
        }
        // `dlopen` looks a name without a slash up on the system's library path, not in the current
        // folder where `is_file` found it.
        let core_path = &std::path::absolute(core_path)
            .map_err(|e| HostError::Open { path: core_path.to_owned(), message: e.to_string() })?;
        install_log_sink();
        let content_c_path = c_path(content_path, "content path")?;
        let claim_dir;
        let system_dir = match &config.system_dir {
            Some(dir) => {
                claim_dir = None;
                dir.clone()
            }
            None => {
                let parent = std::env::temp_dir();
                static SWEPT: Once = Once::new();
                SWEPT.call_once(|| sweep_orphaned_system_dirs(&parent));
                let dir = parent.join(format!("{DEFAULT_SYSTEM_DIR_PREFIX}{}", std::process::id()));
                std::fs::create_dir_all(&dir)
                    .map_err(|source| HostError::Folder { path: dir.clone(), source })?;
                claim_dir = Some(dir.clone());
                dir
            }
        };
        let save_dir = config.save_dir.clone().unwrap_or_else(|| system_dir.clone());
        {
            let mut slot = shared();
            if slot.is_some() {
                return Err(HostError::Busy);
            }
            *slot = Some(Shared {
                system_dir: c_path(&system_dir, "system folder")?,
                save_dir: c_path(&save_dir, "save folder")?,
                core_path: c_path(core_path, "core path")?,
                wanted: config.options.clone(),
                options: Vec::new(),
                options_changed: false,
                pixel_format: ffi::PIXEL_FORMAT_0RGB1555,
                picture: Picture::default(),
                pictures: 0,
                dropped_pictures: 0,
                audio: Vec::new(),
                dropped_audio: 0,
                joypads: [0; MAX_PORTS],
                joypad_ports: config.joypad_ports.min(MAX_PORTS),
                log: Vec::new(),
                log_dropped: 0,
                maps: Vec::new(),
                maps_generation: 0,
                ignored: Vec::new(),
                quirks: 0,
                av_info: ffi::SystemAvInfo::default(),
                unanswered: Vec::new(),
            });
        }
        let claim = Claim { made_dir: claim_dir };
        // SAFETY: loading a library runs its initializers; a libretro core's need nothing from the
        // host. The path is absolute and names a regular file (checked above).
        let library = unsafe { Library::new(core_path) }
            .map_err(|e| HostError::Open { path: core_path.to_owned(), message: e.to_string() })?;
        let api = Api::load(&library, core_path)?;
        // SAFETY: `retro_api_version` takes nothing and may be called before `retro_init`.
        let version = unsafe { (api.api_version)() };
        if version != ffi::API_VERSION {
            return Err(HostError::ApiVersion { path: core_path.to_owned(), version });
        }
        let mut core = RetroCore {
            api,
            core_path: core_path.to_owned(),
            content_path: content_path.to_owned(),
            name: String::new(),
            content: Box::new([]),
            content_c_path,
            need_fullpath: false,
            initialized: false,
            game_loaded: false,
            max_state_len: config.max_state_len,
            _library: library,
            _claim: claim,
        };
        // SAFETY: libretro.h's order: the environment first (a core may call it at once), then
        // `retro_init`, then the other callbacks. Each callback is a Rust function of the declared
        // type that lives as long as the process and does not unwind.
        unsafe {
            (api.set_environment)(environment);
            (api.init)();
        }
        core.initialized = true;
        // SAFETY: as above.
        unsafe {
            (api.set_video_refresh)(video_refresh);
            (api.set_audio_sample)(audio_sample);
            (api.set_audio_sample_batch)(audio_sample_batch);
            (api.set_input_poll)(input_poll);
            (api.set_input_state)(input_state);
        }
        let mut info = ffi::SystemInfo {
            library_name: std::ptr::null(),
            library_version: std::ptr::null(),
            valid_extensions: std::ptr::null(),
            need_fullpath: false,
            block_extract: false,
        };
        // SAFETY: `info` is a `struct retro_system_info` for the core to fill in.
        unsafe { (api.get_system_info)(&mut info) };
        core.name = format!("{} {}", c_text(info.library_name), c_text(info.library_version).trim());
        core.need_fullpath = info.need_fullpath;
        core.check_options(config)?;
        if !core.need_fullpath {
            core.content = anes_fs::read_capped(content_path, MAX_CONTENT_LEN, "content")
                .map_err(|e| HostError::Content { path: content_path.to_owned(), problem: e.problem() })?
                .into_boxed_slice();
        } else if !content_path.is_file() {
            return Err(HostError::Content {
                path: content_path.to_owned(),
                problem: "no such file (the core reads it by path)".into(),
            });
        }
        core.load_game(config.joypad_ports.min(MAX_PORTS))?;
        Ok(core)
    }

    /// Refuses options the core did not declare, or values it does not list.
    fn check_options(&self, config: &HostConfig) -> Result<(), HostError> {
        let slot = shared();
        let Some(shared) = slot.as_ref() else { return Ok(()) };
        for (key, value) in &config.options {
            let problem = match shared.options.iter().find(|o| &o.option.key == key) {
                None => Some(format!(
                    "the core declares no such option (it declares: {})",
                    shared.options.iter().map(|o| o.option.key.as_str()).collect::<Vec<_>>().join(", ")
                )),
                Some(o) if !o.option.values.is_empty() && !o.option.values.contains(value) => {
                    Some(format!("not one of the values it lists: {}", o.option.values.join(", ")))
                }
                Some(_) => None,
            };
            if let Some(problem) = problem {
                return Err(HostError::Option {
                    core: self.core_path.clone(),
                    key: key.clone(),
                    value: value.clone(),
                    problem,
                });
            }
        }
        Ok(())
    }

    fn load_game(&mut self, joypad_ports: usize) -> Result<(), HostError> {
        let game = ffi::GameInfo {
            path: self.content_c_path.as_ptr(),
            data: if self.need_fullpath { std::ptr::null() } else { self.content.as_ptr().cast() },
            size: self.content.len(),
            meta: std::ptr::null(),
        };
        // SAFETY: `game` points at the content's path and bytes, which the core keeps while the game
        // is loaded (both live in `self`).
        if !unsafe { (self.api.load_game)(&game) } {
            return Err(self.refused());
        }
        self.game_loaded = true;
        for port in 0..joypad_ports {
            // SAFETY: a game is loaded; ports are numbered from 0.
            unsafe { (self.api.set_controller_port_device)(port as c_uint, ffi::DEVICE_JOYPAD) };
        }
        let mut av = ffi::SystemAvInfo::default();
        // SAFETY: a game is loaded; `av` is a `struct retro_system_av_info` to fill in.
        unsafe { (self.api.get_system_av_info)(&mut av) };
        if let Some(s) = shared().as_mut() {
            s.av_info = av;
        }
        Ok(())
    }

    /// `retro_load_game` returned false: the error, with what the core asked for that this host does
    /// not answer (`SET_HW_RENDER`: a hardware-rendered core) and what it last logged.
    fn refused(&self) -> HostError {
        let mut why = String::new();
        if let Some(s) = shared().as_ref() {
            if !s.unanswered.is_empty() {
                let commands: Vec<String> = s.unanswered.iter().map(|&c| command_name(c)).collect();
                why.push_str("; environment commands it asked for that this host does not answer: ");
                why.push_str(&commands.join(", "));
            }
            let first = s.log.len().saturating_sub(REFUSAL_LOG_LINES);
            if let Some(lines) = s.log.get(first..).filter(|l| !l.is_empty()) {
                let lines: Vec<String> = lines
                    .iter()
                    .map(|l| format!("{:?}", l.text.chars().take(200).collect::<String>()))
                    .collect();
                why.push_str("; its last log lines: ");
                why.push_str(&lines.join(", "));
            }
        }
        HostError::LoadGame {
            core: self.core_path.clone(),
            name: self.name.clone(),
            content: self.content_path.clone(),
            why,
        }
    }

    /// Why `call` is not made: no game is loaded (the last power cycle's `retro_load_game` failed).
    fn no_game(&self, call: &'static str) -> HostError {
        HostError::NoGame { core: self.core_path.clone(), content: self.content_path.clone(), call }
    }

    /// Whether a game is loaded: false after a power cycle whose `retro_load_game` failed.
    pub fn game_loaded(&self) -> bool {
        self.game_loaded
    }

    /// The core's `library_name library_version`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The core's path.
    pub fn core_path(&self) -> &Path {
        &self.core_path
    }

    /// The content's path.
    pub fn content_path(&self) -> &Path {
        &self.content_path
    }

    /// The content's bytes (empty for a core that reads it by path).
    pub fn content(&self) -> &[u8] {
        &self.content
    }

    /// Frames per second and audio sample rate the core announced.
    pub fn timing(&self) -> (f64, f64) {
        shared().as_ref().map_or((0.0, 0.0), |s| (s.av_info.timing.fps, s.av_info.timing.sample_rate))
    }

    /// Holds `buttons` (bit `ffi::joypad::*`) on each port for the next frames.
    pub fn set_joypads(&mut self, buttons: [u16; MAX_PORTS]) {
        if let Some(s) = shared().as_mut() {
            s.joypads = buttons;
        }
    }

    /// Runs one frame (`retro_run`); its picture and audio replace the last frame's. Without a
    /// game (a failed power cycle) it runs nothing: [`RetroCore::try_run_frame`] says why.
    pub fn run_frame(&mut self) {
        let _ = self.try_run_frame();
    }

    /// [`RetroCore::run_frame`], refused without a game.
    pub fn try_run_frame(&mut self) -> Result<(), HostError> {
        if let Some(s) = shared().as_mut() {
            s.audio.clear();
        }
        if !self.game_loaded {
            return Err(self.no_game("retro_run"));
        }
        // SAFETY: a game is loaded and no borrow of the core's memory is alive (those borrow `self`,
        // this takes it mutably). The slot's lock is not held.
        unsafe { (self.api.run)() };
        Ok(())
    }

    /// Presses the reset button (`retro_reset`); nothing without a game.
    pub fn reset(&mut self) {
        if self.game_loaded {
            // SAFETY: a game is loaded, no borrow of the core's memory is alive.
            unsafe { (self.api.reset)() };
        }
    }

    /// Powers the machine off and on: unloads the content and loads it again. The memory map is
    /// the new load's (regions of the old one read as empty); on an error no game is loaded.
    pub fn power_cycle(&mut self) -> Result<(), HostError> {
        // A core may free the memory its map points into on unload (mGBA does).
        if let Some(s) = shared().as_mut() {
            s.replace_maps(Vec::new());
        }
        if self.game_loaded {
            // SAFETY: a game is loaded, no borrow of the core's memory is alive.
            unsafe { (self.api.unload_game)() };
            self.game_loaded = false;
        }
        let ports = shared().as_ref().map_or(MAX_PORTS, |s| s.joypad_ports);
        self.load_game(ports)
    }

    /// `retro_serialize_size`, checked against the limit.
    pub fn serialize_size(&self) -> Result<usize, HostError> {
        if !self.game_loaded {
            return Err(self.no_game("retro_serialize_size"));
        }
        // SAFETY: a game is loaded.
        let size = unsafe { (self.api.serialize_size)() };
        if size == 0 {
            return Err(HostError::NoSavestates { core: self.core_path.clone() });
        }
        if size > self.max_state_len {
            return Err(HostError::StateTooLarge {
                core: self.core_path.clone(),
                size,
                max: self.max_state_len,
            });
        }
        Ok(size)
    }

    /// Serializes the machine into `out` (replacing its contents; no allocation once it has the
    /// capacity).
    pub fn serialize(&self, out: &mut Vec<u8>) -> Result<(), HostError> {
        // Empty on every error: an earlier state left in `out` would pass for this one.
        out.clear();
        let size = self.serialize_size()?;
        out.resize(size, 0);
        // SAFETY: `out` holds `size` writable bytes; a game is loaded.
        if unsafe { (self.api.serialize)(out.as_mut_ptr().cast(), size) } {
            Ok(())
        } else {
            out.clear();
            Err(HostError::Serialize { core: self.core_path.clone(), size })
        }
    }

    /// Restores a state from [`RetroCore::serialize`].
    pub fn unserialize(&mut self, state: &[u8]) -> Result<(), HostError> {
        if !self.game_loaded {
            return Err(self.no_game("retro_unserialize"));
        }
        // SAFETY: `state` is readable for its length; a game is loaded and no borrow of the core's
        // memory is alive.
        if unsafe { (self.api.unserialize)(state.as_ptr().cast(), state.len()) } {
            Ok(())
        } else {
            Err(HostError::Unserialize { core: self.core_path.clone(), size: state.len() })
        }
    }

    /// Where the core keeps memory `id` and its length: none without a game, for a null pointer
    /// or length 0, or past [`MAX_REGION_LEN`] (left out, and why recorded).
    fn memory_parts(&self, id: c_uint) -> Option<(*mut u8, usize)> {
        if !self.game_loaded {
            return None;
        }
        // SAFETY: a game is loaded; the calls only report where the core keeps that memory.
        let (data, size) = unsafe { ((self.api.get_memory_data)(id), (self.api.get_memory_size)(id)) };
        if data.is_null() || size == 0 {
            return None;
        }
        if size > MAX_REGION_LEN || (data as usize).checked_add(size).is_none() {
            if let Some(s) = shared().as_mut() {
                s.ignore(format!(
                    "retro_get_memory_size({}) returned {size} bytes, more than the {MAX_REGION_LEN}-byte limit: left out",
                    memory_name(id)
                ));
            }
            return None;
        }
        Some((data.cast(), size))
    }

    /// One of the core's memories by `RETRO_MEMORY_*` id, if it exposes it.
    pub fn memory(&self, id: c_uint) -> Option<&[u8]> {
        let (data, size) = self.memory_parts(id)?;
        // SAFETY: the core owns `size` bytes at `data` while the game is loaded, and `size` is at
        // most `MAX_REGION_LEN`. The slice borrows `self`, so nothing that runs the core (all take
        // `&mut self`) can change them meanwhile.
        Some(unsafe { std::slice::from_raw_parts(data, size) })
    }

    /// [`RetroCore::memory`], writable (fault injection).
    pub fn memory_mut(&mut self, id: c_uint) -> Option<&mut [u8]> {
        let (data, size) = self.memory_parts(id)?;
        // SAFETY: as `memory`; the borrow is exclusive through `&mut self`.
        Some(unsafe { std::slice::from_raw_parts_mut(data, size) })
    }

    /// The regions of `SET_MEMORY_MAPS` that hold state: writable memory (no `CONST` ROM), each
    /// block once (mirrors and repeated descriptors of the same bytes dropped). Valid until the next
    /// load ([`RetroCore::power_cycle`]): ask again after it.
    pub fn map_regions(&self) -> Vec<MapRegion> {
        shared().as_ref().map(|s| s.maps.clone()).unwrap_or_default()
    }

    /// Whether `region` is one of the current map's, as it was handed out: only then are its
    /// pointer and length the core's declaration for the loaded game.
    fn is_current(&self, region: &MapRegion) -> bool {
        self.game_loaded && shared().as_ref().is_some_and(|s| s.maps.iter().any(|m| m == region))
    }

    /// The bytes of a region from [`RetroCore::map_regions`]; empty for one of an earlier load.
    pub fn map_bytes(&self, region: &MapRegion) -> &[u8] {
        if !self.is_current(region) {
            return &[];
        }
        // SAFETY: the current map's descriptor pointer and length (at most `MAX_REGION_LEN`, not
        // past the address space), as the core declared them, stay valid while the game is loaded
        // (libretro.h); borrowed from `self` like `memory`.
        unsafe { std::slice::from_raw_parts(region.ptr as *const u8, region.len) }
    }

    /// [`RetroCore::map_bytes`], writable (fault injection).
    pub fn map_bytes_mut(&mut self, region: &MapRegion) -> &mut [u8] {
        if !self.is_current(region) {
            return &mut [];
        }
        // SAFETY: as `map_bytes`, exclusive through `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(region.ptr as *mut u8, region.len) }
    }

    /// Copies the last picture into `out` (no allocation once `out` has the capacity).
    pub fn picture_into(&self, out: &mut Picture) {
        if let Some(s) = shared().as_ref() {
            out.width = s.picture.width;
            out.height = s.picture.height;
            out.format = s.picture.format;
            out.bytes.clear();
            out.bytes.extend_from_slice(&s.picture.bytes);
        }
    }

    /// Replaces the picture the host holds (after a state is loaded: the core sends none).
    pub fn set_picture(&mut self, picture: &Picture) {
        if let Some(s) = shared().as_mut() {
            s.picture.width = picture.width;
            s.picture.height = picture.height;
            s.picture.format = picture.format;
            s.picture.bytes.clear();
            s.picture.bytes.extend_from_slice(&picture.bytes);
        }
    }

    /// Appends the last frame's audio (interleaved stereo i16, little-endian bytes) to `out`.
    pub fn audio_bytes_into(&self, out: &mut Vec<u8>) {
        if let Some(s) = shared().as_ref() {
            for sample in &s.audio {
                out.extend_from_slice(&sample.to_le_bytes());
            }
        }
    }

    /// Replaces the last frame's audio (after a state is loaded).
    pub fn set_audio_bytes(&mut self, bytes: &[u8]) {
        if let Some(s) = shared().as_mut() {
            s.audio.clear();
            s.audio.extend(bytes.chunks_exact(2).map(|b| i16::from_le_bytes([b[0], b[1]])));
        }
    }

    /// The options the core declared, with the values the host answers.
    pub fn options(&self) -> Vec<CoreOption> {
        shared().as_ref().map(|s| s.options.iter().map(|o| o.option.clone()).collect()).unwrap_or_default()
    }

    /// Sets a declared option; the core sees it at its next `GET_VARIABLE_UPDATE`.
    pub fn set_option(&mut self, key: &str, value: &str) -> Result<(), HostError> {
        let mut slot = shared();
        let Some(s) = slot.as_mut() else { return Ok(()) };
        let known = s.options.iter().map(|o| o.option.key.clone()).collect::<Vec<_>>();
        let error = |problem: String| HostError::Option {
            core: self.core_path.clone(),
            key: key.into(),
            value: value.into(),
            problem,
        };
        let Some(o) = s.options.iter_mut().find(|o| o.option.key == key) else {
            return Err(error(format!(
                "the core declares no such option (it declares: {})",
                known.join(", ")
            )));
        };
        if !o.option.values.is_empty() && !o.option.values.iter().any(|v| v == value) {
            return Err(error(format!("not one of the values it lists: {}", o.option.values.join(", "))));
        }
        o.value =
            CString::new(value).map_err(|_| HostError::Nul { what: "option value", text: value.into() })?;
        o.option.value = value.into();
        s.options_changed = true;
        Ok(())
    }

    /// Log lines the core wrote (the newest `MAX_LOG_LINES`) and how many older ones were dropped.
    pub fn log(&self) -> (Vec<LogLine>, u64) {
        shared().as_ref().map_or((Vec::new(), 0), |s| (s.log.clone(), s.log_dropped))
    }

    /// `RETRO_SERIALIZATION_QUIRK_*` flags the core declared.
    pub fn serialization_quirks(&self) -> u64 {
        shared().as_ref().map_or(0, |s| s.quirks)
    }

    /// Environment commands the host did not answer, in the order first asked.
    pub fn unanswered_commands(&self) -> Vec<u32> {
        shared().as_ref().map(|s| s.unanswered.clone()).unwrap_or_default()
    }

    /// Why memory regions the core declared were left out (too large, a map of too many
    /// descriptors), each reason once.
    pub fn ignored_regions(&self) -> Vec<String> {
        shared().as_ref().map(|s| s.ignored.clone()).unwrap_or_default()
    }

    /// Pictures dropped (0 wide or high, too large, rows spread too far) and audio frames dropped
    /// (past the per-frame limit), since the core was loaded; each count saturates.
    pub fn dropped(&self) -> (u64, u64) {
        shared().as_ref().map_or((0, 0), |s| (s.dropped_pictures, s.dropped_audio))
    }
}

/// A `RETRO_MEMORY_*` id's name.
fn memory_name(id: c_uint) -> String {
    match id {
        ffi::MEMORY_SAVE_RAM => "RETRO_MEMORY_SAVE_RAM".into(),
        ffi::MEMORY_RTC => "RETRO_MEMORY_RTC".into(),
        ffi::MEMORY_SYSTEM_RAM => "RETRO_MEMORY_SYSTEM_RAM".into(),
        ffi::MEMORY_VIDEO_RAM => "RETRO_MEMORY_VIDEO_RAM".into(),
        other => other.to_string(),
    }
}

/// An environment command's libretro.h name (without `RETRO_ENVIRONMENT_`) and number, for the
/// unanswered ones a core may need.
fn command_name(cmd: c_uint) -> String {
    let number = cmd & !ffi::ENVIRONMENT_EXPERIMENTAL;
    let name = match number {
        2 => "GET_OVERSCAN",
        12 => "SET_KEYBOARD_CALLBACK",
        13 => "SET_DISK_CONTROL_INTERFACE",
        14 => "SET_HW_RENDER",
        21 => "SET_FRAME_TIME_CALLBACK",
        22 => "SET_AUDIO_CALLBACK",
        23 => "GET_RUMBLE_INTERFACE",
        28 => "GET_PERF_INTERFACE",
        33 => "SET_PROC_ADDRESS_CALLBACK",
        38 => "GET_USERNAME",
        40 => "GET_CURRENT_SOFTWARE_FRAMEBUFFER",
        41 => "GET_HW_RENDER_INTERFACE",
        43 => "SET_HW_RENDER_CONTEXT_NEGOTIATION_INTERFACE",
        45 => "GET_VFS_INTERFACE",
        56 => "GET_PREFERRED_HW_RENDER",
        57 => "GET_DISK_CONTROL_INTERFACE_VERSION",
        58 => "SET_DISK_CONTROL_EXT_INTERFACE",
        59 => "GET_MESSAGE_INTERFACE_VERSION",
        66 => "GET_GAME_INFO_EXT",
        72 => "GET_SAVESTATE_CONTEXT",
        _ => return number.to_string(),
    };
    format!("{name} ({number})")
}

impl Drop for RetroCore {
    fn drop(&mut self) {
        // SAFETY: the reverse of `load`: unload the game if loaded, then `retro_deinit` if `retro_init`
        // ran. The library is still loaded (fields drop after this).
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

/// [`c_text`] for optional strings: `None` for null.
fn c_text_opt(text: *const c_char) -> Option<String> {
    (!text.is_null()).then(|| c_text(text))
}

/// Writes `value` through the core's pointer; false for null.
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

impl Shared {
    /// Records one declared option; its answer is the host's wanted value, else the default.
    fn declare(&mut self, key: String, description: String, values: Vec<String>, default: Option<String>) {
        let default = default.or_else(|| values.first().cloned()).unwrap_or_default();
        let value = self.wanted.iter().find(|(k, _)| *k == key).map_or(default.clone(), |(_, v)| v.clone());
        let Ok(c_value) = CString::new(value.as_str()) else { return };
        let option = CoreOption { key, description, values, default, value };
        match self.options.iter_mut().find(|o| o.option.key == option.key) {
            Some(slot) => *slot = OptionSlot { option, value: c_value },
            None => self.options.push(OptionSlot { option, value: c_value }),
        }
    }

    fn push_log(&mut self, level: u32, text: &str) {
        if self.log.len() >= MAX_LOG_LINES {
            self.log.remove(0);
            self.log_dropped = self.log_dropped.saturating_add(1);
        }
        self.log.push(LogLine { level, text: text.trim_end().to_owned() });
    }

    /// Makes `maps` the memory map. A map unlike the last (a reload's, even at the same addresses)
    /// is a new generation: the regions handed out of the last one are no longer read.
    fn replace_maps(&mut self, mut maps: Vec<MapRegion>) {
        let same_block = |a: &MapRegion, b: &MapRegion| {
            (&a.name, a.flags, a.start, a.len, a.ptr) == (&b.name, b.flags, b.start, b.len, b.ptr)
        };
        if maps.len() == self.maps.len() && maps.iter().zip(&self.maps).all(|(a, b)| same_block(a, b)) {
            return;
        }
        self.maps_generation = self.maps_generation.wrapping_add(1);
        for map in &mut maps {
            map.generation = self.maps_generation;
        }
        self.maps = maps;
    }

    /// Records why a region was left out (once per reason, at most `MAX_IGNORED`).
    fn ignore(&mut self, why: String) {
        if self.ignored.len() < MAX_IGNORED && !self.ignored.contains(&why) {
            self.ignored.push(why);
        }
    }
}

/// Option values of a v1/v2 definition: (values, the declared default).
///
/// # Safety
/// `values` is a libretro values array terminated by a null `value` within its 128 entries.
unsafe fn option_values(values: &[ffi::CoreOptionValue; ffi::NUM_CORE_OPTION_VALUES_MAX]) -> Vec<String> {
    values.iter().take_while(|v| !v.value.is_null()).map(|v| c_text(v.value)).collect()
}

/// Declares the options of a v1 definitions array (`struct retro_core_option_definition *`).
///
/// # Safety
/// `defs` is null or a libretro v1 definitions array terminated by a null key.
unsafe fn declare_v1(shared: &mut Shared, mut defs: *const ffi::CoreOptionDefinition) {
    if defs.is_null() {
        return;
    }
    loop {
        // SAFETY: the caller's contract: every entry up to the terminator is readable.
        let def = unsafe { &*defs };
        if def.key.is_null() {
            return;
        }
        // SAFETY: as above.
        let values = unsafe { option_values(&def.values) };
        shared.declare(
            c_text(def.key),
            c_text_opt(def.desc).unwrap_or_default(),
            values,
            c_text_opt(def.default_value),
        );
        // SAFETY: the terminator has not been reached, so the next entry exists.
        defs = unsafe { defs.add(1) };
    }
}

/// Declares the options of a `struct retro_core_options_v2 *`.
///
/// # Safety
/// `options` is null or points at a libretro v2 options struct whose definitions end with a null key.
unsafe fn declare_v2(shared: &mut Shared, options: *const ffi::CoreOptionsV2) {
    if options.is_null() {
        return;
    }
    // SAFETY: the caller's contract.
    let mut defs = unsafe { (*options).definitions };
    if defs.is_null() {
        return;
    }
    loop {
        // SAFETY: every entry up to the terminator is readable.
        let def = unsafe { &*defs };
        if def.key.is_null() {
            return;
        }
        // SAFETY: as above.
        let values = unsafe { option_values(&def.values) };
        shared.declare(
            c_text(def.key),
            c_text_opt(def.desc).unwrap_or_default(),
            values,
            c_text_opt(def.default_value),
        );
        // SAFETY: the terminator has not been reached.
        defs = unsafe { defs.add(1) };
    }
}

/// `retro_environment_t`: the host's answers to the core.
unsafe extern "C" fn environment(cmd: c_uint, data: *mut c_void) -> bool {
    let mut slot = shared();
    let Some(s) = slot.as_mut() else { return false };
    match cmd {
        // SAFETY: a `bool *` (libretro.h names the type `data` points at for each command below).
        ffi::ENVIRONMENT_GET_CAN_DUPE => unsafe { answer(data, true) },
        ffi::ENVIRONMENT_GET_SYSTEM_DIRECTORY | ffi::ENVIRONMENT_GET_CORE_ASSETS_DIRECTORY => {
            // SAFETY: a `const char **`; the string lives in the slot while the core is loaded.
            unsafe { answer(data, s.system_dir.as_ptr()) }
        }
        // SAFETY: a `const char **`, as above.
        ffi::ENVIRONMENT_GET_SAVE_DIRECTORY => unsafe { answer(data, s.save_dir.as_ptr()) },
        // SAFETY: a `const char **`, as above.
        ffi::ENVIRONMENT_GET_LIBRETRO_PATH => unsafe { answer(data, s.core_path.as_ptr()) },
        ffi::ENVIRONMENT_SET_PIXEL_FORMAT => {
            if data.is_null() {
                return false;
            }
            // SAFETY: a `const enum retro_pixel_format *` (an int).
            let format = unsafe { data.cast::<c_uint>().read() };
            let known = matches!(
                format,
                ffi::PIXEL_FORMAT_0RGB1555 | ffi::PIXEL_FORMAT_XRGB8888 | ffi::PIXEL_FORMAT_RGB565
            );
            if known {
                s.pixel_format = format;
            }
            known
        }
        ffi::ENVIRONMENT_GET_LOG_INTERFACE => {
            // SAFETY: a `struct retro_log_callback *`; the shim's function has the printf-like type
            // `retro_log_printf_t` (it is declared without parameters here only because Rust cannot
            // name a variadic type it does not define; the core calls it with its real signature).
            unsafe { answer(data, ffi::LogCallback { log: Some(anes_retro_log_printf) }) }
        }
        // SAFETY: an `unsigned *`: version 2 (v0, v1 and v2 definitions are all understood).
        ffi::ENVIRONMENT_GET_CORE_OPTIONS_VERSION => unsafe { answer(data, 2 as c_uint) },
        ffi::ENVIRONMENT_SET_VARIABLES => {
            let mut vars = data.cast::<ffi::Variable>().cast_const();
            if vars.is_null() {
                return false;
            }
            loop {
                // SAFETY: a `{ NULL, NULL }`-terminated `struct retro_variable` array.
                let var = unsafe { &*vars };
                if var.key.is_null() {
                    break;
                }
                // "Description; first|second|third": the first value is the default.
                let text = c_text(var.value);
                let (description, values) = text.split_once("; ").unwrap_or(("", text.as_str()));
                let values: Vec<String> = values.split('|').map(str::to_owned).collect();
                s.declare(c_text(var.key), description.to_owned(), values, None);
                // SAFETY: the terminator has not been reached.
                vars = unsafe { vars.add(1) };
            }
            true
        }
        ffi::ENVIRONMENT_SET_CORE_OPTIONS => {
            // SAFETY: a null-key-terminated `struct retro_core_option_definition` array.
            unsafe { declare_v1(s, data.cast()) };
            true
        }
        ffi::ENVIRONMENT_SET_CORE_OPTIONS_INTL => {
            if data.is_null() {
                return false;
            }
            // SAFETY: a `struct retro_core_options_intl *`; its `us` array is the full set.
            unsafe { declare_v1(s, (*data.cast::<ffi::CoreOptionsIntl>()).us) };
            true
        }
        ffi::ENVIRONMENT_SET_CORE_OPTIONS_V2 => {
            // SAFETY: a `struct retro_core_options_v2 *`.
            unsafe { declare_v2(s, data.cast()) };
            true
        }
        ffi::ENVIRONMENT_SET_CORE_OPTIONS_V2_INTL => {
            if data.is_null() {
                return false;
            }
            // SAFETY: a `struct retro_core_options_v2_intl *`; its `us` set is the full one.
            unsafe { declare_v2(s, (*data.cast::<ffi::CoreOptionsV2Intl>()).us) };
            true
        }
        ffi::ENVIRONMENT_GET_VARIABLE => {
            if data.is_null() {
                return false;
            }
            // SAFETY: a `struct retro_variable *` whose key is a C string.
            let var = unsafe { &mut *data.cast::<ffi::Variable>() };
            if var.key.is_null() {
                return false;
            }
            // SAFETY: the key is a NUL-terminated string of the core's.
            let key = unsafe { CStr::from_ptr(var.key) }.to_string_lossy();
            match s.options.iter().find(|o| o.option.key == key) {
                Some(o) => {
                    var.value = o.value.as_ptr();
                    true
                }
                None => {
                    var.value = std::ptr::null();
                    false
                }
            }
        }
        ffi::ENVIRONMENT_GET_VARIABLE_UPDATE => {
            let changed = std::mem::take(&mut s.options_changed);
            // SAFETY: a `bool *`.
            unsafe { answer(data, changed) }
        }
        ffi::ENVIRONMENT_SET_VARIABLE => {
            if data.is_null() {
                // A query whether the command is supported.
                return true;
            }
            // SAFETY: a `const struct retro_variable *`.
            let var = unsafe { &*data.cast::<ffi::Variable>() };
            if var.key.is_null() || var.value.is_null() {
                return false;
            }
            let (key, value) = (c_text(var.key), c_text(var.value));
            let Some(o) = s.options.iter_mut().find(|o| o.option.key == key) else { return false };
            let Ok(c_value) = CString::new(value.as_str()) else { return false };
            o.value = c_value;
            o.option.value = value;
            true
        }
        ffi::ENVIRONMENT_SET_MEMORY_MAPS => {
            if data.is_null() {
                return false;
            }
            // SAFETY: a `const struct retro_memory_map *`.
            let map = unsafe { &*data.cast::<ffi::MemoryMap>() };
            let count = map.num_descriptors as usize;
            if count > MAX_MAP_DESCRIPTORS {
                s.ignore(format!(
                    "SET_MEMORY_MAPS: {count} descriptors, more than the {MAX_MAP_DESCRIPTORS} a snapshot has sections for: the memory map is left out"
                ));
                s.replace_maps(Vec::new());
                return false;
            }
            let mut maps: Vec<MapRegion> = Vec::new();
            for index in 0..count {
                if map.descriptors.is_null() {
                    break;
                }
                // SAFETY: `num_descriptors` entries are readable.
                let d = unsafe { &*map.descriptors.add(index) };
                if d.ptr.is_null() || d.len == 0 || d.flags & ffi::MEMDESC_CONST != 0 {
                    continue;
                }
                // Fault specs (`flip:SECTION:OFFSET:BIT@FRAME`) name sections: no `:`, `@` or spaces.
                let space = c_text_opt(d.addrspace)
                    .map(|t| {
                        t.chars()
                            .take(MAX_SPACE_NAME_CHARS)
                            .map(|c| if c == ':' || c == '@' || c.is_whitespace() { '_' } else { c })
                            .collect::<String>()
                    })
                    .filter(|t| !t.is_empty())
                    .unwrap_or_else(|| index.to_string());
                let name = format!("map.{space}.{:x}", d.start);
                let ptr = (d.ptr as usize).checked_add(d.offset);
                let Some(ptr) = ptr.filter(|p| d.len <= MAX_REGION_LEN && p.checked_add(d.len).is_some())
                else {
                    s.ignore(format!(
                        "memory descriptor {name}: {} bytes at offset {:#x}, more than the {MAX_REGION_LEN}-byte limit or past the address space: left out",
                        d.len, d.offset
                    ));
                    continue;
                };
                if maps.iter().any(|m| m.ptr == ptr && m.len == d.len) {
                    continue;
                }
                maps.push(MapRegion { name, flags: d.flags, start: d.start, len: d.len, ptr, generation: 0 });
            }
            s.replace_maps(maps);
            true
        }
        ffi::ENVIRONMENT_SET_SERIALIZATION_QUIRKS => {
            if data.is_null() {
                return false;
            }
            // SAFETY: a `uint64_t *` the frontend may clear bits of; this host keeps them all.
            s.quirks = unsafe { data.cast::<u64>().read() };
            true
        }
        ffi::ENVIRONMENT_SET_SYSTEM_AV_INFO => {
            if data.is_null() {
                return false;
            }
            // SAFETY: a `const struct retro_system_av_info *`.
            s.av_info = unsafe { data.cast::<ffi::SystemAvInfo>().read() };
            true
        }
        ffi::ENVIRONMENT_SET_GEOMETRY => {
            if data.is_null() {
                return false;
            }
            // SAFETY: a `const struct retro_game_geometry *`.
            s.av_info.geometry = unsafe { data.cast::<ffi::GameGeometry>().read() };
            true
        }
        ffi::ENVIRONMENT_SET_MESSAGE => {
            if !data.is_null() {
                // SAFETY: a `const struct retro_message *`.
                let text = c_text(unsafe { (*data.cast::<ffi::Message>()).msg });
                s.push_log(1, &format!("message: {text}"));
            }
            true
        }
        // SAFETY: an `unsigned *`.
        ffi::ENVIRONMENT_GET_INPUT_MAX_USERS => unsafe { answer(data, s.joypad_ports as c_uint) },
        // SAFETY: a `uint64_t *`: RetroPads only.
        ffi::ENVIRONMENT_GET_INPUT_DEVICE_CAPABILITIES => unsafe { answer(data, 1u64 << ffi::DEVICE_JOYPAD) },
        // SAFETY: an `unsigned *` (`enum retro_language`): English.
        ffi::ENVIRONMENT_GET_LANGUAGE => unsafe { answer(data, 0 as c_uint) },
        // SAFETY: an `int *`: bit 0 video, bit 1 audio, both enabled (they are hashed).
        ffi::ENVIRONMENT_GET_AUDIO_VIDEO_ENABLE => unsafe { answer(data, 3i32) },
        // SAFETY: a `bool *`: never fast-forwarding.
        ffi::ENVIRONMENT_GET_FASTFORWARDING => unsafe { answer(data, false) },
        // Button bit sets in one `input_state` call are supported; announcements a headless host
        // takes note of and has no use for are accepted.
        ffi::ENVIRONMENT_GET_INPUT_BITMASKS
        | ffi::ENVIRONMENT_SET_PERFORMANCE_LEVEL
        | ffi::ENVIRONMENT_SET_INPUT_DESCRIPTORS
        | ffi::ENVIRONMENT_SET_CONTROLLER_INFO
        | ffi::ENVIRONMENT_SET_SUBSYSTEM_INFO
        | ffi::ENVIRONMENT_SET_CORE_OPTIONS_DISPLAY
        | ffi::ENVIRONMENT_SET_CORE_OPTIONS_UPDATE_DISPLAY_CALLBACK
        | ffi::ENVIRONMENT_SET_CONTENT_INFO_OVERRIDE
        | ffi::ENVIRONMENT_SET_SUPPORT_ACHIEVEMENTS
        | ffi::ENVIRONMENT_SET_SUPPORT_NO_GAME
        | ffi::ENVIRONMENT_SET_ROTATION
        | ffi::ENVIRONMENT_SET_MESSAGE_EXT
        | ffi::ENVIRONMENT_SHUTDOWN => true,
        // Hardware rendering (the picture would not reach the host), the savestate context (its
        // absence is the normal case), and the rest: not supported.
        _ => {
            if !s.unanswered.contains(&cmd) && s.unanswered.len() < 64 {
                s.unanswered.push(cmd);
            }
            false
        }
    }
}

unsafe extern "C" {
    /// The C shim's `retro_log_printf_t` (src/log_shim.c), declared without its parameters: it is
    /// only handed to the core, which calls it as `(unsigned level, const char *fmt, ...)`.
    fn anes_retro_log_printf();
    /// Sets where the shim sends each formatted line.
    fn anes_retro_set_log_sink(sink: unsafe extern "C" fn(level: c_uint, text: *const c_char, len: usize));
}

/// The shim's sink: one formatted line of the core's log.
unsafe extern "C" fn log_sink(level: c_uint, text: *const c_char, len: usize) {
    if text.is_null() {
        return;
    }
    // SAFETY: the shim passes `len` readable bytes of its line buffer.
    let bytes = unsafe { std::slice::from_raw_parts(text.cast::<u8>(), len) };
    let line = String::from_utf8_lossy(bytes);
    if let Some(s) = shared().as_mut() {
        s.push_log(level, &line);
    }
}

/// Installs the log sink once per process (the shim's pointer is process-wide like the slot).
pub(crate) fn install_log_sink() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: `log_sink` has the sink's C type and lives as long as the process.
    ONCE.call_once(|| unsafe { anes_retro_set_log_sink(log_sink) });
}

/// A picture's packed row length in bytes, if it is one the host takes: at least one pixel wide
/// and high, at most `MAX_PICTURE_PIXELS`, rows `pitch` bytes apart that do not overlap, all of
/// them within `MAX_PICTURE_SPAN` bytes.
fn picture_row(width: c_uint, height: c_uint, pitch: usize, bpp: usize) -> Option<usize> {
    let (width, height) = (usize::try_from(width).ok()?, usize::try_from(height).ok()?);
    if width == 0 || height == 0 || width.checked_mul(height)? > MAX_PICTURE_PIXELS {
        return None;
    }
    let row = width.checked_mul(bpp)?;
    let span = (height - 1).checked_mul(pitch)?.checked_add(row)?;
    (row <= pitch && span <= MAX_PICTURE_SPAN).then_some(row)
}

/// `retro_video_refresh_t`: keeps the picture (null `data`: the last one again).
unsafe extern "C" fn video_refresh(data: *const c_void, width: c_uint, height: c_uint, pitch: usize) {
    let mut slot = shared();
    let Some(s) = slot.as_mut() else { return };
    if data.is_null() {
        return;
    }
    let Some(row) = picture_row(width, height, pitch, Picture::bytes_per_pixel(s.pixel_format)) else {
        s.dropped_pictures = s.dropped_pictures.saturating_add(1);
        return;
    };
    let picture = &mut s.picture;
    picture.width = width;
    picture.height = height;
    picture.format = s.pixel_format;
    // Same size every frame: after the first, no allocation. At most `MAX_PICTURE_PIXELS` * 4.
    picture.bytes.resize(row * height as usize, 0);
    for (y, out) in picture.bytes.chunks_exact_mut(row).enumerate() {
        // SAFETY: the core hands over `height` rows `pitch` bytes apart, each at least `row` long,
        // valid during this call; `y * pitch + row` is at most the span checked above.
        let source = unsafe { std::slice::from_raw_parts(data.cast::<u8>().add(y * pitch), row) };
        out.copy_from_slice(source);
    }
    s.pictures = s.pictures.saturating_add(1);
}

/// `retro_audio_sample_t`: one stereo frame.
unsafe extern "C" fn audio_sample(left: i16, right: i16) {
    if let Some(s) = shared().as_mut() {
        if s.audio.len() + 2 <= MAX_AUDIO_SAMPLES_PER_FRAME {
            s.audio.extend_from_slice(&[left, right]);
        } else {
            s.dropped_audio = s.dropped_audio.saturating_add(1);
        }
    }
}

/// `retro_audio_sample_batch_t`: `frames` stereo frames, all taken.
unsafe extern "C" fn audio_sample_batch(data: *const i16, frames: usize) -> usize {
    if data.is_null() {
        return frames;
    }
    if let Some(s) = shared().as_mut() {
        let samples = frames.saturating_mul(2);
        if s.audio.len().saturating_add(samples) <= MAX_AUDIO_SAMPLES_PER_FRAME {
            // SAFETY: the core hands over `frames` interleaved stereo frames, valid during the call.
            s.audio.extend_from_slice(unsafe { std::slice::from_raw_parts(data, samples) });
        } else {
            s.dropped_audio = s.dropped_audio.saturating_add(u64::try_from(frames).unwrap_or(u64::MAX));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gone_processs_empty_system_folder_is_swept_and_what_a_core_left_is_kept() {
        let parent = std::env::temp_dir().join(format!("anes-retro-host-sweep-{}", std::process::id()));
        std::fs::create_dir(&parent).unwrap();
        let mut exited = std::process::Command::new("true").spawn().unwrap();
        exited.wait().unwrap();
        let (dead, live) = (exited.id(), std::process::id());
        let empty = parent.join(format!("{DEFAULT_SYSTEM_DIR_PREFIX}{dead}"));
        let live_dir = parent.join(format!("{DEFAULT_SYSTEM_DIR_PREFIX}{live}"));
        std::fs::create_dir(&empty).unwrap();
        std::fs::create_dir(&live_dir).unwrap();
        let mut exited = std::process::Command::new("true").spawn().unwrap();
        exited.wait().unwrap();
        let kept = parent.join(format!("{DEFAULT_SYSTEM_DIR_PREFIX}{}", exited.id()));
        std::fs::create_dir(&kept).unwrap();
        std::fs::write(kept.join("core.srm"), b"left by a core").unwrap();
        sweep_orphaned_system_dirs(&parent);
        let left = [empty.exists(), live_dir.exists(), kept.join("core.srm").exists()];
        std::fs::remove_dir_all(&parent).unwrap();
        assert_eq!(
            left,
            [false, true, true],
            "the dead process's empty folder, the live one's, the kept file"
        );
    }
}
