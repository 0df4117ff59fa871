//! The comparator's self-test: 1,000 random single-bit faults in hashed state. Every fault that leaves
//! the states different at the next sync point is detected there, localized to the instruction during
//! which it was injected and to the injected field, and rollback restores agreement. A fault the
//! program overwrites before the next sync point (masked) is confirmed by an instruction-granularity
//! rerun and counted as masked, never silently.

mod common;

use anes_core::movie::{FrameInput, InputStream};
use anes_lockstep::{
    DivergenceKind, Fault, FaultFate, FaultPlan, Granularity, Lockstep, LockstepConfig, Machine, RunOutcome,
    WriteCause,
};
use common::{Rng, nes_subject};

const FAULTS: usize = 1000;
/// Faults are drawn over the first two frames' worth of CPU cycles.
const SPAN_FRAMES: usize = 2;
/// Frames a run may take to reach any fault's cycle and the sync point after it.
const RUN_FRAMES: u64 = 4;

struct Drawn {
    section: usize,
    offset: usize,
    bit: u8,
    cpu_cycle: u64,
    name: String,
    /// The byte belongs to the machine's CPU cycle counter: a flip there is a cycle misalignment.
    moves_cycle: bool,
}

/// Draws a fault: a section with state, a byte, a bit, and a cycle within the first frames.
fn draw<M: Machine<Input = FrameInput> + Clone>(
    rng: &mut Rng,
    machine: &M,
    start_cycle: u64,
    cycle_span: u64,
) -> Drawn {
    let f = common::draw_flip(rng, machine, start_cycle, cycle_span);
    let mut flipped = machine.clone();
    let moves_cycle = flipped.flip_state_bit(f.section, f.offset, f.bit).is_ok()
        && flipped.probe().cpu_cycle != machine.probe().cpu_cycle;
    Drawn {
        section: f.section,
        offset: f.offset,
        bit: f.bit,
        cpu_cycle: f.cpu_cycle,
        name: f.name,
        moves_cycle,
    }
}

fn plan(machine: &impl Machine<Input = FrameInput>, drawn: &Drawn) -> FaultPlan {
    FaultPlan::new().with(Fault::FlipBit {
        section: machine.section_name(drawn.section).to_string(),
        offset: drawn.offset,
        bit: drawn.bit,
        cpu_cycle: drawn.cpu_cycle,
    })
}

#[test]
fn thousand_random_bit_flips_are_caught_localized_or_confirmed_masked() {
    campaign(nes_subject("thousand_random_bit_flips"));
}

fn campaign<M: Machine<Input = FrameInput> + Clone + Send>(base: M) {
    let start_cycle = base.probe().cpu_cycle;
    // Where each of the first frames ends, to start the masked-fault reruns at the fault's frame.
    let mut frame_ends = Vec::new();
    let mut probe = base.clone();
    for _ in 0..RUN_FRAMES {
        frame_ends.push(probe.run_frame(FrameInput::default()).cpu_cycle);
    }
    let cycle_span = frame_ends[SPAN_FRAMES - 1] - start_cycle;
    let started = std::time::Instant::now();
    // Two threads share the faults (the machine has two cores); each draws from its own seed.
    let totals = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2u64)
            .map(|worker| {
                let (base, frame_ends) = (base.clone(), frame_ends.clone());
                scope.spawn(move || {
                    let mut rng = Rng(0x00A5_E5F1_1B17 + worker);
                    inject(&base, &frame_ends, start_cycle, cycle_span, &mut rng, FAULTS / 2)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("worker"))
            .fold([0; 3], |t, c| [t[0] + c[0], t[1] + c[1], t[2] + c[2]])
    });
    let [detected, masked, refused] = totals;
    eprintln!(
        "{FAULTS} faults: {detected} detected and localized, {masked} masked (confirmed), {refused} refused, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(detected + masked, FAULTS);
    assert!(detected > FAULTS / 2, "most faults in this workload outlive a frame ({detected} did)");
}

/// Injects `count` faults one run each; returns how many were detected, masked and refused.
fn inject<M: Machine<Input = FrameInput> + Clone + Send>(
    base: &M,
    frame_ends: &[u64],
    start_cycle: u64,
    cycle_span: u64,
    rng: &mut Rng,
    count: usize,
) -> [usize; 3] {
    let inputs = InputStream::new();
    let (mut detected, mut masked, mut refused) = (0usize, 0usize, 0usize);
    while detected + masked < count {
        let drawn = draw(rng, base, start_cycle, cycle_span);
        let config = LockstepConfig {
            checkpoint_every: 1,
            checkpoints_kept: 4,
            pictures: false,
            // Replays here are shorter than a frame: hash often, so the exact pass is short.
            hash_every_instructions: 128,
            faults: plan(base, &drawn),
            ..LockstepConfig::default()
        };
        let mut lockstep = Lockstep::new(base.clone(), base.clone(), config.clone()).unwrap();
        let outcome = lockstep.run(&inputs, RUN_FRAMES);
        let fired = lockstep.fired_faults();
        assert_eq!(fired.len(), 1, "{}: the fault must come due within {RUN_FRAMES} frames", drawn.name);
        let fired = &fired[0];
        let fate = lockstep.fault_fates().remove(0).fate;
        if fired.refused.is_some() {
            // The core refuses flips that would make an impossible state (e.g. a CPU/PPU phase of 4).
            assert!(matches!(fate, FaultFate::Refused { .. }), "{}: {fate:?}", drawn.name);
            refused += 1;
            continue;
        }
        let context = format!("flip {} bit {} at cycle {}", drawn.name, drawn.bit, drawn.cpu_cycle);
        match outcome {
            RunOutcome::Diverged(divergence) => {
                detected += 1;
                assert_eq!(divergence.frame, fired.frame, "{context}: seen at the next sync point");
                assert_eq!(
                    fate,
                    FaultFate::Detected {
                        frame: fired.frame,
                        cpu_cycle: fired.cpu_cycle,
                        sync_point: divergence.sync_point
                    },
                    "{context}"
                );
                let evidence = lockstep.evidence().unwrap();
                let found = evidence
                    .localization
                    .as_ref()
                    .unwrap_or_else(|| panic!("{context}: not localized: {:?}", evidence.localization_error));
                assert_localized(found, &drawn, &context);
                let rollback = lockstep.rollback().unwrap();
                assert!(rollback.frame <= fired.frame, "{context}");
                assert_eq!(lockstep.machine_a().state_hash(), rollback.state_hash, "{context}");
                assert_eq!(lockstep.machine_b().state_hash(), rollback.state_hash, "{context}");
                assert_eq!(
                    lockstep.run(&inputs, 1),
                    RunOutcome::Agreed { frames: 1 },
                    "{context}: after rollback"
                );
            }
            RunOutcome::Agreed { .. } => {
                masked += 1;
                assert!(
                    matches!(fate, FaultFate::Masked { frame, .. } if frame == fired.frame),
                    "{context}: {fate:?}"
                );
                confirm_masked(base, &drawn, frame_ends, config, &context);
            }
        }
    }
    [detected, masked, refused]
}

fn assert_localized(found: &anes_lockstep::Localization, drawn: &Drawn, context: &str) {
    assert!(
        found.cpu_cycle < drawn.cpu_cycle && drawn.cpu_cycle <= found.end_cpu_cycle,
        "{context}: localized to the instruction at cycles {}..={}",
        found.cpu_cycle + 1,
        found.end_cpu_cycle
    );
    let names: Vec<&str> = found.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, [drawn.name.as_str()], "{context}: exactly the injected field differs");
    let field = &found.fields[0];
    assert_eq!(field.last_write_b.map(|w| w.cause), Some(WriteCause::Fault), "{context}");
    let kind = if drawn.moves_cycle { DivergenceKind::CycleMisalignment } else { DivergenceKind::State };
    assert_eq!(found.kind, kind, "{context}");
}

/// Reruns a fault that went unseen at frame granularity with instruction granularity, from the start
/// of the frame it fires in: the difference must show right after the instruction it was injected in.
fn confirm_masked<M: Machine<Input = FrameInput> + Clone + Send>(
    base: &M,
    drawn: &Drawn,
    frame_ends: &[u64],
    config: LockstepConfig,
    context: &str,
) {
    let frames_before = frame_ends.iter().filter(|&&end| end < drawn.cpu_cycle).count();
    let mut a = base.clone();
    for _ in 0..frames_before {
        a.run_frame(FrameInput::default());
    }
    let config = LockstepConfig { granularity: Granularity::Instruction, ..config };
    let mut lockstep = Lockstep::new(a.clone(), a, config).unwrap();
    let outcome = lockstep.run(&InputStream::new(), 1);
    assert!(
        matches!(outcome, RunOutcome::Diverged(_)),
        "{context}: masked, but the instruction rerun saw nothing"
    );
    let evidence = lockstep.evidence().unwrap();
    let found = evidence.localization.as_ref().unwrap_or_else(|| {
        panic!("{context}: rerun not localized: {:?} ({})", evidence.localization_error, evidence.divergence)
    });
    assert_localized(found, drawn, context);
}
