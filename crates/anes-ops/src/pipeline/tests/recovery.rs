//! A crashed run's data directory on a real filesystem, recovered through `recovery::open`.

use super::*;

/// A crashed run's data directory, recovered: the pipeline must resume from the newest checkpoint that
/// verifies (not a newer damaged one, not an older good one), re-run every journaled record after it
/// and the records of an earlier version's dead-letter queue file (journaled at start-up), and end
/// exactly where a console that ran every record ends.
#[test]
fn recovery_resumes_from_the_newest_verified_checkpoint_and_loses_no_journaled_record() {
    use crate::config::Config;
    use crate::framed::{self, FileHeader};
    use crate::journal::FileJournal;
    use crate::store::{CheckpointHeader, CheckpointStore, FsStore};

    let data = std::env::temp_dir().join(format!(
        "anes-recover-test-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
    ));
    let config = Config::parse(
        "[[pipeline]]\nid = \"p1\"\ncheckpoint_every = 8\npersist_every = 8\ndrift_window = 64\n[pipeline.input]\nsource = \"push\"\n",
        "test.toml",
    )
    .unwrap()
    .pipelines
    .remove(0);
    let dir = data.join("p1");

    // The run before the crash: 100 records journaled and verified (checkpoints at 8, 16, ..., 96,
    // written to the store as the writer would), then 27 journaled that no worker ran yet.
    let (journal, _) = FileJournal::open(&dir.join("journal"), "p1", config.journal).unwrap();
    let storage = PipelineStorage::new(Box::new(journal));
    let mut sim = Sim::with_storage(Pipeline::new(config.settings.clone()), Box::new(storage), 11);
    sim.offer(100);
    sim.settle(Duration::from_secs(10));
    assert_eq!(sim.pipeline.status().checkpoint.map(|c| c.seq), Some(96));
    sim.offer(27);
    let stored = std::mem::take(&mut sim.stored);
    drop(sim);
    let mut store = FsStore::open(&dir.join("checkpoints"), "p1", 16).unwrap();
    let epoch = store.bump_epoch().unwrap();
    let put = |store: &mut FsStore, frame: u64, c: &Checkpoint, hash: [u8; 32]| {
        let header = CheckpointHeader::for_payload("p1", epoch, frame, c.cpu_cycle, hash, &c.snapshot);
        store.put(&header, &mut c.snapshot.as_slice()).unwrap();
    };
    let frames: Vec<u64> = stored.iter().map(|c| c.seq).collect();
    assert!(frames.ends_with(&[80, 88, 96]), "{frames:?}");
    for c in &stored {
        put(&mut store, c.seq, c, c.state_hash);
    }
    let newest = stored.last().unwrap();
    // Newer than 96: a checkpoint whose checksums hold but whose snapshot does not have its header's
    // state hash (104), and a torn one (112). Both must be skipped.
    put(&mut store, 104, newest, [0xab; 32]);
    put(&mut store, 112, newest, newest.state_hash);
    let torn = dir.join("checkpoints").join(crate::store::fs::checkpoint_file_name(112, epoch));
    let bytes = std::fs::read(&torn).unwrap();
    std::fs::write(&torn, &bytes[..bytes.len() - 100]).unwrap();
    // Records 127..140 were pushed while read-only, into the dead-letter queue file an earlier version
    // kept beside the journal (its layout: sequence number, both ports, the command).
    let mut queue =
        FileHeader { magic: crate::dlq::DLQ_MAGIC, pipeline_id: "p1".into(), identity: None }.encode();
    for seq in 120..140 {
        let input = sent(seq);
        let mut payload = seq.to_le_bytes().to_vec();
        payload.extend_from_slice(&[input.pads[0], input.pads[1], input.command as u8]);
        framed::encode_record(&payload, &mut queue);
    }
    std::fs::create_dir_all(dir.join("dlq")).unwrap();
    std::fs::write(dir.join("dlq").join("queue.adlq"), &queue).unwrap();

    let opened = crate::recovery::open(&config, &data, &tiny_rom()).unwrap();
    assert!(opened.summary.contains("2 damaged checkpoints skipped"), "{}", opened.summary);
    assert!(
        opened.summary.contains("13 records of an earlier version's dead-letter queue journaled"),
        "{}",
        opened.summary
    );
    assert!(
        dir.join("dlq").join("queue.adlq.journaled").exists() && !dir.join("dlq").join("queue.adlq").exists()
    );
    let status = opened.pipeline.status();
    assert_eq!(
        status.store.recovered_from_seq,
        Some(96),
        "not the newest verified checkpoint: {}",
        opened.summary
    );
    assert_eq!(opened.pipeline.accounting().received, 140);

    // Run the recovered pipeline to the end: every record verified, and the state is the one of a
    // console that ran all 140 records from power-on (a lost, repeated or reordered record changes it).
    let mut sim = Sim::with_pipeline(opened.pipeline, 12);
    sim.inputs_sent = 140;
    sim.settle(Duration::from_secs(30));
    assert_nothing_lost(&sim);
    sim.handle(Event::Drain);
    sim.settle(Duration::from_secs(5));
    let last = sim.drained.clone().expect("drained").expect("a final verified checkpoint");
    let mut reference = anes_core::Nes::new(
        anes_core::Cartridge::from_ines(&tiny_rom()).unwrap(),
        anes_core::NesConfig::default(),
    );
    for seq in 0..140 {
        reference.run_frame(sent(seq));
    }
    assert_eq!(last.seq, 140);
    assert_eq!(last.state_hash, reference.state_hash().0, "the recovered run is not the uninterrupted one");
    drop(opened.lock);
    std::fs::remove_dir_all(&data).unwrap();
}
