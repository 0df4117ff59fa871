//! Libretro cores under the harness, as a user runs them: `anes lockstep --libretro` of two worker
//! processes, a RAM byte flipped through the memory interfaces and localized, `anes audit` catching
//! each fault of the test core at its check and byte, and `anes canary` of the test core's two builds.
//!
//! The test core is built with anes-retro-host. Debian's Nestopia (`libretro-nestopia`, installed by
//! scripts/install-libretro-cores.sh) and the shared conformance ROMs are needed by the Nestopia
//! tests, which are `#[ignore]`d (`.ci/run` installs the cores and runs them with
//! `--include-ignored`) and fail naming what is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anes_retro_host::{TEST_CORE_A, TEST_CORE_B};

mod support;
use support::{TempDir, TempFile};

/// Debian's multiarch folder of libretro cores.
const DEBIAN_CORES: &str = "/usr/lib/x86_64-linux-gnu/libretro";

fn anes(args: &[&str]) -> Output {
    // In a folder of the test's own, so a default evidence folder never lands in the source tree.
    let cwd = Path::new(env!("CARGO_TARGET_TMPDIR")).join("libretro-cwd");
    std::fs::create_dir_all(&cwd).expect("a scratch folder");
    Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(args)
        .current_dir(&cwd)
        .output()
        .expect("the anes binary runs")
}

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
    TempDir::named(&format!("cli-libretro-{name}"))
}

/// A content file for the test core (it hashes the bytes into its generator's seed).
fn test_content(name: &str) -> TempFile {
    TempFile::write(&format!("cli-libretro-{name}"), "content.bin", b"anes test core content\n")
}

/// Debian's Nestopia and a conformance ROM; fails naming what is missing (tests never install).
fn nestopia_and_rom(test: &str) -> (PathBuf, PathBuf) {
    nestopia_and(test, "roms/instr_test-v5/official_only.nes")
}

/// Debian's Nestopia and the conformance ROM at `rom` (relative to the conformance folder).
fn nestopia_and(test: &str, rom: &str) -> (PathBuf, PathBuf) {
    let core = Path::new(DEBIAN_CORES).join("nestopia_libretro.so");
    assert!(
        core.is_file(),
        "{test} needs {}: bash scripts/install-libretro-cores.sh installs it",
        core.display()
    );
    let conformance = std::env::var_os("ANES_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance"));
    let rom = conformance.join(rom);
    assert!(rom.is_file(), "{test} needs {} (ANES_CONFORMANCE_DIR names another folder)", rom.display());
    (core, rom)
}

fn s(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

#[test]
#[ignore = "needs libretro-nestopia (scripts/install-libretro-cores.sh) and the conformance ROMs"]
fn two_nestopia_workers_agree_for_5000_frames() {
    let (core, rom) = nestopia_and_rom("two_nestopia_workers_agree_for_5000_frames");
    let report = scratch("nestopia-agree");
    let output = anes(&[
        "lockstep",
        "--libretro",
        s(&core),
        s(&rom),
        "--frames",
        "5000",
        "--report",
        s(&report),
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let summary = json(&output);
    assert_eq!(summary["frames_verified"], 5000, "{summary}");
    assert!(summary["divergence"].is_null(), "{summary}");
}

#[test]
#[ignore = "needs libretro-nestopia (scripts/install-libretro-cores.sh) and the conformance ROMs"]
fn a_nestopia_ram_byte_flipped_is_localized_to_its_region_and_offset() {
    let (core, rom) = nestopia_and_rom("a_nestopia_ram_byte_flipped_is_localized");
    let report = scratch("nestopia-flip");
    // Nestopia exposes its 2 KiB of CPU RAM through retro_get_memory_data (it sets no memory map).
    let output = anes(&[
        "lockstep",
        "--libretro",
        s(&core),
        s(&rom),
        "--frames",
        "600",
        "--inject",
        "flip:system_ram:0x0123:3@400",
        "--report",
        s(&report),
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let summary = json(&output);
    let divergence = &summary["divergence"];
    assert_eq!(divergence["frame"], 399, "{summary}");
    let fields = divergence["fields"].as_array().expect("fields");
    let ram: Vec<_> = fields.iter().filter(|f| f["section"] == "system_ram").collect();
    assert_eq!(ram.len(), 1, "one RAM byte differs: {fields:?}");
    assert_eq!(ram[0]["name"], "system_ram[0x0123]");
    // Bit 3 of the byte: whatever it held, A and B differ by 0x08 there.
    let byte =
        |v: &serde_json::Value| u8::from_str_radix(v.as_str().unwrap().trim_start_matches('$'), 16).unwrap();
    assert_eq!(byte(&ram[0]["a"]) ^ byte(&ram[0]["b"]), 0x08);
    assert!(report.join("report.html").is_file());
}

#[test]
fn a_byte_flipped_through_the_memory_map_is_localized() {
    let content = test_content("map-flip");
    let report = scratch("map-flip-report");
    let output = anes(&[
        "lockstep",
        "--libretro",
        TEST_CORE_A,
        s(&content),
        "--frames",
        "300",
        "--inject",
        "flip:map.ram.0:0x44:2@100",
        "--report",
        s(&report),
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let summary = json(&output);
    assert_eq!(summary["divergence"]["frame"], 99, "{summary}");
    let names: Vec<&str> = summary["divergence"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    // The map's block is the core's system RAM: both views name offset $44; the state holds RAM
    // after its 12-byte header (magic, frame, generator).
    assert_eq!(names, ["state[0x0050]", "system_ram[0x0044]", "map.ram.0[0x0044]"], "{summary}");
}

#[test]
fn a_bad_core_or_content_is_bad_input_not_a_panic() {
    let content = test_content("bad-input");
    let dir = content.parent().unwrap();
    let not_a_core = dir.join("content.bin");
    for (core, content_arg, expected) in [
        (dir.join("missing.so"), s(&content).to_owned(), "no such file"),
        (dir.to_path_buf(), s(&content).to_owned(), "not a regular file"),
        (not_a_core.clone(), s(&content).to_owned(), "cannot load it as a shared library"),
        (PathBuf::from(TEST_CORE_A), s(&dir.join("missing.bin")).to_owned(), "missing.bin"),
        (PathBuf::from(TEST_CORE_A), s(dir).to_owned(), "not a regular file"),
    ] {
        let output = anes(&["lockstep", "--libretro", s(&core), &content_arg, "--frames", "5"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{core:?} {content_arg}: {stderr}");
        assert!(stderr.contains(expected), "{core:?} {content_arg}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let output =
        anes(&["lockstep", "--libretro", TEST_CORE_A, s(&content), "--option", "anestest_fault=often"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("not one of the values it lists: none, timestamp, random, leak, forget, grow"),
        "{stderr}"
    );
}

/// `anes audit` of the test core with one fault: (the JSON report, the exit status).
fn audit_with_fault(fault: &str) -> (serde_json::Value, Option<i32>) {
    let content = test_content(&format!("audit-{fault}"));
    let option = format!("anestest_fault={fault}");
    let output = anes(&["audit", TEST_CORE_A, s(&content), "--frames", "240", "--option", &option, "--json"]);
    (json(&output), output.status.code())
}

/// The check that failed first, its finding's frame, and (region, offset) of each byte it names.
fn first_failure(report: &serde_json::Value) -> (u64, u64, Vec<(String, u64)>) {
    let checks = report["checks"].as_array().unwrap();
    let failed =
        checks.iter().find(|c| c["passed"] == false).unwrap_or_else(|| panic!("nothing failed: {report}"));
    let number = checks.iter().position(|c| c == failed).unwrap() as u64 + 1;
    let finding = &failed["finding"];
    let bytes = finding["regions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            let region = r["region"].as_str().unwrap().to_owned();
            r["bytes"].as_array().unwrap().iter().map(move |b| (region.clone(), b[0].as_u64().unwrap()))
        })
        .collect();
    (number, finding["frame"].as_u64().unwrap(), bytes)
}

#[test]
fn the_audit_passes_the_well_behaved_test_core() {
    let (report, status) = audit_with_fault("none");
    assert_eq!(status, Some(0), "{report}");
    assert_eq!(report["reached"], "deterministic", "{report}");
    assert!(report["checks"].as_array().unwrap().iter().all(|c| c["passed"] == true), "{report}");
}

#[test]
fn a_core_that_crashes_leaves_the_audit_without_a_result() {
    // The test core aborts in its 100th frame: instance A's worker dies. What a dead worker answers
    // is no measurement (two dead instances once compared equal and passed a check).
    let content = test_content("audit-crash");
    let output =
        anes(&["audit", TEST_CORE_A, s(&content), "--frames", "240", "--option", "anestest_fault=crash"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("instance A of the audit failed outright at run_frame"), "{stderr}");
    assert!(stderr.contains("the audit has no result"), "{stderr}");
    assert!(output.stdout.is_empty(), "no verdict is printed: {}", String::from_utf8_lossy(&output.stdout));
}

#[test]
fn a_timestamp_in_the_state_fails_serialize_twice_at_its_bytes() {
    let (report, _) = audit_with_fault("timestamp");
    let (check, frame, bytes) = first_failure(&report);
    assert_eq!((check, frame), (1, 0), "{report}");
    // The test core writes 8 clock bytes right after its 332-byte machine: only those may differ.
    assert!(
        !bytes.is_empty() && bytes.iter().all(|(r, at)| r == "state" && (332..340).contains(at)),
        "{bytes:?}"
    );
    assert_eq!(report["reached"], "basic");
}

#[test]
fn a_random_power_on_fails_two_instances_at_power_on() {
    let (report, _) = audit_with_fault("random");
    let (check, frame, bytes) = first_failure(&report);
    assert_eq!((check, frame), (2, 0), "{report}");
    assert!(bytes.iter().any(|(r, at)| r == "system_ram" && *at == 0), "{bytes:?}");
    assert_eq!(report["reached"], "serialized", "run-ahead in one instance is unaffected: {report}");
}

#[test]
fn a_counter_leaking_into_ram_fails_run_ahead_at_its_byte() {
    let (report, _) = audit_with_fault("leak");
    let (check, frame, bytes) = first_failure(&report);
    assert_eq!((check, frame), (3, 1), "{report}");
    // The process-wide count of retro_run calls is written to RAM $10, and only there.
    let ram: Vec<_> = bytes.iter().filter(|(r, _)| r == "system_ram").collect();
    assert_eq!(ram, [&("system_ram".to_owned(), 0x10)], "{bytes:?}");
}

#[test]
fn a_forgotten_value_fails_the_fresh_instance_at_its_byte() {
    let (report, _) = audit_with_fault("forget");
    let (check, frame, bytes) = first_failure(&report);
    // The state of frame 120 (half of 240) loaded into a fresh instance: the unsaved mode decides
    // RAM $20 from frame 60 on, so the first frame after the load differs there.
    assert_eq!((check, frame), (4, 121), "{report}");
    let ram: Vec<_> = bytes.iter().filter(|(r, _)| r == "system_ram").collect();
    assert_eq!(ram, [&("system_ram".to_owned(), 0x20)], "{bytes:?}");
    assert_eq!(report["reached"], "serialized");
}

#[test]
fn a_growing_state_fails_constant_size_when_it_grows() {
    let (report, _) = audit_with_fault("grow");
    let (check, frame, _) = first_failure(&report);
    // One byte more every 60 frames: the size is checked after every frame (tests/audit_frames.rs
    // shows it with windows of 7).
    assert_eq!((check, frame), (5, 60), "{report}");
    assert_eq!(report["reached"], "basic");
}

#[test]
fn the_audit_exits_1_when_the_info_file_claims_more() {
    let content = test_content("audit-claim");
    let info = content.with_file_name("anes_test_core_libretro.info");
    std::fs::write(&info, "display_name = \"anes test core\"\nsavestate_features = \"deterministic\"\n")
        .unwrap();
    let audit = |fault: &str| {
        let option = format!("anestest_fault={fault}");
        anes(&["audit", TEST_CORE_A, s(&content), "--frames", "120", "--option", &option, "--info", s(&info)])
    };
    let forget = audit("forget");
    let text = String::from_utf8_lossy(&forget.stdout);
    assert_eq!(forget.status.code(), Some(1), "{text}");
    assert!(
        text.contains("the core claims deterministic and reaches serialized: check 4 (fresh instance) fails"),
        "{text}"
    );
    let none = audit("none");
    assert_eq!(none.status.code(), Some(0), "{}", String::from_utf8_lossy(&none.stdout));
}

#[test]
fn the_canary_of_two_test_core_builds_stops_at_the_first_differing_frame() {
    let content = test_content("canary");
    let report = scratch("canary-report");
    let output = anes(&[
        "canary",
        "--libretro-baseline",
        TEST_CORE_A,
        "--libretro-candidate",
        TEST_CORE_B,
        s(&content),
        "--frames",
        "1000",
        "--report",
        s(&report),
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let summary = json(&output);
    // Build B flips RAM $30 bit 0 in its 200th frame (frame 199 counted from 0), and nothing before.
    assert_eq!(summary["result"], "diverged", "{summary}");
    assert_eq!(summary["first_differing_frame"], 199, "{summary}");
    assert_eq!(summary["frames_agreed"], 199, "{summary}");
    let fields: Vec<&str> = summary["divergence"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"system_ram[0x0030]"), "{fields:?}");
    assert!(report.join("report.html").is_file());

    // The same build on both sides agrees on every frame.
    let same = anes(&[
        "canary",
        "--libretro-baseline",
        TEST_CORE_A,
        "--libretro-candidate",
        TEST_CORE_A,
        s(&content),
        "--frames",
        "1000",
        "--json",
    ]);
    assert_eq!(same.status.code(), Some(0), "{}", String::from_utf8_lossy(&same.stderr));
    assert_eq!(json(&same)["frames_agreed"], 1000);
}

/// Nestopia's options that make its picture comparable with anes's: 256x240, a palette that keeps
/// the NES colours apart.
const NESTOPIA_VIEW: [&str; 4] =
    ["--option", "nestopia_overscan_v=disabled", "--option", "nestopia_palette=raw"];

fn versus(core: &Path, rom: &Path, extra: &[&str]) -> Output {
    versus_viewed(core, rom, &NESTOPIA_VIEW, extra)
}

/// Nestopia's default picture (8 rows cropped top and bottom: 256x224), its raw palette.
const NESTOPIA_CROPPED: [&str; 2] = ["--option", "nestopia_palette=raw"];

fn versus_viewed(core: &Path, rom: &Path, view: &[&str], extra: &[&str]) -> Output {
    let mut args = vec!["lockstep", s(rom), "--versus", s(core)];
    args.extend(view);
    args.extend(extra);
    anes(&args)
}

#[test]
#[ignore = "needs libretro-nestopia (scripts/install-libretro-cores.sh) and the conformance ROMs"]
fn anes_and_nestopia_agree_frame_by_frame_on_a_conformance_rom() {
    let (core, rom) = nestopia_and("anes_and_nestopia_agree", "roms/apu_test/rom_singles/1-len_ctr.nes");
    let report = scratch("versus-agree");
    let output = versus(&core, &rom, &["--frames", "600", "--report", s(&report), "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
    // The first frame runs before the pairing (see `anes lockstep --versus`), the rest are verified.
    assert_eq!(json(&output)["frames_verified"], 599);
}

#[test]
#[ignore = "needs libretro-nestopia (scripts/install-libretro-cores.sh) and the conformance ROMs"]
fn a_ram_byte_flipped_in_nestopia_is_localized_against_anes() {
    let (core, rom) =
        nestopia_and("a_ram_byte_flipped_in_nestopia", "roms/apu_test/rom_singles/1-len_ctr.nes");
    let report = scratch("versus-flip");
    let output = versus(
        &core,
        &rom,
        &[
            "--frames",
            "600",
            "--phase",
            "0",
            "--inject",
            "flip:system_ram:0x0300:1@300",
            "--report",
            s(&report),
            "--json",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stdout));
    let summary = json(&output);
    let divergence = &summary["divergence"];
    assert_eq!(divergence["frame"], 299, "{summary}");
    let fields = divergence["fields"].as_array().expect("fields");
    assert_eq!(fields.len(), 1, "one RAM byte and no pixel differs: {fields:?}");
    assert_eq!(fields[0]["section"], "system_ram");
    assert_eq!(fields[0]["name"], "ram[$0300]");
    assert!(report.join("a.png").is_file() && report.join("b.png").is_file());
}

#[test]
#[ignore = "needs libretro-nestopia (scripts/install-libretro-cores.sh) and the conformance ROMs"]
fn the_pictures_are_compared_too() {
    let (core, rom) =
        nestopia_and("the_pictures_are_compared_too", "roms/apu_test/rom_singles/1-len_ctr.nes");
    let report = scratch("versus-picture");
    // Nestopia's default crops 8 rows top and bottom: its picture is 256x224, anes's 256x240, so the
    // colour classes differ from the first frame on.
    let output = versus_viewed(
        &core,
        &rom,
        &NESTOPIA_CROPPED,
        &["--frames", "60", "--phase", "0", "--report", s(&report), "--json"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stdout));
    let summary = json(&output);
    let fields = summary["divergence"]["fields"].as_array().expect("fields");
    assert!(
        fields
            .iter()
            .any(|f| f["name"] == "picture_classes length" && f["a"] == "122880" && f["b"] == "114688"),
        "{fields:?}"
    );
}

/// An FCEUX movie of `frames` frames, pad 1 holding `buttons` (in `RLDUTSBA` order, e.g. `"S"` for
/// Select) on the frames listed, and A on every third frame besides.
fn movie(name: &str, frames: usize, presses: &[(usize, char)]) -> TempFile {
    let mut text = String::from(
        "version 3\nemuVersion 20604\npalFlag 0\nromFilename content.bin\nport0 1\nport1 1\nport2 0\n",
    );
    for frame in 0..frames {
        let mut pad: Vec<char> = "........".chars().collect();
        if frame % 3 == 0 {
            pad[7] = 'A';
        }
        for &(at, button) in presses {
            if at == frame {
                let slot = "RLDUTSBA".find(button).expect("a button of RLDUTSBA");
                pad[slot] = button;
            }
        }
        text.push_str(&format!("|0|{}|........||\n", pad.iter().collect::<String>()));
    }
    TempFile::write(&format!("cli-libretro-{name}"), "movie.fm2", text.as_bytes())
}

/// The presses of a repro.input: (frame, pad 1's buttons), through `anes movie info`'s reading, the
/// same stream `anes lockstep --input` replays.
fn presses_of(report: &serde_json::Value) -> Vec<(u64, Vec<String>)> {
    report["presses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let buttons = p["buttons"].as_array().unwrap().iter().map(|b| b.as_str().unwrap().to_owned());
            (p["frame"].as_u64().unwrap(), buttons.collect())
        })
        .collect()
}

#[test]
fn a_shrink_of_two_test_core_builds_keeps_the_one_press_their_difference_needs() {
    // Build B flips RAM $31 on every frame Select is held: Select on frames 37 and 90 among 51 other
    // presses; the first Select is where they part, and the only press that divergence needs.
    let content = test_content("shrink-builds");
    let input = movie("shrink-builds-movie", 150, &[(37, 'S'), (90, 'S'), (37, 'T'), (12, 'D')]);
    let out = scratch("shrink-builds-out");
    let args = [
        "shrink",
        s(&content),
        "--libretro",
        TEST_CORE_A,
        "--libretro-b",
        TEST_CORE_B,
        "--input",
        s(&input),
        "--out",
        s(&out),
        "--json",
    ];
    let output = anes(&args);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let summary = json(&output);
    let report = &summary["report"];
    // A on every third frame (50 of 150), and frame 37.
    assert_eq!(report["target"]["frame"], 37, "{}", report["divergence"]["message"]);
    assert_eq!(report["original"]["presses"], 51);
    assert_eq!(presses_of(report), [(37, vec!["Select".to_owned()])], "{}", report["presses"]);
    assert_eq!(report["one_minimal"], true);
    let fields: Vec<&str> = report["divergence"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"system_ram[0x0031]"), "{fields:?}");
    for file in ["repro.input", "repro.fm2", "report.json", "report.html"] {
        assert!(out.join(file).is_file(), "{file} written");
    }
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(written["libretro"]["core_b"], TEST_CORE_B, "{written}");

    // The repro replays from power-on: lockstep of the two builds over repro.input parts at frame 37.
    let replay = anes(&[
        "lockstep",
        "--libretro",
        TEST_CORE_A,
        "--libretro-b",
        TEST_CORE_B,
        s(&content),
        "--input",
        s(&out.join("repro.input")),
        "--report",
        s(&out.join("replay")),
        "--json",
    ]);
    assert_eq!(replay.status.code(), Some(1), "{}", String::from_utf8_lossy(&replay.stderr));
    assert_eq!(json(&replay)["divergence"]["detected"]["frame"], 37);
    // That lockstep's evidence bundle shrinks too (its divergence is the one the repro must keep).
    let again = anes(&[
        "shrink",
        s(&content),
        "--libretro",
        TEST_CORE_A,
        "--libretro-b",
        TEST_CORE_B,
        "--evidence",
        s(&out.join("replay")),
        "--out",
        s(&out.join("again")),
        "--json",
    ]);
    assert_eq!(again.status.code(), Some(1), "{}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(presses_of(&json(&again)["report"]), [(37, vec!["Select".to_owned()])]);

    // The same stream without Select: the builds part only at frame 199, where no press is needed.
    let no_select = movie("shrink-builds-no-select", 400, &[(37, 'T'), (12, 'D')]);
    let output = anes(&[
        "shrink",
        s(&content),
        "--libretro",
        TEST_CORE_A,
        "--libretro-b",
        TEST_CORE_B,
        "--input",
        s(&no_select),
        "--out",
        s(&scratch("shrink-builds-out-2")),
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let report = &json(&output)["report"];
    assert_eq!(
        (report["target"]["frame"].as_u64(), report["shrunk"]["presses"].as_u64()),
        (Some(199), Some(0))
    );
}

#[test]
fn a_shrink_of_a_core_with_state_outside_its_snapshots_is_refused_naming_the_audit() {
    // B's button fault keeps its mode outside the snapshot: trials restored from checkpoints cannot
    // replay it, and the shrink says so instead of writing a repro that does not reproduce.
    let content = test_content("shrink-hidden");
    let input = movie("shrink-hidden-movie", 120, &[(37, 'S')]);
    let out = scratch("shrink-hidden-out");
    let output = anes(&[
        "shrink",
        s(&content),
        "--libretro",
        TEST_CORE_A,
        "--option-b",
        "anestest_fault=button",
        "--input",
        s(&input),
        "--out",
        s(&out),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--shrink DIR"), "{stderr}");
    assert!(!out.join("report.json").exists());
}

/// `anes audit` of the test core with `fault`, over `input`, its first failure shrunk into `out`.
fn audit_shrink(fault: &str, input: &Path, out: &Path) -> (serde_json::Value, serde_json::Value) {
    audit_shrink_with(fault, input, out, &[])
}

/// [`audit_shrink`] with more arguments.
fn audit_shrink_with(
    fault: &str,
    input: &Path,
    out: &Path,
    extra: &[&str],
) -> (serde_json::Value, serde_json::Value) {
    let content = test_content(&format!("audit-shrink-{fault}"));
    let option = format!("anestest_fault={fault}");
    let mut args = vec![
        "audit",
        TEST_CORE_A,
        s(&content),
        "--frames",
        "120",
        "--option",
        &option,
        "--input",
        s(input),
        "--shrink",
        s(out),
        "--json",
    ];
    args.extend_from_slice(extra);
    let output = anes(&args);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let audit = json(&output);
    let written = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    (audit, written)
}

#[test]
fn the_audit_shrinks_the_input_a_failure_needs_to_its_one_press() {
    // The button fault: Select sets a mode outside the state. Held on frame 38 (stream index 37, the
    // second frame of the run-ahead window of frames 37-38), it leaks into the replays of that
    // window: check 3 fails at 37. The audit counts frames from 1, the press's too.
    let input = movie("audit-shrink-movie", 120, &[(37, 'S'), (90, 'S'), (37, 'T'), (50, 'D')]);
    let out = scratch("audit-shrink-out");
    let (audit, written) = audit_shrink("button", &input, &out);
    let shrunk = &audit["shrink"];
    assert_eq!((shrunk["check"].as_u64(), shrunk["frame"].as_u64()), (Some(3), Some(37)), "{audit}");
    assert_eq!(presses_of(shrunk), [(38, vec!["Select".to_owned()])], "{shrunk}");
    assert_eq!(shrunk["one_minimal"], true);
    assert!(shrunk["given"]["presses"].as_u64().unwrap() > 10, "{shrunk}");
    assert_eq!(&written, shrunk);
    assert!(out.join("repro.fm2").is_file());

    // The repro shows the failure on its own, and the audit without any input passes that check.
    let content = test_content("audit-shrink-replay");
    let replay = |input: Option<&Path>| {
        let mut args = vec!["audit", TEST_CORE_A, s(&content), "--frames", "120", "--fresh-at", "60"];
        args.extend(["--option", "anestest_fault=button", "--json"]);
        if let Some(input) = input {
            args.extend(["--input", s(input)]);
        }
        let report = json(&anes(&args));
        let check = report["checks"][2].clone();
        (check["passed"].as_bool(), check["finding"]["frame"].as_u64())
    };
    assert_eq!(replay(Some(&out.join("repro.input"))), (Some(false), Some(37)));
    assert_eq!(replay(None), (Some(true), None));
}

#[test]
fn the_audit_says_when_a_failure_needs_no_input() {
    // The forget fault needs no button: its input (A on every third frame and Select on frame 5,
    // 22 presses in the 61 frames before the failure) shrinks to nothing.
    let input = movie("audit-shrink-forget-movie", 120, &[(5, 'S')]);
    let out = scratch("audit-shrink-forget-out");
    let (audit, _) = audit_shrink("forget", &input, &out);
    let shrunk = &audit["shrink"];
    assert_eq!((shrunk["check"].as_u64(), shrunk["frame"].as_u64()), (Some(4), Some(61)), "{audit}");
    assert_eq!(shrunk["repro"]["presses"], 0, "{shrunk}");
    assert_eq!(shrunk["given"]["presses"], 22, "{shrunk}");
}

#[test]
#[ignore = "needs libretro-nestopia (bash scripts/install-libretro-cores.sh)"]
fn a_nestopia_flip_shrinks_to_no_press_over_the_demos_input() {
    let core = Path::new(DEBIAN_CORES).join("nestopia_libretro.so");
    assert!(core.is_file(), "needs {}: bash scripts/install-libretro-cores.sh installs it", core.display());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = scratch("shrink-nestopia");
    let output = anes(&[
        "shrink",
        s(&root.join("roms/demo/demo.nes")),
        "--libretro",
        s(&core),
        "--input",
        s(&root.join("roms/demo/demo.input")),
        "--frames",
        "600",
        "--inject",
        "flip:system_ram:0x123:3@400",
        "--out",
        s(&out),
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let report = &json(&output)["report"];
    // The flip fires after 400 frames (frame 399 counted from 0); the demo's presses do not matter.
    assert_eq!(report["target"]["frame"], 399);
    assert_eq!(report["shrunk"]["presses"], 0);
    assert!(report["original"]["presses"].as_u64().unwrap() > 100);
    let fields: Vec<&str> = report["divergence"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"system_ram[0x0123]"), "{fields:?}");
}

#[test]
fn the_audit_shrinks_a_fresh_instance_failure_to_the_press_before_the_hand_over() {
    // Select on frames 37 and 91 (stream indices 36 and 90), first frames of run-ahead windows: the
    // replays of a window run after the press set the mode in the first run, alike, so check 3
    // passes; the state of frame 60 handed to a fresh instance lacks the mode set at 37 (check 4
    // fails at frame 61). The press at 91 comes after the hand-over, where both instances see it.
    let input = movie("audit-shrink-fresh-movie", 120, &[(36, 'S'), (90, 'S'), (36, 'T'), (50, 'D')]);
    let out = scratch("audit-shrink-fresh-out");
    let (audit, _) = audit_shrink("button", &input, &out);
    assert_eq!(audit["checks"][2]["passed"], true, "{audit}");
    let shrunk = &audit["shrink"];
    assert_eq!((shrunk["check"].as_u64(), shrunk["frame"].as_u64()), (Some(4), Some(61)), "{audit}");
    assert_eq!(presses_of(shrunk), [(37, vec!["Select".to_owned()])], "{shrunk}");
    assert_eq!(shrunk["repro"]["frames"], 61, "{shrunk}");
}

#[test]
fn the_audit_shrinks_the_check_it_is_asked_for() {
    // Select on frame 38 (stream index 37) fails check 3 first (at 37) and check 4 too (at 61):
    // asked for check 4, the shrink keeps the same press, now as the one before the hand-over.
    let input = movie("audit-shrink-check-movie", 120, &[(37, 'S'), (50, 'D')]);
    let out = scratch("audit-shrink-check-out");
    let (audit, _) = audit_shrink_with("button", &input, &out, &["--shrink-check", "4"]);
    let shrunk = &audit["shrink"];
    assert_eq!((shrunk["check"].as_u64(), shrunk["frame"].as_u64()), (Some(4), Some(61)), "{audit}");
    assert_eq!(presses_of(shrunk), [(38, vec!["Select".to_owned()])], "{shrunk}");
    // Check 1 passes: nothing to shrink, no repro written.
    let out = scratch("audit-shrink-check-passed");
    let content = test_content("audit-shrink-check-passed");
    let text = anes(&[
        "audit",
        TEST_CORE_A,
        s(&content),
        "--frames",
        "120",
        "--option",
        "anestest_fault=button",
        "--input",
        s(&input),
        "--shrink",
        s(&out),
        "--shrink-check",
        "1",
    ]);
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("shrink    check 1 did not fail: nothing to shrink"), "{stdout}");
    assert!(!out.join("repro.input").exists());
}

#[test]
#[ignore = "needs libretro-nestopia (scripts/install-libretro-cores.sh) and the conformance ROMs"]
fn a_stack_byte_that_differs_at_a_frame_end_is_where_the_frame_is_sampled() {
    let (core, rom) = nestopia_and("a_stack_byte_that_differs", "roms/apu_test/rom_singles/2-len_table.nes");
    let report = scratch("versus-sampling");
    let output = versus(&core, &rom, &["--frames", "600", "--phase", "0", "--report", s(&report)]);
    let text = String::from_utf8_lossy(&output.stdout);
    // Compared at every frame end, the two differ in a stack byte of a wait loop...
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("ram[$01F5]"), "{text}");
    // ...which Nestopia's RAM of that frame holds a few CPU cycles after anes's frame end.
    let line = text.lines().find(|l| l.starts_with("sampling offset")).expect("a sampling offset line");
    let offset: i64 = line
        .split(" at ")
        .nth(2)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("an offset in {line:?}"));
    assert!(offset.abs() < 100, "{line}");
}

#[test]
#[ignore = "needs libretro-nestopia (scripts/install-libretro-cores.sh) and the conformance ROMs"]
fn compared_at_the_end_anes_and_nestopia_show_the_same_verdict() {
    let (core, rom) = nestopia_and("compared_at_the_end", "roms/apu_test/rom_singles/2-len_table.nes");
    let report = scratch("versus-end");
    let output = versus(&core, &rom, &["--frames", "600", "--at-end", "--report", s(&report), "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
    let summary = json(&output);
    // blargg's protocol: $00 is a pass; the ROM's own text names it.
    assert_eq!(summary["anes_status"], "$00 \"2-len_table Passed\"", "{summary}");
    assert_eq!(summary["picture_pixels_differing"], 0, "{summary}");
    assert_eq!(summary["ram"].as_array().map(Vec::len), Some(0), "{summary}");
}

#[test]
#[ignore = "needs libretro-nestopia (scripts/install-libretro-cores.sh) and the conformance ROMs"]
fn compared_at_the_end_a_cropped_picture_still_differs() {
    let (core, rom) =
        nestopia_and("a_cropped_picture_still_differs", "roms/apu_test/rom_singles/1-len_ctr.nes");
    let report = scratch("versus-end-cropped");
    // Nestopia's default crops 8 rows top and bottom (256x224).
    let output = versus_viewed(
        &core,
        &rom,
        &NESTOPIA_CROPPED,
        &["--frames", "60", "--at-end", "--report", s(&report)],
    );
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("picture           sizes differ") && text.contains("DIFFER"), "{text}");
    assert!(report.join("anes.png").is_file() && report.join("other.png").is_file());
}
