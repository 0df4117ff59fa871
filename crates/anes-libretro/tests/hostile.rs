//! Frontends that misbehave or call back into the core: every call is answered or refused, never a
//! panic (a panic in an `extern "C"` function aborts the frontend), a hang or a deadlock; and the
//! memory map names only memory the CPU addresses.
//!
//! The core's state is process-wide, and a scenario that goes wrong aborts or deadlocks its process,
//! so each runs in a child process of this test binary: the ignored test `scenario`, told which by
//! `ANES_HOSTILE_SCENARIO`. The tests check its exit status and what it printed.
#![allow(unsafe_code)]

use std::cell::{Cell, RefCell};
use std::ffi::{CStr, c_char, c_uint, c_void};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anes_frontend::Console;
use anes_libretro::ffi::{self, GameInfo};
use anes_libretro::*;

const SCENARIO: &str = "ANES_HOSTILE_SCENARIO";
/// Longest a scenario may take (each takes well under a second; a deadlock takes this long).
const TIMEOUT: Duration = Duration::from_secs(60);

/// Runs scenario `name` in a child process, its stderr `stderr` (`None`: read with its stdout);
/// panics unless it exits 0 having finished.
fn run_scenario(name: &str, stderr: Option<std::fs::File>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["scenario", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(SCENARIO, name)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr.map_or_else(Stdio::piped, Stdio::from))
        .spawn()
        .unwrap();
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = child.stderr.take().map(|pipe| read(Box::new(pipe)));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = stdout.join().unwrap();
    let stderr = stderr.map(|reader| reader.join().unwrap()).unwrap_or_default();
    let output = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    let Some(status) = status else { panic!("scenario {name} still running after {TIMEOUT:?}; {output}") };
    assert!(status.success(), "scenario {name}: {status}; {output}");
    assert!(stdout.contains(&format!("scenario {name} done")), "scenario {name}: {output}");
}

#[test]
#[cfg(target_os = "linux")]
fn logging_to_an_unwritable_stderr_is_not_a_crash() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    run_scenario("stderr_unwritable", Some(full));
}

#[test]
fn sizes_no_buffer_can_have_are_refused() {
    run_scenario("huge_sizes", None);
}

#[test]
fn audio_callbacks_claiming_more_or_nothing_are_held_to_the_offer() {
    run_scenario("audio_claims", None);
}

#[test]
fn the_memory_map_names_battery_memory_only_where_the_cpu_sees_it() {
    run_scenario("memory_map", None);
}

#[test]
fn a_refused_cheat_changes_nothing() {
    run_scenario("cheat_refused", None);
}

#[test]
fn callbacks_may_call_back_into_the_core() {
    run_scenario("reentrant", None);
}

/// The child side: the scenario `ANES_HOSTILE_SCENARIO` names (nothing without it).
#[test]
#[ignore = "run in a child process by the other tests of this file"]
fn scenario() {
    let Ok(name) = std::env::var(SCENARIO) else { return };
    match name.as_str() {
        "stderr_unwritable" => stderr_unwritable(),
        "huge_sizes" => huge_sizes(),
        "audio_claims" => audio_claims(),
        "memory_map" => memory_map(),
        "cheat_refused" => cheat_refused(),
        "reentrant" => reentrant(),
        other => panic!("no scenario {other}"),
    }
    println!("scenario {name} done");
}

thread_local! {
    /// Whether the environment callback gives the core a logger.
    static GIVE_LOG: Cell<bool> = const { Cell::new(false) };
    /// The descriptors of the last `SET_MEMORY_MAPS`: (flags, ptr, start, len).
    static MEMORY_MAP: RefCell<Vec<(u64, usize, usize, usize)>> = const { RefCell::new(Vec::new()) };
    /// The frame counts the audio callback was offered since the last reset of the list.
    static OFFERS: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    /// What the audio callback answers: `None` all it is offered, else the answers in turn (the
    /// last one repeated).
    static AUDIO_ANSWERS: RefCell<Option<Vec<usize>>> = const { RefCell::new(None) };
    /// What the core answered the calls a callback made into it, in order: (callback, answer).
    static ANSWERS: RefCell<Vec<(&'static str, String)>> = const { RefCell::new(Vec::new()) };
    /// Log lines received.
    static LOG_LINES: Cell<usize> = const { Cell::new(0) };
}

unsafe extern "C" fn environment(cmd: c_uint, data: *mut c_void) -> bool {
    match cmd {
        // SAFETY: for this command the core passes a `const enum retro_pixel_format *`.
        ffi::ENVIRONMENT_SET_PIXEL_FORMAT => unsafe { *data.cast::<c_uint>() == ffi::PIXEL_FORMAT_XRGB8888 },
        ffi::ENVIRONMENT_GET_LOG_INTERFACE if GIVE_LOG.get() => give_logger(data),
        ffi::ENVIRONMENT_SET_MEMORY_MAPS => {
            // SAFETY: the core passes a `retro_memory_map` whose `descriptors` holds
            // `num_descriptors` entries.
            let descriptors = unsafe {
                let map = &*data.cast::<ffi::MemoryMap>();
                std::slice::from_raw_parts(map.descriptors, map.num_descriptors as usize)
            };
            let copied = descriptors.iter().map(|d| (d.flags, d.ptr as usize, d.start, d.len)).collect();
            MEMORY_MAP.with(|map| *map.borrow_mut() = copied);
            true
        }
        ffi::ENVIRONMENT_SET_INPUT_DESCRIPTORS
        | ffi::ENVIRONMENT_SET_CONTROLLER_INFO
        | ffi::ENVIRONMENT_SET_VARIABLES
        | ffi::ENVIRONMENT_SET_SUPPORT_ACHIEVEMENTS => true,
        _ => false,
    }
}

/// Hands the core `log_line` as its `retro_log_printf_t`. Rust cannot define a variadic function;
/// the core calls its logger as `log(level, "%s", line)`, three integer-class arguments, which the
/// x86-64 System V ABI passes in the same registers to a variadic callee as to this three-argument
/// one (which ignores `al`, the vector-register count of a variadic call).
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn give_logger(data: *mut c_void) -> bool {
    type Fixed = unsafe extern "C" fn(c_uint, *const c_char, *const c_char);
    // SAFETY: see above: on this target a call through the variadic type with these arguments
    // reaches `log_line` with them.
    let log = unsafe { std::mem::transmute::<Fixed, ffi::LogPrintfFn>(log_line) };
    // SAFETY: for this command the core passes a `struct retro_log_callback *`.
    unsafe { data.cast::<ffi::LogCallback>().write(ffi::LogCallback { log: Some(log) }) };
    true
}

/// Elsewhere the core gets no logger (it then writes to stderr).
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn give_logger(_data: *mut c_void) -> bool {
    false
}

/// The logger: counts the line and calls back into the core, as a frontend's overlay might.
unsafe extern "C" fn log_line(_level: c_uint, _format: *const c_char, line: *const c_char) {
    LOG_LINES.set(LOG_LINES.get() + 1);
    // SAFETY: the core passes a NUL-terminated line for "%s".
    let line = unsafe { CStr::from_ptr(line) }.to_string_lossy().into_owned();
    print!("log: {line}");
    answer("log", retro_get_memory_size(ffi::MEMORY_SYSTEM_RAM).to_string());
    // A call that logs, from the logger: the core must not call the logger again without end.
    // SAFETY: null is allowed (refused with a log line).
    answer("log", unsafe { retro_load_game(std::ptr::null()) }.to_string());
}

fn answer(callback: &'static str, value: String) {
    ANSWERS.with(|answers| answers.borrow_mut().push((callback, value)));
}

fn answers_of(callback: &str) -> Vec<String> {
    ANSWERS.with(|answers| {
        answers.borrow().iter().filter(|(from, _)| *from == callback).map(|(_, a)| a.clone()).collect()
    })
}

unsafe extern "C" fn audio_batch(_data: *const i16, frames: usize) -> usize {
    OFFERS.with(|offers| offers.borrow_mut().push(frames));
    AUDIO_ANSWERS.with(|answers| match answers.borrow_mut().as_mut() {
        None => frames,
        Some(list) if list.len() > 1 => list.remove(0),
        Some(list) => list[0],
    })
}

fn demo() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap()
}

fn info(rom: &[u8]) -> GameInfo {
    GameInfo { path: std::ptr::null(), data: rom.as_ptr().cast(), size: rom.len(), meta: std::ptr::null() }
}

fn load(rom: &[u8]) -> bool {
    // SAFETY: `info` points to the ROM's bytes.
    unsafe { retro_load_game(&info(rom)) }
}

fn serialized() -> Vec<u8> {
    let mut state = vec![0u8; retro_serialize_size()];
    // SAFETY: a writable buffer of the size the core asked for.
    assert!(unsafe { retro_serialize(state.as_mut_ptr().cast(), state.len()) });
    state
}

/// No logger and a stderr that refuses every write (`/dev/full`): the lines are lost, the calls
/// answer as usual.
fn stderr_unwritable() {
    retro_set_environment(Some(environment));
    let rom = demo();
    // SAFETY: null is allowed.
    assert!(!unsafe { retro_load_game(std::ptr::null()) });
    assert!(load(&rom), "a successful load logs a line too");
    let junk = [0u8; 16];
    // SAFETY: `junk` holds 16 readable bytes.
    assert!(!unsafe { retro_unserialize(junk.as_ptr().cast(), junk.len()) });
    retro_unload_game();
}

/// Sizes above isize::MAX: no slice can have them, so no buffer does; refused, not trusted.
fn huge_sizes() {
    retro_set_environment(Some(environment));
    let rom = demo();
    for size in [usize::MAX, isize::MAX as usize + 1] {
        let game = GameInfo { size, ..info(&rom) };
        // SAFETY: the size is a lie the core must refuse before reading.
        assert!(!unsafe { retro_load_game(&game) }, "ROM size {size}");
    }
    assert!(load(&rom));
    let state = serialized();
    let mut buffer = vec![0u8; state.len()];
    for size in [usize::MAX, isize::MAX as usize + 1] {
        // SAFETY: as above, lies to refuse.
        assert!(!unsafe { retro_serialize(buffer.as_mut_ptr().cast(), size) }, "buffer size {size}");
        // SAFETY: as above.
        assert!(!unsafe { retro_unserialize(state.as_ptr().cast(), size) }, "state size {size}");
    }
    assert!(buffer.iter().all(|&b| b == 0), "a refused serialize writes nothing");
    assert_eq!(serialized(), state, "a refused unserialize changes nothing");
}

/// The audio callback's answer is how many frames it took: more than offered (up to SIZE_MAX) is
/// held to the offer, none ends the frame's audio, fewer is offered the rest.
fn audio_claims() {
    retro_set_environment(Some(environment));
    retro_set_audio_sample_batch(Some(audio_batch));
    assert!(load(&demo()));
    let run = |answers: Option<Vec<usize>>| {
        AUDIO_ANSWERS.with(|a| *a.borrow_mut() = answers);
        OFFERS.with(|offers| offers.borrow_mut().clear());
        retro_run();
        OFFERS.with(|offers| offers.borrow().clone())
    };
    let offers = run(None);
    let frames = offers[0];
    assert!(frames > 700, "a frame's audio: {offers:?}");
    assert_eq!(run(Some(vec![1, usize::MAX])).len(), 2, "1 then more than the rest: done");
    assert_eq!(run(Some(vec![usize::MAX])).len(), 1);
    assert_eq!(run(Some(vec![0])).len(), 1, "taking nothing ends the frame's audio");
    let offers = run(Some(vec![300]));
    assert!(
        offers.len() >= 2 && offers.windows(2).all(|w| w[1] == w[0] - 300),
        "the rest offered: {offers:?}"
    );
    assert!(*offers.last().unwrap() <= 300);
}

/// An iNES image: header bytes 4-15 as given (16 KiB PRG units, 8 KiB CHR units, flags...), then
/// that much zeroed PRG and CHR ROM.
fn ines(header: [u8; 12]) -> Vec<u8> {
    let mut rom = b"NES\x1a".to_vec();
    rom.extend_from_slice(&header);
    rom.resize(16 + usize::from(header[0]) * 0x4000 + usize::from(header[1]) * 0x2000, 0);
    rom
}

/// Battery memory in the memory map only where the CPU addresses it (at $6000, the MMC6's at $7000);
/// save RAM exposes it all the same.
fn memory_map() {
    retro_set_environment(Some(environment));
    // (what, image, save RAM size, where the CPU sees the battery memory)
    let cases = [
        ("MMC1, battery", ines([2, 1, 0x12, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]), 0x2000, Some(0x6000)),
        // NES 2.0 mapper 4 submapper 1, 1 KiB of battery-backed PRG RAM.
        ("MMC6", ines([2, 1, 0x42, 0x08, 0x10, 0, 0x40, 0, 0, 0, 0, 0]), 0x400, Some(0x7000)),
        // The LZ93D50's 24C02 EEPROM, on a serial line at $800D / $6000 bit 4.
        ("Bandai FCG mapper 16, battery", ines([2, 1, 0x02, 0x10, 0, 0, 0, 0, 0, 0, 0, 0]), 256, None),
        // Its 24C01.
        ("Bandai LZ93D50 mapper 159, battery", ines([2, 1, 0xF2, 0x90, 0, 0, 0, 0, 0, 0, 0, 0]), 128, None),
        // NES 2.0: battery, 8 KiB of volatile PRG RAM, no PRG-NVRAM: the chip's 128 bytes (reached
        // through its $4800 data port) are the battery memory.
        ("Namco 163", ines([2, 1, 0x32, 0x18, 0, 0, 0x07, 0, 0, 0, 0, 0]), 128, None),
        // UNROM 512 with the battery bit: the PRG flash is the battery memory.
        ("UNROM 512 flash", ines([2, 0, 0xE2, 0x10, 0, 0, 0, 0, 0, 0, 0, 0]), 0x8000, None),
    ];
    for (what, rom, save_size, seen_at) in cases {
        MEMORY_MAP.with(|map| map.borrow_mut().clear());
        assert!(load(&rom), "{what}: loads");
        assert_eq!(retro_get_memory_size(ffi::MEMORY_SAVE_RAM), save_size, "{what}: save RAM");
        let save = retro_get_memory_data(ffi::MEMORY_SAVE_RAM) as usize;
        assert_ne!(save, 0, "{what}: save RAM");
        let map = MEMORY_MAP.with(|map| map.borrow().clone());
        assert_eq!(
            map[0],
            (ffi::MEMDESC_SYSTEM_RAM, retro_get_memory_data(ffi::MEMORY_SYSTEM_RAM) as usize, 0, 0x800)
        );
        let expected: Vec<_> = seen_at
            .map(|start| (ffi::MEMDESC_SAVE_RAM, save, start, save_size.min(0x2000)))
            .into_iter()
            .collect();
        assert_eq!(map[1..], expected, "{what}: {map:x?}");
        retro_unload_game();
    }
}

/// A cheat the console refuses (one code too many) leaves the cheats as they were: the one its index
/// held stays.
fn cheat_refused() {
    retro_set_environment(Some(environment));
    assert!(load(&demo()));
    // SAFETY: NUL-terminated strings, here and below.
    unsafe { retro_cheat_set(0, true, c"8000:01".as_ptr()) };
    let with_one = serialized();
    let sixteen: Vec<String> = (0..16).map(|i| format!("{:04X}:01", 0x8001 + i)).collect();
    let sixteen = std::ffi::CString::new(sixteen.join("+")).unwrap();
    let seventeen = std::ffi::CString::new(format!("8000:02+{}", sixteen.to_str().unwrap())).unwrap();
    // SAFETY: as above.
    unsafe { retro_cheat_set(0, true, seventeen.as_ptr()) };
    assert_eq!(serialized(), with_one, "17 codes refused at the index of a valid one");
    // SAFETY: as above.
    unsafe { retro_cheat_set(1, true, sixteen.as_ptr()) };
    assert_eq!(serialized(), with_one, "16 more refused at a free index");
    // SAFETY: as above.
    unsafe { retro_cheat_set(0, false, c"".as_ptr()) };
    // SAFETY: as above.
    unsafe { retro_cheat_set(1, true, sixteen.as_ptr()) };
    assert_ne!(serialized(), with_one, "with index 0 off, 16 codes at index 1 fit");
}

unsafe extern "C" fn input_poll() {}

unsafe extern "C" fn reentrant_input(_port: c_uint, _device: c_uint, _index: c_uint, _id: c_uint) -> i16 {
    answer("input", retro_get_memory_size(ffi::MEMORY_SYSTEM_RAM).to_string());
    0
}

unsafe extern "C" fn reentrant_video(_data: *const c_void, _width: c_uint, _height: c_uint, _pitch: usize) {
    answer("video", retro_get_memory_size(ffi::MEMORY_SYSTEM_RAM).to_string());
    answer("video", retro_get_memory_data(ffi::MEMORY_SYSTEM_RAM).is_null().to_string());
    answer("video", retro_serialize_size().to_string());
    answer("video", retro_get_region().to_string());
    retro_run();
    retro_reset();
    // SAFETY: a NUL-terminated string.
    unsafe { retro_cheat_set(0, true, c"8000:01".as_ptr()) };
    retro_cheat_reset();
    retro_unload_game();
    retro_deinit();
    let rom = demo();
    answer("video", load(&rom).to_string());
}

unsafe extern "C" fn reentrant_audio(_data: *const i16, frames: usize) -> usize {
    answer("audio", retro_get_memory_size(ffi::MEMORY_SYSTEM_RAM).to_string());
    let mut buffer = [0u8; 16];
    // SAFETY: a writable buffer of 16 bytes.
    answer("audio", unsafe { retro_serialize(buffer.as_mut_ptr().cast(), buffer.len()) }.to_string());
    frames
}

/// Callbacks calling back into the core: input and log callbacks run with nothing locked and get
/// the usual answers; the video and audio callbacks run inside the frame and get the answers of no
/// game (their loads, unloads, runs and cheats refused), never a deadlock.
fn reentrant() {
    GIVE_LOG.set(true);
    retro_set_environment(Some(environment));
    retro_set_input_poll(Some(input_poll));
    retro_set_input_state(Some(reentrant_input));
    retro_set_video_refresh(Some(reentrant_video));
    retro_set_audio_sample_batch(Some(reentrant_audio));
    let rom = demo();
    assert!(load(&rom));
    let frames = 3;
    for _ in 0..frames {
        retro_run();
    }
    let input = answers_of("input");
    // The outer frame's 16 button reads, then the video callback's retro_run's before it gives up.
    assert!(input.len() == 2 * 16 * frames, "{input:?}");
    for frame in input.chunks(32) {
        assert!(frame[..16].iter().all(|a| a == "2048") && frame[16..].iter().all(|a| a == "0"), "{frame:?}");
    }
    let video = answers_of("video");
    assert_eq!(video.len(), 5 * frames, "{video:?}");
    assert!(video.chunks(5).all(|frame| frame == ["0", "true", "0", "0", "false"]), "{video:?}");
    let audio = answers_of("audio");
    assert!(!audio.is_empty() && audio.chunks(2).all(|call| call == ["0", "false"]), "{audio:?}");
    // The game is still loaded, with no cheat, and has run exactly the outer frames.
    let mut reference = Console::with_config(&rom, Default::default(), None).unwrap();
    for _ in 0..frames {
        reference.run_frame(Default::default());
    }
    let mut expected = vec![0u8; reference.snapshot_len()];
    reference.save_state_into(&mut expected).unwrap();
    assert!(serialized() == expected, "the machine of {frames} frames, nothing else");

    if cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        // Log lines go out with nothing locked: the logger's call gets the usual answer, and the
        // line its own call logs is not sent back to it.
        ANSWERS.with(|answers| answers.borrow_mut().clear());
        let before = LOG_LINES.get();
        let mut small = [0u8; 4];
        // SAFETY: a writable buffer of 4 bytes, too small: refused with a log line.
        assert!(!unsafe { retro_serialize(small.as_mut_ptr().cast(), small.len()) });
        // SAFETY: 4 readable bytes, not a state: refused with a log line.
        assert!(!unsafe { retro_unserialize(small.as_ptr().cast(), small.len()) });
        // SAFETY: a NUL-terminated string, not a code: refused with a log line.
        unsafe { retro_cheat_set(3, true, c"NOTACODE".as_ptr()) };
        assert_eq!(LOG_LINES.get() - before, 3);
        assert_eq!(answers_of("log"), ["2048", "false"].repeat(3));
    }
    retro_unload_game();
    assert_eq!(retro_serialize_size(), 0);
    retro_deinit();
}
