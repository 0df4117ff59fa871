//! The `anes` binary as a user meets it: exit statuses, one-line errors, tables, JSON and traces.

#[path = "../../anes-conformance/tests/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use support::Scratch;

fn anes(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anes")).args(args).output().expect("the anes binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// Asserts exit status 2 and exactly one stderr line `error: <file>: <problem containing text>`.
fn assert_bad_input(output: &Output, file: &Path, problem: &str) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "one line expected: {err}");
    let prefix = format!("error: {}: ", file.display());
    assert!(err.starts_with(&prefix), "{err:?} should start with {prefix:?}");
    assert!(err.contains(problem), "{err:?} should mention {problem:?}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `shared/conformance` (`ANES_CONFORMANCE_DIR` overrides), when present.
fn conformance_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("ANES_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance"));
    dir.join("manifest.toml").is_file().then_some(dir)
}

#[test]
fn missing_rom_file_is_bad_input() {
    let missing = Path::new("/nonexistent/anes/missing.nes");
    for command in ["run", "trace"] {
        let output = anes(&[command, missing.to_str().unwrap()]);
        assert_bad_input(&output, missing, "No such file");
    }
}

#[test]
fn bad_rom_headers_are_bad_input() {
    let scratch = Scratch::new("cli-bad-header");
    let magic = scratch.write("magic.nes", b"this is not an iNES file");
    assert_bad_input(&anes(&["run", magic.to_str().unwrap()]), &magic, "bad magic");
    let short = scratch.write("short.nes", b"NES\x1a");
    assert_bad_input(&anes(&["trace", short.to_str().unwrap()]), &short, "shorter than the 16-byte");
    let mut truncated = support::silent_rom();
    truncated.truncate(1000);
    let truncated = scratch.write("truncated.nes", truncated);
    assert_bad_input(&anes(&["run", truncated.to_str().unwrap()]), &truncated, "header declares");
}

#[test]
fn unsupported_mapper_is_bad_input() {
    let scratch = Scratch::new("cli-mapper");
    let mut rom = support::silent_rom();
    rom[6] = 0xF0; // mapper 255: low nibble
    rom[7] = 0xF0; // high nibble
    let rom = scratch.write("m255.nes", rom);
    let output = anes(&["run", rom.to_str().unwrap(), "--frames", "1"]);
    assert_bad_input(&output, &rom, "mapper 255");
}

#[test]
fn missing_or_malformed_manifest_is_bad_input() {
    let missing = Path::new("/nonexistent/anes/manifest.toml");
    let output = anes(&["conformance", "--manifest", missing.to_str().unwrap()]);
    assert_bad_input(&output, missing, "cannot read the manifest");

    let scratch = Scratch::new("cli-malformed");
    let manifest = scratch.write("manifest.toml", "[[rom]]\npath = \"a.nes\"\nexpected = 3\n");
    let output = anes(&["conformance", "--manifest", manifest.to_str().unwrap()]);
    assert_bad_input(&output, &manifest, "line ");

    // A misspelt table name is refused by name, like every unknown field.
    let manifest = scratch.write("manifest.toml", "[[roms]]\npath = \"a.nes\"\n");
    let output = anes(&["conformance", "--manifest", manifest.to_str().unwrap()]);
    assert_bad_input(&output, &manifest, "unknown field `roms`");

    // A manifest that lists nothing must not pass as "0 passed, 0 failed".
    let manifest = scratch.write("manifest.toml", "# no ROMs yet\n");
    let output = anes(&["conformance", "--manifest", manifest.to_str().unwrap()]);
    assert_bad_input(&output, &manifest, "lists no [[rom]] tables");
}

#[test]
fn filter_matching_nothing_and_unknown_baseline_rom_are_bad_input() {
    let scratch = Scratch::new("cli-filter");
    let table = scratch.rom_entry("a.nes", &support::blargg_rom("", 0), "blargg6000", 5, "");
    let manifest = scratch.manifest(&[table]);
    let manifest_arg = manifest.to_str().unwrap();
    let output = anes(&["conformance", "--manifest", manifest_arg, "--filter", "zzz"]);
    assert_bad_input(&output, &manifest, "no ROM path contains \"zzz\"");

    let baseline = scratch.write("baseline.txt", "# known good\na.nes\nb.nes\n");
    let output = anes(&["conformance", "--manifest", manifest_arg, "--baseline", baseline.to_str().unwrap()]);
    assert_bad_input(&output, &baseline, "line 3: ROM \"b.nes\" is not in the manifest");
}

/// A manifest with one passing ROM, one failing ROM expected to pass and one failing `either` ROM.
fn mixed_manifest(scratch: &Scratch) -> PathBuf {
    scratch.manifest(&[
        scratch.rom_entry("good.nes", &support::blargg_rom("fine", 0), "blargg6000", 10, ""),
        scratch.rom_entry("bad.nes", &support::blargg_rom("Failed #2\nsecond line", 2), "blargg6000", 10, ""),
        scratch.rom_entry(
            "alt.nes",
            &support::blargg_rom("alt", 5),
            "blargg6000",
            10,
            "expected = \"either\"",
        ),
    ])
}

#[test]
fn conformance_table_ends_with_the_counts_and_fails_on_a_must_pass_rom() {
    let scratch = Scratch::new("cli-table");
    let manifest = mixed_manifest(&scratch);
    let output = anes(&["conformance", "--manifest", manifest.to_str().unwrap(), "--jobs", "2"]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.last(), Some(&"1 passed, 1 failed"), "{out}");
    let row = |path: &str| *lines.iter().find(|line| line.contains(path)).unwrap();
    assert!(row("good.nes").starts_with("pass "), "{out}");
    assert!(row("bad.nes").starts_with("fail ") && row("bad.nes").contains("$02"), "{out}");
    assert!(row("bad.nes").ends_with("Failed #2 | second line"), "{out}");
    assert!(row("alt.nes").starts_with("fail    either"), "{out}");

    let output = anes(&["conformance", "--manifest", manifest.to_str().unwrap(), "--filter", "good"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output).lines().last(), Some("1 passed, 0 failed"));
}

/// `--power-on` powers on every ROM whose entry names no profile; an entry's `power_on` key wins; a
/// name that is no profile is bad input naming it and the accepted forms.
#[test]
fn conformance_runs_under_the_power_on_profile_asked_for() {
    let scratch = Scratch::new("cli-power-on");
    let screen = "[rom.screen]\nresult_addr = 248\npass_value = 1\nhow = \"zero page $F8\"\n";
    let rom = support::vblank_at_power_on_rom(0xF8);
    let manifest = scratch.manifest(&[
        scratch.rom_entry("asks.nes", &rom, "screen", 3, screen),
        scratch.rom_entry("names.nes", &rom, "screen", 3, &format!("power_on = \"vblank-set\"\n{screen}")),
    ]);
    let manifest = manifest.to_str().unwrap();
    let statuses = |output: &Output| -> Vec<String> {
        stdout(output)
            .lines()
            .skip(1)
            .take(2)
            .map(|l| l.split_whitespace().next().unwrap().to_string())
            .collect()
    };
    let default = anes(&["conformance", "--manifest", manifest]);
    assert_eq!((default.status.code(), statuses(&default)), (Some(1), vec!["fail".into(), "pass".into()]));
    let set = anes(&["conformance", "--manifest", manifest, "--power-on", "vblank-set"]);
    assert_eq!((set.status.code(), statuses(&set)), (Some(0), vec!["pass".into(), "pass".into()]));
    let quick = anes(&["conformance", "--manifest", manifest, "--power-on", "warm-up"]);
    assert_eq!(statuses(&quick), ["fail", "pass"], "the entry's key wins over --power-on");

    let bad = anes(&["conformance", "--manifest", manifest, "--power-on", "lukewarm"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = stderr(&bad);
    assert!(err.contains("power-on profile \"lukewarm\" is not one of default, vblank-set"), "{err}");
    assert!(err.contains("random:SEED"), "{err}");
}

#[test]
fn conformance_json_is_one_object() {
    let scratch = Scratch::new("cli-json");
    let manifest = mixed_manifest(&scratch);
    let output = anes(&["conformance", "--manifest", manifest.to_str().unwrap(), "--json"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).is_empty(), "no progress bar with --json: {}", stderr(&output));
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!((json["passed"].as_u64(), json["failed"].as_u64()), (Some(1), Some(1)));
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(
        results[1],
        serde_json::json!({
            "path": "bad.nes", "suite": "synthetic", "protocol": "blargg6000", "expected": "pass",
            "status": "fail", "code": 2, "text": "Failed #2\nsecond line", "frames": 1
        })
    );
    assert_eq!(results[0]["code"], 0);
    assert!(json.get("baseline").is_none());
}

#[test]
fn baseline_fails_only_on_regressions_and_lists_new_passes() {
    let scratch = Scratch::new("cli-baseline");
    let manifest = mixed_manifest(&scratch);
    let manifest = manifest.to_str().unwrap();

    let baseline = scratch.write("baseline.txt", "good.nes  # passes since day one\n");
    let output = anes(&["conformance", "--manifest", manifest, "--baseline", baseline.to_str().unwrap()]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "bad.nes is not in the baseline: {out}");
    assert!(out.contains("0 regressed"), "{out}");
    assert_eq!(out.lines().last(), Some("1 passed, 1 failed"));

    let baseline = scratch.write("baseline.txt", "bad.nes\n");
    let output = anes(&["conformance", "--manifest", manifest, "--baseline", baseline.to_str().unwrap()]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{out}");
    assert!(out.contains("REGRESSED") && out.contains("bad.nes is fail"), "{out}");
    assert!(out.contains("passes but is not in") && out.contains("good.nes"), "{out}");
}

#[test]
fn run_reports_where_the_machine_stopped() {
    let scratch = Scratch::new("cli-run");
    let rom = scratch.write("silent.nes", support::silent_rom());
    let output = anes(&["run", rom.to_str().unwrap(), "--frames", "3", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!((json["frame"].as_u64(), json["jammed"].as_bool()), (Some(3), Some(false)));
    assert_eq!(json["pc"].as_u64(), Some(0x8000));
    assert_eq!(json["ppu_scanline"].as_u64(), Some(241));
    assert_eq!(json["state_hash"].as_str().map(str::len), Some(64));
    // The third picture ends at scanline 241 of the third frame: about (2 * 262 + 241) * 341 / 3 cycles.
    assert!((80_000..90_000).contains(&json["cpu_cycle"].as_u64().unwrap()), "{json}");

    let jam = scratch.write("jam.nes", support::jam_rom());
    let output = anes(&["run", jam.to_str().unwrap(), "--frames", "2"]);
    let out = stdout(&output);
    assert!(out.contains("jammed      yes") && out.contains("frame       2\n"), "{out}");
}

fn demo_rom() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../roms/demo/demo.nes")
}

fn demo_input() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../roms/demo/demo.input")
}

fn run_json(args: &[&str]) -> serde_json::Value {
    let output = anes(args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap()
}

/// Without a ROM, `anes run` runs the bundled demo ROM over its input stream, as `lockstep`, `shrink`
/// and `canary` do: the same machine as the files in roms/demo/.
#[test]
fn run_without_a_rom_runs_the_bundled_demo_and_its_input() {
    let bundled = run_json(&["run", "--frames", "400", "--json"]);
    assert_eq!(bundled["rom"], "the bundled demo ROM", "{bundled}");
    let files = run_json(&[
        "run",
        demo_rom().to_str().unwrap(),
        "--input",
        demo_input().to_str().unwrap(),
        "--frames",
        "400",
        "--json",
    ]);
    assert_eq!(bundled["state_hash"], files["state_hash"]);
    let without_input = run_json(&["run", demo_rom().to_str().unwrap(), "--frames", "400", "--json"]);
    assert_ne!(
        bundled["state_hash"], without_input["state_hash"],
        "the demo's input presses buttons by frame 400"
    );
}

/// `anes canary` needs something to compare the candidate with, and its usage line says so.
#[test]
fn canary_says_it_needs_a_baseline_in_its_usage() {
    let group = "<--baseline <BIN>|--baseline-log <FILE>|--corpus <MANIFEST>|--libretro-baseline <CORE.so>>";
    let help = anes(&["canary", "--help"]);
    assert!(
        stdout(&help).contains(&format!("Usage: anes canary [OPTIONS] {group} [ROM]")),
        "{}",
        stdout(&help)
    );
    let bare = anes(&["canary"]);
    assert_eq!(bare.status.code(), Some(2));
    assert!(stderr(&bare).contains(group), "{}", stderr(&bare));
}

/// 1,200 frames in one go give the same record as 600, a snapshot, and 600 more from the snapshot
/// (on the other PPU schedule).
#[test]
fn run_resumes_from_a_snapshot_exactly() {
    let scratch = Scratch::new("cli-snapshot");
    let (rom, input) = (demo_rom(), demo_input());
    let (rom, input) = (rom.to_str().unwrap(), input.to_str().unwrap());
    let snapshot = scratch.path().join("half.snap");
    let straight = run_json(&["run", rom, "--frames", "1200", "--input", input, "--json"]);
    let first = run_json(&[
        "run",
        rom,
        "--frames",
        "600",
        "--input",
        input,
        "--save-state",
        snapshot.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(first["frame"].as_u64(), Some(600));
    let resumed = run_json(&[
        "run",
        rom,
        "--frames",
        "600",
        "--input",
        input,
        "--load-state",
        snapshot.to_str().unwrap(),
        // The reference PPU and APU schedules resume a snapshot of the default ones exactly.
        "--ppu",
        "eager",
        "--apu",
        "eager",
        "--json",
    ]);
    for key in ["frame", "cpu_cycle", "ppu_scanline", "ppu_dot", "state_hash"] {
        assert_eq!(resumed[key], straight[key], "{key}");
    }
    // Another ROM's snapshot is refused with one line naming the file.
    let silent = scratch.write("silent.nes", support::silent_rom());
    let output = anes(&["run", silent.to_str().unwrap(), "--load-state", snapshot.to_str().unwrap()]);
    assert_bad_input(&output, &snapshot, "another ROM");
}

#[test]
fn run_peeks_memory_and_writes_a_screenshot() {
    let scratch = Scratch::new("cli-peek");
    let shot = scratch.path().join("frame.png");
    let json = run_json(&[
        "run",
        demo_rom().to_str().unwrap(),
        "--frames",
        "30",
        "--peek",
        "0xFFFC:2",
        "--peek",
        "8000:0x3",
        "--screenshot",
        shot.to_str().unwrap(),
        "--json",
    ]);
    // The reset vector and the first PRG bytes, read without side effects, as lowercase hex.
    let rom = std::fs::read(demo_rom()).unwrap();
    let peeked = json["peek"]["0xfffc"].as_str().unwrap();
    assert_eq!(peeked.len(), 4);
    assert_eq!(json["peek"]["0x8000"].as_str().map(str::len), Some(6));
    assert!(peeked.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    assert!(rom.len() > 16);
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // Width and height in the IHDR chunk.
    assert_eq!(&png[16..24], &[0, 0, 1, 0, 0, 0, 0, 240]);
    let bad = anes(&["run", demo_rom().to_str().unwrap(), "--peek", "0xZZ"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// An FCEUX movie converts to anes's format and drives `run` exactly like the movie itself.
#[test]
fn movie_convert_round_trips_fm2() {
    let scratch = Scratch::new("cli-movie");
    let mut fm2 = String::from("version 3\nemuVersion 22020\nport0 1\nport1 1\nport2 0\n");
    for i in 0..120 {
        let buttons = if i % 20 < 10 { "R......A" } else { "...U.S.." };
        fm2.push_str(&format!("|{}|{buttons}|........||\n", u8::from(i == 60)));
    }
    let movie = scratch.write("play.fm2", fm2.as_bytes());
    let converted = scratch.path().join("play.input");
    let output = anes(&["movie", "convert", movie.to_str().unwrap(), converted.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("120 frames"));
    let rom = demo_rom();
    let with_fm2 = run_json(&[
        "run",
        rom.to_str().unwrap(),
        "--frames",
        "120",
        "--input",
        movie.to_str().unwrap(),
        "--json",
    ]);
    let with_bin = run_json(&[
        "run",
        rom.to_str().unwrap(),
        "--frames",
        "120",
        "--input",
        converted.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(with_fm2["state_hash"], with_bin["state_hash"]);
    let idle = run_json(&["run", rom.to_str().unwrap(), "--frames", "120", "--json"]);
    assert_ne!(idle["state_hash"], with_bin["state_hash"], "input must matter to the demo");
    let broken = scratch.write("broken.fm2", fm2.replace("|0|R......A|", "|0|R.A|").as_bytes());
    let output = anes(&["movie", "convert", broken.to_str().unwrap(), converted.to_str().unwrap()]);
    assert_bad_input(&output, &broken, "line 6");
}

#[test]
fn trace_starts_at_the_reset_vector_or_the_given_pc() {
    let scratch = Scratch::new("cli-trace");
    let rom = scratch.write("silent.nes", support::silent_rom());
    let output = anes(&["trace", rom.to_str().unwrap(), "--instructions", "2"]);
    let out = stdout(&output);
    assert_eq!(out.lines().count(), 2);
    assert!(out.starts_with("8000  4C 00 80  JMP $8000 "), "{out}");
    let output = anes(&["trace", rom.to_str().unwrap(), "--start-pc", "$C000", "--instructions", "1"]);
    assert!(stdout(&output).starts_with("C000  4C 00 80  JMP $8000 "), "{}", stdout(&output));
}

#[test]
fn trace_into_a_closed_pipe_ends_quietly() {
    let scratch = Scratch::new("cli-pipe");
    let rom = scratch.write("silent.nes", support::silent_rom());
    let mut child = Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(["trace", rom.to_str().unwrap(), "--instructions", "100000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.starts_with("8000  "));
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(output.stderr.is_empty(), "{}", stderr(&output));
}

#[test]
fn trace_reproduces_nestest_log() {
    let Some(dir) = conformance_dir() else {
        // A fresh clone may lack the ROMs; under CI their absence fails rather than passes unseen.
        assert!(!anes_fs::ci_is_set(), "trace_reproduces_nestest_log: no conformance folder and CI is set");
        eprintln!("skipped trace_reproduces_nestest_log: shared/conformance not found");
        return;
    };
    let rom = dir.join("roms/other/nestest.nes");
    let log = std::fs::read_to_string(dir.join("roms/other/nestest.log")).unwrap();
    let output = anes(&["trace", rom.to_str().unwrap(), "--start-pc", "C000", "--instructions", "8991"]);
    assert_eq!(output.status.code(), Some(0));
    let trace = stdout(&output);
    let expected: Vec<&str> = log.lines().collect();
    let actual: Vec<&str> = trace.lines().collect();
    assert_eq!(expected.len(), 8991);
    for (i, (want, got)) in expected.iter().zip(&actual).enumerate() {
        assert_eq!(got, want, "line {} differs", i + 1);
    }
    assert_eq!(actual.len(), expected.len());
}

/// Runs `anes ARGS` and kills it if it has not ended within 20 s (a read that blocks on a FIFO).
fn anes_within(args: &[&str]) -> Output {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the anes binary runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("anes {args:?} still runs after 20 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    child.stdout.take().unwrap().read_to_end(&mut stdout).unwrap();
    child.stderr.take().unwrap().read_to_end(&mut stderr).unwrap();
    Output { status, stdout, stderr }
}

/// A FIFO at `path`, or `None` (and a note) where `mkfifo` is unavailable.
fn mkfifo(path: &Path) -> Option<()> {
    match Command::new("mkfifo").arg(path).status() {
        Ok(status) if status.success() => Some(()),
        _ => {
            eprintln!("note: mkfifo unavailable: FIFO test skipped");
            None
        }
    }
}

/// Every file the CLI reads is opened without blocking and refused when it is not a regular file: a
/// FIFO with no writer used to block the read forever.
#[test]
fn a_fifo_is_refused_at_once_wherever_a_file_is_read() {
    let scratch = Scratch::new("cli-fifo");
    let fifo = scratch.path().join("fifo");
    if mkfifo(&fifo).is_none() {
        return;
    }
    let f = fifo.to_str().unwrap();
    let rom = demo_rom();
    let rom = rom.to_str().unwrap();
    let manifest = scratch.manifest(&[scratch.rom_entry(
        "good.nes",
        &support::blargg_rom("fine", 0),
        "blargg6000",
        10,
        "",
    )]);
    let manifest = manifest.to_str().unwrap();
    let out = scratch.path().join("out");
    let out = out.to_str().unwrap();
    let cases: [(&[&str], &str); 16] = [
        (&["run", f], "the ROM is a FIFO (named pipe), not a regular file"),
        (&["trace", f], "the ROM is a FIFO"),
        (&["lockstep", f, "--frames", "1"], "the ROM is a FIFO"),
        (&["run", rom, "--frames", "1", "--input", f], "the input stream is a FIFO"),
        (&["run", rom, "--frames", "1", "--load-state", f], "the snapshot is a FIFO"),
        (&["conformance", "--manifest", f], "the manifest is a FIFO"),
        (&["conformance", "--manifest", manifest, "--baseline", f], "the baseline is a FIFO"),
        (&["dlq", "inspect", f], "the dead-letter queue is a FIFO"),
        (&["movie", "cut", f, out, "--last", "1"], "the input stream is a FIFO"),
        (&["movie", "convert", f, out], "the input stream is a FIFO"),
        (&["movie", "info", f], "the input stream is a FIFO"),
        (&["canary", "--baseline-log", f, "--frames", "1"], "the golden log is a FIFO"),
        (&["canary", "--corpus", f], "the corpus manifest is a FIFO"),
        (&["canary", f, "--baseline-log", f], "the ROM is a FIFO"),
        // The canary's baseline is an executable: a FIFO cannot be started.
        (&["canary", "--baseline", f, "--frames", "1"], "cannot start it as a worker"),
        (&["lockstep", rom, "--frames", "1", "--input", f], "the input stream is a FIFO"),
    ];
    for (args, problem) in cases {
        assert_bad_input(&anes_within(args), &fifo, problem);
    }
    // A journal segment that is a FIFO, cut with `movie cut`.
    let journal = scratch.path().join("journal");
    std::fs::create_dir_all(&journal).unwrap();
    let segment = journal.join("seg-00000000000000000000.ajnl");
    mkfifo(&segment).unwrap();
    let output = anes_within(&["movie", "cut", journal.to_str().unwrap(), out, "--last", "1"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("the journal segment is a FIFO (named pipe)"), "{}", stderr(&output));
    // A FIFO as a ROM of a manifest: that ROM's row is an error, the others run.
    let fifo_rom = scratch.path().join("fifo.nes");
    mkfifo(&fifo_rom).unwrap();
    let endless = scratch
        .rom_entry("good.nes", &support::blargg_rom("fine", 0), "blargg6000", 10, "")
        .replace("\"good.nes\"", "\"fifo.nes\"");
    let good = scratch.rom_entry("good.nes", &support::blargg_rom("fine", 0), "blargg6000", 10, "");
    let manifest = scratch.manifest(&[endless, good]);
    let output = anes_within(&["conformance", "--manifest", manifest.to_str().unwrap(), "--json"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let results = json["results"].as_array().unwrap();
    assert_eq!((results[0]["status"].as_str(), results[1]["status"].as_str()), (Some("error"), Some("pass")));
    let text = results[0]["text"].as_str().unwrap();
    assert!(text.contains("fifo.nes: the ROM is a FIFO (named pipe), not a regular file"), "{text}");
}

/// A device given as a file (`/dev/zero` never ends) is refused by what it is, without reading it.
#[test]
fn a_device_is_refused_by_what_it_is() {
    let zero = Path::new("/dev/zero");
    if !zero.exists() {
        eprintln!("note: no /dev/zero here: device test skipped");
        return;
    }
    let dev = zero.to_str().unwrap();
    let rom = demo_rom();
    let rom = rom.to_str().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (&["run", dev], "the ROM is a character device, not a regular file"),
        (&["trace", dev], "the ROM is a character device"),
        (&["lockstep", dev, "--frames", "1"], "the ROM is a character device"),
        (&["run", rom, "--input", dev], "the input stream is a character device"),
        (&["movie", "info", dev], "the input stream is a character device"),
        (&["run", rom, "--load-state", dev], "the snapshot is a character device"),
        (&["conformance", "--manifest", dev], "the manifest is a character device"),
        (&["dlq", "inspect", dev], "the dead-letter queue is a character device"),
    ];
    for (args, problem) in cases {
        assert_bad_input(&anes_within(args), zero, problem);
    }
    let scratch = Scratch::new("cli-device-rom");
    let endless = scratch
        .rom_entry("good.nes", &support::blargg_rom("fine", 0), "blargg6000", 10, "")
        .replace("\"good.nes\"", "\"/dev/zero\"");
    let manifest = scratch.manifest(&[endless]);
    let output = anes_within(&["conformance", "--manifest", manifest.to_str().unwrap(), "--json"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let text = json["results"][0]["text"].as_str().unwrap();
    assert!(text.contains("/dev/zero: the ROM is a character device"), "{text}");
}

/// A regular file larger than its kind can be is refused by its size before a byte is read: a sparse
/// file of 2 GiB used to be read to the limit (1 GiB for a dead-letter queue) first.
#[test]
fn a_file_over_its_limit_is_refused_by_its_size_without_reading_it() {
    let scratch = Scratch::new("cli-sparse");
    let sparse = scratch.path().join("sparse");
    std::fs::File::create(&sparse).unwrap().set_len(2 << 30).unwrap();
    let path = sparse.to_str().unwrap();
    // 256 MiB of address space: reading a gigabyte fails.
    let limited = |args: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v 262144 && exec \"$0\" {args}"))
            .arg(env!("CARGO_BIN_EXE_anes"))
            .output()
            .expect("sh runs")
    };
    assert_bad_input(
        &limited(&format!("dlq inspect {path}")),
        &sparse,
        "2147483648 bytes, larger than 1024 MiB, the limit for dead-letter queue files",
    );
    assert_bad_input(
        &limited(&format!("run {path}")),
        &sparse,
        "2147483648 bytes, larger than 16 MiB, the limit for ROM files",
    );
    assert_bad_input(
        &limited(&format!("movie info {path}")),
        &sparse,
        "larger than 64 MiB, the limit for input stream files",
    );
}

/// A dead-letter queue salted with a record marker every 16 bytes, each claiming 4 MiB, is searched
/// for its next record in linear time (the search used to take over 45 s on 12 MiB), and a record
/// after the salt is still found.
#[test]
fn dlq_inspect_resynchronises_in_linear_time() {
    use anes_ops::framed::{FileHeader, RECORD_MARKER, encode_record};
    let scratch = Scratch::new("cli-dlq-salted");
    let mut bytes =
        FileHeader { magic: anes_ops::dlq::DLQ_MAGIC, pipeline_id: "p".into(), identity: None }.encode();
    let salt_end = bytes.len() + (12 << 20);
    while bytes.len() < salt_end {
        bytes.extend_from_slice(&RECORD_MARKER);
        bytes.extend_from_slice(&(4u32 << 20).to_le_bytes());
        bytes.extend_from_slice(&[0; 8]);
    }
    let mut record = 7u64.to_le_bytes().to_vec();
    record.extend_from_slice(&[1, 2, 0]);
    encode_record(&record, &mut bytes);
    let queue = scratch.write("queue.adlq", &bytes);
    let started = std::time::Instant::now();
    let output = anes_within(&["dlq", "inspect", "--json", queue.to_str().unwrap()]);
    let elapsed = started.elapsed();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(elapsed < std::time::Duration::from_secs(10), "{elapsed:?}");
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["records"][0]["seq"], 7, "{json}");
    assert_eq!(json["damage"].as_array().unwrap().len(), 1, "{json}");
}

/// A 320 KiB input stream that holds 2^32 - 1 frames is described, and played, in little memory.
#[test]
fn four_billion_frames_cost_the_memory_of_their_file() {
    use anes_core::movie::{FrameInput, InputStream};
    let mut stream = InputStream::new();
    for run in 0..65_537u32 {
        stream.push_repeated(FrameInput::buttons(run as u8 & 1, 0), 65_535);
    }
    let scratch = Scratch::new("cli-long-input");
    let bytes = stream.to_bytes();
    assert!(bytes.len() < 330_000);
    let input = scratch.write("long.input", &bytes);
    let input = input.to_str().unwrap();
    let rom = demo_rom();
    // 256 MiB of address space: expanding the frames would need 12 GiB.
    let limited = |args: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v 262144 && exec \"$0\" {args}"))
            .arg(env!("CARGO_BIN_EXE_anes"))
            .output()
            .expect("sh runs")
    };
    let info = limited(&format!("movie info {input}"));
    assert_eq!(info.status.code(), Some(0), "{}", stderr(&info));
    let text = stdout(&info);
    assert!(text.contains("frames         4294967295"), "{text}");
    assert!(text.contains("port 1 active  2147450880 frames"), "{text}");
    let run = limited(&format!("run {} --frames 2 --input {input}", rom.display()));
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
}

/// `movie cut` keeps 2^32 - 1 frames run-length encoded, from an input stream and from a journal
/// batch: expanded, they took 12.6 GB (the journal's case aborted, failing to allocate 12 GiB).
#[test]
fn movie_cut_cuts_four_billion_frames_in_the_memory_of_their_runs() {
    use anes_core::movie::{FrameInput, InputStream, MAX_FRAMES};
    use anes_ops::framed::{FileHeader, encode_record};
    let mut stream = InputStream::new();
    for run in 0..65_537u32 {
        stream.push_repeated(FrameInput::buttons(run as u8 & 1, (run >> 8) as u8), 65_535);
    }
    assert_eq!(stream.len(), MAX_FRAMES);
    let scratch = Scratch::new("cli-long-cut");
    let input = scratch.write("long.input", stream.to_bytes());
    let journal = scratch.path().join("journal");
    std::fs::create_dir_all(&journal).unwrap();
    let mut payload = 1000u64.to_le_bytes().to_vec();
    payload.extend_from_slice(&stream.to_bytes());
    let mut segment =
        FileHeader { magic: anes_ops::journal::JOURNAL_MAGIC, pipeline_id: "p".into(), identity: None }
            .encode();
    encode_record(&payload, &mut segment);
    scratch.write("journal/seg-00000000000000001000.ajnl", &segment);
    let out = scratch.path().join("cut.input");
    // 256 MiB of address space.
    let limited = |args: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v 262144 && exec \"$0\" {args}"))
            .arg(env!("CARGO_BIN_EXE_anes"))
            .output()
            .expect("sh runs")
    };
    let read_cut = || InputStream::from_bytes(&std::fs::read(&out).unwrap()).unwrap();
    for (source, first_seq) in [(&input, 0u64), (&journal, 1000)] {
        let source = source.to_str().unwrap();
        let cut = limited(&format!("movie cut {source} {} --last 3", out.display()));
        assert_eq!(cut.status.code(), Some(0), "{source}: {}", stderr(&cut));
        assert_eq!(read_cut(), stream.slice(MAX_FRAMES - 3..MAX_FRAMES), "{source}");
        let from = first_seq + 70_000;
        let cut = limited(&format!("movie cut {source} {} --from {from} --frames 4000000000", out.display()));
        assert_eq!(cut.status.code(), Some(0), "{source}: {}", stderr(&cut));
        assert_eq!(read_cut(), stream.slice(70_000..4_000_070_000), "{source}");
    }
}

/// An output through a symlink replaces the link's target; the link stays a link.
#[test]
fn outputs_are_written_through_symlinks() {
    let scratch = Scratch::new("cli-output-link");
    let rom = demo_rom();
    let rom = rom.to_str().unwrap();
    // A symlink to a snapshot: the snapshot is replaced, the link stays.
    let target = scratch.write("target.state", b"old");
    let link = scratch.path().join("link.state");
    std::os::unix::fs::symlink("target.state", &link).unwrap();
    let saved = anes_within(&["run", rom, "--frames", "3", "--save-state", link.to_str().unwrap()]);
    assert_eq!(saved.status.code(), Some(0), "{}", stderr(&saved));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
    assert_ne!(std::fs::read(&target).unwrap(), b"old", "its target holds the snapshot");
    let loaded = anes_within(&["run", rom, "--frames", "1", "--load-state", target.to_str().unwrap()]);
    assert_eq!(loaded.status.code(), Some(0), "{}", stderr(&loaded));
    let stream_link = scratch.path().join("link.input");
    std::os::unix::fs::symlink("target.input", &stream_link).unwrap();
    let converted =
        anes_within(&["movie", "convert", demo_input().to_str().unwrap(), stream_link.to_str().unwrap()]);
    assert_eq!(converted.status.code(), Some(0), "{}", stderr(&converted));
    assert!(std::fs::symlink_metadata(&stream_link).unwrap().file_type().is_symlink());
    assert_eq!(
        std::fs::read(scratch.path().join("target.input")).unwrap(),
        std::fs::read(demo_input()).unwrap()
    );
    let names: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(
        !names.iter().any(|n| n.to_string_lossy().ends_with(".tmp")),
        "no temporary file left: {names:?}"
    );
}

/// An output onto a FIFO nobody reads fails at once; the FIFO stays.
#[test]
fn an_output_onto_a_fifo_without_a_reader_is_refused_at_once() {
    let scratch = Scratch::new("cli-output-fifo");
    let rom = demo_rom();
    let rom = rom.to_str().unwrap();
    let fifo = scratch.path().join("fifo.png");
    if mkfifo(&fifo).is_none() {
        return;
    }
    let output = anes_within(&["run", rom, "--frames", "1", "--screenshot", fifo.to_str().unwrap()]);
    assert_bad_input(&output, &fifo, "no process is reading this FIFO");
    let output =
        anes_within(&["movie", "cut", demo_input().to_str().unwrap(), fifo.to_str().unwrap(), "--last", "5"]);
    assert_bad_input(&output, &fifo, "no process is reading this FIFO");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "still a FIFO");
}

/// Outputs onto devices are written in place: `--save-state` onto a device leaves it a device, and a
/// device that refuses the write (`/dev/full`) is exit 2. The device nodes are made in a scratch
/// folder, so a regression cannot replace the system's own; the system's `/dev/full` is written only
/// once those cases have passed.
#[test]
fn outputs_onto_devices_are_written_in_place_and_their_refusal_is_exit_2() {
    use std::os::unix::fs::FileTypeExt;
    let scratch = Scratch::new("cli-output-device");
    let rom = demo_rom();
    let rom = rom.to_str().unwrap();
    let is_char_device = |path: &Path| std::fs::symlink_metadata(path).unwrap().file_type().is_char_device();
    // Device nodes like /dev/null (1, 3) and /dev/full (1, 7), where this user may make them.
    let null = scratch.path().join("null");
    let full = scratch.path().join("full");
    let made = ["null 1 3", "full 1 7"].iter().all(|spec| {
        let mut words = spec.split(' ');
        let name = scratch.path().join(words.next().unwrap());
        Command::new("mknod").arg(&name).arg("c").args(words).status().is_ok_and(|s| s.success())
    });
    if !made {
        eprintln!("note: cannot make device nodes here: device output cases skipped");
        return;
    }
    let saved = anes_within(&["run", rom, "--frames", "1", "--save-state", null.to_str().unwrap()]);
    assert_eq!(saved.status.code(), Some(0), "{}", stderr(&saved));
    assert!(is_char_device(&null), "--save-state onto a device leaves it a device");
    let shot = anes_within(&["run", rom, "--frames", "1", "--screenshot", full.to_str().unwrap()]);
    assert_bad_input(&shot, &full, "No space left on device");
    assert!(is_char_device(&full));
    let cut =
        anes_within(&["movie", "cut", demo_input().to_str().unwrap(), full.to_str().unwrap(), "--last", "5"]);
    assert_bad_input(&cut, &full, "No space left on device");
    assert!(is_char_device(&full));
    let system_full = Path::new("/dev/full");
    if is_char_device(system_full) {
        let shot = anes_within(&["run", rom, "--frames", "1", "--screenshot", "/dev/full"]);
        assert_bad_input(&shot, system_full, "No space left on device");
        assert!(is_char_device(system_full));
    }
}

/// `canary --junit` writes its report by the same rule as every output: through a symlink, and in
/// place onto a device, whose refusal is exit 2.
#[test]
fn the_junit_report_is_written_through_links_and_onto_devices_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let scratch = Scratch::new("cli-junit");
    let corpus = scratch.write(
        "corpus.toml",
        format!("[[case]]\nrom = {:?}\nframes = 3\n", demo_rom().display().to_string()),
    );
    let canary = |junit: &Path| {
        anes_within(&[
            "canary",
            "--corpus",
            corpus.to_str().unwrap(),
            "--baseline",
            env!("CARGO_BIN_EXE_anes"),
            "--junit",
            junit.to_str().unwrap(),
        ])
    };
    let link = scratch.path().join("junit.xml");
    std::os::unix::fs::symlink("report.xml", &link).unwrap();
    let output = canary(&link);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
    let xml = std::fs::read_to_string(scratch.path().join("report.xml")).unwrap();
    assert!(xml.contains("<testsuite"), "{xml}");
    let full = scratch.path().join("full");
    if !Command::new("mknod").arg(&full).args(["c", "1", "7"]).status().is_ok_and(|s| s.success()) {
        eprintln!("note: cannot make device nodes here: the /dev/full case skipped");
        return;
    }
    assert_bad_input(&canary(&full), &full, "No space left on device");
    assert!(std::fs::symlink_metadata(&full).unwrap().file_type().is_char_device(), "still a device");
}

/// The console's region: the NES 2.0 header's (byte 12), a .fm2 movie's `palFlag 1`, or `--region`,
/// which wins; frame lengths as the nesdev wiki gives them (NTSC 341 x 262 dots / 3 CPU cycles per
/// frame without rendering, which this silent ROM never enables, so no odd-frame skip; PAL 33,247.5,
/// 341 x 312 / 3.2; Dendy 35,464, 341 x 312 / 3).
#[test]
fn the_region_comes_from_the_header_the_movie_or_the_flag() {
    let scratch = Scratch::new("cli-region");
    let mut rom = support::silent_rom();
    rom[7] = 0x08; // NES 2.0
    let run = |rom: &Path, extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["run", rom.to_str().unwrap(), "--frames", "201", "--json"];
        args.extend_from_slice(extra);
        let output = anes(&args);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        serde_json::from_slice(&output.stdout).expect("one JSON object")
    };
    // Frames 1 to 201 end at the first instruction boundary after the picture: compare 200 frames
    // through the cycle counts of two runs (the silent ROM's loop is one 3-cycle JMP).
    let cycles_per_200 = |rom: &Path, extra: &[&str]| {
        let long = run(rom, extra);
        let mut args = vec!["run", rom.to_str().unwrap(), "--frames", "1", "--json"];
        args.extend_from_slice(extra);
        let short: serde_json::Value = serde_json::from_slice(&anes(&args).stdout).expect("one JSON object");
        (
            long["region"].as_str().unwrap().to_owned(),
            long["cpu_cycle"].as_u64().unwrap() - short["cpu_cycle"].as_u64().unwrap(),
        )
    };
    let expected = |cycles_times_200: u64, got: u64| got.abs_diff(cycles_times_200) <= 3;
    rom[12] = 1; // PAL
    let pal = scratch.write("pal.nes", &rom);
    let (region, cycles) = cycles_per_200(&pal, &[]);
    assert_eq!(region, "pal");
    assert!(expected(200 * 66_495 / 2, cycles), "PAL: {cycles} cycles for 200 frames");
    let (region, cycles) = cycles_per_200(&pal, &["--region", "dendy"]);
    assert_eq!(region, "dendy");
    assert!(expected(200 * 35_464, cycles), "Dendy: {cycles} cycles for 200 frames");
    rom[12] = 3; // Dendy
    let dendy = scratch.write("dendy.nes", &rom);
    let (region, cycles) = cycles_per_200(&dendy, &["--region", "ntsc"]);
    assert_eq!(region, "ntsc");
    assert!(expected(200 * 341 * 262 / 3, cycles), "NTSC without rendering: {cycles} cycles for 200 frames");
    assert_eq!(run(&dendy, &[])["region"], "dendy");
    rom[12] = 2; // multi-region: NTSC unless told
    let multi = scratch.write("multi.nes", &rom);
    assert_eq!(run(&multi, &[])["region"], "ntsc");
    let fm2 = scratch.write("pal.fm2", "version 3\npalFlag 1\n|0|........|........||\n");
    let multi_str = multi.to_str().unwrap();
    assert_eq!(run(&multi, &["--input", fm2.to_str().unwrap()])["region"], "pal", "palFlag 1 selects PAL");
    assert_eq!(run(&multi, &["--input", fm2.to_str().unwrap(), "--region", "ntsc"])["region"], "ntsc");
    let trace = anes(&["trace", multi_str, "--region", "pal", "--instructions", "3"]);
    assert_eq!(trace.status.code(), Some(0), "{}", stderr(&trace));
    let unknown = anes(&["run", multi_str, "--region", "secam"]);
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
    let bad_flag = scratch.write("bad.fm2", "version 3\npalFlag 2\n|0|........|........||\n");
    assert_bad_input(&anes(&["movie", "info", bad_flag.to_str().unwrap()]), &bad_flag, "palFlag");
}

/// `movie fm2` writes `palFlag 1` for a PAL run, and that movie replays as PAL.
#[test]
fn movie_fm2_exports_the_region_and_replays_in_it() {
    let scratch = Scratch::new("cli-movie-fm2");
    let demo_input = concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.input");
    let rom = demo_rom();
    for (region, flag, replayed) in [("pal", "palFlag 1", "pal"), ("ntsc", "palFlag 0", "ntsc")] {
        let movie = scratch.path().join(format!("demo-{region}.fm2"));
        let output = anes(&["movie", "fm2", demo_input, movie.to_str().unwrap(), "--region", region]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let text = std::fs::read_to_string(&movie).unwrap();
        assert!(text.lines().any(|line| line == flag), "{region}: {text:.200}");
        assert!(text.contains(&format!("\nromFilename demo-{region}.nes\n")), "{text:.200}");
        let run = run_json(&[
            "run",
            rom.to_str().unwrap(),
            "--frames",
            "30",
            "--input",
            movie.to_str().unwrap(),
            "--json",
        ]);
        assert_eq!(run["region"], replayed, "{run}");
        // Exported again without --region, the movie keeps its palFlag.
        let again = scratch.path().join("again.fm2");
        let output = anes(&["movie", "fm2", movie.to_str().unwrap(), again.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(std::fs::read_to_string(&again).unwrap().lines().any(|line| line == flag), "{region}");
    }
}
