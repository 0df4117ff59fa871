//! `anes journal` given a place that holds no journal: `inspect` of a path that does not exist or of
//! an unrelated folder reported an empty journal with nothing missing (exit status 0), and
//! `accept-loss` with a mistyped --data-dir made the folder, its LOCK and a store epoch in it before
//! failing. Both now refuse with exit status 2, naming the folder, and make nothing.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::TempDir;

fn anes(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anes"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the anes binary runs")
}

/// Every path under `dir`, relative to it.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            out.push(path.strip_prefix(dir).unwrap().display().to_string());
            if path.is_dir() {
                dirs.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Exit status 2, one line `error: <path>: ...` holding every one of `wanted`.
fn assert_refused(output: &Output, path: &str, wanted: &[&str]) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(2),
        "stdout: {}\nstderr: {stderr}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with(&format!("error: {path}: ")), "{stderr}");
    for w in wanted {
        assert!(stderr.contains(w), "{w:?} not in {stderr}");
    }
    assert!(output.stdout.is_empty(), "{}", String::from_utf8_lossy(&output.stdout));
}

#[test]
fn inspect_refuses_a_place_that_holds_no_journal() {
    let dir = TempDir::create("cli-bad-input-journal-inspect");
    std::fs::write(dir.join("acc.toml"), "[[pipeline]]\nid = \"demo\"\n").unwrap();
    std::fs::create_dir_all(dir.join("photos")).unwrap();
    std::fs::write(dir.join("photos/cat.jpg"), b"not a journal").unwrap();
    std::fs::write(dir.join("afile"), b"not a folder").unwrap();
    let before = tree(&dir);

    let missing = anes(&dir, &["journal", "inspect", "/nonexistent/path/journal"]);
    assert_refused(&missing, "/nonexistent/path/journal", &["no such folder", "acknowledged", "seg-"]);
    let unrelated = anes(&dir, &["journal", "inspect", "photos", "--json"]);
    assert_refused(&unrelated, "photos", &["not a journal", "acknowledged", "seg-"]);
    let file = anes(&dir, &["journal", "inspect", "afile"]);
    assert_refused(&file, "afile", &["not a folder", "acknowledged"]);
    let args = ["journal", "inspect", "--config", "acc.toml", "--pipeline", "demo", "--data-dir", "nowhere"];
    let through_config = anes(&dir, &args);
    assert_refused(&through_config, "nowhere/demo/journal", &["no such folder", "acknowledged"]);
    assert_eq!(tree(&dir), before, "inspect made or changed a file");

    // A folder holding only the mark's name is a journal (its damage is for inspect to report).
    std::fs::create_dir_all(dir.join("j")).unwrap();
    std::fs::write(dir.join("j/acknowledged"), b"").unwrap();
    let output = anes(&dir, &["journal", "inspect", "j"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("not a journal"), "{stderr}");
}

#[test]
fn accept_loss_refuses_a_missing_data_directory_and_makes_nothing() {
    let dir = TempDir::create("cli-bad-input-journal-accept");
    std::fs::write(dir.join("acc.toml"), "[[pipeline]]\nid = \"demo\"\n").unwrap();
    let before = tree(&dir);
    let args =
        ["journal", "accept-loss", "--config", "acc.toml", "--pipeline", "demo", "--data-dir", "missingdd"];
    let output = anes(&dir, &args);
    assert_refused(&output, "missingdd/demo", &["no such folder", "--data-dir"]);
    assert!(!dir.join("missingdd").exists(), "made {:?}", tree(&dir));
    assert_eq!(tree(&dir), before);

    // A shared store keeps the journal itself: the data directory is not required there, and the
    // command goes on to the store (here a closed port, tried once).
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    std::fs::write(
        dir.join("shared.toml"),
        format!(
            "[[pipeline]]\nid = \"demo\"\n[pipeline.store]\nbackend = \"redis\"\nurl = \"redis://127.0.0.1:{port}/0\"\nretry_attempts = 1\n"
        ),
    )
    .unwrap();
    let args = [
        "journal",
        "accept-loss",
        "--config",
        "shared.toml",
        "--pipeline",
        "demo",
        "--data-dir",
        "shared-dd",
    ];
    let output = anes(&dir, &args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("no such folder"), "{stderr}");
    assert!(stderr.contains("store") || stderr.contains("redis"), "{stderr}");
}
