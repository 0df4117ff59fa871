//! The crate's rule, checked on its own text: no I/O or logging dependency in Cargo.toml and no I/O,
//! logging or clock in its source (clippy.toml bans the same calls for `cargo clippy`; this catches
//! them in `cargo test`, and catches a dependency clippy cannot see). What the pipeline has to say
//! it reports as `Notice` values; the service writes them (`anes_ops::pipeline::log`).

use std::path::Path;

/// Crates that do I/O, bring a runtime or write logs: the service links them, the pipeline may not.
const FORBIDDEN_DEPENDENCIES: [&str; 18] = [
    "tokio",
    "axum",
    "hyper",
    "prometheus",
    "prometheus-client",
    "redis",
    "ureq",
    "crossbeam-channel",
    "anes-ops",
    "tracing",
    "tracing-core",
    "tracing-subscriber",
    "log",
    "env_logger",
    "slog",
    "fern",
    "log4rs",
    "flexi_logger",
];

/// Paths whose use in the source means I/O, threads, processes, reading the clock or writing a log
/// (`std::io`: the codec that reads streams is the `anes-workers` crate's; `tracing` even through a
/// dependency's re-export; the print macros write to the process's standard streams).
const FORBIDDEN_SOURCE: [&str; 13] = [
    "std::fs",
    "std::io",
    "std::net",
    "std::thread",
    "std::process",
    "Instant::now",
    "SystemTime::now",
    "tracing::",
    "println!",
    "eprintln!",
    "print!",
    "eprint!",
    "dbg!",
];

fn dependency_names(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_dependencies = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line.contains("dependencies");
            continue;
        }
        if in_dependencies && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['=', '.', ' ']).next().unwrap_or_default();
            names.push(name.trim_matches('"').to_string());
        }
    }
    names
}

fn forbidden_uses(source: &str) -> Vec<&'static str> {
    // `std::{fs, ...}` groups would hide a path from a plain search: they are spelled out here.
    let flat: String = source.split_whitespace().collect();
    let mut found: Vec<&'static str> =
        FORBIDDEN_SOURCE.iter().copied().filter(|name| flat.contains(&name.replace(' ', ""))).collect();
    for module in ["fs", "io", "net", "thread", "process"] {
        let grouped = flat.split("std::{").skip(1).any(|group| {
            group
                .split('}')
                .next()
                .unwrap_or_default()
                .split(',')
                .any(|item| item == module || item.starts_with(&format!("{module}::")))
        });
        if grouped {
            found.push(match module {
                "fs" => "std::fs",
                "io" => "std::io",
                "net" => "std::net",
                "thread" => "std::thread",
                _ => "std::process",
            });
        }
    }
    found
}

#[test]
fn the_manifest_names_no_io_dependency() {
    let manifest = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let names = dependency_names(&manifest);
    assert!(names.contains(&"anes-core".to_string()), "the parser found the dependencies: {names:?}");
    let bad: Vec<&String> = names.iter().filter(|n| FORBIDDEN_DEPENDENCIES.contains(&n.as_str())).collect();
    assert!(bad.is_empty(), "anes-pipeline may not depend on {bad:?}");
}

/// The crates `anes-pipeline` reaches through `Cargo.lock` (its dependencies, their dependencies, and
/// so on; the lock file lists dev-dependencies too, so the simulator's are included).
fn reached_from(lock: &str, root: &str) -> Vec<String> {
    let mut packages: Vec<(String, Vec<String>)> = Vec::new();
    for block in lock.split("[[package]]").skip(1) {
        let name =
            block.lines().find_map(|l| l.strip_prefix("name = ")).unwrap_or_default().trim_matches('"');
        let deps = block
            .split_once("dependencies = [")
            .map(|(_, rest)| rest.split(']').next().unwrap_or_default())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                l.trim().trim_end_matches(',').trim_matches('"').split(' ').next().map(str::to_string)
            })
            .filter(|d| !d.is_empty())
            .collect();
        packages.push((name.to_string(), deps));
    }
    let mut reached = vec![root.to_string()];
    let mut next = 0;
    while next < reached.len() {
        let name = reached[next].clone();
        next += 1;
        for (_, deps) in packages.iter().filter(|(n, _)| *n == name) {
            for d in deps {
                if !reached.contains(d) {
                    reached.push(d.clone());
                }
            }
        }
    }
    reached
}

/// Not only a direct dependency: nothing the crate links (nor its simulator) brings a runtime, a
/// channel, a store client or the lockstep runner.
#[test]
fn nothing_reached_through_the_lock_file_does_io() {
    let lock =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock")).unwrap();
    let reached = reached_from(&lock, "anes-pipeline");
    assert!(
        reached.iter().any(|r| r == "anes-machine") && reached.iter().any(|r| r == "proptest"),
        "{reached:?}"
    );
    let forbidden = ["anes-lockstep", "anes-workers", "redis", "postgres", "object_store", "rustls"];
    let found: Vec<_> = reached
        .iter()
        .filter(|r| FORBIDDEN_DEPENDENCIES.contains(&r.as_str()) || forbidden.contains(&r.as_str()))
        .collect();
    assert!(found.is_empty(), "anes-pipeline reaches {found:?}");
}

#[test]
fn the_source_does_no_io_and_reads_no_clock() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let source = std::fs::read_to_string(&path).unwrap();
            let bad = forbidden_uses(&source);
            assert!(bad.is_empty(), "{} uses {bad:?}", path.display());
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} files found in {}", dir.display());
}

#[test]
fn the_checks_see_what_they_forbid() {
    assert_eq!(forbidden_uses("let t = std::time::Instant::now();"), ["Instant::now"]);
    assert_eq!(forbidden_uses("use std::{collections::VecDeque, fs::File};"), ["std::fs"]);
    assert_eq!(forbidden_uses("use std :: thread;"), ["std::thread"]);
    assert_eq!(forbidden_uses("use std::{io::Read, time::Duration};"), ["std::io"]);
    assert_eq!(forbidden_uses("fn f(r: &mut impl std::io::Read) {}"), ["std::io"]);
    assert!(forbidden_uses("use std::time::Duration;").is_empty());
    assert_eq!(forbidden_uses("tracing::warn!(pipeline = %id, \"drill\");"), ["tracing::"]);
    assert_eq!(forbidden_uses("use anes_lockstep::tracing :: info;"), ["tracing::"]);
    assert_eq!(forbidden_uses("println!(\"{seq}\");"), ["println!"]);
    assert!(forbidden_uses("self.notice(Notice::Drill { worker, drill });").is_empty());
    let manifest =
        "[dependencies]\ntokio.workspace = true\ntracing = \"0.1\"\n\n[dev-dependencies]\nureq = \"3\"\n";
    let names = dependency_names(manifest);
    assert_eq!(names, ["tokio", "tracing", "ureq"]);
    assert!(names.iter().all(|n| FORBIDDEN_DEPENDENCIES.contains(&n.as_str())));
}
