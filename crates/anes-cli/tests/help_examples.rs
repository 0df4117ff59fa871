//! Every command's `--help` ends with examples that run as written from the repository's root. This
//! test finds the commands in `anes --help` (and their subcommands), reads each help's closing
//! `Examples:` section and runs every example with the built binary, a command's in the order
//! written, from a scratch copy of the root: its folders are new folders and its files links to the
//! repository's, so what an example writes lands in the scratch folder (removed on every exit path),
//! never in the checkout; `../shared` beside it links to the repository's neighbour. Commands run two
//! at a time, each in a copy of its own, but those whose examples use the service's data folder,
//! which run one after another in the service's copy.
//!
//! An example passes when its exit status is 0 or 1 (1 is a finding: a divergence, a program that
//! depends on its power-on state) and it prints no `error:` line. [`SERVE_EXAMPLE`] runs first, as a
//! server: until pipeline p1 has journaled 300 records, then stopped by SIGTERM, after which it must
//! exit 0; the journal's examples (and `movie cut`'s) read what it wrote.
//!
//! Examples that need a server of their own or another build are only parsed, by `main.rs`'s unit
//! test `every_help_ends_with_examples_that_parse`: those in [`PARSE_ONLY`], each with its reason.
//! Examples naming `../shared/conformance`, or a file a Debian package installs (`/usr/...`: the
//! libretro cores), are skipped with a printed line when it is absent, except under CI.

mod support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use support::{Guard, TempDir};

/// Examples that are parsed but not run, by the start of their text, and why.
const PARSE_ONLY: &[(&str, &str)] = &[
    (
        "anes serve --config deploy/anes.toml --token-file /etc/",
        "a token in /etc; SERVE_EXAMPLE runs the service",
    ),
    ("anes serve", "on port 9650, which another service may hold here; SERVE_EXAMPLE runs the service"),
    ("anes worker --listen", "a server: it waits for coordinators on a port"),
    (
        "anes canary roms/demo/demo.nes --input traffic.input --baseline /opt/",
        "needs a second, installed build",
    ),
    ("anes canary --baseline-log tests/golden/demo.records --pushgateway", "needs a Pushgateway"),
    ("anes dlq inspect anes-data/", "a queue file that only earlier versions of anes serve wrote"),
    (
        "anes lockstep ../shared/conformance/roms/apu_test/rom_singles/1-len_ctr.nes --frames 600 --versus",
        "needs Debian's Nestopia (scripts/install-libretro-cores.sh); tests/libretro.rs runs anes against it",
    ),
];

/// `anes serve --help`'s example that this test runs as a server, before the others.
const SERVE_EXAMPLE: &str = "anes serve --config deploy/anes.toml --data-dir anes-data --listen 127.0.0.1:0";

/// The longest an example may run (the slowest, a shrink or the conformance baseline in a debug
/// build, takes well under a minute).
const EXAMPLE_TIMEOUT: Duration = Duration::from_secs(600);

fn anes() -> Command {
    Command::new(env!("CARGO_BIN_EXE_anes"))
}

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `anes PATH... --help`.
fn help(path: &[String]) -> String {
    let output = anes().args(path).arg("--help").output().unwrap();
    assert!(
        output.status.success(),
        "anes {} --help: {}",
        path.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The subcommands a help lists under `Commands:`, `help` left out.
fn subcommands(help: &str) -> Vec<String> {
    let Some((_, listed)) = help.split_once("\nCommands:\n") else { return Vec::new() };
    listed
        .lines()
        .take_while(|line| line.starts_with("  "))
        .filter(|line| !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Every command's path below `anes` (`["movie", "cut"]`), with its help text, depth first.
fn commands(path: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    let text = help(path);
    let listed = subcommands(&text);
    out.push((path.clone(), text));
    for sub in listed {
        path.push(sub);
        commands(path, out);
        path.pop();
    }
}

/// The example lines of a help's closing `Examples:` section (comments left out).
fn examples(help: &str) -> Vec<String> {
    let Some((_, section)) = help.rsplit_once("\nExamples:\n") else { return Vec::new() };
    section.lines().map(str::trim).filter(|line| line.starts_with("anes ")).map(str::to_string).collect()
}

/// Mirrors the repository's root into `to`: folders as new folders, files as links; build output and
/// what the tools write by default left out.
fn mirror(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if [".git", "target", "anes-data", "anes-evidence"].iter().any(|skip| name == *skip) {
            continue;
        }
        let (source, target) = (entry.path(), to.join(&name));
        if entry.file_type().unwrap().is_dir() {
            mirror(&source, &target);
        } else {
            std::os::unix::fs::symlink(&source, &target).unwrap();
        }
    }
}

/// Waits for the child to exit, failing the test (the guard then kills it) after `timeout`.
fn wait_for_exit(child: &mut Guard, timeout: Duration, what: &str) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            return status;
        }
        assert!(started.elapsed() < timeout, "{what} still runs after {timeout:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `anes ARGS` in `dir` with no input, killed after `timeout`. Its output is read while it runs
/// (a trace prints megabytes: more than a pipe holds).
fn run_in(dir: &Path, args: &[&str], timeout: Duration) -> Output {
    let mut child = anes()
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let read_all = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).unwrap();
            bytes
        })
    };
    let stdout = read_all(Box::new(child.stdout.take().unwrap()));
    let stderr = read_all(Box::new(child.stderr.take().unwrap()));
    let mut guard = Guard(child);
    let status = wait_for_exit(&mut guard, timeout, &format!("`anes {}`", args.join(" ")));
    Output { status, stdout: stdout.join().unwrap(), stderr: stderr.join().unwrap() }
}

/// Runs [`SERVE_EXAMPLE`] in `dir` until pipeline p1 has journaled 300 records, then stops it with
/// SIGTERM, as an operator would: it must exit 0.
fn run_serve_example(dir: &Path) {
    let child = anes()
        .args(SERVE_EXAMPLE.split_whitespace().skip(1))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut serve = Guard(child);
    let started = Instant::now();
    loop {
        let inspect = ["journal", "inspect", "anes-data/p1/journal", "--json"];
        let output = run_in(dir, &inspect, Duration::from_secs(30));
        let records = serde_json::from_slice::<serde_json::Value>(&output.stdout)
            .ok()
            .and_then(|json| json["acknowledged_end"].as_u64());
        if records.is_some_and(|records| records >= 300) {
            break;
        }
        assert!(serve.0.try_wait().unwrap().is_none(), "anes serve ended early");
        assert!(started.elapsed() < Duration::from_secs(120), "p1 journaled {records:?} records in 120 s");
        std::thread::sleep(Duration::from_millis(500));
    }
    let term = Command::new("kill").args(["-TERM", &serve.0.id().to_string()]).status().unwrap();
    assert!(term.success());
    let status = wait_for_exit(&mut serve, Duration::from_secs(60), "anes serve after SIGTERM");
    assert!(status.success(), "anes serve after SIGTERM: {status}");
}

#[test]
fn every_commands_help_ends_with_examples_that_run_from_the_repository_root() {
    let top = help(&[]);
    assert!(top.lines().next().is_some_and(|line| line.contains("lockstep")), "the tagline: {top}");

    let mut all = Vec::new();
    commands(&mut Vec::new(), &mut all);
    let named: Vec<String> = all.iter().map(|(path, _)| path.join(" ")).collect();
    for expected in
        ["lockstep", "shrink", "conformance", "sweep", "run", "trace", "movie cut", "serve", "canary"]
    {
        assert!(named.iter().any(|name| name == expected), "`anes {expected}` not found among {named:?}");
    }

    let scratch =
        TempDir(Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("help-examples-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&scratch.0);
    let root = repository_root();
    let shared = root.join("../shared");
    let shared_present = shared.join("conformance/manifest.toml").is_file();
    assert!(
        shared_present || !anes_fs::ci_is_set(),
        "{} is missing and CI is set: the conformance examples cannot run",
        shared.display()
    );
    let shared_target = shared_present.then(|| shared.canonicalize().unwrap());
    let dir = copy_root(&root, shared_target.as_deref(), &scratch.0);
    let serve_help = all.iter().find(|(path, _)| path == &["serve"]).map(|(_, text)| text).unwrap();
    assert!(examples(serve_help).iter().any(|example| example == SERVE_EXAMPLE), "{serve_help}");
    let started = Instant::now();
    run_serve_example(&dir);
    eprintln!(
        "anes serve: `{SERVE_EXAMPLE}`: ran until p1 journaled 300 records, in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // The commands whose examples read or change what the service wrote run in its folder, in
    // order; every other command's examples, in order too, in a mirror of their own, two commands
    // at a time (the examples' outputs never meet).
    let (with_service, on_their_own): (Vec<_>, Vec<_>) =
        all.iter().partition(|(_, text)| examples(text).iter().any(|example| example.contains("anes-data")));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 2);
    let results: Vec<Vec<(Vec<usize>, usize)>> = std::thread::scope(|scope| {
        let service_lane = scope.spawn(|| {
            with_service.iter().map(|(path, text)| run_examples(path, text, &dir, &shared)).collect()
        });
        let lanes: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((path, text)) = on_their_own.get(index) else { break done };
                        let own = scratch.0.join(format!("command-{index}"));
                        let own = copy_root(&root, shared_target.as_deref(), &own);
                        done.push(run_examples(path, text, &own, &shared));
                    }
                })
            })
            .collect();
        std::iter::once(service_lane).chain(lanes).map(|lane| lane.join().unwrap()).collect()
    });
    let mut parse_only_used = vec![false; PARSE_ONLY.len()];
    let mut ran = 0;
    for (used, count) in results.into_iter().flatten() {
        for i in used {
            parse_only_used[i] = true;
        }
        ran += count;
    }
    for ((start, _), used) in PARSE_ONLY.iter().zip(parse_only_used) {
        assert!(used, "PARSE_ONLY's `{start}` matches no example any more");
    }
    eprintln!("{ran} examples of {} commands ran", all.len());
}

/// A scratch copy of the repository's root in `at/repo` (see [`mirror`]), with `at/shared` linked to
/// `shared` when it is there, so that the examples' `../shared` resolves. Returns `at/repo`.
fn copy_root(root: &Path, shared: Option<&Path>, at: &Path) -> PathBuf {
    let repo = at.join("repo");
    mirror(root, &repo);
    if let Some(shared) = shared {
        std::os::unix::fs::symlink(shared, at.join("shared")).unwrap();
    }
    repo
}

/// Runs the examples of the command at `path` (help `text`) in `dir`, in the order written; those
/// naming `../shared` are skipped when `shared` (the repository's neighbour) is absent. Returns
/// the indices of the [`PARSE_ONLY`] entries they used and how many ran.
fn run_examples(path: &[String], text: &str, dir: &Path, shared: &Path) -> (Vec<usize>, usize) {
    let name = if path.is_empty() { "anes".to_string() } else { format!("anes {}", path.join(" ")) };
    let examples = examples(text);
    let (mut parse_only_used, mut ran, mut runnable) = (Vec::new(), 0, 0);
    for example in &examples {
        if example == SERVE_EXAMPLE {
            runnable += 1;
            continue;
        }
        if let Some(i) = PARSE_ONLY.iter().position(|(start, _)| example.starts_with(start)) {
            parse_only_used.push(i);
            eprintln!("{name}: `{example}` parsed only: {}", PARSE_ONLY[i].1);
            continue;
        }
        runnable += 1;
        // A Debian package's file (a libretro core): installed by scripts/install-libretro-cores.sh,
        // which .ci/run runs; elsewhere the example is skipped when it is missing.
        if let Some(missing) =
            example.split_whitespace().find(|word| word.starts_with("/usr/") && !Path::new(word).exists())
        {
            assert!(!anes_fs::ci_is_set(), "{name}: `{example}` needs {missing} and CI is set");
            eprintln!("{name}: `{example}` skipped: {missing} is not installed");
            continue;
        }
        if example.contains("../shared/") && !dir.join("../shared").exists() {
            eprintln!("{name}: `{example}` skipped: {} is missing", shared.display());
            continue;
        }
        let words: Vec<&str> = example.split_whitespace().skip(1).collect();
        let started = Instant::now();
        let output = run_in(dir, &words, EXAMPLE_TIMEOUT);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let code = output.status.code();
        eprintln!("{name}: `{example}`: exit status {code:?} in {:.1} s", started.elapsed().as_secs_f64());
        assert!(
            matches!(code, Some(0 | 1)) && !stderr.lines().any(|line| line.starts_with("error:")),
            "{name}: `{example}` ended with {:?}:\n{stderr}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout)
        );
        ran += 1;
    }
    assert!(runnable > 0, "`{name} --help` has no example that runs: {examples:?}\n{text}");
    (parse_only_used, ran)
}
