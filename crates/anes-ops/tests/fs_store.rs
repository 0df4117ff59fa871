//! The shared store suite (`support/store_suite.rs`) on the filesystem store, in a temporary
//! directory. Its own tests (crash tables, FIFOs, the epoch record) are in `src/store/fs.rs`.
//!
//! Run: `cargo test -p anes-ops --test fs_store -- --nocapture`.

mod support;

use std::path::{Path, PathBuf};

use anes_ops::store::{CheckpointStore, FsStore};
use support::store_suite;

/// A temporary root, removed on drop (panics included).
struct Root(PathBuf);

impl Root {
    fn new(name: &str) -> Root {
        let dir = std::env::temp_dir().join(format!(
            "anes-fs-suite-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Root(dir)
    }

    fn open(&self, pipeline: &str, kept: usize) -> Box<dyn CheckpointStore> {
        Box::new(FsStore::open(&self.0.join(pipeline), pipeline, kept).unwrap())
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn flip_last_byte(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn suite_round_trip_and_retention() {
    let root = Root::new("rt");
    store_suite::round_trip_and_retention(&|p, k| root.open(p, k), "fs");
    store_suite::checkpoints_above_the_written_one_are_not_counted(&|p, k| root.open(p, k), "fs");
}

#[test]
fn suite_damaged_checkpoints_are_skipped() {
    let root = Root::new("dmg");
    store_suite::damaged_checkpoints_are_skipped(
        &|p, k| root.open(p, k),
        &|p, name| flip_last_byte(&root.0.join(p).join(name)),
        "fs",
    );
}

#[test]
fn suite_a_stale_writer_is_refused_without_reading_its_payload() {
    let root = Root::new("stale");
    store_suite::a_stale_writer_is_refused_without_reading_its_payload(&|p, k| root.open(p, k), "fs");
}

#[test]
fn suite_fencing_model() {
    let root = Root::new("model");
    // Without fsync: durability is the crash trials' business, this is the rule's.
    let open = |p: &str, k: usize| -> Box<dyn CheckpointStore> {
        Box::new(FsStore::open(&root.0.join(p), p, k).unwrap().without_fsync())
    };
    store_suite::fencing_model(&open, "fs", "filesystem", 2000);
}
