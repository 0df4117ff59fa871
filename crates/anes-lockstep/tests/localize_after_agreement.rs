//! Localization names the first divergent instruction after the last sync point at which the
//! comparator saw the machines agree: a fault that was masked before it (the machines differed, then
//! agreed again) is not the divergence that was detected, whichever checkpoint the replay starts
//! from, in either threading mode, and whether that agreement was a frame end's state hash or a
//! scanline's digest. A digest that missed a difference is no agreement: the search then starts at
//! the frame's start, compared by state hash.

use anes_core::NesConfig;
use anes_core::movie::{FrameInput, InputStream};
use anes_core::state::{FrameRecord, StateHash};
use anes_fixtures::FakeMachine;
use anes_lockstep::{
    FaultPlan, Granularity, Localization, Lockstep, LockstepConfig, Machine, NesMachine, RunOutcome,
    Threading, WriteCause,
};

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes");
const DEMO_INPUT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.input");

/// The detected fault: the flip of $0342 lasts, and the end of frame 41 sees it.
const DETECTED: &str = "flip:ram:0x0342:3@1234567";

/// Checkpoint intervals: the last checkpoint at frame 41's start (1, 41), replays that start after the
/// masked fault (2, 7, 10), and the default, whose replay starts at power-on, before it.
const INTERVALS: [u64; 6] = [1, 2, 7, 10, 41, 60];

/// The localization, the fault fates, report.json and report.html of the demo over its own input,
/// with `faults` injected into B.
fn localize(
    granularity: Granularity,
    checkpoint_every: u64,
    threading: Threading,
    faults: [&str; 2],
) -> (Localization, Vec<&'static str>, serde_json::Value, String) {
    let rom = std::fs::read(DEMO).unwrap();
    let inputs = InputStream::from_bytes(&std::fs::read(DEMO_INPUT).unwrap()).unwrap();
    let machine = NesMachine::from_ines(&rom, NesConfig::default()).unwrap();
    let config = LockstepConfig {
        granularity,
        threading,
        checkpoint_every,
        faults: FaultPlan::parse(faults).unwrap(),
        ..LockstepConfig::default()
    };
    let mut lockstep = Lockstep::new(machine.clone(), machine, config).unwrap();
    let context = format!("{granularity}, a checkpoint every {checkpoint_every}, {threading:?}");
    let outcome = lockstep.run(&inputs, 60);
    assert!(matches!(outcome, RunOutcome::Diverged(_)), "{context}: {outcome:?}");
    let fates = lockstep.fault_fates().iter().map(|f| f.fate.name()).collect();
    let evidence = lockstep.evidence().unwrap();
    let found = evidence.localization.clone().unwrap_or_else(|| {
        panic!("{context}: not localized: {:?}", evidence.localization_error);
    });
    // What a user reads: the bundle's report.json and report.html.
    let dir = std::env::temp_dir().join(format!(
        "anes-localize-after-agreement-{granularity}-{checkpoint_every}-{}-{}",
        matches!(threading, Threading::Threaded { .. }),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    evidence.write_bundle(&dir).unwrap();
    let report = serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    (found, fates, report, html)
}

/// The masked fault `masked` and [`DETECTED`] after it: at every checkpoint interval and in both
/// threading modes, the localization is the detected fault's instruction and byte, identical but for
/// where the replay started.
fn the_detected_fault_is_localized(granularity: Granularity, masked: &str, masked_field: &str) {
    let mut first: Option<Localization> = None;
    for checkpoint_every in INTERVALS {
        for threading in [Threading::SameThread, Threading::Threaded { window: 64 }] {
            let context = format!("{granularity}, a checkpoint every {checkpoint_every}, {threading:?}");
            let (found, fates, report, html) =
                localize(granularity, checkpoint_every, threading, [masked, DETECTED]);
            assert_eq!(fates, ["masked", "detected"], "{context}: the fates are the run's");
            let names: Vec<&str> = found.fields.iter().map(|f| f.name.as_str()).collect();
            assert_eq!(names, ["ram[$0342]"], "{context}: {found:?}");
            assert_eq!(found.frame, 41, "{context}: {found:?}");
            assert!(found.cpu_cycle < 1_234_567 && 1_234_567 <= found.end_cpu_cycle, "{context}: {found:?}");
            let write_b = found.fields[0].last_write_b.expect("B's last write");
            assert_eq!((write_b.cause, write_b.frame), (WriteCause::Fault, 41), "{context}");
            assert!(
                found.checkpoint_frame <= 41 && found.checkpoint_frame % checkpoint_every == 0,
                "{context}"
            );

            assert_eq!(report["frame"], 41, "{context}");
            assert_eq!(report["cpu_cycle"], found.cpu_cycle, "{context}");
            assert_eq!(report["fields"].as_array().unwrap().len(), 1, "{context}: {report}");
            assert_eq!(report["fields"][0]["name"], "ram[$0342]", "{context}");
            assert!(html.contains("ram[$0342]") && !html.contains(masked_field), "{context}");

            // Identical wherever the replay started, but for where that was and how far it ran.
            let same = Localization { checkpoint_frame: 0, instructions_replayed: 0, ..found };
            match &first {
                None => first = Some(same),
                Some(first) => assert_eq!(*first, same, "{context}"),
            }
        }
    }
}

#[test]
fn a_fault_masked_before_a_frame_end_is_not_the_localized_one() {
    // $0010 differs from cycle 300,000 of frame 10 until the demo stores over it in the same frame:
    // the frame's end agrees (masked), and the replay from power-on passes through the difference.
    the_detected_fault_is_localized(Granularity::Frame, "flip:ram:0x10:0@300000", "ram[$0010]");
}

#[test]
fn a_fault_masked_before_a_scanline_is_not_the_localized_one() {
    // The accumulator differs from cycle 300,537 of frame 10 until the demo overwrites it, before the
    // next line's sync point, which agrees by digest (masked): the last agreement is inside a frame.
    the_detected_fault_is_localized(Granularity::Scanline, "flip:cpu:0x2:7@300537", "cpu.a");
}

/// A [`FakeMachine`] whose digest inside a frame misses `ram[$21]`, as a 64-bit digest may miss a
/// difference of several bytes: the comparator sees agreement there while the states differ, and
/// the frame's end (compared by full state hash) detects it.
#[derive(Debug, Clone)]
struct DigestMissing21(FakeMachine);

impl Machine for DigestMissing21 {
    type Input = FrameInput;

    fn sync_record(&self) -> (FrameRecord, u64) {
        let mut hasher = blake3::Hasher::new();
        hasher.update(self.0.section_bytes(0));
        let ram = self.0.section_bytes(1);
        hasher.update(&ram[..0x21]).update(&ram[0x22..]);
        let digest = u64::from_le_bytes(hasher.finalize().as_bytes()[..8].try_into().unwrap());
        (FrameRecord { state_hash: StateHash::default(), ..self.0.record() }, digest)
    }

    anes_lockstep::forward_machine!(0 => begin_frame, step_instruction, run_frame, record, probe,
        state_hash, section_count, section_name, section_bytes, field_name, snapshot_len, save_state,
        load_state, disassemble, opcode, flip_state_bit);
}

#[test]
fn a_difference_the_digest_missed_is_localized_from_the_frame_start() {
    // FakeMachine frames are 100 instructions of 3 cycles, each a sync point at scanline
    // granularity; the program adds to RAM bytes and never reads them, so the flip in frame 3 lasts.
    let machine = DigestMissing21(FakeMachine::new(5));
    let inputs = vec![FrameInput::default(); 10];
    for checkpoint_every in [1, 2, 3, 5] {
        for threading in [Threading::SameThread, Threading::Threaded { window: 64 }] {
            let context = format!("a checkpoint every {checkpoint_every}, {threading:?}");
            let config = LockstepConfig {
                granularity: Granularity::Scanline,
                threading,
                checkpoint_every,
                faults: FaultPlan::parse(["flip:ram:0x21:2@1000"]).unwrap(),
                ..LockstepConfig::default()
            };
            let mut lockstep = Lockstep::new(machine.clone(), machine.clone(), config).unwrap();
            let RunOutcome::Diverged(divergence) = lockstep.run(&inputs, 10) else { panic!("{context}") };
            assert!(divergence.at_frame_end && divergence.frame == 3, "{context}: {divergence:?}");
            let evidence = lockstep.evidence().unwrap();
            let found = evidence.localization.as_ref().unwrap_or_else(|| {
                panic!("{context}: not localized: {:?}", evidence.localization_error);
            });
            assert!(found.cpu_cycle < 1000 && 1000 <= found.end_cpu_cycle, "{context}: {found:?}");
            let names: Vec<&str> = found.fields.iter().map(|f| f.name.as_str()).collect();
            assert_eq!(names, ["ram[$21]"], "{context}");
            assert_eq!(found.fields[0].last_write_b.map(|w| w.cause), Some(WriteCause::Fault), "{context}");
        }
    }
}
