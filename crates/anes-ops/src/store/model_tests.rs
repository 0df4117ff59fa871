//! The fencing model on the filesystem store: thousands of random schedules, zero stale writes accepted
//! (without fsync: durability is the crash trials' business, this is the rule's).

use proptest::prelude::*;

use super::CheckpointStore;
use super::fs::FsStore;
use super::model::{Op, run_schedule};

/// Random schedules: 2-4 writers, 1-40 steps.
pub fn schedules() -> impl Strategy<Value = (usize, Vec<Op>)> {
    (2usize..=4).prop_flat_map(|writers| {
        let op = prop_oneof![
            1 => (0..writers).prop_map(Op::Bump),
            1 => (0..writers).prop_map(Op::Advance),
            3 => ((0..writers), 0u64..50).prop_map(|(w, f)| Op::Write(w, f * 60)),
        ];
        (Just(writers), proptest::collection::vec(op, 1..40))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn no_stale_write_is_ever_accepted_filesystem((writers, ops) in schedules()) {
        let dir = std::env::temp_dir().join(format!(
            "anes-fence-model-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let mut stores: Vec<Box<dyn CheckpointStore>> =
            (0..writers).map(|_| Box::new(FsStore::open(&dir, "m", 1000).unwrap().without_fsync()) as Box<dyn CheckpointStore>).collect();
        run_schedule("m", &mut stores, &ops);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
