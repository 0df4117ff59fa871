//! The libretro host: typed errors for what is not a usable core, and Nestopia's core driven the
//! way the peer group drives it (pictures, audio, system RAM, both joypad ports, reset, the
//! `Console` reads), checked against what our demo ROM does on anes.
//!
//! The Nestopia tests need Debian's `libretro-nestopia` (`bash benches/peer/install-nestopia.sh`);
//! without it they say they skipped, except under CI (`CI` set), where its absence fails them.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use anes_conformance::Console;
use anes_core::movie::FrameInput;
use anes_core::{Cartridge, Nes, NesConfig};
use anes_peer_bench::libretro::{HostConfig, HostError, LibretroHost, ffi};
use anes_peer_bench::nestopia;

/// One libretro host per process: the tests that create one take turns.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The demo's zero page (roms/demo/demo.s): the NMI's frame counter and both pads as last read.
const FRAME_COUNTER: u16 = 0x0003;
const PAD1: u16 = 0x0007;
const PAD2: u16 = 0x0008;
/// The demo's button bits (it shifts them in A first, so A is the high bit).
const DEMO_A: u8 = 0x80;
const DEMO_START: u8 = 0x10;

fn demo() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../roms/demo/demo.nes")).unwrap()
}

/// The installed Nestopia core, or `None` after saying why the test is skipped (a failure under CI).
fn nestopia_core() -> Option<PathBuf> {
    match nestopia::core_path() {
        Ok(path) => Some(path),
        Err(err) if anes_fs::ci_is_set() => {
            panic!("CI is set and Nestopia is missing: {err}")
        }
        Err(err) => {
            eprintln!("skipped: {err}");
            None
        }
    }
}

fn frame_counter(host: &LibretroHost) -> u16 {
    u16::from_le_bytes([host.peek(FRAME_COUNTER), host.peek(FRAME_COUNTER + 1)])
}

#[test]
fn a_missing_core_is_a_typed_error() {
    let _turn = serial();
    let err =
        LibretroHost::new(Path::new("/nonexistent/nestopia_libretro.so"), &demo(), &HostConfig::default())
            .unwrap_err();
    assert!(
        matches!(err, HostError::CoreNotFound { ref path } if path.ends_with("nestopia_libretro.so")),
        "{err}"
    );
}

#[test]
fn a_file_that_is_not_a_library_is_refused() {
    let _turn = serial();
    let not_a_library = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let err = LibretroHost::new(&not_a_library, &demo(), &HostConfig::default()).unwrap_err();
    assert!(matches!(err, HostError::Open { .. }), "{err}");
}

#[test]
fn a_library_without_the_libretro_api_is_refused() {
    let _turn = serial();
    // The C library this test runs with: a real shared library, and no libretro core.
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let libc = maps
        .lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| {
            Path::new(path).file_name().is_some_and(|name| name.to_string_lossy().starts_with("libc.so"))
        })
        .expect("this process maps a libc.so");
    let err = LibretroHost::new(Path::new(libc), &demo(), &HostConfig::default()).unwrap_err();
    assert!(matches!(err, HostError::MissingSymbol { symbol: "retro_set_environment", .. }), "{err}");
}

#[test]
fn too_many_joypad_ports_are_refused() {
    let _turn = serial();
    let Some(core) = nestopia_core() else { return };
    let config = HostConfig { joypad_ports: 3, ..nestopia::config() };
    let err = LibretroHost::new(&core, &demo(), &config).unwrap_err();
    assert!(matches!(err, HostError::Ports { asked: 3 }), "{err}");
}

#[test]
fn nestopia_runs_the_demo_like_anes() {
    let _turn = serial();
    let Some(core) = nestopia_core() else { return };
    let mut host = LibretroHost::new(&core, &demo(), &nestopia::config()).unwrap();
    assert!(host.core_name().starts_with("Nestopia"), "{}", host.core_name());
    let mut nes = Nes::new(Cartridge::from_ines(&demo()).unwrap(), NesConfig::default());
    for _ in 0..120 {
        host.run_frame();
        nes.run_frame(FrameInput::default());
    }
    assert_eq!(host.frames(), 120);
    assert_eq!(host.pictures(), 120);
    // 48 kHz at 60 frames per second, synthesized every frame and dropped by the host.
    assert_eq!(host.audio_frames(), 120 * 800);
    let picture = host.picture();
    assert_eq!((picture.width, picture.height, picture.format), (256, 240, ffi::PIXEL_FORMAT_XRGB8888));
    assert_eq!(picture.bytes.len(), 256 * 240 * 4);
    let colours: std::collections::BTreeSet<&[u8]> = picture.bytes.chunks_exact(4).collect();
    assert!(colours.len() >= 4, "the demo's picture has {} colours", colours.len());
    assert_eq!(host.system_ram().map(<[u8]>::len), Some(2048));
    assert_eq!(host.save_ram(), None, "the demo has no cartridge RAM");
    // The same program on two emulators: the NMI's frame counter agrees to within a frame (where
    // each emulator ends a frame differs).
    let anes_counter = u16::from_le_bytes([nes.peek(FRAME_COUNTER), nes.peek(FRAME_COUNTER + 1)]);
    let counter = frame_counter(&host);
    assert!(anes_counter.abs_diff(counter) <= 1 && counter > 100, "anes {anes_counter}, Nestopia {counter}");
}

#[test]
fn both_joypad_ports_reach_the_program_only_when_plugged() {
    let _turn = serial();
    let Some(core) = nestopia_core() else { return };
    let held = |config: &HostConfig| {
        let mut host = LibretroHost::new(&core, &demo(), config).unwrap();
        host.set_joypad(0, 1 << ffi::joypad::A);
        host.set_joypad(1, 1 << ffi::joypad::START);
        for _ in 0..30 {
            host.run_frame();
        }
        (host.peek(PAD1), host.peek(PAD2))
    };
    assert_eq!(held(&nestopia::config()), (DEMO_A, DEMO_START));
    // Nestopia leaves a port unplugged until the frontend plugs a device in.
    assert_eq!(held(&HostConfig { joypad_ports: 0, ..nestopia::config() }), (0, 0));
    assert_eq!(held(&HostConfig { joypad_ports: 1, ..nestopia::config() }), (DEMO_A, 0));
}

#[test]
fn reset_restarts_the_program() {
    let _turn = serial();
    let Some(core) = nestopia_core() else { return };
    let mut host = LibretroHost::new(&core, &demo(), &nestopia::config()).unwrap();
    for _ in 0..120 {
        host.run_frame();
    }
    assert!(frame_counter(&host) > 100);
    host.soft_reset();
    for _ in 0..10 {
        host.run_frame();
    }
    // The demo's reset handler clears RAM and counts frames from 0 again.
    assert!(frame_counter(&host) < 10, "frame counter {} after a reset", frame_counter(&host));
    assert_eq!(host.frames(), 130, "the host counts frames since power-on");
}

#[test]
fn console_reads_cover_system_ram_and_remember_the_rest() {
    let _turn = serial();
    let Some(core) = nestopia_core() else { return };
    let mut host = LibretroHost::new(&core, &demo(), &nestopia::config()).unwrap();
    host.set_joypad(0, 1 << ffi::joypad::A);
    for _ in 0..30 {
        host.run_frame();
    }
    // $0000-$07FF mirrored up to $1FFF.
    for mirror in [0x0000, 0x0800, 0x1000, 0x1800] {
        assert_eq!(host.cpu_peek(PAD1 + mirror), Some(DEMO_A));
    }
    assert_eq!(host.cpu_peek(0x6000), None, "no save RAM for the demo");
    assert_eq!(host.first_unreadable_cpu_read(), None);
    assert_eq!(host.peek(0x0007), DEMO_A);
    assert_eq!(host.peek(0x8000), 0);
    assert_eq!(host.peek(0x6000), 0);
    assert_eq!(host.first_unreadable_cpu_read(), Some(0x8000), "the first unreadable address is kept");
    assert_eq!(host.ppu_peek(0x2000), 0);
    assert_eq!(host.first_unreadable_ppu_read(), Some(0x2000));
    assert_eq!(host.jammed_at(), None);
}

#[test]
fn one_host_per_process() {
    let _turn = serial();
    let Some(core) = nestopia_core() else { return };
    let first = LibretroHost::new(&core, &demo(), &nestopia::config()).unwrap();
    let err = LibretroHost::new(&core, &demo(), &nestopia::config()).unwrap_err();
    assert!(matches!(err, HostError::Busy), "{err}");
    drop(first);
    let mut again = LibretroHost::new(&core, &demo(), &nestopia::config()).unwrap();
    again.run_frame();
    assert_eq!(again.frames(), 1);
}
