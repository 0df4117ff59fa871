//! `anes canary`: the same build twice agrees; a candidate with a deliberate one-cycle timing change
//! (built here with the `canary-drill` feature, which no shipped build has) is caught at the exact frame
//! and cycle, with the instruction and the fields named; golden logs; corpus mode with JUnit XML; the
//! metrics endpoint; bad input.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use anes_core::movie::InputStream;
use anes_lockstep::{Machine, NesMachine};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn anes() -> &'static str {
    env!("CARGO_BIN_EXE_anes")
}

fn canary(args: &[&str], cwd: &Path) -> Output {
    Command::new(anes()).arg("canary").args(args).current_dir(cwd).output().expect("the anes binary runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("canary-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&output.stdout), stderr(output)))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The golden record of the demo's last frame.
fn golden_final_hash() -> String {
    let text = std::fs::read_to_string(repo().join("tests/golden/demo.records")).unwrap();
    text.lines().last().unwrap().split_whitespace().last().unwrap().to_string()
}

#[test]
fn the_same_build_twice_agrees_over_the_demos_5000_frames() {
    let dir = scratch("same");
    let output = canary(&["--baseline", anes(), "--json"], &dir);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let summary = json(&output);
    assert_eq!(summary["result"], "same");
    assert_eq!(summary["frames_agreed"], 5000);
    assert_eq!(summary["final_state_hash"], golden_final_hash().as_str());
    assert_eq!(summary["baseline"]["emulation_epoch"], anes_core::EMULATION_EPOCH);
    assert!(!dir.join("anes-evidence").exists(), "nothing to keep when the builds agree");
}

/// Where the drill must show: the first `STY zp` the demo executes with its input, found here by
/// stepping the console in-process (independently of the canary): the input-stream index of its frame
/// and the CPU cycle it starts at.
fn first_sty_zero_page() -> (u64, u64) {
    let rom = std::fs::read(repo().join("roms/demo/demo.nes")).unwrap();
    let inputs =
        InputStream::from_bytes(&std::fs::read(repo().join("roms/demo/demo.input")).unwrap()).unwrap();
    let mut machine = NesMachine::from_ines(&rom, anes_core::NesConfig::default()).unwrap();
    for frame in 0..inputs.len() {
        machine.begin_frame(inputs.frame(frame));
        loop {
            if machine.opcode() == 0x84 {
                return (frame as u64, machine.probe().cpu_cycle);
            }
            if machine.step_instruction() {
                break;
            }
        }
    }
    panic!("the demo never executes STY zp");
}

/// The candidate with the drill, built once (into its own target folder, so no other test's binary is
/// touched). The folder starts as a copy of this build's compiled dependencies: only the workspace's
/// crates (and any dependency whose features differ) are compiled again, a minute where building
/// every dependency from nothing took about five on CI's two cores.
fn drill_build() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let target = tmp.join("canary-drill-target");
        // CARGO_TARGET_TMPDIR is <target>/tmp; this test's own profile folder is <target>/debug.
        if let Some(own) = tmp.parent().map(|t| t.join("debug")) {
            seed_dependencies(&own, &target.join("debug"));
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "anes-cli", "--features", "canary-drill", "--target-dir"])
            .arg(&target)
            .current_dir(repo())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the drill candidate failed");
        target.join("debug/anes")
    })
}

/// Copies the compiled external dependencies (libraries, build-script outputs, fingerprints; not the
/// workspace's crates or any executable) from `from` to an empty `to`, with their times. Copies, not
/// links: cargo may rewrite a file in `to`, which must never change `from`.
fn seed_dependencies(from: &Path, to: &Path) {
    if to.join(".fingerprint").exists() || !from.join("deps").is_dir() {
        return;
    }
    let copy_tree = |dir: &str| {
        let status = Command::new("cp").arg("-a").arg(from.join(dir)).arg(to).status();
        assert!(status.is_ok_and(|s| s.success()), "copying {dir} into {}", to.display());
    };
    std::fs::create_dir_all(to.join("deps")).unwrap();
    copy_tree("build");
    let libraries: Vec<PathBuf> = std::fs::read_dir(from.join("deps"))
        .unwrap()
        .map_while(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let library = [".rlib", ".rmeta", ".so", ".a", ".d"].iter().any(|ext| name.ends_with(ext));
            library && !name.starts_with("anes") && !name.starts_with("libanes")
        })
        .collect();
    // `cp -a` keeps the files' times: a library newer than its dependents' fingerprints would make
    // cargo rebuild every dependent.
    for batch in libraries.chunks(500) {
        let status = Command::new("cp").arg("-a").args(batch).arg(to.join("deps")).status();
        assert!(status.is_ok_and(|s| s.success()), "copying libraries into {}", to.display());
    }
    // Last: with the fingerprints in place and a library missing, cargo would only rebuild it.
    copy_tree(".fingerprint");
}

#[test]
fn a_one_cycle_timing_change_is_caught_at_the_exact_frame_and_cycle() {
    let (frame, cycle) = first_sty_zero_page();
    let dir = scratch("drill");
    let report = dir.join("evidence");
    let candidate = drill_build().to_str().unwrap().to_string();
    let output = canary(
        &["--baseline", anes(), "--candidate", &candidate, "--json", "--report", report.to_str().unwrap()],
        &dir,
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let summary = json(&output);
    assert_eq!(summary["result"], "diverged");
    let divergence = &summary["divergence"];
    assert_eq!(divergence["frame"], frame, "{divergence:#}");
    assert_eq!(divergence["cpu_cycle"], cycle, "{divergence:#}");
    assert_eq!(divergence["epochs"]["verdict"], "same_epoch", "one epoch: a regression");
    let instruction = divergence["instruction"].as_str().unwrap();
    assert!(instruction.contains("STY $"), "{instruction}");
    let fields: Vec<&str> =
        divergence["fields"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert!(fields.iter().any(|f| f.starts_with("bus.cpu_cycle: ")), "{fields:?}");
    // The lockstep runner's evidence bundle, with the canary's own summary beside it.
    for file in ["report.json", "report.html", "checkpoint_a.snap", "divergence_b.snap", "canary.json"] {
        assert!(report.join(file).is_file(), "{file} missing");
    }
    let lockstep_report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report.join("report.json")).unwrap()).unwrap();
    assert!(lockstep_report.to_string().contains("STY"), "{lockstep_report}");

    // Without localization the frame is still exact.
    let output = canary(&["--baseline", anes(), "--candidate", &candidate, "--json", "--no-localize"], &dir);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(json(&output)["divergence"]["frame"], frame);
}

#[test]
fn golden_logs_stand_in_for_the_baseline_and_name_the_epoch() {
    let dir = scratch("golden");
    let log = repo().join("tests/golden/demo.records");
    let output = canary(&["--baseline-log", log.to_str().unwrap(), "--json"], &dir);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(json(&output)["final_state_hash"], golden_final_hash().as_str());

    // A log one record of which disagrees: caught at that frame, and its EPOCH makes it a regression.
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[1233] = lines[1233].replace('a', "b");
    let tampered = dir.join("demo.records");
    std::fs::write(&tampered, lines.join("\n")).unwrap();
    std::fs::write(dir.join("EPOCH"), format!("{}\n", anes_core::EMULATION_EPOCH)).unwrap();
    let output = canary(&["--baseline-log", tampered.to_str().unwrap(), "--json"], &dir);
    assert_eq!(output.status.code(), Some(1));
    let summary = json(&output);
    assert_eq!(summary["divergence"]["frame"], 1233);
    assert_eq!(summary["divergence"]["epochs"]["verdict"], "same_epoch");
    // Blessed under another epoch: the difference is the expected change.
    std::fs::write(dir.join("EPOCH"), format!("{}\n", anes_core::EMULATION_EPOCH + 7)).unwrap();
    let output = canary(&["--baseline-log", tampered.to_str().unwrap()], &dir);
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("expected change"), "{text}");
}

/// `--region` reaches both builds' consoles: the demo as a PAL console agrees with its PAL golden log
/// (and not with its NTSC one), and two builds agree on a Dendy console, which both report.
#[test]
fn the_region_reaches_both_builds_and_is_compared_with_that_regions_golden_log() {
    let dir = scratch("region");
    let pal_log = repo().join("tests/golden/demo.pal.records");
    let pal = canary(
        &["--baseline-log", pal_log.to_str().unwrap(), "--region", "pal", "--frames", "300", "--json"],
        &dir,
    );
    assert_eq!(pal.status.code(), Some(0), "{}", stderr(&pal));
    let summary = json(&pal);
    assert_eq!(summary["region"], "pal");
    let text = std::fs::read_to_string(&pal_log).unwrap();
    let frame_299 = text.lines().nth(299).unwrap().split_whitespace().last().unwrap();
    assert_eq!(summary["final_state_hash"], frame_299);

    // The same log without --region: the header's NTSC console differs from the first frame.
    let ntsc = canary(&["--baseline-log", pal_log.to_str().unwrap(), "--frames", "300", "--json"], &dir);
    assert_eq!(ntsc.status.code(), Some(1), "{}", stderr(&ntsc));
    assert_eq!(json(&ntsc)["region"], "ntsc");

    let dendy = canary(&["--baseline", anes(), "--region", "dendy", "--frames", "120", "--json"], &dir);
    assert_eq!(dendy.status.code(), Some(0), "{}", stderr(&dendy));
    let summary = json(&dendy);
    assert_eq!((summary["result"].as_str(), summary["region"].as_str()), (Some("same"), Some("dendy")));
}

#[test]
fn corpus_mode_runs_shards_in_parallel_and_writes_junit_xml() {
    let dir = scratch("corpus");
    let tiny = dir.join("tiny.nes");
    std::fs::write(&tiny, anes_fixtures::tiny_rom()).unwrap();
    let demo = repo().join("roms/demo/demo.nes");
    let input = repo().join("roms/demo/demo.input");
    let manifest = dir.join("corpus.toml");
    std::fs::write(
        &manifest,
        format!(
            "[[case]]\nrom = {demo:?}\ninput = {input:?}\nframes = 300\n\n[[case]]\nname = \"tiny\"\nrom = \"tiny.nes\"\n\n\
             [[case]]\nname = \"missing\"\nrom = \"no-such.nes\"\n"
        ),
    )
    .unwrap();
    let junit = dir.join("junit.xml");
    let output = canary(
        &[
            "--corpus",
            manifest.to_str().unwrap(),
            "--baseline",
            anes(),
            "--junit",
            junit.to_str().unwrap(),
            "--json",
        ],
        &dir,
    );
    // The missing ROM is an error case: the run fails, the others still ran.
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let summary = json(&output);
    let results: Vec<&str> =
        summary["cases"].as_array().unwrap().iter().map(|c| c["result"].as_str().unwrap()).collect();
    assert_eq!(results, ["same", "same", "error"]);
    assert_eq!(summary["cases"][1]["summary"]["frames_agreed"], 600, "a case without input runs 600 frames");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.starts_with("<?xml version=\"1.0\""));
    assert!(xml.contains("tests=\"3\" failures=\"0\" errors=\"1\""), "{xml}");
    assert!(xml.contains("<testcase classname=\"anes.canary\" name=\"tiny\""), "{xml}");
    assert!(xml.contains("<error message=\""), "{xml}");

    // Shards split the cases: 1/2 runs cases 1 and 3, 2/2 runs case 2.
    let shard = |k: &str| {
        let output = canary(
            &["--corpus", manifest.to_str().unwrap(), "--baseline", anes(), "--shard", k, "--json"],
            &dir,
        );
        let summary = json(&output);
        summary["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(shard("2/2"), ["tiny"]);
    assert_eq!(shard("1/2").len(), 2);
}

#[test]
fn the_run_exports_the_design_gauges_on_a_metrics_endpoint() {
    let dir = scratch("metrics");
    // A free loopback port: bound, read and released.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let address = format!("127.0.0.1:{port}");
    let mut child = Command::new(anes())
        .args([
            "canary",
            "--baseline",
            anes(),
            "--frames",
            "300",
            "--metrics-listen",
            &address,
            "--metrics-hold",
            "20",
        ])
        .args(["--pipeline-id", "canary-test"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut body = String::new();
    for _ in 0..200 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let Ok(mut stream) = std::net::TcpStream::connect(&address) else { continue };
        body.clear();
        stream.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        stream.read_to_string(&mut body).unwrap();
        if body.contains("result=\"same\"} 1") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(body.contains("worker_state_divergence_flag{pipeline_id=\"canary-test\"} 0"), "{body}");
    assert!(body.contains("worker_drift_offset_records{pipeline_id=\"canary-test\"} 0"), "{body}");
    assert!(body.contains("anes_canary_result{pipeline_id=\"canary-test\",result=\"same\"} 1"), "{body}");
}

#[test]
fn bad_input_is_one_line_and_exit_status_2() {
    let dir = scratch("bad");
    // An executable that is not an anes worker.
    let output = canary(&["--baseline", "/bin/true", "--frames", "10"], &dir);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.starts_with("error: /bin/true: ") && err.lines().count() == 1, "{err}");
    let output = canary(&["--baseline", "/nonexistent/anes"], &dir);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("cannot start it as a worker"), "{}", stderr(&output));
    let output = canary(&["--frames", "10"], &dir);
    assert_eq!(output.status.code(), Some(2));
    let junk = dir.join("junk.records");
    std::fs::write(&junk, "1 2 3\n").unwrap();
    let output = canary(&["--baseline-log", junk.to_str().unwrap()], &dir);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("line 1"), "{}", stderr(&output));
    let output = canary(&["--corpus", "/dev/zero", "--baseline", anes()], &dir);
    assert_eq!(output.status.code(), Some(2));
    // A valid log shorter than the run.
    std::fs::write(&junk, format!("1 29781 241 2 {}\n", "ab".repeat(32))).unwrap();
    let short = canary(&["--baseline-log", junk.to_str().unwrap(), "--frames", "5000"], &dir);
    assert_eq!(short.status.code(), Some(2));
    assert!(stderr(&short).contains("holds 1 records"), "{}", stderr(&short));
}

/// An executable file `name` in `dir` with this shell script.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_baseline_that_hangs_after_its_handshake_is_a_failed_worker() {
    use anes_ops::worker::protocol::{BuildInfo, PROTOCOL_VERSION, Reply, encode_reply};
    let dir = scratch("hung");
    let rom = dir.join("tiny.nes");
    std::fs::write(&rom, anes_fixtures::tiny_rom()).unwrap();
    let mut hello = Vec::new();
    encode_reply(
        &Reply::Hello { protocol_version: PROTOCOL_VERSION, build: BuildInfo::current() },
        &mut hello,
    );
    std::fs::write(dir.join("hello.bin"), &hello).unwrap();
    // Says hello, then never answers; `exec` keeps one process, which the canary kills by PID.
    let hung = script(&dir, "hung-worker", "cat \"$(dirname \"$0\")/hello.bin\"\nexec sleep 60\n");
    let started = std::time::Instant::now();
    let output = canary(
        &[
            rom.to_str().unwrap(),
            "--baseline",
            hung.to_str().unwrap(),
            "--frames",
            "10",
            "--reply-timeout",
            "1",
        ],
        &dir,
    );
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}{}", stderr(&output));
    assert!(
        text.contains("FAILED            the baseline worker failed: ") && text.contains("it hangs"),
        "{text}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30), "{:?}", started.elapsed());
    let output = canary(
        &[
            rom.to_str().unwrap(),
            "--baseline",
            hung.to_str().unwrap(),
            "--frames",
            "10",
            "--reply-timeout",
            "1",
            "--json",
        ],
        &dir,
    );
    assert_eq!(output.status.code(), Some(1));
    let summary = json(&output);
    assert_eq!(summary["result"], "worker_failed");
    assert_eq!(summary["frames_agreed"], 0);
}

/// A baseline whose output is a recorded worker stream, replayed with one bit flipped: wherever the
/// bit is, in a record or not (hello, snapshots, lengths, checksums), the run is never "same".
#[test]
fn a_bit_flipped_anywhere_in_the_baselines_stream_is_detected() {
    use anes_ops::worker::protocol::{WireInput, WorkerCommand, encode_command};
    let dir = scratch("flips");
    let rom = dir.join("tiny.nes");
    std::fs::write(&rom, anes_fixtures::tiny_rom()).unwrap();
    // The stream this build's worker sends for the run below (replies do not depend on how the canary
    // batches its frames).
    let mut commands = Vec::new();
    encode_command(
        &WorkerCommand::Load {
            rom: anes_fixtures::tiny_rom(),
            checkpoint_every: 4,
            region: None,
            power_on: None,
        },
        &mut commands,
    );
    encode_command(
        &WorkerCommand::Frames { first_seq: 0, inputs: vec![WireInput([0, 0, 0]); 10] },
        &mut commands,
    );
    encode_command(&WorkerCommand::Shutdown, &mut commands);
    let mut worker = Command::new(anes())
        .args(["worker", "--protocol", "binary"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    worker.stdin.take().unwrap().write_all(&commands).unwrap();
    let recorded = worker.wait_with_output().unwrap();
    assert!(recorded.status.success());
    let stream = recorded.stdout;
    // The hello's extent: a damaged hello fails the handshake (bad input, exit 2); damage after it is
    // a worker that broke the protocol (exit 1).
    let hello_len = 4 + u32::from_le_bytes(stream[..4].try_into().unwrap()) as usize + 8;
    let fake = script(&dir, "replaying-worker", "cat \"$ANES_FAKE_STREAM\"\nexec cat > /dev/null\n");
    let run = |bytes: &[u8]| {
        let path = dir.join("stream.bin");
        std::fs::write(&path, bytes).unwrap();
        Command::new(anes())
            .args(["canary", rom.to_str().unwrap(), "--baseline", fake.to_str().unwrap()])
            .args([
                "--frames",
                "10",
                "--checkpoint-every",
                "4",
                "--no-localize",
                "--reply-timeout",
                "10",
                "--json",
            ])
            .env("ANES_FAKE_STREAM", &path)
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    let clean = run(&stream);
    assert_eq!(clean.status.code(), Some(0), "the replayed stream agrees: {}", stderr(&clean));
    assert_eq!(json(&clean)["result"], "same");
    // In every message of the stream: both ends of its length, its tag, the middle and the end of its
    // contents, its checksum; the range, offsets 40-5000, every 250 bytes; and every 151st byte.
    let mut offsets = Vec::new();
    let mut at = 0;
    while at < stream.len() {
        let len = u32::from_le_bytes(stream[at..at + 4].try_into().unwrap()) as usize;
        offsets.extend([at, at + 3, at + 4, at + 4 + len / 2, at + 3 + len, at + 4 + len + 5]);
        at += 4 + len + 8;
    }
    assert_eq!(at, stream.len(), "the recorded stream is whole frames");
    offsets.extend((40..5000).step_by(250));
    offsets.extend((0..stream.len()).step_by(151));
    offsets.sort_unstable();
    offsets.dedup();
    eprintln!("{} bytes recorded, hello {hello_len} bytes; {} offsets flipped", stream.len(), offsets.len());
    for (i, &offset) in offsets.iter().enumerate() {
        let mut damaged = stream.clone();
        damaged[offset] ^= 1 << (i % 8);
        let output = run(&damaged);
        let code = output.status.code();
        if offset < hello_len {
            assert_eq!(code, Some(2), "offset {offset} (hello): {}", stderr(&output));
        } else {
            assert_eq!(
                code,
                Some(1),
                "offset {offset}: {}{}",
                String::from_utf8_lossy(&output.stdout),
                stderr(&output)
            );
            assert_eq!(json(&output)["result"], "worker_failed", "offset {offset}");
        }
    }
}

#[test]
fn an_empty_comparison_is_bad_input() {
    let dir = scratch("empty");
    let output = canary(&["--baseline", anes(), "--frames", "0"], &dir);
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stdout));
    let err = stderr(&output);
    assert!(err.contains("no frames to compare") && err.lines().count() == 1, "{err}");
    let tiny = dir.join("tiny.nes");
    std::fs::write(&tiny, anes_fixtures::tiny_rom()).unwrap();
    let manifest = dir.join("corpus.toml");
    std::fs::write(&manifest, "[[case]]\nrom = \"tiny.nes\"\nframes = 5\n").unwrap();
    let corpus = |shard: &str| {
        canary(
            &["--corpus", manifest.to_str().unwrap(), "--baseline", anes(), "--shard", shard, "--json"],
            &dir,
        )
    };
    let output = corpus("2/2");
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stdout));
    let err = stderr(&output);
    assert!(err.contains("shard 2/2 holds no case (1 cases in all)") && err.lines().count() == 1, "{err}");
    assert_eq!(corpus("1/2").status.code(), Some(0), "the shard with the case runs it");
}

fn json_file(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .expect("JSON")
}

/// `anes shrink --baseline --candidate` against the drill (the build the test above made, not
/// another): the demo's input shrinks to a repro that the canary itself sees diverge at the same
/// frame, and that is 1-minimal, checked here by removing each press left (the canary must then
/// not see that divergence). `anes canary --shrink` attaches the same repro to its bundle, and
/// `anes shrink --evidence` takes the canary's bundle.
#[test]
fn the_drill_shrinks_across_builds_and_the_canary_attaches_the_repro() {
    let (frame, _) = first_sty_zero_page();
    let dir = scratch("shrink");
    let candidate = drill_build().to_str().unwrap().to_string();
    let out = dir.join("repro");
    let run = Command::new(anes())
        .args(["shrink", "--baseline", anes(), "--candidate", &candidate, "--jobs", "2", "--json", "--out"])
        .arg(&out)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let report = json_file(&out.join("report.json"));
    assert_eq!(report["target"]["frame"], frame, "{report:#}");
    assert_eq!(report["one_minimal"], true);
    assert!(report["divergence"]["message"].as_str().unwrap().contains("STY"), "{report:#}");

    // The repro, replayed by the canary between the same builds: the same frame.
    let replay = canary(
        &[
            "--baseline",
            anes(),
            "--candidate",
            &candidate,
            "--input",
            out.join("repro.input").to_str().unwrap(),
            "--json",
            "--no-localize",
        ],
        &dir,
    );
    assert_eq!(replay.status.code(), Some(1), "{}", stderr(&replay));
    assert_eq!(json(&replay)["divergence"]["frame"], frame);
    // 1-minimal: without any one press left, the canary sees no divergence at that frame.
    let repro = InputStream::from_bytes(&std::fs::read(out.join("repro.input")).unwrap()).unwrap();
    for press in report["presses"].as_array().unwrap() {
        let at = press["frame"].as_u64().unwrap() as usize;
        let mut frames: Vec<_> = (0..repro.len()).map(|f| repro.frame(f)).collect();
        frames[at].pads = [0, 0];
        let less = dir.join(format!("less-{at}.input"));
        std::fs::write(&less, InputStream::from_frames(frames).to_bytes()).unwrap();
        let run = canary(
            &[
                "--baseline",
                anes(),
                "--candidate",
                &candidate,
                "--input",
                less.to_str().unwrap(),
                "--json",
                "--no-localize",
            ],
            &dir,
        );
        assert_ne!(json(&run)["divergence"]["frame"], frame, "the press at frame {at} is not needed");
    }

    // The canary's --shrink: the repro in its bundle, named in its report.
    let bundle = dir.join("evidence");
    let run = canary(
        &[
            "--baseline",
            anes(),
            "--candidate",
            &candidate,
            "--shrink",
            "--json",
            "--report",
            bundle.to_str().unwrap(),
        ],
        &dir,
    );
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let summary = json(&run);
    let repro_dir = bundle.join("repro");
    assert_eq!(summary["repro"], repro_dir.to_str().unwrap(), "{summary:#}");
    assert!(
        std::fs::read(repro_dir.join("repro.input")).unwrap()
            == std::fs::read(out.join("repro.input")).unwrap(),
        "the canary's repro is anes shrink's"
    );

    // anes shrink --evidence takes the canary's bundle, given the builds (it asks for them).
    let from_bundle = dir.join("from-bundle");
    let run = Command::new(anes())
        .args(["shrink", "--evidence", bundle.to_str().unwrap(), "--out", from_bundle.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    assert!(stderr(&run).contains("--baseline"), "{}", stderr(&run));
    let run = Command::new(anes())
        .args([
            "shrink",
            "--evidence",
            bundle.to_str().unwrap(),
            "--baseline",
            anes(),
            "--candidate",
            &candidate,
        ])
        .arg("--out")
        .arg(&from_bundle)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert_eq!(json_file(&from_bundle.join("report.json"))["target"], report["target"]);
}
