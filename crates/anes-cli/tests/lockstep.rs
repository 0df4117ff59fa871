//! `anes lockstep` as a user meets it: the demo by default, the JSON summary, exit statuses 0/1/2,
//! every injected fault's fate, and the evidence bundle a divergence leaves.

use std::process::{Command, Output};

mod support;
use support::{TempDir, TempFile};

fn anes(args: &[&str]) -> Output {
    // In a folder of the test's own, so a divergence's default evidence folder never lands in the
    // source tree.
    let cwd = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("lockstep-cwd");
    std::fs::create_dir_all(&cwd).expect("a scratch folder");
    anes_in(&cwd, args)
}

/// `anes lockstep ARGS` run in the directory `cwd`.
fn anes_in(cwd: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anes"))
        .arg("lockstep")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the anes binary runs")
}

/// A fault the demo shows as a divergence within 100 frames.
const DIVERGING: [&str; 4] = ["--frames", "100", "--inject", "flip:ram:0x0342:3@1234567"];

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {} / {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// A folder for the test, removed with what is in it when the result is dropped.
fn scratch(name: &str) -> TempDir {
    TempDir::named(&format!("cli-lockstep-{name}"))
}

#[test]
fn the_demo_runs_by_default_and_agrees() {
    let output = anes(&["--frames", "120", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let summary = json(&output);
    assert_eq!(summary["frames_verified"], 120);
    assert_eq!(summary["sync_points"], 121);
    assert!(summary["divergence"].is_null());
    assert!(summary["fps_per_instance"].as_f64().unwrap() > 0.0);
    assert_eq!(summary["final_state_hash"].as_str().unwrap().len(), 64);
}

#[test]
fn threads_and_granularities_end_in_the_same_state() {
    let runs = [
        vec!["--frames", "60", "--json"],
        vec!["--frames", "60", "--json", "--threads"],
        vec!["--frames", "60", "--json", "--granularity", "scanline", "--checkpoint-every", "7"],
    ];
    let hashes: Vec<serde_json::Value> = runs
        .iter()
        .map(|args| {
            let output = anes(args);
            assert_eq!(output.status.code(), Some(0), "{args:?}");
            json(&output)["final_state_hash"].clone()
        })
        .collect();
    assert!(hashes.iter().all(|h| *h == hashes[0]), "{hashes:?}");
}

#[test]
fn an_injected_fault_is_a_divergence_with_a_bundle() {
    let dir = scratch("bundle");
    let report = dir.to_str().unwrap();
    let output =
        anes(&["--frames", "100", "--inject", "flip:ram:0x0300:3@1000000", "--report", report, "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let summary = json(&output);
    let divergence = &summary["divergence"];
    assert_eq!(divergence["kind"], "state");
    assert_eq!(divergence["fields"][0]["name"], "ram[$0300]");
    assert!(divergence["cpu_cycle"].as_u64().unwrap() < 1_000_000);
    assert!(summary["frames_verified"].as_u64().unwrap() < 100);
    for file in ["report.json", "report.html", "a.png", "b.png", "diff.png", "inputs.input"] {
        assert!(dir.join(file).is_file(), "{file}");
    }
    // The bundle replays with `anes run`: from A's checkpoint to where the comparator saw the divergence.
    let frames = divergence["detected"]["frame"].as_u64().unwrap() + 1
        - divergence["checkpoint_frame"].as_u64().unwrap();
    let rom = concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes");
    let replay = Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(["run", rom, "--json", "--frames", &frames.to_string()])
        .arg("--load-state")
        .arg(dir.join("checkpoint_a.snap"))
        .arg("--input")
        .arg(dir.join("inputs.input"))
        .output()
        .unwrap();
    assert_eq!(replay.status.code(), Some(0), "{}", String::from_utf8_lossy(&replay.stderr));
    assert_eq!(json(&replay)["state_hash"], divergence["detected"]["a"]["state_hash"]);
    // The text summary points to the bundle (--force: the folder holds the first bundle).
    let output = anes(&["--frames", "100", "--inject", "stall:5@1000000", "--report", report, "--force"]);
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("DIVERGENCE") && text.contains("report.html"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_exit_status_2() {
    for args in [
        vec!["--inject", "flip:ram:0x0342:9@1"],
        vec!["--inject", "flip:nosuch:0:0@1"],
        vec!["/nonexistent/anes/missing.nes"],
        vec!["--checkpoint-every", "0"],
    ] {
        let output = anes(&args);
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error: ") && err.lines().count() == 1, "{args:?}: {err}");
    }
    // A stall is at most one frame: 2^32 - 1 cycles would make a 5-frame run take minutes.
    let started = std::time::Instant::now();
    let output = anes(&["--frames", "5", "--inject", "stall:4294967295@100"]);
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("1 to 29781") && err.lines().count() == 1, "{err}");
    assert!(started.elapsed().as_secs() < 30, "refused at parse time, before running");
    let output = anes(&["--granularity", "pixel"]);
    assert_eq!(output.status.code(), Some(2), "clap refuses an unknown granularity");
}

#[test]
fn a_rom_with_an_input_file() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let rom = format!("{root}/roms/demo/demo.nes");
    let input = format!("{root}/roms/demo/demo.input");
    let output = anes(&[&rom, "--input", &input, "--frames", "40", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let with_file = json(&output)["final_state_hash"].clone();
    let default = json(&anes(&["--frames", "40", "--json"]))["final_state_hash"].clone();
    assert_eq!(with_file, default, "the demo's default input is its bundled input stream");
    let output = anes(&[&rom, "--input", &format!("{root}/Cargo.toml")]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not an input stream"));
}

#[test]
fn an_eager_ppu_or_apu_machine_b_agrees_with_the_lazy_machine_a() {
    // The reference schedules against the default ones, frame by frame, on the demo.
    let lazy = json(&anes(&["--frames", "180", "--json"]));
    for flag in ["--ppu-b", "--apu-b"] {
        let output = anes(&["--frames", "180", "--json", flag, "eager"]);
        assert_eq!(output.status.code(), Some(0), "{flag}: {}", String::from_utf8_lossy(&output.stdout));
        let eager = json(&output);
        assert!(eager["divergence"].is_null(), "{flag}");
        assert_eq!(eager["final_state_hash"], lazy["final_state_hash"], "{flag}");
    }
}

/// The synthetic test ROM written to a file, and the CPU cycle at which its frame 1 starts.
fn tiny_rom_file(name: &str) -> (TempFile, u64) {
    use anes_lockstep::Machine;
    let file = TempFile::write(&format!("cli-lockstep-{name}"), "tiny.nes", &anes_fixtures::tiny_rom());
    let mut machine =
        anes_lockstep::NesMachine::from_ines(&anes_fixtures::tiny_rom(), Default::default()).unwrap();
    machine.run_frame(Default::default());
    (file, machine.probe().cpu_cycle)
}

fn stderr_lines(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stderr).lines().map(str::to_string).collect()
}

#[test]
fn every_fault_has_its_fate_and_an_unapplied_one_is_not_a_clean_pass() {
    // Not reached: the run ends first. Exit status 2, one line saying so, and the fate in JSON.
    let spec = "flip:ram:0x0300:3@99999999";
    let output = anes(&["--frames", "5", "--json", "--inject", spec]);
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(
        stderr_lines(&output),
        [format!("error: --inject {spec}: not reached: the run ended before it came due")]
    );
    let summary = json(&output);
    assert!(summary["divergence"].is_null());
    assert_eq!(summary["faults"], serde_json::json!([{"spec": spec, "fate": "not_reached"}]));

    // Masked: the synthetic ROM stores over $0250 within the frame. A pass, told as masked.
    let (rom, frame_1) = tiny_rom_file("masked");
    let rom = rom.to_str().unwrap();
    let spec = format!("flip:ram:0x0250:1@{}", frame_1 + 200);
    let output = anes(&[rom, "--frames", "5", "--json", "--inject", &spec]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let fault = &json(&output)["faults"][0];
    assert_eq!(
        (fault["spec"].as_str(), fault["fate"].as_str(), fault["frame"].as_u64()),
        (Some(spec.as_str()), Some("masked"), Some(1))
    );
    let output = anes(&[rom, "--frames", "5", "--inject", &spec]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains(&format!("fault             {spec}: masked: applied in frame 1")), "{text}");

    // Refused: a flip the core refuses (an impossible state), found by trying where it will fire.
    use anes_lockstep::Machine;
    let machine =
        anes_lockstep::NesMachine::from_ines(&anes_fixtures::tiny_rom(), Default::default()).unwrap();
    let (section, offset, bit) =
        anes_fixtures::refused_flip(&machine, 5000).expect("some flip makes an impossible state");
    let spec = format!("flip:{}:{offset:#06x}:{bit}@5000", machine.section_name(section));
    let output = anes(&[rom, "--frames", "2", "--json", "--inject", &spec]);
    assert_eq!(output.status.code(), Some(2));
    let lines = stderr_lines(&output);
    assert!(
        lines.len() == 1 && lines[0].starts_with(&format!("error: --inject {spec}: refused in frame 0")),
        "{lines:?}"
    );
    assert_eq!(json(&output)["faults"][0]["fate"], "refused");

    // Detected, with a later fault the divergence stopped the run before: the divergence decides.
    let output = anes(&[
        "--frames",
        "100",
        "--json",
        "--inject",
        "flip:ram:0x0300:3@1000000",
        "--inject",
        "stall:3@99999999",
        "--report",
        scratch("detected").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stderr.is_empty(), "{}", String::from_utf8_lossy(&output.stderr));
    let faults = &json(&output)["faults"];
    assert_eq!(
        (faults[0]["fate"].as_str(), faults[1]["fate"].as_str()),
        (Some("detected"), Some("not_reached"))
    );
    assert_eq!(faults[0]["sync_point"], json(&output)["divergence"]["detected"]["sync_point"]);
}

#[test]
fn threaded_and_same_thread_reports_are_the_same() {
    // Same divergence, both modes: the JSON summaries are equal but for the speed and the folder,
    // and so are the bundles, report.html included.
    let mut summaries = Vec::new();
    let mut pages = Vec::new();
    for (name, threads) in [("same-thread", false), ("threaded", true)] {
        let dir = scratch(name);
        let report = dir.to_str().unwrap();
        let mut args =
            vec!["--frames", "100", "--inject", "flip:ram:0x0342:3@1234567", "--report", report, "--json"];
        if threads {
            args.push("--threads");
        }
        let output = anes(&args);
        assert_eq!(output.status.code(), Some(1), "{name}: {}", String::from_utf8_lossy(&output.stderr));
        let mut summary = json(&output);
        let object = summary.as_object_mut().unwrap();
        assert!(object.remove("fps_per_instance").is_some());
        object.remove("evidence");
        assert!(
            summary["divergence"]["detected"]["sections"].as_array().is_some_and(|s| !s.is_empty()),
            "{name}"
        );
        summaries.push(summary);
        pages.push(std::fs::read(dir.join("report.html")).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert_eq!(summaries[0], summaries[1]);
    assert!(pages[0] == pages[1], "report.html differs between the modes");
}

#[test]
fn by_default_each_divergence_gets_a_new_folder_named_by_time_and_rom() {
    let cwd = scratch("default-folder");
    std::fs::create_dir_all(&cwd).unwrap();
    let mut folders = Vec::new();
    for _ in 0..2 {
        let output = anes_in(&cwd, &[&DIVERGING[..], &["--json"]].concat());
        assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
        let folder =
            json(&output)["evidence"].as_str().expect("the summary says where the evidence went").to_string();
        assert!(cwd.join(&folder).join("report.json").is_file(), "{folder}");
        folders.push(folder);
    }
    assert_ne!(folders[0], folders[1], "the second run does not write over the first");
    for folder in &folders {
        // anes-evidence/<YYYYMMDDTHHMMSSZ>-demo, plus -N when that exists.
        let name = folder.strip_prefix("anes-evidence/").unwrap_or_else(|| panic!("{folder}"));
        let (time, rest) = name.split_at(16);
        let digits = |t: &str| t.chars().all(|c| c.is_ascii_digit());
        assert!(
            digits(&time[..8]) && &time[8..9] == "T" && digits(&time[9..15]) && time.ends_with('Z'),
            "{name}"
        );
        assert!(rest == "-demo" || rest.strip_prefix("-demo-").is_some_and(digits), "{name}");
    }
    let entries: Vec<_> = std::fs::read_dir(&cwd).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(entries, ["anes-evidence"], "nothing else is written in the current directory");
    // The text summary says where it went.
    let output = anes_in(&cwd, &DIVERGING);
    let text = String::from_utf8(output.stdout).unwrap();
    let line = text.lines().find(|l| l.starts_with("evidence ")).unwrap_or_else(|| panic!("{text}"));
    let page = line.strip_prefix("evidence").unwrap().trim();
    let third = page.strip_suffix("/report.html").unwrap_or_else(|| panic!("{line}"));
    assert!(third.starts_with("anes-evidence/") && !folders.iter().any(|f| f == third), "{line}");
    assert!(cwd.join(page).is_file(), "{line}");
    // A run that agrees writes nothing.
    let output = anes_in(&cwd, &["--frames", "10", "--json"]);
    assert!(json(&output)["evidence"].is_null());
    std::fs::remove_dir_all(&cwd).unwrap();
}

#[test]
fn an_explicit_report_folder_must_be_new_or_empty_unless_forced() {
    let dir = scratch("explicit");
    std::fs::create_dir_all(&dir).unwrap();
    let report = dir.to_str().unwrap();
    // Empty: fine.
    let output = anes(&[&DIVERGING[..], &["--report", report]].concat());
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let first = std::fs::read(dir.join("report.json")).unwrap();
    std::fs::write(dir.join("notes.txt"), b"mine").unwrap();
    // Not empty: refused before running, nothing touched.
    let output = anes(&["--frames", "100", "--inject", "stall:5@1000000", "--report", report]);
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with(&format!("error: {report}: is not empty")) && err.contains("--force"), "{err}");
    assert!(output.stdout.is_empty(), "refused before the run");
    assert_eq!(std::fs::read(dir.join("report.json")).unwrap(), first);
    // --force: the bundle's files are replaced, other files kept.
    let output =
        anes(&["--frames", "100", "--inject", "stall:5@1000000", "--report", report, "--force", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(json(&output)["evidence"], report);
    assert_ne!(std::fs::read(dir.join("report.json")).unwrap(), first);
    assert_eq!(std::fs::read(dir.join("notes.txt")).unwrap(), b"mine");
    // --force means nothing without --report.
    let output = anes(&["--frames", "10", "--force"]);
    assert_eq!(output.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_report_path_that_cannot_be_a_folder_is_one_line_with_the_problem_once() {
    let dir = scratch("report-file");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("existing-file");
    std::fs::write(&file, b"x").unwrap();
    let below_file = file.join("bundle");
    for (path, problem) in [(&file, "exists and is not a directory"), (&below_file, "Not a directory")] {
        let path = path.to_str().unwrap();
        let output = anes(&[&DIVERGING[..], &["--report", path]].concat());
        assert_eq!(output.status.code(), Some(2));
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&format!("error: {path}: ")), "{err}");
        assert_eq!(err.matches(problem).count(), 1, "the problem is said once: {err}");
        assert_eq!(err.matches(path).count(), 1, "the path is said once: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// CPU cycles of 100 frames, rounded down, from the nesdev wiki's "Cycle reference chart": 341 dots
/// a line; NTSC 262 lines at 3 dots per CPU cycle (tiny_rom leaves rendering off: no skipped dot),
/// PAL 312 lines at 3.2 dots, Dendy 312 lines at 3 dots.
const CYCLES_OF_100_FRAMES: [(&str, u64); 3] =
    [("ntsc", 100 * 341 * 262 / 3), ("pal", 100 * 341 * 312 * 5 / 16), ("dendy", 100 * 341 * 312 / 3)];

#[test]
fn region_runs_both_machines_in_that_region() {
    let (rom, _) = tiny_rom_file("region");
    let rom = rom.to_str().unwrap();
    for (region, expected) in CYCLES_OF_100_FRAMES {
        let run = |frames: &str| {
            let output = anes(&[rom, "--region", region, "--frames", frames, "--json"]);
            assert_eq!(
                output.status.code(),
                Some(0),
                "{region}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            let summary = json(&output);
            assert_eq!(summary["region"], region);
            assert!(summary["divergence"].is_null(), "{region}");
            summary["final_cpu_cycle"].as_u64().unwrap()
        };
        let cycles = run("120") - run("20");
        // Each end is the first instruction boundary after the frame's point: tiny_rom's longest
        // instruction is 4 cycles (3 late at most), and 1 for the rounding.
        assert!(
            cycles.abs_diff(expected) <= 4,
            "{region}: {cycles} CPU cycles in 100 frames, expected {expected}"
        );
    }
}

#[test]
fn an_fm2_movie_with_pal_flag_runs_pal_unless_region_says_otherwise() {
    let (rom, _) = tiny_rom_file("palflag");
    let movie = rom.with_file_name("pal.fm2");
    let mut text = String::from("version 3\nemuVersion 20604\npalFlag 1\nport0 1\nport1 1\nport2 0\n");
    text.push_str(&"|0|........|........||\n".repeat(30));
    std::fs::write(&movie, text).unwrap();
    let (rom, movie) = (rom.to_str().unwrap(), movie.to_str().unwrap());
    for (extra, region) in [(None, "pal"), (Some("dendy"), "dendy"), (Some("ntsc"), "ntsc")] {
        let mut args = vec![rom, "--input", movie, "--json"];
        args.extend(extra.iter().flat_map(|r| ["--region", r]));
        let output = anes(&args);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        let summary = json(&output);
        assert_eq!(summary["region"], region, "{args:?}");
        assert_eq!(summary["frames_verified"], 30, "{args:?}");
    }
}

fn one_vblank() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../roms/poweron/one_vblank.nes")
        .display()
        .to_string()
}

/// `--power-on-b` with other choices compares by what the program does: the one-VBlank start-up
/// parts ways at its first read of PPUSTATUS under VBlank set, agrees under the console's palette
/// (it writes the whole palette), and a fault plan does not go with it.
#[test]
fn machine_b_powered_on_otherwise_is_compared_by_what_the_program_does() {
    let rom = one_vblank();
    let report = scratch("power-on-b");
    let report = report.to_str().unwrap();
    let output =
        anes(&[&rom, "--frames", "10", "--power-on-b", "quick-power-cycle", "--report", report, "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let summary = json(&output);
    assert_eq!(
        (summary["power_on"].as_str(), summary["power_on_b"].as_str()),
        (Some("default"), Some("quick-power-cycle"))
    );
    let message = summary["divergence"]["message"].as_str().unwrap();
    assert!(message.contains("frame 0") && message.contains("BIT $2002"), "{message}");
    assert_eq!(summary["divergence"]["fields"][0]["name"], "cpu.p");

    let output = anes(&[&rom, "--frames", "30", "--power-on-b", "console-palette", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
    assert_eq!(json(&output)["frames_verified"], 30);

    let output = anes(&[&rom, "--power-on-b", "warm-up", "--inject", "flip:ram:0x10:0@100"]);
    assert_eq!(output.status.code(), Some(2));
}

/// One profile gives one machine whichever command runs it: `anes run` ends on the state hash that
/// `anes lockstep` verified, and another profile's differs.
#[test]
fn a_profile_hashes_the_same_in_run_and_lockstep() {
    let rom = one_vblank();
    let run = |profile: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_anes"))
            .args(["run", &rom, "--frames", "12", "--json", "--power-on", profile])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        let stop = json(&output);
        assert_eq!(stop["power_on"].as_str(), Some(profile));
        stop["state_hash"].as_str().unwrap().to_string()
    };
    for profile in ["default", "warm-up", "random:11"] {
        let output = anes(&[&rom, "--frames", "12", "--json", "--power-on", profile]);
        assert_eq!(output.status.code(), Some(0));
        assert_eq!(json(&output)["final_state_hash"].as_str().unwrap(), run(profile), "{profile}");
    }
    assert_ne!(run("default"), run("random:11"));
}
