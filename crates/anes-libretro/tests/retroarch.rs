//! The core in the real client: Debian's `retroarch` loads `libanes_libretro.so`, runs the demo ROM
//! headless under Xvfb and takes a screenshot, which must equal, pixel for pixel, the picture
//! `anes run` makes of the same ROM after the same number of frames. RetroArch saves its state when
//! it exits (through `retro_serialize`); that state must be the machine `anes` reaches, and a second
//! RetroArch run that starts from it (through `retro_unserialize`) must continue identically.
//!
//! Needs `retroarch` and `Xvfb`, so it is `#[ignore]`d: `.ci/run` installs them
//! (`scripts/install-retroarch.sh`) and runs it. Every process it starts (Xvfb, RetroArch, `anes`) is stopped by its PID on every path.
//!
//! The reference picture comes from the `anes` binary: `ANES_BIN`, else `target/<profile>/anes`
//! beside this test (built by `cargo test --workspace`); without either it is computed with the same
//! library calls `anes run` makes, and the test says so.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anes_frontend::Console;
use anes_frontend::anes_core::ppu::rgb::frame_to_rgb;

/// Frames of the first run: the demo's frame 300, the frame of the README's picture (which is
/// taken with the demo's input stream; RetroArch runs with no buttons pressed).
const FIRST_RUN_FRAMES: u64 = 300;
/// Frames of the second run, started from the first run's saved state.
const SECOND_RUN_FRAMES: u64 = 60;
/// Longest a RetroArch run may take.
const RUN_TIMEOUT: Duration = Duration::from_secs(180);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()))
}

/// Fails naming the command that installs what is missing: tests never install anything.
fn require_client() {
    assert!(
        on_path("retroarch") && on_path("Xvfb"),
        "retroarch_runs_the_core needs retroarch and Xvfb: bash scripts/install-retroarch.sh installs them"
    );
}

/// A child process, killed and reaped by its PID when dropped.
struct Running {
    child: Child,
    what: &'static str,
}

impl Running {
    /// Waits up to `timeout` for the process to exit on its own; true when it exited with status 0.
    fn wait(&mut self, timeout: Duration) -> bool {
        let start = Instant::now();
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return status.success(),
                Ok(None) if start.elapsed() < timeout => std::thread::sleep(Duration::from_millis(50)),
                Ok(None) => panic!("{} (pid {}) still running after {timeout:?}", self.what, self.child.id()),
                Err(error) => panic!("{}: {error}", self.what),
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// A scratch folder (the HOME of every RetroArch run), removed at the end unless the test failed.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("retroarch_runs_the_core: files kept in {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Starts Xvfb on a free display; returns it and the display name (`:N`).
fn start_xvfb() -> (Running, String) {
    let child = Command::new("Xvfb")
        .args(["-displayfd", "1", "-screen", "0", "1024x768x24", "-nolisten", "tcp"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start Xvfb");
    let mut xvfb = Running { child, what: "Xvfb" };
    let stdout = xvfb.child.stdout.take().expect("piped");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("read Xvfb's display number");
    let number = line.trim();
    assert!(!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()), "Xvfb printed {line:?}");
    (xvfb, format!(":{number}"))
}

/// The core as RetroArch expects to find it: `anes_libretro.so` in its cores folder, with its info
/// file (without which RetroArch refuses save states) in its info folder.
fn install_core(home: &Path) -> PathBuf {
    let deps = std::env::current_exe().expect("test path").parent().expect("deps folder").to_path_buf();
    let built = [deps.join("libanes_libretro.so"), deps.join("../libanes_libretro.so")]
        .into_iter()
        .find(|path| path.is_file())
        .expect("libanes_libretro.so is built with this test (crate-type cdylib)");
    let (cores, info) = (home.join("cores"), home.join("info"));
    for folder in [&cores, &info, &home.join("states"), &home.join("saves")] {
        std::fs::create_dir_all(folder).unwrap();
    }
    let core = cores.join("anes_libretro.so");
    std::fs::copy(&built, &core).unwrap();
    std::fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("anes_libretro.info"),
        info.join("anes_libretro.info"),
    )
    .unwrap();
    core
}

/// Runs RetroArch on `rom` for `frames` frames and returns its screenshot as RGB bytes. `load_state`
/// makes it start from `states/<rom>.state.auto`; it always saves that file when it exits.
fn run_retroarch(
    home: &Path,
    display: &str,
    core: &Path,
    rom: &Path,
    frames: u64,
    load_state: bool,
) -> Vec<u8> {
    let config = home.join("ra.cfg");
    let dir = |name: &str| home.join(name).display().to_string();
    // The screenshot is the core's own frame at its own size, with nothing drawn over it.
    std::fs::write(
        &config,
        format!(
            "video_gpu_screenshot = \"false\"\nvideo_font_enable = \"false\"\nmenu_enable_widgets = \"false\"\n\
             audio_driver = \"null\"\ninput_driver = \"null\"\ninput_joypad_driver = \"null\"\n\
             libretro_directory = \"{cores}\"\nlibretro_info_path = \"{info}\"\n\
             savestate_directory = \"{states}\"\nsavefile_directory = \"{saves}\"\n\
             savestate_file_compression = \"false\"\nsavestate_auto_save = \"true\"\n\
             savestate_auto_load = \"{load_state}\"\nconfig_save_on_exit = \"false\"\n",
            cores = dir("cores"),
            info = dir("info"),
            states = dir("states"),
            saves = dir("saves"),
        ),
    )
    .unwrap();
    let shot = home.join(format!("retroarch-{frames}-{load_state}.png"));
    let log = std::fs::File::create(home.join(format!("retroarch-{frames}-{load_state}.log"))).unwrap();
    let child = Command::new("retroarch")
        .arg(format!("--appendconfig={}", config.display()))
        .arg("-L")
        .arg(core)
        .arg(rom)
        .arg(format!("--max-frames={frames}"))
        .arg("--max-frames-ss")
        .arg(format!("--max-frames-ss-path={}", shot.display()))
        .arg("--verbose")
        .env("HOME", home)
        .env("DISPLAY", display)
        .env_remove("XDG_RUNTIME_DIR")
        // Debian's RetroArch asks GameMode (a recommended package) for a D-Bus session at start-up,
        // before any configuration is read; with no session bus, libdbus's failed-connection path
        // trips one of its own checks and aborts the process. No bus address and non-fatal libdbus
        // checks make GameMode fail quietly instead, without launching a bus we would have to stop.
        .env("DBUS_SESSION_BUS_ADDRESS", "disabled:")
        .env("DBUS_FATAL_WARNINGS", "0")
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("start retroarch");
    let mut retroarch = Running { child, what: "retroarch" };
    let ok = retroarch.wait(RUN_TIMEOUT);
    assert!(ok, "retroarch failed; see its log in {}", home.display());
    read_png_rgb(&shot)
}

/// An 8-bit RGB or RGBA PNG as RGB bytes.
fn read_png_rgb(path: &Path) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buffer).unwrap();
    assert_eq!((info.width, info.height), (256, 240), "{}: the core's full 256x240 picture", path.display());
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    match info.color_type {
        png::ColorType::Rgb => buffer[..info.buffer_size()].to_vec(),
        png::ColorType::Rgba => {
            buffer[..info.buffer_size()].chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect()
        }
        other => panic!("{}: unexpected colour type {other:?}", path.display()),
    }
}

/// Where the `anes` binary is, if it was built.
fn anes_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ANES_BIN") {
        return Some(PathBuf::from(path));
    }
    let beside = std::env::current_exe().ok()?.parent()?.parent()?.join("anes");
    beside.is_file().then_some(beside)
}

/// The picture `anes run ROM --frames N --screenshot` makes, as RGB bytes.
fn anes_run_picture(home: &Path, rom: &Path, frames: u64) -> Vec<u8> {
    if let Some(anes) = anes_binary() {
        let shot = home.join(format!("anes-run-{frames}.png"));
        let child = Command::new(&anes)
            .arg("run")
            .arg(rom)
            .args(["--frames", &frames.to_string(), "--screenshot"])
            .arg(&shot)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", anes.display()));
        let mut run = Running { child, what: "anes run" };
        assert!(run.wait(RUN_TIMEOUT), "anes run failed");
        return read_png_rgb(&shot);
    }
    eprintln!(
        "retroarch_runs_the_core: no anes binary (set ANES_BIN or build anes-cli); the reference picture \
         comes from the library calls `anes run` makes"
    );
    let console = console_after(rom, frames);
    let mut rgb = vec![0; 256 * 240 * 3];
    frame_to_rgb(console.picture(), &mut rgb);
    rgb
}

/// A console run `frames` frames with no input from power-on, as `anes run` runs it.
fn console_after(rom: &Path, frames: u64) -> Console {
    let mut console = Console::with_config(&std::fs::read(rom).unwrap(), Default::default(), None).unwrap();
    for _ in 0..frames {
        console.run_frame(Default::default());
    }
    console
}

fn assert_same_picture(what: &str, retroarch: &[u8], anes: &[u8]) {
    let differing = retroarch.chunks_exact(3).zip(anes.chunks_exact(3)).filter(|(a, b)| a != b).count();
    assert_eq!(differing, 0, "{what}: {differing} of 61440 pixels differ between RetroArch and anes run");
}

/// The core snapshot RetroArch 1.14 saved: the `MEM ` chunk of its `RASTATE` container (or the
/// whole file, as older versions write it).
fn saved_state(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if !bytes.starts_with(b"RASTATE") {
        return bytes;
    }
    let mut at = 8;
    while at + 8 <= bytes.len() {
        let tag = &bytes[at..at + 4];
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        let data = at + 8;
        assert!(data + len <= bytes.len(), "{}: chunk {tag:?} overruns the file", path.display());
        if tag == b"MEM " {
            return bytes[data..data + len].to_vec();
        }
        at = data + len.div_ceil(8) * 8;
    }
    panic!("{}: no MEM chunk", path.display());
}

#[test]
#[ignore = "needs retroarch and Xvfb (scripts/install-retroarch.sh)"]
fn retroarch_runs_the_core() {
    require_client();
    let home = std::env::temp_dir().join(format!("anes-retroarch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    let scratch = Scratch(home.clone());
    let core = install_core(&home);
    let rom = home.join("demo.nes");
    std::fs::copy(repo().join("roms/demo/demo.nes"), &rom).unwrap();
    let (_xvfb, display) = start_xvfb();

    // 1. Power-on to frame 300: RetroArch's screenshot is anes's picture.
    let first = run_retroarch(&home, &display, &core, &rom, FIRST_RUN_FRAMES, false);
    assert_same_picture("frame 300", &first, &anes_run_picture(&home, &rom, FIRST_RUN_FRAMES));

    // 2. The state RetroArch saved at exit is the machine anes reaches in 300 frames, byte for byte.
    let state_path = home.join("states/demo.state.auto");
    let state = saved_state(&state_path);
    let mut restored = console_after(&rom, 0);
    restored.load_state(&state).expect("RetroArch's save state loads in anes");
    let reference = console_after(&rom, FIRST_RUN_FRAMES);
    assert_eq!(restored.nes().frame(), FIRST_RUN_FRAMES);
    assert_eq!(
        restored.state_hash(),
        reference.state_hash(),
        "the saved state is anes's machine at frame 300"
    );

    // 3. RetroArch starts from that state and runs on. RetroArch 1.14 applies an auto-loaded state
    //    during its first frame (measured: 59 of the 60 frames run after the load), so the frame it
    //    stops at is read from the state it saves at exit: the picture and the machine must be
    //    anes's at that frame, and the run must have started from frame 300.
    let second = run_retroarch(&home, &display, &core, &rom, SECOND_RUN_FRAMES, true);
    let mut resaved = console_after(&rom, 0);
    resaved.load_state(&saved_state(&state_path)).unwrap();
    let stopped = resaved.nes().frame();
    let full = FIRST_RUN_FRAMES + SECOND_RUN_FRAMES;
    assert!(
        (full - 1..=full).contains(&stopped),
        "the second run stopped at frame {stopped}; from frame 300, 60 frames end at 359 or 360"
    );
    assert_eq!(resaved.state_hash(), console_after(&rom, stopped).state_hash(), "frame {stopped}");
    assert_same_picture("after loading the state", &second, &anes_run_picture(&home, &rom, stopped));

    if let Some(keep) = std::env::var_os("ANES_RETROARCH_SCREENSHOT") {
        std::fs::copy(home.join(format!("retroarch-{FIRST_RUN_FRAMES}-false.png")), keep).unwrap();
    }
    drop(scratch);
}
