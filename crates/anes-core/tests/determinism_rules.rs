//! The core's determinism rules, checked on its own text in `cargo test` (clippy.toml bans the same
//! types and calls for `cargo clippy`; this also catches a dependency clippy cannot see): no I/O, no
//! threads or processes, no environment, no clock, no hash-randomised containers, no globals that
//! change. Floating point cannot reach a state section (`state_struct!` takes only integer fields,
//! a compile error otherwise), so it is not searched for here.

use std::path::Path;

/// The core's whole dependency list: hashing, plain-data casts and error types. Anything else (a
/// random-number crate, a runtime, a logger) is a decision to make here, in review.
const DEPENDENCIES: [&str; 3] = ["bytemuck", "blake3", "thiserror"];

/// Paths and items whose use in the core's code (comments aside) would let something other than the
/// ROM, the inputs and the power-on choices decide what the machine does.
const FORBIDDEN: [&str; 15] = [
    "std::fs",
    "std::io",
    "std::net",
    "std::thread",
    "std::process",
    "std::env",
    "Instant",
    "SystemTime",
    "HashMap",
    "HashSet",
    "RandomState",
    "DefaultHasher",
    "thread_local!",
    "static mut",
    "Mutex",
];

/// The `[dependencies]` names of a Cargo.toml (not dev-dependencies: tests may read files).
fn dependencies(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut inside = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if inside && !line.is_empty() && !line.starts_with('#') {
            names.push(line.split(['=', '.', ' ']).next().unwrap_or_default().trim_matches('"').to_string());
        }
    }
    names
}

/// Forbidden items on the lines of `source` that are code, with their line numbers.
fn forbidden_uses(source: &str) -> Vec<(usize, &'static str)> {
    let mut found = Vec::new();
    for (number, line) in source.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        // `std::{fs, io}` groups are spelled out so a plain search sees their members.
        let flat: String = code.split_whitespace().collect();
        let mut spelled = flat.clone();
        for group in flat.split("std::{").skip(1) {
            for member in group.split('}').next().unwrap_or_default().split(',') {
                spelled.push_str(&format!(" std::{member}"));
            }
        }
        for item in FORBIDDEN {
            if spelled.contains(&item.replace(' ', "")) || code.contains(item) {
                found.push((number + 1, item));
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the core's source folder is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_core_depends_on_nothing_but_its_three_crates() {
    let manifest = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    assert_eq!(dependencies(&manifest), DEPENDENCIES);
}

#[test]
fn the_core_reads_no_file_clock_environment_or_randomised_hash() {
    let mut files = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    assert!(files.len() > 50, "the core's source found ({} files)", files.len());
    let mut found = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).unwrap();
        for (line, item) in forbidden_uses(&source) {
            found.push(format!("{}:{line}: {item}", file.display()));
        }
    }
    assert!(found.is_empty(), "the core must stay deterministic:\n{}", found.join("\n"));
}

/// The search itself finds what it must: the forms a use can take, and not a comment.
#[test]
fn the_search_finds_each_form() {
    let uses = |source: &str| forbidden_uses(source).into_iter().map(|(_, item)| item).collect::<Vec<_>>();
    assert_eq!(uses("use std::collections::HashMap;"), ["HashMap"]);
    assert_eq!(uses("use std::{fs, io::Read};"), ["std::fs", "std::io"]);
    assert_eq!(uses("let now = std::time::Instant::now();"), ["Instant"]);
    assert_eq!(uses("static mut COUNT: u32 = 0;"), ["static mut"]);
    assert_eq!(uses("let v = std::env::var(\"X\");"), ["std::env"]);
    assert!(uses("/// reads std::fs in an example").is_empty());
    assert!(uses("let x = 1; // not a HashMap").is_empty());
    assert!(uses("for (length, envelope) in pairs {").is_empty());
    assert_eq!(
        dependencies(
            "[package]\nname = \"x\"\n[dependencies]\nrand = \"1\"\nblake3.workspace = true\n[dev-dependencies]\nproptest = \"1\"\n"
        ),
        ["rand", "blake3"]
    );
}
