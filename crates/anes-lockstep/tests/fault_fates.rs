//! Every injected fault's fate is told: detected at the sync point after it, masked (the state
//! hashes agreed there), refused by the machine, or never reached. The same in both threading modes,
//! also when a worker runs past the divergence and fires a later fault the comparator never saw.

mod common;

use anes_core::NesConfig;
use anes_core::movie::{FrameInput, InputStream};
use anes_fixtures::{FakeMachine, tiny_rom};
use anes_lockstep::{
    FaultFate, FaultOutcome, FaultPlan, Granularity, Lockstep, LockstepConfig, Machine, NesMachine,
    RunOutcome, Threading,
};
use common::keeping_contract;

/// The synthetic ROM: its loop stores to every byte of $0200-$02FF about three times a frame and
/// never reads them back, so a flip there is overwritten (masked) well before the frame ends.
fn tiny() -> NesMachine {
    keeping_contract(NesMachine::from_ines(&tiny_rom(), NesConfig::default()).unwrap())
}

/// CPU cycle at the start of input frame `frame`.
fn frame_start<M: Machine<Input = FrameInput> + Clone>(machine: &M, frame: u64) -> u64 {
    let mut m = machine.clone();
    for _ in 0..frame {
        m.run_frame(FrameInput::default());
    }
    m.probe().cpu_cycle
}

fn run(
    machine: &NesMachine,
    specs: &[String],
    threading: Threading,
    frames: u64,
) -> (RunOutcome, Vec<FaultOutcome>) {
    let faults = FaultPlan::parse(specs).unwrap();
    let config = LockstepConfig { threading, checkpoint_every: 2, faults, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(machine.clone(), machine.clone(), config).unwrap();
    let outcome = lockstep.run(&InputStream::new(), frames);
    (outcome, lockstep.fault_fates())
}

#[test]
fn detected_masked_and_not_reached_faults_are_told_apart() {
    let machine = tiny();
    let frame_3 = frame_start(&machine, 3);
    let specs = [
        // Masked: $0250 is stored to again within the frame.
        format!("flip:ram:0x0250:1@{}", frame_start(&machine, 1) + 200),
        // Detected: $0001 is the running sum, read back every iteration.
        format!("flip:ram:0x0001:6@{}", frame_3 + 500),
        // Not reached: the run stops at the divergence in frame 3.
        format!("flip:ram:0x0001:6@{}", frame_start(&machine, 5) + 500),
        // Not reached: past the end of the run (input faults count frames).
        "input:0:0@1000".to_string(),
    ];
    let (outcome, fates) = run(&machine, &specs, Threading::SameThread, 10);
    let RunOutcome::Diverged(divergence) = outcome else { panic!("not seen: {fates:?}") };
    assert_eq!(divergence.frame, 3);
    let names: Vec<&str> = fates.iter().map(|f| f.fate.name()).collect();
    assert_eq!(names, ["masked", "detected", "not_reached", "not_reached"], "{fates:?}");
    assert_eq!(
        fates.iter().map(|f| f.spec.as_str()).collect::<Vec<_>>(),
        specs.map(|s| { s.parse::<anes_lockstep::Fault>().unwrap().to_string() })
    );
    let FaultFate::Masked { frame, cpu_cycle, sync_point } = fates[0].fate else { unreachable!() };
    assert_eq!(frame, 1);
    assert!(cpu_cycle >= frame_start(&machine, 1) + 200 && cpu_cycle < frame_3, "{cpu_cycle}");
    // Frame granularity: sync point 1 is the pairing, sync point n + 2 the end of frame n.
    assert_eq!(sync_point, 3, "judged at the end of its frame");
    let FaultFate::Detected { frame, sync_point, .. } = fates[1].fate else { unreachable!() };
    assert_eq!((frame, sync_point), (3, divergence.sync_point));
    assert!(!fates[1].fate.to_string().is_empty() && fates[1].fate.was_applied());
    assert!(!fates[2].fate.was_applied() && !fates[3].fate.was_applied());
}

#[test]
fn a_fault_masked_at_frame_ends_is_detected_at_instruction_granularity() {
    // FakeMachine deliberately: its latch is overwritten by every instruction.
    let machine = FakeMachine::new(4);
    let fate = |granularity| {
        let faults = FaultPlan::parse(["flip:cpu:20:1@1000"]).unwrap();
        let config = LockstepConfig { granularity, faults, ..LockstepConfig::default() };
        let mut lockstep = Lockstep::new(machine.clone(), machine.clone(), config).unwrap();
        let _ = lockstep.run(&InputStream::new(), 10);
        lockstep.fault_fates().remove(0).fate
    };
    assert!(
        matches!(fate(Granularity::Frame), FaultFate::Masked { frame: 3, .. }),
        "{:?}",
        fate(Granularity::Frame)
    );
    assert!(matches!(fate(Granularity::Instruction), FaultFate::Detected { frame: 3, .. }));
}

#[test]
fn a_refused_fault_says_why() {
    let machine = tiny();
    let (section, offset, bit) =
        anes_fixtures::refused_flip(&machine, 5000).expect("some flip makes an impossible state");
    let spec = format!("flip:{}:{offset}:{bit}@5000", machine.section_name(section));
    let (outcome, fates) = run(&machine, &[spec], Threading::SameThread, 3);
    assert_eq!(outcome, RunOutcome::Agreed { frames: 3 }, "nothing was changed");
    let FaultFate::Refused { frame, cpu_cycle, reason } = &fates[0].fate else { panic!("{fates:?}") };
    assert_eq!(*frame, 0);
    assert!(*cpu_cycle >= 5000, "{cpu_cycle}");
    assert!(reason.contains("impossible state"), "{reason}");
}

#[test]
fn fates_are_the_same_when_a_worker_runs_past_the_divergence() {
    let machine = tiny();
    let specs = [
        format!("flip:ram:0x0001:6@{}", frame_start(&machine, 5) + 500),
        // One frame later: a worker ahead of the comparator fires it before the run stops.
        format!("flip:ram:0x0002:6@{}", frame_start(&machine, 6) + 500),
    ];
    let mut seen = Vec::new();
    for threading in [Threading::SameThread, Threading::Threaded { window: 16 }] {
        let faults = FaultPlan::parse(&specs).unwrap();
        let config = LockstepConfig { threading, checkpoint_every: 2, faults, ..LockstepConfig::default() };
        let mut lockstep = Lockstep::new(machine.clone(), machine.clone(), config).unwrap();
        let first = lockstep.run(&InputStream::new(), 30);
        let first_fates = lockstep.fault_fates();
        let fired = lockstep.fired_faults();
        let evidence_faults = lockstep.evidence().unwrap().faults.clone();
        lockstep.rollback().unwrap();
        // The second fault was never reached as far as the comparator knows: it fires now.
        let second = lockstep.run(&InputStream::new(), 30);
        seen.push((first, first_fates, fired, evidence_faults, second, lockstep.fault_fates()));
    }
    let (same, threaded) = (&seen[0], &seen[1]);
    assert!(matches!(&same.0, RunOutcome::Diverged(d) if d.frame == 5));
    assert_eq!(same.1.iter().map(|f| f.fate.name()).collect::<Vec<_>>(), ["detected", "not_reached"]);
    assert_eq!(same.2.len(), 1);
    assert!(matches!(&same.4, RunOutcome::Diverged(d) if d.frame == 6));
    assert_eq!(same.5.iter().map(|f| f.fate.name()).collect::<Vec<_>>(), ["detected", "detected"]);
    assert_eq!(same, threaded, "threaded fates, fired faults and evidence equal the same-thread ones");
}
