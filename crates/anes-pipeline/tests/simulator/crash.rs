//! The simulator with crashes: the service dies before a random action (every action boundary is a
//! candidate), the actions not applied are lost, and the pipeline is rebuilt from what the simulated
//! storage holds (the journal, which holds the dead-letter queue's records too, and the newest
//! persisted checkpoint) through
//! [`Pipeline::recover`], as `recovery::open` does. Invariants: no acknowledged record is lost, the
//! accounting balances at every step, the recovered pipeline resumes at or after the checkpoint it
//! loaded, and the end state is that of one console that ran every acknowledged record once, in order.
//!
//! `ANES_SIM_SEEDS=n` runs n seeds (default 12); `ANES_SIM_SEED=s` runs seed s alone. A failure
//! names its seed.

use std::sync::{Arc, Mutex};

use anes_pipeline::storage::{CommitFailure, JournalSink};

use super::*;

/// What the simulated disk holds; `journal_pending` is written but not yet committed (a crash loses
/// it).
#[derive(Debug, Default)]
struct Disk {
    journal: Vec<FrameInput>,
    journal_pending: Vec<(u64, FrameInput)>,
}

#[derive(Debug)]
struct DiskJournal(Arc<Mutex<Disk>>);

impl JournalSink for DiskJournal {
    fn append(&mut self, seq: u64, input: FrameInput) {
        self.0.lock().unwrap().journal_pending.push((seq, input));
    }

    fn commit(&mut self) -> Result<(), CommitFailure> {
        let mut disk = self.0.lock().unwrap();
        for (seq, input) in std::mem::take(&mut disk.journal_pending) {
            if seq > disk.journal.len() as u64 {
                return Err(CommitFailure {
                    store: None,
                    message: format!(
                        "record {seq} would leave a gap after the journal's end at {}",
                        disk.journal.len()
                    ),
                });
            }
            // Below the end: the records of a commit whose answer was lost, replaced.
            disk.journal.truncate(seq as usize);
            disk.journal.push(input);
        }
        Ok(())
    }

    fn release_before(&mut self, _seq: u64) {}
}

fn storage(disk: &Arc<Mutex<Disk>>) -> Box<dyn JournalSink> {
    Box::new(DiskJournal(Arc::clone(disk)))
}

/// What a restart finds and the pipeline it builds from it (the steps of `recovery::open`).
fn restart(sim: &Sim, disk: &Arc<Mutex<Disk>>, seed: u64) -> Sim {
    let checkpoint = sim.stored.last().cloned();
    let start = checkpoint.as_ref().map_or(0, |c| c.seq);
    let log = {
        let mut disk = disk.lock().unwrap();
        disk.journal_pending.clear();
        let end = disk.journal.len() as u64;
        assert!(end >= start, "seed {seed}: the journal ends at {end}, before the checkpoint at {start}");
        disk.journal[start as usize..].to_vec()
    };
    let pipeline = Pipeline::recover(sim.pipeline_settings.clone(), checkpoint, log);
    let mut next =
        Sim::with_storage(pipeline, storage(disk), seed.wrapping_mul(31).wrapping_add(sim.actions_run));
    next.stored = sim.stored.clone();
    next.pipeline_settings = sim.pipeline_settings.clone();
    next
}

/// One seeded run; returns the number of crashes it survived.
fn run(seed: u64) -> u32 {
    let disk = Arc::new(Mutex::new(Disk::default()));
    let policy = if seed % 2 == 0 { RollbackPolicy::Immediate } else { RollbackPolicy::Alert };
    let mut sim = Sim::with_storage(Pipeline::new(settings(policy)), storage(&disk), seed);
    sim.pipeline_settings = settings(policy);
    // The producer: records below `acked` were acknowledged; it resends from there after a crash.
    let mut acked = 0u64;
    let mut crashes = 0;
    let schedule = |sim: &mut Sim| {
        let ahead = 1 + sim.random(400);
        sim.crash_at = Some(sim.actions_run + ahead);
    };
    schedule(&mut sim);
    for i in 0..600u32 {
        if i % 150 == 75 {
            let worker = if sim.random(2) == 0 { WorkerId::A } else { WorkerId::B };
            sim.drill(worker, Drill::Fault("flip:ram:0x0010:3".into()));
        }
        if sim.random(3) == 0 {
            let n = 1 + sim.random(6);
            let batch: Vec<FrameInput> = (acked..acked + n).map(sent).collect();
            if let Some(outcome) = sim.try_push(acked, &batch) {
                acked = acked.max(outcome.next_seq);
            }
        } else {
            sim.step();
        }
        if !sim.crashed {
            let a = sim.pipeline.accounting();
            assert!(a.balanced(), "seed {seed}, step {i}: {a:?}");
            continue;
        }
        crashes += 1;
        let mut next = restart(&sim, &disk, seed);
        let a = next.pipeline.accounting();
        assert!(
            a.received >= acked,
            "seed {seed}, crash {crashes}: {acked} acknowledged, {} recovered",
            a.received
        );
        assert!(a.balanced(), "seed {seed}, crash {crashes}: {a:?}");
        if let Some(c) = next.stored.last() {
            assert_eq!(a.verified_before_start, c.seq, "seed {seed}: recovered from another checkpoint");
        }
        // What the producer never heard back about may or may not have been kept: it resends from what
        // the service says it has.
        acked = a.received;
        schedule(&mut next);
        sim = next;
    }
    // No more crashes or faults: everything acknowledged must be verified, once, in order.
    sim.crash_at = None;
    sim.inputs_sent = acked;
    sim.settle(Duration::from_secs(600));
    let a = sim.pipeline.accounting();
    assert_eq!(sim.pipeline.mode(), Mode::Normal, "seed {seed}: {:?}", sim.pipeline.status());
    assert!(a.balanced() && a.unverified + a.in_dlq == 0, "seed {seed}: {a:?}");
    assert_eq!(a.received, acked, "seed {seed}");
    assert_eq!(
        a.received,
        a.verified_before_start + a.verified_direct + a.replayed_from_dlq,
        "seed {seed}: {a:?}"
    );
    sim.handle(Event::Drain);
    sim.settle(Duration::from_secs(30));
    let last = sim.drained.clone().expect("drained").expect("a final verified checkpoint");
    assert_eq!(last.seq, acked, "seed {seed}");
    let mut reference = anes_core::Nes::new(
        anes_core::Cartridge::from_ines(&tiny_rom()).unwrap(),
        anes_core::NesConfig::default(),
    );
    for seq in 0..acked {
        reference.run_frame(sent(seq));
    }
    assert_eq!(
        last.state_hash,
        reference.state_hash().0,
        "seed {seed}: not the state of one uninterrupted run"
    );
    crashes
}

#[test]
fn crashes_at_action_boundaries_lose_no_acknowledged_record() {
    let seeds: Vec<u64> = match std::env::var("ANES_SIM_SEED").ok().and_then(|s| s.parse().ok()) {
        Some(seed) => vec![seed],
        None => {
            let n = std::env::var("ANES_SIM_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(12u64);
            (1..=n).collect()
        }
    };
    let mut crashes = 0;
    for &seed in &seeds {
        // Printed so a failure's seed can be re-run alone (ANES_SIM_SEED).
        println!("seed {seed}");
        crashes += run(seed);
    }
    println!("{} seeds, {crashes} crashes recovered", seeds.len());
    assert!(crashes as usize >= seeds.len(), "the crash points were never reached");
}
