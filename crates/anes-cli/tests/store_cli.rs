//! `anes movie cut` on a journal as the service's code writes it, and `anes dlq inspect` on a queue
//! file of an earlier version.

use std::path::PathBuf;
use std::process::Command;

use anes_core::movie::{FrameInput, InputStream};
use anes_ops::framed::{self, FileHeader, FsyncPolicy};
use anes_ops::journal::{FileJournal, Journal, JournalSettings};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("anes-store-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn input(seq: u64) -> FrameInput {
    FrameInput::buttons((seq % 200) as u8, 0)
}

#[test]
fn movie_cut_takes_a_window_of_a_journal_that_anes_run_accepts() {
    let dir = temp("cut");
    let journal_dir = dir.join("journal");
    let settings = JournalSettings { segment_bytes: 4096, segments_kept: 100, fsync: FsyncPolicy::Never };
    let (mut journal, _) = FileJournal::open(&journal_dir, "p", settings).unwrap();
    for seq in 0..3000 {
        journal.append(seq, input(seq));
        if seq % 25 == 24 {
            journal.commit().unwrap();
        }
    }
    drop(journal);
    assert!(std::fs::read_dir(&journal_dir).unwrap().count() > 1, "several segments");
    let out = dir.join("window.input");
    let status = Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(["movie", "cut"])
        .arg(&journal_dir)
        .arg(&out)
        .args(["--from", "1234", "--frames", "500"])
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let stream = InputStream::from_bytes(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(stream.len(), 500);
    assert_eq!(
        (0..500).map(|i| stream.frame(i)).collect::<Vec<_>>(),
        (1234..1734).map(input).collect::<Vec<_>>()
    );
    let last = dir.join("last.input");
    let status = Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(["movie", "cut"])
        .arg(&journal_dir)
        .arg(&last)
        .args(["--last", "100"])
        .status()
        .unwrap();
    assert!(status.success());
    let stream = InputStream::from_bytes(&std::fs::read(&last).unwrap()).unwrap();
    assert_eq!(stream.frame(99), input(2999));
    // The window runs.
    let rom = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../roms/demo/demo.nes");
    let run = Command::new(env!("CARGO_BIN_EXE_anes"))
        .arg("run")
        .arg(&rom)
        .arg("--input")
        .arg(&out)
        .args(["--frames", "500"])
        .output()
        .unwrap();
    assert!(run.status.success(), "anes run --input: {}", String::from_utf8_lossy(&run.stderr));
    let bad = Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(["movie", "cut"])
        .arg(&journal_dir)
        .arg(&last)
        .args(["--from", "2990", "--frames", "100"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("holds 0..3000"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    // Issue 44: with the newest segment gone, the last 100 acknowledged records are missing: refused,
    // never answered with an older window.
    let newest = std::fs::read_dir(&journal_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ajnl"))
        .max()
        .unwrap();
    std::fs::remove_file(&newest).unwrap();
    let gone = Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(["movie", "cut"])
        .arg(&journal_dir)
        .arg(dir.join("gone.input"))
        .args(["--last", "100"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&gone.stderr);
    assert_eq!(gone.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("..3000 (") && stderr.contains("deleted"), "{stderr}");
    assert!(!dir.join("gone.input").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn dlq_inspect_shows_records_and_a_torn_tail() {
    let dir = temp("inspect");
    let path = dir.join("queue.adlq");
    // A queue file as earlier versions wrote it: sequence number, both ports, the command.
    let mut bytes =
        FileHeader { magic: anes_ops::dlq::DLQ_MAGIC, pipeline_id: "p".into(), identity: None }.encode();
    for seq in 40..45u64 {
        let mut payload = seq.to_le_bytes().to_vec();
        payload.extend_from_slice(&[input(seq).pads[0], 0, 0]);
        framed::encode_record(&payload, &mut bytes);
    }
    bytes.extend_from_slice(b"REC1\x0b\x00");
    std::fs::write(&path, &bytes).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(["dlq", "inspect", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["records"].as_array().unwrap().len(), 5);
    assert_eq!(v["records"][0]["seq"], 40);
    assert_eq!(v["torn_tail_bytes"], 6);
    assert_eq!(v["pipeline_id"], "p");
    let text = Command::new(env!("CARGO_BIN_EXE_anes")).args(["dlq", "inspect"]).arg(&path).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("records     5") && text.contains("sequence    40 to 44"), "{text}");
    let junk = dir.join("junk");
    std::fs::write(&junk, b"not a queue at all").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_anes")).args(["dlq", "inspect"]).arg(&junk).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}
