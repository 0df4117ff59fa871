//! `anes shrink` as a user meets it: the demo case (the bundled demo, its 5,000-frame input,
//! a RAM flip) shrinks to a repro that still diverges, ends by the flip's frame, keeps no press and
//! is the same bytes on every run and with any `--jobs`; an evidence bundle of `anes lockstep`
//! shrinks to the same repro; a bundle from another ROM and a FIFO in the output folder are refused.
//! Each test's folder is removed on every exit path ([`support::TempDir`]).

mod support;

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const FLIP: &str = "flip:ram:0x0342:3@1234567";
const FLIP_CYCLE: u64 = 1_234_567;
const FILES: [&str; 4] = ["repro.input", "repro.fm2", "report.json", "report.html"];
/// Each command's bound: the demo case takes under a second in a release build.
const TIME_LIMIT: Duration = Duration::from_secs(300);

/// `anes SUBCOMMAND ARGS`, killed (this child only) if it outlives [`TIME_LIMIT`].
fn anes(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(args)
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the anes binary runs");
    let started = Instant::now();
    while child.try_wait().expect("waits").is_none() {
        if started.elapsed() > TIME_LIMIT {
            child.kill().expect("kills its own child");
            panic!("anes {args:?} ran longer than {TIME_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// A new folder for one test, removed when the guard drops (also when the test panics).
fn scratch(name: &str) -> support::TempDir {
    support::TempDir::create(&format!("cli-shrink-{name}"))
}

fn text(output: &Output) -> String {
    format!("{} / {}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn files(dir: &Path) -> Vec<Vec<u8>> {
    FILES.iter().map(|name| std::fs::read(dir.join(name)).expect(name)).collect()
}

fn json_file(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("the file")).expect("JSON")
}

#[test]
fn the_demo_flip_shrinks_to_no_press_ending_at_the_flip_frame_the_same_every_run() {
    let scratch = scratch("demo");
    let dir = &scratch.0;
    let out = [dir.join("one"), dir.join("two"), dir.join("jobs2")];
    for (path, jobs) in out.iter().zip(["1", "1", "2"]) {
        let run = anes(&["shrink", "--inject", FLIP, "--jobs", jobs, "--out", path.to_str().unwrap()]);
        assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    }
    let first = files(&out[0]);
    assert!(files(&out[1]) == first, "a second run wrote other bytes");
    assert!(files(&out[2]) == first, "--jobs 2 wrote other bytes than --jobs 1");

    let report = json_file(&out[0].join("report.json"));
    assert_eq!(report["original"]["frames"], 5000);
    assert_eq!(report["shrunk"]["presses"], 0, "{report}");
    assert_eq!(report["presses"].as_array().map(Vec::len), Some(0));
    assert_eq!(report["one_minimal"], true);

    // The repro replayed by `anes lockstep`: it diverges, in the frame the flip fired in, at its end.
    let bundle = dir.join("bundle");
    let repro = out[0].join("repro.input");
    let run = anes(&[
        "lockstep",
        "--input",
        repro.to_str().unwrap(),
        "--inject",
        FLIP,
        "--json",
        "--report",
        bundle.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).expect("JSON");
    let fired = &summary["divergence"]["faults"][0];
    assert_eq!(fired["spec"], FLIP);
    assert!(fired["cpu_cycle"].as_u64().unwrap() >= FLIP_CYCLE);
    let flip_frame = fired["frame"].as_u64().unwrap();
    assert_eq!(summary["divergence"]["detected"]["frame"].as_u64(), Some(flip_frame));
    assert_eq!(
        report["shrunk"]["frames"].as_u64(),
        Some(flip_frame + 1),
        "the repro ends with the flip's frame"
    );
    assert_eq!(
        report["divergence"]["fields"], summary["divergence"]["fields"],
        "the report is lockstep's own"
    );

    // The FCEUX movie holds the same stream, and anes reads it back as such.
    let fm2 = out[0].join("repro.fm2");
    let run = anes(&[
        "lockstep",
        "--input",
        fm2.to_str().unwrap(),
        "--inject",
        FLIP,
        "--json",
        "--report",
        dir.join("bundle-fm2").to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
}

#[test]
fn an_evidence_bundle_shrinks_to_the_repro_of_its_run() {
    let scratch = scratch("evidence");
    let dir = &scratch.0;
    let bundle = dir.join("bundle");
    let run = anes(&["lockstep", "--frames", "100", "--inject", FLIP, "--report", bundle.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let from_bundle = dir.join("from-bundle");
    let run =
        anes(&["shrink", "--evidence", bundle.to_str().unwrap(), "--out", from_bundle.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let direct = dir.join("direct");
    let run = anes(&["shrink", "--frames", "100", "--inject", FLIP, "--out", direct.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    // The bundle keeps frames 0 through the divergent one, so only the given stream's length differs.
    assert!(
        files(&from_bundle)[..2] == files(&direct)[..2],
        "the bundle's repro and the same run's by hand differ"
    );
    let (from_bundle, direct) =
        (json_file(&from_bundle.join("report.json")), json_file(&direct.join("report.json")));
    assert_eq!(from_bundle["original"]["frames"].as_u64(), direct["target"]["frame"].as_u64().map(|f| f + 1));
    for key in ["shrunk", "target", "presses", "faults", "divergence"] {
        assert_eq!(from_bundle[key], direct[key], "{key}");
    }

    // The same bundle against another ROM: refused in one line, nothing written.
    let other_rom = concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/secret/secret.nes");
    let refused = dir.join("refused");
    let run = anes(&[
        "shrink",
        other_rom,
        "--evidence",
        bundle.to_str().unwrap(),
        "--out",
        refused.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("another ROM"), "{stderr}");
    assert!(!refused.join("report.json").exists());

    // A bundle whose divergence this run does not show (its frame moved one earlier): refused.
    let report_path = bundle.join("report.json");
    let mut report = json_file(&report_path);
    let frame = report["detected"]["frame"].as_u64().unwrap();
    report["detected"]["frame"] = (frame - 1).into();
    std::fs::write(&report_path, serde_json::to_vec(&report).unwrap()).unwrap();
    let run = anes(&["shrink", "--evidence", bundle.to_str().unwrap(), "--out", refused.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("does not reproduce") && stderr.contains(&format!("frame {}", frame - 1)),
        "{stderr}"
    );
    assert!(!refused.join("report.json").exists());
}

#[test]
fn files_in_the_way_that_are_not_regular_are_left_alone() {
    let scratch = scratch("fifo");
    let dir = &scratch.0;
    let fifo = dir.join("repro.fm2");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    let run = anes(&["shrink", "--frames", "60", "--inject", FLIP, "--out", dir.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    assert!(String::from_utf8_lossy(&run.stderr).contains("not a regular file"), "{}", text(&run));
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO is still there");
    assert!(!dir.join("report.json").exists(), "nothing written when one file is in the way");
}

#[test]
fn a_trial_budget_keeps_the_best_repro_so_far_and_says_it_is_not_proven_minimal() {
    let scratch = scratch("budget");
    let dir = &scratch.0;
    let run = anes(&["shrink", "--inject", FLIP, "--max-trials", "1", "--out", dir.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    assert!(String::from_utf8_lossy(&run.stdout).contains("stopped by the trials budget"), "{}", text(&run));
    // Counts in the singular where they are one.
    assert!(
        String::from_utf8_lossy(&run.stdout).contains("search            1 trial (1 in order, 1 job), "),
        "{}",
        text(&run)
    );
    let report = json_file(&dir.join("report.json"));
    assert_eq!(report["stopped_by"], "trials");
    assert_eq!(report["one_minimal"], false);
    // One trial removed half of the presses or none; either way the stream still reproduces.
    let presses = report["shrunk"]["presses"].as_u64().unwrap();
    assert!(presses > 0 && presses < report["original"]["presses"].as_u64().unwrap(), "{report}");
    let repro = dir.join("repro.input");
    let replay = anes(&[
        "lockstep",
        "--input",
        repro.to_str().unwrap(),
        "--inject",
        FLIP,
        "--report",
        dir.join("bundle").to_str().unwrap(),
    ]);
    assert_eq!(replay.status.code(), Some(1), "{}", text(&replay));
}

/// The input-stream frame in which CPU cycle [`FLIP_CYCLE`] falls on a console of `region` running
/// the demo ROM (a frame's length in CPU cycles depends on the region, not on the input).
fn flip_frame_in(region: anes_core::Region) -> u64 {
    let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap();
    let cart = anes_core::Cartridge::from_ines(&rom).unwrap();
    let mut nes = anes_core::Nes::with_region(cart, anes_core::NesConfig::default(), Some(region));
    let mut frame = 0;
    loop {
        nes.run_frame(anes_core::movie::FrameInput::default());
        if nes.cpu_cycle() > FLIP_CYCLE {
            return frame;
        }
        frame += 1;
    }
}

#[test]
fn region_pal_shrinks_on_pal_consoles_and_says_so_in_the_repro() {
    let (pal, ntsc) = (flip_frame_in(anes_core::Region::Pal), flip_frame_in(anes_core::Region::Ntsc));
    assert_ne!(pal, ntsc, "the regions' frames differ in length");
    let scratch = scratch("region");
    let dir = &scratch.0;
    let out = dir.join("pal");
    let run = anes(&[
        "shrink",
        "--region",
        "pal",
        "--frames",
        "100",
        "--inject",
        FLIP,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    assert!(String::from_utf8_lossy(&run.stdout).contains("region            pal"), "{}", text(&run));
    let report = json_file(&out.join("report.json"));
    assert_eq!(report["region"], "pal");
    assert_eq!(report["target"]["frame"].as_u64(), Some(pal), "{report}");
    let fm2 = std::fs::read_to_string(out.join("repro.fm2")).unwrap();
    assert!(fm2.contains("\npalFlag 1\n"), "{fm2}");

    // The movie's palFlag alone makes the next shrink a PAL one, as it does for `anes run`.
    let again = dir.join("from-fm2");
    let run = anes(&[
        "shrink",
        "--input",
        out.join("repro.fm2").to_str().unwrap(),
        "--inject",
        FLIP,
        "--out",
        again.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let report = json_file(&again.join("report.json"));
    assert_eq!((report["region"].as_str(), report["target"]["frame"].as_u64()), (Some("pal"), Some(pal)));
}

/// A `serve` incident's evidence bundle, written by the function the service uses
/// (`anes_ops::evidence::write_evidence`): the demo ran `start` frames of its input before the
/// pipeline's verified checkpoint, and the flip fired in worker B after it.
fn serve_incident_bundle(dir: &Path, start: u64) -> Vec<u8> {
    use anes_lockstep::Machine;
    use anes_ops::pipeline::worker::WorkerId;
    use anes_ops::pipeline::{Checkpoint, Investigation};

    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/");
    let rom = std::fs::read(format!("{root}demo.nes")).unwrap();
    let inputs =
        anes_core::movie::InputStream::from_bytes(&std::fs::read(format!("{root}demo.input")).unwrap())
            .unwrap();
    let mut console = anes_lockstep::NesMachine::from_ines(&rom, anes_core::NesConfig::default()).unwrap();
    for frame in 0..start as usize {
        console.run_frame(inputs.frame(frame));
    }
    let mut snapshot = Vec::new();
    console.save_state(&mut snapshot);
    let divergent = flip_frame_in(anes_core::Region::Ntsc);
    let record = console.record();
    let incident_inputs: Vec<_> = (start..=divergent).map(|f| inputs.frame(f as usize)).collect();
    let mut investigation = Investigation {
        incident: 1,
        seq: divergent,
        records: [record, record],
        checkpoint: Some(Checkpoint {
            seq: start,
            cpu_cycle: console.probe().cpu_cycle,
            state_hash: *record.state_hash.as_bytes(),
            snapshot: std::sync::Arc::new(snapshot.clone()),
            taken_at: Duration::ZERO,
        }),
        inputs: incident_inputs,
        faults: [Vec::new(), vec![FLIP.to_string()]],
    };
    let (_, referee) = anes_ops::evidence::referee(&rom, &investigation).unwrap();
    investigation.records = [referee, anes_core::FrameRecord { cpu_cycle: 0, ..referee }];
    let page = anes_ops::evidence::write_evidence(&rom, "demo", &investigation, &[WorkerId::B], referee, dir)
        .unwrap();
    assert!(page.ends_with("report.html"), "the service's lockstep runner reproduced it: {page:?}");
    snapshot
}

#[test]
fn a_serve_incident_bundle_shrinks_from_its_checkpoint_and_the_repro_replays_from_its_snap() {
    const START: u64 = 30;
    let scratch = scratch("serve");
    let dir = &scratch.0;
    let bundle = dir.join("incident");
    let checkpoint = serve_incident_bundle(&bundle, START);
    let flip_frame = flip_frame_in(anes_core::Region::Ntsc);

    let out = [dir.join("one"), dir.join("two")];
    for path in &out {
        let run = anes(&[
            "shrink",
            "--evidence",
            bundle.to_str().unwrap(),
            "--keep-start",
            "--out",
            path.to_str().unwrap(),
        ]);
        assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    }
    let report = json_file(&out[0].join("report.json"));
    assert_eq!(report["start_frame"], START, "{report}");
    assert_eq!(report["target"]["frame"].as_u64(), Some(flip_frame), "{report}");
    let snap = std::fs::read(out[0].join("repro.snap")).expect("repro.snap");
    assert!(snap == checkpoint, "repro.snap is the incident's checkpoint");
    let repro = std::fs::read(out[0].join("repro.input")).unwrap();
    assert!(files(&out[1]) == files(&out[0]), "a second run wrote other bytes");
    assert!(std::fs::read(out[1].join("repro.snap")).unwrap() == snap, "a second run wrote another snap");

    // The repro replayed from its snap: the same divergence, and (1-minimal) the same stream.
    let replay = dir.join("replay");
    let run = anes(&[
        "shrink",
        "--start",
        out[0].join("repro.snap").to_str().unwrap(),
        "--input",
        out[0].join("repro.input").to_str().unwrap(),
        "--inject",
        FLIP,
        "--out",
        replay.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let replayed = json_file(&replay.join("report.json"));
    assert_eq!(replayed["target"], report["target"]);
    assert_eq!(replayed["divergence"]["fields"], report["divergence"]["fields"]);
    assert!(std::fs::read(replay.join("repro.input")).unwrap() == repro);
}

#[test]
fn a_damaged_checkpoint_is_reported_as_damaged_not_as_another_rom() {
    let scratch = scratch("damaged");
    let dir = &scratch.0;
    let bundle = dir.join("bundle");
    let run = anes(&["lockstep", "--frames", "100", "--inject", FLIP, "--report", bundle.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let snap_path = bundle.join("checkpoint_a.snap");
    let snapshot = std::fs::read(&snap_path).unwrap();
    let mut flipped = snapshot.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x10;
    let cases = [
        (flipped, "checksum mismatch"),
        (snapshot[..snapshot.len() / 2].to_vec(), "truncated"),
        (b"not a snapshot at all. ".repeat(4), "bad magic"),
    ];
    for (bytes, problem) in cases {
        std::fs::write(&snap_path, &bytes).unwrap();
        let out = dir.join("out");
        let run = anes(&["shrink", "--evidence", bundle.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert_eq!(run.status.code(), Some(2), "{problem}: {}", text(&run));
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(&snap_path.display().to_string()), "{problem}: {stderr}");
        assert!(stderr.contains("damaged") && stderr.contains(problem), "{problem}: {stderr}");
        assert!(!stderr.contains("another ROM"), "{problem}: {stderr}");
        assert!(!out.join("report.json").exists());
    }
}

/// `--power-on-b`: a dependence on power-on state shrinks like a divergence, from power-on, and the
/// report names both profiles.
#[test]
fn a_power_on_dependence_shrinks_from_power_on() {
    let rom = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../roms/poweron/one_vblank.nes");
    let out = scratch("power-on-b");
    let output = anes(&[
        "shrink",
        rom.to_str().unwrap(),
        "--frames",
        "20",
        "--power-on-b",
        "warm-up",
        "--out",
        out.0.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let report = json_file(&out.0.join("report.json"));
    assert_eq!(
        (report["power_on"].as_str(), report["power_on_b"].as_str()),
        (Some("default"), Some("warm-up"))
    );
    assert_eq!(report["start_frame"], 0);
    assert_eq!(report["shrunk"]["frames"], 2, "the write the warm-up loses is in frame 1");
    assert!(!out.0.join("repro.snap").exists());
}
