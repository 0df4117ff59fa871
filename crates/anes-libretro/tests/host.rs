//! The libretro API driven in-process by a minimal host, as a frontend calls it: load, run, picture
//! and audio, input on both ports, serialization into a fixed buffer, cheats, memory, reset, and no
//! allocation in `retro_run`. (The real client is tests/retroarch.rs.)
#![allow(unsafe_code)]

use std::cell::{Cell, RefCell};
use std::ffi::{c_uint, c_void};

use anes_frontend::anes_core::PowerOnProfile;
use anes_frontend::anes_core::input::buttons;
use anes_frontend::anes_core::movie::FrameInput;
use anes_frontend::{Console, GameGenieCode, Overscan, PixelFormat};
use anes_libretro::ffi::{self, GameInfo, SystemAvInfo, SystemInfo};
use anes_libretro::*;

thread_local! {
    /// The last picture the core handed over (XRGB8888 words) and its pitch.
    static PICTURE: RefCell<(Vec<u32>, usize)> = RefCell::new((vec![0; 256 * 240], 0));
    /// Stereo frames of audio received.
    static AUDIO_FRAMES: Cell<usize> = const { Cell::new(0) };
    /// Buttons held: (port, libretro id) pairs as a bit set, bit 16 * port + id.
    static HELD: Cell<u32> = const { Cell::new(0) };
    /// The core options the core declared: (key, description and values).
    static DECLARED: RefCell<Vec<(String, String)>> = const { RefCell::new(Vec::new()) };
    /// The value the host gives the `anes_region` option (`None`: the host does not know it).
    static REGION_OPTION: RefCell<Option<std::ffi::CString>> = const { RefCell::new(None) };
    /// The value the host gives the `anes_power_on` option (`None`: the host does not know it).
    static POWER_ON_OPTION: RefCell<Option<std::ffi::CString>> = const { RefCell::new(None) };
}

#[global_allocator]
static GLOBAL: anes_alloc_count::Counting = anes_alloc_count::Counting;

fn allocations() -> u64 {
    anes_alloc_count::thread_allocations()
}

unsafe extern "C" fn environment(cmd: c_uint, data: *mut c_void) -> bool {
    match cmd {
        // SAFETY: for this command the core passes a `const enum retro_pixel_format *`.
        ffi::ENVIRONMENT_SET_PIXEL_FORMAT => unsafe { *data.cast::<c_uint>() == ffi::PIXEL_FORMAT_XRGB8888 },
        ffi::ENVIRONMENT_SET_INPUT_DESCRIPTORS
        | ffi::ENVIRONMENT_SET_CONTROLLER_INFO
        | ffi::ENVIRONMENT_SET_MEMORY_MAPS
        | ffi::ENVIRONMENT_SET_SUPPORT_ACHIEVEMENTS => true,
        ffi::ENVIRONMENT_SET_VARIABLES => {
            let mut next = data.cast::<ffi::Variable>();
            // SAFETY: the core passes an array of `retro_variable` ended by a null key, with
            // NUL-terminated strings.
            unsafe {
                while !(*next).key.is_null() {
                    let text = |p| std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
                    let option = (text((*next).key), text((*next).value));
                    DECLARED.with(|declared| declared.borrow_mut().push(option));
                    next = next.add(1);
                }
            }
            true
        }
        ffi::ENVIRONMENT_GET_VARIABLE => {
            let variable = data.cast::<ffi::Variable>();
            // SAFETY: the core passes a `retro_variable` whose key is a NUL-terminated string; the
            // value given back lives in a thread-local until the host changes it.
            unsafe {
                let key = std::ffi::CStr::from_ptr((*variable).key);
                let option = match key.to_bytes() {
                    b"anes_region" => &REGION_OPTION,
                    b"anes_power_on" => &POWER_ON_OPTION,
                    _ => return false,
                };
                option.with(|option| match option.borrow().as_ref() {
                    Some(value) => {
                        (*variable).value = value.as_ptr();
                        true
                    }
                    None => false,
                })
            }
        }
        _ => false,
    }
}

unsafe extern "C" fn video_refresh(data: *const c_void, width: c_uint, height: c_uint, pitch: usize) {
    assert_eq!((width, height), (256, 240));
    PICTURE.with(|picture| {
        let (words, stored_pitch) = &mut *picture.borrow_mut();
        // SAFETY: the core passes 240 rows of `pitch` bytes of XRGB8888 words.
        let rows = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), pitch * 240) };
        for (y, row) in rows.chunks_exact(pitch).enumerate() {
            for (x, word) in row[..1024].chunks_exact(4).enumerate() {
                words[y * 256 + x] = u32::from_ne_bytes(word.try_into().unwrap());
            }
        }
        *stored_pitch = pitch;
    });
}

unsafe extern "C" fn audio_batch(_data: *const i16, frames: usize) -> usize {
    AUDIO_FRAMES.with(|count| count.set(count.get() + frames));
    frames
}

unsafe extern "C" fn input_poll() {}

unsafe extern "C" fn input_state(port: c_uint, device: c_uint, _index: c_uint, id: c_uint) -> i16 {
    assert_eq!(device, ffi::DEVICE_JOYPAD);
    i16::from(HELD.with(Cell::get) >> (16 * port + id) & 1 == 1)
}

fn rom() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap()
}

fn picture() -> Vec<u32> {
    PICTURE.with(|picture| picture.borrow().0.clone())
}

fn state_hash_of(state: &[u8]) -> anes_frontend::anes_core::state::StateHash {
    let mut console = Console::new(&rom()).unwrap();
    console.load_state(state).unwrap();
    console.state_hash()
}

/// One test: the core's state is global, as the libretro API is.
#[test]
fn a_host_drives_the_core_through_the_c_api() {
    assert_eq!(retro_api_version(), 1);
    retro_set_environment(Some(environment));
    retro_set_video_refresh(Some(video_refresh));
    retro_set_audio_sample_batch(Some(audio_batch));
    retro_set_input_poll(Some(input_poll));
    retro_set_input_state(Some(input_state));
    retro_init();
    let mut info = SystemInfo {
        library_name: std::ptr::null(),
        library_version: std::ptr::null(),
        valid_extensions: std::ptr::null(),
        need_fullpath: true,
        block_extract: true,
    };
    // SAFETY: a valid, writable struct.
    unsafe { retro_get_system_info(&mut info) };
    // SAFETY: the core's static NUL-terminated strings.
    let name = unsafe { std::ffi::CStr::from_ptr(info.library_name) };
    assert_eq!(name.to_str().unwrap(), "anes");
    assert!(!info.need_fullpath);

    // A bad ROM is refused, not a crash.
    let junk = [0u8; 64];
    let bad = GameInfo {
        path: std::ptr::null(),
        data: junk.as_ptr().cast(),
        size: junk.len(),
        meta: std::ptr::null(),
    };
    // SAFETY: `bad` points to 64 readable bytes.
    assert!(!unsafe { retro_load_game(&bad) });
    assert_eq!(retro_serialize_size(), 0);

    let rom = rom();
    let game = GameInfo {
        path: std::ptr::null(),
        data: rom.as_ptr().cast(),
        size: rom.len(),
        meta: std::ptr::null(),
    };
    // SAFETY: `game` points to the ROM's bytes.
    assert!(unsafe { retro_load_game(&game) });
    let mut av = SystemAvInfo {
        geometry: ffi::GameGeometry {
            base_width: 0,
            base_height: 0,
            max_width: 0,
            max_height: 0,
            aspect_ratio: 0.0,
        },
        timing: ffi::SystemTiming { fps: 0.0, sample_rate: 0.0 },
    };
    // SAFETY: a valid, writable struct.
    unsafe { retro_get_system_av_info(&mut av) };
    assert_eq!((av.geometry.base_width, av.geometry.base_height), (256, 240));
    assert!((av.timing.fps - 60.0988).abs() < 1e-3);
    assert!((f64::from(av.geometry.aspect_ratio) - 256.0 * 8.0 / 7.0 / 240.0).abs() < 1e-6);

    // The same frames as a Console given the same buttons: pad 1 holds Right, pad 2 holds A.
    let mut reference = Console::with_config(&rom, Default::default(), None).unwrap();
    HELD.with(|held| held.set(1 << ffi::joypad::RIGHT | 1 << (16 + ffi::joypad::A)));
    let pads = FrameInput { pads: [buttons::RIGHT, buttons::A], ..FrameInput::default() };
    for _ in 0..120 {
        retro_run();
        reference.run_frame(pads);
    }
    let mut expected = vec![0u8; 256 * 240 * 4];
    reference.write_picture(PixelFormat::Xrgb8888, Overscan::NONE, &mut expected).unwrap();
    let expected: Vec<u32> =
        expected.chunks_exact(4).map(|w| u32::from_ne_bytes(w.try_into().unwrap())).collect();
    assert_eq!(picture(), expected, "frame 120 as the Console draws it");
    let frames = AUDIO_FRAMES.with(Cell::get);
    assert!((120 * 790..=120 * 810).contains(&frames), "{frames} audio frames in 120 video frames at 48 kHz");

    // Serialization: fixed size, a round trip continues identically.
    let size = retro_serialize_size();
    assert_eq!(size, reference.snapshot_len());
    let mut state = vec![0u8; size];
    // SAFETY: `state` is a writable buffer of `size` bytes.
    assert!(unsafe { retro_serialize(state.as_mut_ptr().cast(), size) });
    assert_eq!(state_hash_of(&state), reference.state_hash());
    // SAFETY: one byte too few: refused, not written past.
    assert!(!unsafe { retro_serialize(state.as_mut_ptr().cast(), size - 1) });
    for _ in 0..30 {
        retro_run();
    }
    let after_150 = picture();
    // SAFETY: `state` holds `size` readable bytes.
    assert!(unsafe { retro_unserialize(state.as_ptr().cast(), size) });
    for _ in 0..30 {
        retro_run();
    }
    assert_eq!(picture(), after_150, "the restored machine continues identically");
    let mut damaged = state.clone();
    damaged[size - 1] ^= 1;
    // SAFETY: `damaged` holds `size` readable bytes.
    assert!(!unsafe { retro_unserialize(damaged.as_ptr().cast(), size) }, "a damaged state is refused");

    // Unplugging port 2 drops its buttons.
    retro_set_controller_port_device(1, ffi::DEVICE_NONE);
    // SAFETY: `state` holds `size` readable bytes.
    assert!(unsafe { retro_unserialize(state.as_ptr().cast(), size) });
    let mut unplugged = reference.clone();
    retro_run();
    unplugged.run_frame(FrameInput { pads: [buttons::RIGHT, 0], ..FrameInput::default() });
    let mut now = vec![0u8; size];
    // SAFETY: a writable buffer of `size` bytes.
    assert!(unsafe { retro_serialize(now.as_mut_ptr().cast(), size) });
    assert_eq!(state_hash_of(&now), unplugged.state_hash());
    retro_set_controller_port_device(1, ffi::DEVICE_JOYPAD);

    // Cheats: a code is part of the machine; a state restores the codes it was saved with.
    // SAFETY: `state` holds `size` readable bytes.
    assert!(unsafe { retro_unserialize(state.as_ptr().cast(), size) });
    let reset = u16::from_le_bytes([reference.nes().peek(0xFFFC), reference.nes().peek(0xFFFD)]);
    let code = GameGenieCode { address: reset + 1, value: 0x00, compare: None };
    let text = std::ffi::CString::new(code.to_string()).unwrap();
    // SAFETY: a NUL-terminated string.
    unsafe { retro_cheat_set(0, true, text.as_ptr()) };
    let mut with_code = vec![0u8; size];
    // SAFETY: a writable buffer of `size` bytes.
    assert!(unsafe { retro_serialize(with_code.as_mut_ptr().cast(), size) });
    assert_ne!(state_hash_of(&with_code), state_hash_of(&state), "the code is in the machine's identity");
    // SAFETY: `state` (no codes) holds `size` readable bytes: loading it unplugs the code.
    assert!(unsafe { retro_unserialize(state.as_ptr().cast(), size) });
    // SAFETY: a writable buffer of `size` bytes.
    assert!(unsafe { retro_serialize(now.as_mut_ptr().cast(), size) });
    assert_eq!(state_hash_of(&now), state_hash_of(&state));
    let junk_code = c"NOTACODE!";
    // SAFETY: a NUL-terminated string; refused with a log line, nothing changes.
    unsafe { retro_cheat_set(1, true, junk_code.as_ptr()) };
    retro_cheat_reset();

    // Memory: system RAM is the console's work RAM; the demo has no battery.
    assert_eq!(retro_get_memory_size(ffi::MEMORY_SYSTEM_RAM), 0x800);
    assert_eq!(retro_get_memory_size(ffi::MEMORY_SAVE_RAM), 0);
    assert!(retro_get_memory_data(ffi::MEMORY_SAVE_RAM).is_null());
    let ram = retro_get_memory_data(ffi::MEMORY_SYSTEM_RAM).cast::<u8>();
    // SAFETY: the core's 2 KiB of work RAM, valid while the game is loaded; no call is running.
    let byte = unsafe { *ram.add(0x10) };
    assert_eq!(byte, state_ram_byte(&state, 0x10));

    // retro_run allocates nothing, audio and picture included.
    let before = allocations();
    for _ in 0..120 {
        retro_run();
    }
    assert_eq!(allocations() - before, 0, "retro_run allocated");

    retro_reset();
    retro_unload_game();
    assert_eq!(retro_serialize_size(), 0);
    assert_eq!(retro_get_region(), ffi::REGION_NTSC, "no game: NTSC");

    // The region comes from the game's NES 2.0 header (byte 12: 1 PAL, 3 Dendy): a 50 Hz console,
    // libretro's PAL region, and 50.0070 frames per second (nesdev "Cycle reference chart").
    for byte12 in [1u8, 3] {
        let mut regional = rom.clone();
        assert_eq!(regional[7] & 0x0C, 0x08, "the demo has an NES 2.0 header");
        regional[12] = byte12;
        let game = GameInfo {
            path: std::ptr::null(),
            data: regional.as_ptr().cast(),
            size: regional.len(),
            meta: std::ptr::null(),
        };
        // SAFETY: `game` points to the ROM's bytes.
        assert!(unsafe { retro_load_game(&game) });
        assert_eq!(retro_get_region(), ffi::REGION_PAL, "byte 12 = {byte12}");
        // SAFETY: a valid, writable struct.
        unsafe { retro_get_system_av_info(&mut av) };
        assert!((av.timing.fps - 50.007).abs() < 1e-3, "byte 12 = {byte12}: {}", av.timing.fps);
        retro_run();
        retro_unload_game();
    }

    // A multi-region ROM (byte 12 = 2) runs in the region the `anes_region` option names (auto, or
    // no answer: NTSC, the header's default); other ROMs keep their header's region whatever it says.
    let declared = DECLARED.with(|declared| declared.borrow().clone());
    assert_eq!(declared.len(), 2, "{declared:?}");
    assert_eq!(
        declared[0],
        (
            "anes_region".to_string(),
            "Region of multi-region games (on load); auto|ntsc|pal|dendy".to_string()
        )
    );
    assert_eq!(declared[1].0, "anes_power_on");
    // Every value offered is a profile, the default first.
    let (description, values) = declared[1].1.split_once("; ").unwrap();
    assert_eq!(description, "Power-on state (on load)");
    let offered: Vec<PowerOnProfile> = values.split('|').map(|v| v.parse().unwrap()).collect();
    assert_eq!(offered[0], PowerOnProfile::Default);
    assert!(PowerOnProfile::NAMED.iter().all(|p| offered.contains(p)));
    let load_with = |byte12: u8, option: Option<&str>| {
        REGION_OPTION.with(|value| *value.borrow_mut() = option.map(|o| std::ffi::CString::new(o).unwrap()));
        let mut regional = rom.clone();
        regional[12] = byte12;
        let game = GameInfo {
            path: std::ptr::null(),
            data: regional.as_ptr().cast(),
            size: regional.len(),
            meta: std::ptr::null(),
        };
        // SAFETY: `game` points to the ROM's bytes.
        assert!(unsafe { retro_load_game(&game) });
        let mut av = av;
        // SAFETY: a valid, writable struct.
        unsafe { retro_get_system_av_info(&mut av) };
        let seen = (retro_get_region(), (av.timing.fps * 1000.0).round() / 1000.0);
        retro_unload_game();
        seen
    };
    let (ntsc, pal) = ((ffi::REGION_NTSC, 60.099), (ffi::REGION_PAL, 50.007));
    for (byte12, option, expected) in [
        (2, None, ntsc),
        (2, Some("auto"), ntsc),
        (2, Some("pal"), pal),
        (2, Some("dendy"), pal),
        (2, Some("ntsc"), ntsc),
        (2, Some("secam"), ntsc),
        (0, Some("pal"), ntsc),
        (1, Some("ntsc"), pal),
    ] {
        assert_eq!(load_with(byte12, option), expected, "byte 12 = {byte12}, anes_region = {option:?}");
    }

    // The `anes_power_on` option powers the game on with its profile: the state right after loading
    // is a frontend console's with that profile (unknown or unset: the default).
    REGION_OPTION.with(|value| *value.borrow_mut() = None);
    for (option, profile) in [
        (None, PowerOnProfile::Default),
        (Some("quick-power-cycle"), PowerOnProfile::QuickPowerCycle),
        (Some("random:3"), PowerOnProfile::Random(3)),
        (Some("tepid"), PowerOnProfile::Default),
    ] {
        POWER_ON_OPTION
            .with(|value| *value.borrow_mut() = option.map(|o| std::ffi::CString::new(o).unwrap()));
        // SAFETY: `game` points to the ROM's bytes.
        assert!(unsafe { retro_load_game(&game) });
        let mut state = vec![0u8; retro_serialize_size()];
        // SAFETY: `state` has the size the core asked for.
        assert!(unsafe { retro_serialize(state.as_mut_ptr().cast(), state.len()) });
        retro_unload_game();
        let console = Console::with_config(&rom, profile.config(), None).unwrap();
        let mut expected = vec![0u8; console.snapshot_len()];
        console.save_state_into(&mut expected).unwrap();
        assert!(state == expected, "anes_power_on = {option:?}");
    }
    retro_deinit();
}

/// Byte `offset` of the work RAM in a console snapshot, read through a Console.
fn state_ram_byte(state: &[u8], offset: usize) -> u8 {
    let mut console = Console::new(&rom()).unwrap();
    console.load_state(state).unwrap();
    console.system_ram()[offset]
}
