//! The determinism helpers and the frame-only path, on machines built to fail: a check that passes on
//! them would prove nothing.

use std::sync::atomic::{AtomicU8, Ordering};

use anes_core::movie::FrameInput;
use anes_core::state::FrameRecord;
use anes_fixtures::FakeMachine;
use anes_lockstep::check_contract;
use anes_lockstep::{
    FaultPlan, Granularity, Lockstep, LockstepConfig, LockstepError, Machine, Nondeterminism, RunOutcome,
    assert_deterministic, check_deterministic, check_deterministic_with,
};

/// A [`FakeMachine`] that only runs whole frames, like a core whose API has no instruction step.
#[derive(Debug, Clone)]
struct FramesOnly(FakeMachine);

impl Machine for FramesOnly {
    type Input = FrameInput;

    fn steps_instructions(&self) -> bool {
        false
    }
    anes_lockstep::forward_machine!(0 => run_frame, record, probe, state_hash, section_count,
        section_name, section_bytes, field_name, snapshot_len, save_state, load_state, flip_state_bit);
}

/// A machine whose frame 5 reads a counter shared by every instance (a global, a clock, an
/// address): two instances differ from then on.
#[derive(Debug, Clone)]
struct Leaky(FramesOnly);

static LEAK: AtomicU8 = AtomicU8::new(0);

impl Machine for Leaky {
    type Input = FrameInput;

    fn steps_instructions(&self) -> bool {
        false
    }
    fn run_frame(&mut self, input: FrameInput) -> FrameRecord {
        let record = self.0.run_frame(input);
        if record.frame == 6 {
            let leaked = LEAK.fetch_add(1, Ordering::Relaxed);
            // Bit 0 of the counter: instances built in a row see different values.
            if leaked % 2 == 1 {
                self.0.0.flip_state_bit(1, 9, 0).expect("a RAM byte");
            }
        }
        self.0.record()
    }
    anes_lockstep::forward_machine!(0 => record, probe, state_hash, section_count, section_name,
        section_bytes, field_name, snapshot_len, save_state, load_state);
}

fn idle(frames: usize) -> Vec<FrameInput> {
    vec![FrameInput::default(); frames]
}

#[test]
fn a_deterministic_machine_passes() {
    let verified = assert_deterministic(|| FakeMachine::new(3), &idle(50), 200);
    assert_eq!(verified.frames, 200);
    let frame_only = check_deterministic(|| FramesOnly(FakeMachine::new(3)), &idle(50), 200).unwrap();
    assert_eq!(frame_only.state_hash, verified.state_hash, "same machine, same end, either way");
    check_contract(&FramesOnly(FakeMachine::new(3)), 3).unwrap();
}

#[test]
fn a_counter_shared_between_instances_is_caught_at_the_pairing() {
    static BUILT: AtomicU8 = AtomicU8::new(0);
    let err = check_deterministic(|| FakeMachine::new(BUILT.fetch_add(1, Ordering::Relaxed)), &idle(0), 10)
        .unwrap_err();
    let evidence = err.evidence().expect("a divergence");
    let found = evidence.frame_localization.as_ref().expect("the differences at the pairing");
    assert!(found.at_pairing && found.frame == 0 && found.checkpoint_frame.is_none());
    assert_eq!(found.fields.len() + found.fields_omitted, 64, "every RAM byte differs by the seed");
    let text = err.to_string();
    assert!(text.contains("already differed when paired") && text.contains("ram[$00]"), "{text}");
}

#[test]
#[should_panic(expected = "first divergent frame: 5")]
fn assert_deterministic_panics_with_the_localized_frame() {
    // Machine A reads the counter at frame 5 before B does, then the localization replay: A even, B odd.
    LEAK.store(0, Ordering::Relaxed);
    let config = LockstepConfig { checkpoint_every: 4, ..LockstepConfig::default() };
    let err = check_deterministic_with(|| Leaky(FramesOnly(FakeMachine::new(1))), &idle(0), 20, config)
        .unwrap_err();
    panic!("{err}");
}

#[test]
fn a_frame_only_machine_is_localized_to_the_frame_without_a_cycle() {
    // FakeMachine frames are 300 cycles: the flip at cycle 3000 fires at the end of frame 9.
    let faults = FaultPlan::parse(["flip:ram:0x21:2@3000"]).unwrap();
    let config = LockstepConfig { checkpoint_every: 4, faults, ..LockstepConfig::default() };
    let err = check_deterministic_with(|| FramesOnly(FakeMachine::new(9)), &idle(0), 30, config).unwrap_err();
    let Nondeterminism::Diverged(evidence) = &err else { panic!("{err}") };
    assert!(evidence.localization.is_none(), "no instruction to name");
    let found = evidence.frame_localization.as_ref().unwrap();
    assert_eq!((found.frame, found.checkpoint_frame, found.frames_replayed), (9, Some(8), 2));
    assert_eq!(found.fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["ram[$21]"]);
    assert!(found.fields[0].last_write_a.is_none(), "no instruction provenance without steps");
    let report = evidence.report();
    assert_eq!((report.pc, report.instruction.as_deref(), report.frame), (None, None, 9));
    let json = serde_json::to_string(&report).unwrap();
    assert!(json.contains("\"frame_localization\""), "{json}");
}

#[test]
fn finer_granularity_needs_instruction_steps() {
    let config = LockstepConfig { granularity: Granularity::Instruction, ..LockstepConfig::default() };
    let machine = FramesOnly(FakeMachine::new(1));
    let err = Lockstep::new(machine.clone(), machine, config).unwrap_err();
    assert!(matches!(err, LockstepError::Config(_)), "{err}");
}

#[test]
fn a_frame_only_pair_runs_threaded_and_rolls_back() {
    let faults = FaultPlan::parse(["flip:ram:0x10:0@6000"]).unwrap();
    let config = LockstepConfig {
        checkpoint_every: 5,
        faults,
        threading: anes_lockstep::Threading::Threaded { window: 4 },
        ..LockstepConfig::default()
    };
    let machine = FramesOnly(FakeMachine::new(2));
    let mut lockstep = Lockstep::new(machine.clone(), machine, config).unwrap();
    assert!(matches!(lockstep.run(&idle(0), 40), RunOutcome::Diverged(_)));
    assert_eq!(lockstep.evidence().unwrap().frame_localization.as_ref().unwrap().frame, 19);
    lockstep.rollback().unwrap();
    assert_eq!(lockstep.run(&idle(0), 20), RunOutcome::Agreed { frames: 20 });
}
