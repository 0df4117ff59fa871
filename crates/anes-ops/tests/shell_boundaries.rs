//! What `lib.rs` and `docs/ARCHITECTURE.md` claim of the crate's shells, checked on the sources: threads
//! are spawned only in the modules listed there, and only the service shell, the HTTP host and the
//! canary's metrics export name tokio, axum or hyper; and every file the service, the lockstep runner
//! and the command line write as an output (a final checkpoint, evidence, bundles, canary outputs)
//! goes through `anes_fs::write_output`. Tests are left out (a test may spawn or write anything).

use std::path::{Path, PathBuf};

/// Where a thread or a task may be started, each for the reason the docs give.
const SPAWNING: &[&str] = &[
    "service/bootstrap.rs", // a driver thread per pipeline
    "service/driver.rs",    // an evidence writer per investigation
    "service/run.rs",       // the HTTP runtime, its server task, the drain's blocking call
    "http/serve.rs",        // a task per connection
    "http/mod.rs",          // a blocking read per evidence file
    "store/writer.rs",      // the checkpoint writer per pipeline
    "pipeline/durable.rs",  // the journal's thread per pipeline
    "store/s3/mod.rs", // the S3 client's current-thread runtime, run by the writer's (or journal's) thread
    "store/postgres.rs", // the PostgreSQL client's runtime (one worker: its connection's task)
    "canary/export.rs", // the metrics endpoint's runtime
];

const SPAWNS: &[&str] = &[
    "thread::Builder",
    "thread::spawn",
    "thread::scope",
    "tokio::spawn",
    "spawn_blocking",
    ".spawn(async",
    "runtime::Builder",
];

/// Whether `file` (relative to `src/`, `/`-separated) may name the async stack.
fn may_name_async(file: &str) -> bool {
    file.starts_with("service/")
        || file.starts_with("http/")
        || file == "canary/export.rs"
        // object_store and tokio-postgres are async: each store blocks on a runtime of its own
        || file.starts_with("store/s3/")
        || file == "store/postgres.rs"
}

const ASYNC: &[&str] = &["tokio::", "axum::", "hyper::", "hyper_util::", "tower::"];

#[test]
fn threads_and_the_async_stack_stay_where_the_docs_say() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for (file, code) in sources(&src) {
        found.extend(violations(&file, &code));
    }
    assert!(
        found.is_empty(),
        "update the code or lib.rs, docs/ARCHITECTURE.md and this list:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_sees_what_it_must() {
    let code = without_tests_and_comments(
        "use tokio::sync::oneshot; // thread::spawn\nfn f() { std::thread::spawn(|| ()); }\n#[cfg(test)]\nmod tests { fn g() { std::thread::spawn(|| ()); } }\n",
    );
    assert_eq!(violations("journal.rs", &code).len(), 2, "{code}");
    assert_eq!(violations("service/driver.rs", &code), Vec::<String>::new());
    assert_eq!(violations("http/page.rs", &code).len(), 1);
}

/// Writes that bypass `anes_fs::write_output` (not atomic, and they would clobber a FIFO or a device).
const RAW_WRITES: &[&str] = &["fs::write(", "File::create("];

/// Files that write durable state of their own with a temporary file, an fsync and a rename (not an
/// output), each for the reason given.
const OWN_DURABLE_WRITES: &[&str] = &[
    "anes-ops/journal/mark.rs", // the journal's mark: created whole under a temporary name, renamed
    "anes-ops/store/fs.rs",     // checkpoints and EPOCH: a temporary file, fsynced, renamed under the lock
];

fn raw_writes(file: &str, code: &str) -> Vec<String> {
    if OWN_DURABLE_WRITES.contains(&file) {
        return Vec::new();
    }
    RAW_WRITES
        .iter()
        .filter(|p| code.contains(*p))
        .map(|p| format!("{file}: writes a file with {p}"))
        .collect()
}

/// Issue 44: the final checkpoint at shutdown, the evidence, the bundles and the canary's outputs were
/// written with `std::fs::write`, against the rule that outputs go through `anes_fs::write_output`.
#[test]
fn outputs_go_through_write_output() {
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for krate in ["anes-ops", "anes-lockstep", "anes-cli"] {
        for (file, code) in sources(&crates.join(krate).join("src")) {
            found.extend(raw_writes(&format!("{krate}/{file}"), &code));
        }
    }
    assert!(found.is_empty(), "use anes_fs::write_output:\n{}", found.join("\n"));
    let code = without_tests_and_comments("fn f() { std::fs::write(p, b); } // File::create(\n");
    assert_eq!(raw_writes("anes-ops/service/driver.rs", &code).len(), 1, "the check sees a raw write");
    assert!(raw_writes("anes-ops/journal/mark.rs", &code).is_empty());
}

fn violations(file: &str, code: &str) -> Vec<String> {
    let mut out = Vec::new();
    if !SPAWNING.contains(&file) {
        for pattern in SPAWNS.iter().filter(|p| code.contains(*p)) {
            out.push(format!("{file}: starts a thread or task ({pattern})"));
        }
    }
    if !may_name_async(file) {
        for pattern in ASYNC.iter().filter(|p| code.contains(*p)) {
            out.push(format!("{file}: names the async stack ({pattern})"));
        }
    }
    out
}

/// Every non-test source file below `src`, as (path relative to `src`, code without tests and comments).
fn sources(src: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("source folder lists") {
            let path = entry.expect("source entry").path();
            let relative = path.strip_prefix(src).unwrap().to_string_lossy().replace('\\', "/");
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "tests") {
                    dirs.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") && !relative.ends_with("tests.rs") {
                let text = std::fs::read_to_string(&path).expect("source reads");
                out.push((relative, without_tests_and_comments(&text)));
            }
        }
    }
    out
}

/// `text` up to its first `#[cfg(test)]` (the crate keeps its tests at the end of a file or in
/// `tests.rs` files), with `//` comments removed.
fn without_tests_and_comments(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    code.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}
