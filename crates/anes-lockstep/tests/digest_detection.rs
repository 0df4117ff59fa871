//! The sync digest detects what the state hash detects, at the same sync point: random single-bit
//! faults anywhere in the state (random section, byte, bit and cycle, as in the fault campaign) are
//! run through the lockstep runner twice, comparing the anes core's incremental digest inside frames
//! and comparing the full blake3 state hash there instead (a wrapper that keeps the `Machine`
//! default). Outcomes, divergence records (state hashes included) and fates must be identical; at
//! instruction granularity every fault is detected at the first sync point after it; the threaded
//! mode finds the same divergence as the same-thread mode.

mod common;

use anes_core::movie::{FrameInput, InputStream};
use anes_lockstep::{
    Fault, FaultFate, FaultPlan, Granularity, Lockstep, LockstepConfig, Machine, RunOutcome, Threading,
};
use common::{Rng, nes_subject};

const FAULTS_PER_GRANULARITY: usize = 40;
/// Faults are drawn over the first two frames' worth of CPU cycles; runs take up to three frames.
const SPAN_FRAMES: u64 = 2;
const RUN_FRAMES: u64 = 3;

/// A machine compared by its full state hash at every sync point: the [`Machine::sync_record`]
/// default, which the runner used everywhere before the digest.
#[derive(Debug, Clone)]
struct HashOnly<M>(M);

impl<M: Machine<Input = FrameInput>> Machine for HashOnly<M> {
    type Input = FrameInput;

    anes_lockstep::forward_machine!(0 => begin_frame, step_instruction, run_frame, record, probe,
        state_hash, section_count, section_name, section_bytes, field_name, snapshot_len, save_state,
        load_state, disassemble, opcode, flip_state_bit);
}

/// A random flip ([`common::draw_flip`]) as a fault, with the field's name.
fn draw<M: Machine>(rng: &mut Rng, machine: &M, start_cycle: u64, cycle_span: u64) -> (Fault, String) {
    let f = common::draw_flip(rng, machine, start_cycle, cycle_span);
    let section = machine.section_name(f.section).to_string();
    (Fault::FlipBit { section, offset: f.offset, bit: f.bit, cpu_cycle: f.cpu_cycle }, f.name)
}

/// One run: its outcome and the fault's fate.
fn run<M: Machine<Input = FrameInput> + Clone + Send>(
    base: &M,
    fault: &Fault,
    granularity: Granularity,
    threading: Threading,
) -> (RunOutcome, FaultFate) {
    let config = LockstepConfig {
        granularity,
        threading,
        checkpoint_every: 1,
        checkpoints_kept: 4,
        pictures: false,
        localize: false,
        faults: FaultPlan::new().with(fault.clone()),
        ..LockstepConfig::default()
    };
    let mut lockstep = Lockstep::new(base.clone(), base.clone(), config).unwrap();
    let outcome = lockstep.run(&InputStream::new(), RUN_FRAMES);
    let fate = lockstep.fault_fates().remove(0).fate;
    (outcome, fate)
}

#[test]
fn the_digest_detects_every_fault_the_state_hash_does_at_the_same_sync_point() {
    let base = nes_subject("digest_detection");
    let start_cycle = base.probe().cpu_cycle;
    let mut probe = base.clone();
    for _ in 0..SPAN_FRAMES {
        probe.run_frame(FrameInput::default());
    }
    let cycle_span = probe.probe().cpu_cycle - start_cycle;
    let hashed = HashOnly(base.clone());
    let mut rng = Rng(0x00D1_6E57);
    for granularity in [Granularity::Instruction, Granularity::Scanline] {
        let (mut detected, mut masked, mut refused) = (0, 0, 0);
        for i in 0..FAULTS_PER_GRANULARITY {
            let (fault, name) = draw(&mut rng, &base, start_cycle, cycle_span);
            let context = format!("{granularity}: {fault} ({name})");
            let (outcome, fate) = run(&base, &fault, granularity, Threading::SameThread);
            let (outcome_hashed, fate_hashed) = run(&hashed, &fault, granularity, Threading::SameThread);
            assert_eq!(outcome, outcome_hashed, "{context}: digest and state hash disagree");
            assert_eq!(fate, fate_hashed, "{context}");
            match fate {
                FaultFate::Detected { .. } => detected += 1,
                FaultFate::Masked { .. } => masked += 1,
                FaultFate::Refused { .. } => refused += 1,
                FaultFate::NotReached => panic!("{context}: never reached"),
            }
            if granularity == Granularity::Instruction {
                // Nothing runs between the instruction a fault fires after and the next sync point.
                assert!(!matches!(fate, FaultFate::Masked { .. }), "{context}: {fate:?}");
            }
            if i % 8 == 0 {
                let threaded = run(&base, &fault, granularity, Threading::Threaded { window: 64 });
                assert_eq!(threaded, (outcome, fate), "{context}: threaded");
            }
        }
        eprintln!("{granularity}: {detected} detected, {masked} masked, {refused} refused");
        assert!(detected > FAULTS_PER_GRANULARITY / 2, "{granularity}: {detected} detected");
    }
}
