//! Issue 44: the service's own files damaged while it is stopped are never taken for a crash. A
//! pipeline journals 510 acknowledged records (no checkpoint after power-on, so recovery needs every
//! one), `anes serve` is killed, a file is damaged, and the next start must refuse, naming the
//! missing range and the file (exit status 2, one line), leaving every file as it was; or, where
//! nothing acknowledged is lost, start with everything. `anes journal accept-loss` then lets an
//! operator continue from the first missing record.

#[path = "../../anes-ops/tests/support/redis_server.rs"]
mod redis_server;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::TempDir;
use support::coordinator::{Coordinator, Ledger, PIPELINE, pipeline_toml};

const RECORDS: u64 = 510;
/// Records per push: small batches, so the journal spans several 4 KiB segments.
const BATCH: u64 = 2;

/// The pipeline with the filesystem store, small segments and no checkpoint persisted after power-on.
fn pipelines() -> String {
    pipeline_toml("", 10, 1_000_000, "[pipeline.journal]\nsegment_bytes = 4096\n")
}

/// A data directory holding 510 acknowledged records, left by a kill -9.
fn journaled(name: &str) -> (TempDir, PathBuf) {
    let dir = std::env::temp_dir().join(format!("anes-damage-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("data");
    let mut serve = Coordinator::start(&dir, "first", &pipelines(), &data);
    let mut ledger = Ledger::default();
    let mut next = 0;
    while next < RECORDS {
        let n = BATCH.min(RECORDS - next);
        assert!(ledger.push(&serve.endpoint(), &mut next, n), "{ledger:?}");
    }
    assert_eq!(ledger.acked, RECORDS);
    serve.wait_settled(Duration::from_secs(60));
    serve.kill_9();
    (TempDir(dir), data)
}

fn journal_dir(data: &Path) -> PathBuf {
    data.join(PIPELINE).join("journal")
}

fn segments(data: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(journal_dir(data))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ajnl"))
        .collect();
    out.sort();
    out
}

/// Every file of the data directory with its length and digest, but the store's epoch record: a
/// start-up takes the store over (bumps the epoch) before it reads the journal, as it must with a
/// shared store (a takeover fences the old owner first, then reads what it acknowledged).
fn files(data: &Path) -> Vec<(PathBuf, usize, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![data.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|n| n != "LOCK" && n != "EPOCH") {
                let bytes = std::fs::read(&path).unwrap();
                out.push((path.clone(), bytes.len(), sha1_smol::Sha1::from(&bytes).digest().to_string()));
            }
        }
    }
    out.sort();
    out
}

/// Starts the service on `data` and expects its refusal: exit status 2 and the error line, which must
/// hold every one of `wanted`; no file changed.
fn refused(dir: &Path, data: &Path, wanted: &[&str]) -> String {
    let before = files(data);
    let serve = Coordinator::spawn(dir, "again", &pipelines(), data);
    let (exit, log) = serve.refused(Duration::from_secs(60));
    assert_eq!(exit.code(), Some(2), "{log}");
    let line =
        log.lines().find(|l| l.starts_with("error: ")).unwrap_or_else(|| panic!("no error line:\n{log}"));
    for w in wanted {
        assert!(line.contains(w), "{w:?} not in {line}");
    }
    assert_eq!(files(data), before, "start-up changed a file");
    line.to_string()
}

/// `anes journal accept-loss` with the configuration `refused` wrote: its JSON answer (it must succeed).
fn accept_loss(dir: &Path, data: &Path) -> serde_json::Value {
    let accept = Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(["journal", "accept-loss", "--json", "--config"])
        .arg(dir.join("again.toml"))
        .args(["--pipeline", PIPELINE, "--data-dir"])
        .arg(data)
        .output()
        .unwrap();
    assert!(accept.status.success(), "{}", String::from_utf8_lossy(&accept.stderr));
    serde_json::from_slice(&accept.stdout).unwrap()
}

/// The start-up that follows holds every acknowledged record.
fn starts_with_everything(dir: &Path, data: &Path) {
    let mut serve = Coordinator::start(dir, "again", &pipelines(), data);
    let status = serve.wait_settled(Duration::from_secs(120));
    assert_eq!(status["accounting"]["received"], RECORDS, "{status}");
    serve.stop();
}

#[test]
fn a_changed_byte_in_the_last_batch_is_damage_not_a_torn_write() {
    let (temp, data) = journaled("flip-last");
    let last = segments(&data).pop().unwrap();
    let mut bytes = std::fs::read(&last).unwrap();
    let at = bytes.len() - 4;
    bytes[at] ^= 0x20;
    std::fs::write(&last, &bytes).unwrap();
    let name = last.file_name().unwrap().to_string_lossy().to_string();
    refused(&temp.0, &data, &["records 508..510", &name, "damage", "anes journal accept-loss"]);
}

#[test]
fn the_last_batch_cut_short_or_emptied_is_missing_records() {
    for (case, cut) in [("cut-10", Some(10)), ("cut-all", None)] {
        let (temp, data) = journaled(case);
        let last = segments(&data).pop().unwrap();
        let bytes = std::fs::read(&last).unwrap();
        std::fs::write(&last, &bytes[..cut.map_or(0, |c| bytes.len() - c)]).unwrap();
        let line = refused(&temp.0, &data, &["..510", "missing"]);
        assert!(line.contains(&*last.file_name().unwrap().to_string_lossy()), "{case}: {line}");
    }
}

#[test]
fn the_last_batch_of_an_older_segment_cut_short_is_damage() {
    let (temp, data) = journaled("cut-older");
    let all = segments(&data);
    assert!(all.len() >= 3, "{all:?}");
    let older = &all[all.len() - 2];
    let bytes = std::fs::read(older).unwrap();
    std::fs::write(older, &bytes[..bytes.len() - 10]).unwrap();
    let name = older.file_name().unwrap().to_string_lossy().to_string();
    refused(&temp.0, &data, &[&name, "missing"]);
}

#[test]
fn deleted_segments_are_missing_records() {
    let (temp, data) = journaled("delete-newest");
    let newest = segments(&data).pop().unwrap();
    let first: u64 = newest.file_stem().unwrap().to_string_lossy()[4..].parse().unwrap();
    std::fs::remove_file(&newest).unwrap();
    refused(&temp.0, &data, &[&format!("records {first}..510"), "deleted"]);
    let (temp, data) = journaled("delete-all");
    for segment in segments(&data) {
        std::fs::remove_file(segment).unwrap();
    }
    refused(&temp.0, &data, &["records 0..510"]);
}

#[test]
fn a_journal_folder_lost_whole_is_refused_not_started_anew() {
    // Mark and segments gone together: once read as a new journal, 510 acknowledged records lost
    // without a word. `journal.identity` beside the folder says one was kept.
    let (temp, data) = journaled("folder");
    std::fs::remove_dir_all(journal_dir(&data)).unwrap();
    refused(&temp.0, &data, &["journal.identity", "was lost", "anes journal accept-loss"]);
    let answer = accept_loss(&temp.0, &data);
    assert_eq!(answer["accepted_loss"]["continues_at"].as_u64(), Some(0), "{answer}");
    let mut serve = Coordinator::start(&temp.0, "after", &pipelines(), &data);
    let status = serve.wait_settled(Duration::from_secs(120));
    assert_eq!(status["accounting"]["received"], 0, "{status}");
    serve.stop();
}

#[test]
fn a_segment_of_another_data_directory_or_pipeline_is_refused_by_name() {
    let (temp, data) = journaled("foreign");
    let (_other, other_data) = journaled("foreign-source");
    let copied = journal_dir(&data).join("seg-00000000000000000510.ajnl");
    std::fs::copy(segments(&other_data)[0].clone(), &copied).unwrap();
    refused(&temp.0, &data, &["seg-00000000000000000510.ajnl", "another journal"]);
}

#[test]
fn a_lost_mark_is_refused_and_accept_loss_continues_from_the_first_missing_record() {
    let (temp, data) = journaled("accept");
    let last = segments(&data).pop().unwrap();
    let mut bytes = std::fs::read(&last).unwrap();
    let at = bytes.len() - 4;
    bytes[at] ^= 0x20;
    std::fs::write(&last, &bytes).unwrap();
    refused(&temp.0, &data, &["records 508..510"]);
    let answer = accept_loss(&temp.0, &data);
    let loss = &answer["accepted_loss"];
    assert_eq!(
        (loss["continues_at"].as_u64(), loss["missing"][0]["from"].as_u64()),
        (Some(508), Some(508)),
        "{answer}"
    );
    assert_eq!(std::fs::read(&last).unwrap(), bytes, "the damaged segment is kept as it is");
    let mut serve = Coordinator::start(&temp.0, "after", &pipelines(), &data);
    let status = serve.wait_settled(Duration::from_secs(120));
    assert_eq!(status["accounting"]["received"], 508, "{status}");
    // Producers resend from 508.
    let mut ledger = Ledger { acked: 508, ..Ledger::default() };
    let mut next = 508;
    assert!(ledger.push(&serve.endpoint(), &mut next, 2));
    assert_eq!(ledger.acked, 510);
    serve.wait_settled(Duration::from_secs(60));
    serve.stop();
    // The mark itself deleted: refused too.
    let (temp, data) = journaled("mark");
    std::fs::remove_file(journal_dir(&data).join("acknowledged")).unwrap();
    refused(&temp.0, &data, &["acknowledged", "missing, while"]);
}

/// A dead-letter queue file of an earlier version: its records after the journal's end are journaled
/// at start-up; one with a damaged record in the middle is refused naming the range, never replayed
/// renumbered; a 0-byte one (a crash while it was created) holds nothing.
#[test]
fn an_earlier_version_s_queue_file_is_journaled_or_refused_never_renumbered() {
    use anes_ops::framed::{self, FileHeader};
    let queue = |records: std::ops::Range<u64>| {
        let mut bytes =
            FileHeader { magic: anes_ops::dlq::DLQ_MAGIC, pipeline_id: PIPELINE.into(), identity: None }
                .encode();
        for seq in records {
            let [a, b] = support::coordinator::input(seq);
            let mut payload = seq.to_le_bytes().to_vec();
            payload.extend_from_slice(&[a, b, 0]);
            framed::encode_record(&payload, &mut bytes);
        }
        bytes
    };
    let (temp, data) = journaled("queue-flip");
    let path = data.join(PIPELINE).join("dlq").join("queue.adlq");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut bytes = queue(510..560);
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    refused(&temp.0, &data, &["queue.adlq", "are missing", "anes dlq inspect"]);
    std::fs::write(&path, b"").unwrap();
    starts_with_everything(&temp.0, &data);
}

#[test]
fn an_epoch_at_its_maximum_is_refused_never_wrapped() {
    let (temp, data) = journaled("epoch-max");
    std::fs::write(data.join(PIPELINE).join("checkpoints").join("EPOCH"), format!("{}\n", u64::MAX)).unwrap();
    refused(&temp.0, &data, &["maximum"]);
}

#[test]
fn pipeline_ids_that_name_other_folders_are_refused_with_the_rule() {
    let dir = std::env::temp_dir().join(format!("anes-damage-ids-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let _temp = TempDir(dir.clone());
    for id in ["..", "."] {
        let config = dir.join("ids.toml");
        std::fs::write(&config, format!("[[pipeline]]\nid = \"{id}\"\n")).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_anes"))
            .args(["serve", "--config"])
            .arg(&config)
            .arg("--data-dir")
            .arg(dir.join("data"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("pipeline[0].id") && stderr.contains("starting with a letter or digit"),
            "{stderr}"
        );
        assert!(
            !dir.join("LOCK").exists() && !dir.join("journal").exists(),
            "nothing made outside the data directory"
        );
    }
}

/// A Redis epoch key set to something that is not a number while the service runs: the pipeline is
/// fenced (its store's record is damaged), not ready, and refuses pushes, instead of failing every
/// write as "unavailable" while it looks normal.
#[test]
#[ignore = "needs redis-server (scripts/install-ops-servers.sh --redis)"]
fn a_garbage_epoch_in_redis_fences_the_pipeline_and_makes_it_not_ready() {
    redis_server::require("garbage epoch");
    let server = redis_server::RedisServer::start("garbage-epoch-serve");
    let dir = std::env::temp_dir().join(format!("anes-damage-redis-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let temp = TempDir(dir);
    let pipelines = pipeline_toml(&format!("backend = \"redis\"\nurl = \"{}\"", server.url()), 10, 10, "");
    let mut serve = Coordinator::start(&temp.0, "redis", &pipelines, &temp.0.join("data"));
    let mut ledger = Ledger::default();
    let mut next = 0;
    assert!(ledger.push(&serve.endpoint(), &mut next, 20));
    let _: () = redis::cmd("SET")
        .arg(format!("pipeline:{PIPELINE}:epoch"))
        .arg("abc")
        .query(&mut server.connection())
        .unwrap();
    let (code, answer) = serve.endpoint().push(20, 10).unwrap();
    assert_eq!((code, answer["refused"]["reason"].as_str()), (503, Some("store_lost")), "{answer}");
    assert_eq!(answer["accepted"], 0, "{answer}");
    serve.wait_for("not ready", Duration::from_secs(10), |s| s.get("/readyz").filter(|(c, _)| *c == 503));
    let status = serve.status().unwrap();
    assert_eq!(status["store"]["damaged"], true, "{status}");
    assert!(serve.log().contains("the store's record of this pipeline is damaged"));
}
