//! Lagging steps at instruction and scanline granularity (`Machine::step_instruction_lagging`,
//! `Machine::step_to_next_line_lagging`): the runner compares lagging records where both machines
//! lag, and must find exactly what it finds comparing settled ones. Random single-bit flips anywhere in B's state, applied by a wrapper at the first
//! instruction boundary past a random cycle (not by the runner's fault plan, which turns lagging
//! off), are run through the runner with the wrapper lagging and with it stepping settled: the
//! outcomes (divergence, sync point, records with their state hashes) must be identical. Two
//! machines that reached one state by different histories (one ran, one was restored) must agree.

mod common;

use anes_core::movie::{FrameInput, InputStream};
use anes_lockstep::{Granularity, Lockstep, LockstepConfig, Machine, NesMachine, RunOutcome, Threading};
use common::{Rng, nes_subject};

const FLIPS: usize = 40;
const RUN_FRAMES: u64 = 3;

/// A flip of one state bit at the first instruction boundary at or past `cpu_cycle`.
#[derive(Debug, Clone, Copy)]
struct Flip {
    section: usize,
    offset: usize,
    bit: u8,
    cpu_cycle: u64,
}

/// The anes core with an optional flip, stepping lagging or not (`lags`). The flip is tied to the
/// cycle, so a replay from a checkpoint applies it again.
#[derive(Debug, Clone)]
struct Flipping {
    inner: NesMachine,
    lags: bool,
    flip: Option<Flip>,
    /// The flip was refused by the core (an impossible resulting state).
    refused: bool,
}

impl Flipping {
    fn after_step(&mut self, before: u64) {
        let Some(flip) = self.flip else { return };
        let now = self.inner.probe().cpu_cycle;
        if before < flip.cpu_cycle && flip.cpu_cycle <= now {
            // A flip lands in the settled machine (the fault plan's faults do, too).
            self.inner.settle();
            self.refused |= self.inner.flip_state_bit(flip.section, flip.offset, flip.bit).is_err();
        }
    }
}

impl Machine for Flipping {
    type Input = FrameInput;

    fn lag_signature(&self) -> Option<u64> {
        self.inner.lag_signature().filter(|_| self.lags)
    }

    fn step_instruction(&mut self) -> bool {
        let before = self.inner.probe().cpu_cycle;
        let done = self.inner.step_instruction();
        self.after_step(before);
        done
    }

    fn step_instruction_lagging(&mut self) -> bool {
        let before = self.inner.probe().cpu_cycle;
        let done = self.inner.step_instruction_lagging();
        self.after_step(before);
        done
    }

    fn step_to_next_line(&mut self) -> bool {
        let before = self.inner.probe().cpu_cycle;
        let done = self.inner.step_to_next_line();
        self.after_step(before);
        done
    }

    fn step_to_next_line_lagging(&mut self) -> bool {
        let before = self.inner.probe().cpu_cycle;
        let done = self.inner.step_to_next_line_lagging();
        self.after_step(before);
        done
    }

    anes_lockstep::forward_machine!(inner => begin_frame, record, probe, sync_record,
        lagging_sync_record, settle, state_hash, section_count, section_name, section_bytes,
        field_name, snapshot_len, save_state, load_state, disassemble, opcode, flip_state_bit);
}

fn config(granularity: Granularity, threading: Threading) -> LockstepConfig {
    LockstepConfig {
        granularity,
        threading,
        checkpoint_every: 1,
        checkpoints_kept: 4,
        pictures: false,
        localize: false,
        ..LockstepConfig::default()
    }
}

/// A run of A = the subject against B = the subject with `flip`, both lagging or both not.
fn run(
    base: &NesMachine,
    flip: Flip,
    granularity: Granularity,
    lags: bool,
    threading: Threading,
) -> (RunOutcome, bool) {
    let a = Flipping { inner: base.clone(), lags, flip: None, refused: false };
    let b = Flipping { flip: Some(flip), ..a.clone() };
    let mut lockstep = Lockstep::new(a, b, config(granularity, threading)).unwrap();
    let outcome = lockstep.run(&InputStream::new(), RUN_FRAMES);
    (outcome, lockstep.machine_b().refused)
}

#[test]
fn lagging_records_find_what_settled_records_find() {
    let base = nes_subject("lagging");
    let start_cycle = base.probe().cpu_cycle;
    let mut probe = base.clone();
    probe.run_frame(FrameInput::default());
    probe.run_frame(FrameInput::default());
    let cycle_span = probe.probe().cpu_cycle - start_cycle;
    let mut rng = Rng(0x1A66_1136);
    for granularity in [Granularity::Instruction, Granularity::Scanline] {
        let (mut diverged, mut refused) = (0, 0);
        for i in 0..FLIPS {
            let drawn = common::draw_flip(&mut rng, &base, start_cycle, cycle_span);
            let flip = Flip {
                section: drawn.section,
                offset: drawn.offset,
                bit: drawn.bit,
                cpu_cycle: drawn.cpu_cycle,
            };
            let context =
                format!("{granularity}: flip {} bit {} at cycle {}", drawn.name, drawn.bit, drawn.cpu_cycle);
            let (settled, settled_refused) = run(&base, flip, granularity, false, Threading::SameThread);
            if settled_refused {
                // A refused flip settles B alone (see `Flipping::after_step`): only a fault plan's
                // faults may do that, and a plan turns lagging off.
                refused += 1;
                continue;
            }
            let (lagging, _) = run(&base, flip, granularity, true, Threading::SameThread);
            assert_eq!(lagging, settled, "{context}: lagging and settled records disagree");
            if matches!(lagging, RunOutcome::Diverged(_)) {
                diverged += 1;
            }
            if i % 8 == 0 {
                let (threaded, _) = run(&base, flip, granularity, true, Threading::Threaded { window: 64 });
                assert_eq!(threaded, settled, "{context}: threaded");
            }
        }
        eprintln!("{granularity}: {diverged} diverged, {refused} refused of {FLIPS}");
        assert!(diverged > FLIPS / 2, "{granularity}: {diverged} of {FLIPS} flips diverged");
    }
}

/// A restored machine predicts its PPU schedule afresh where the one that ran keeps its own: both
/// are right, and the lagging runner must not take the difference for a divergence.
#[test]
fn a_machine_restored_mid_run_agrees_with_the_one_that_ran() {
    let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap();
    let mut ran = NesMachine::from_ines(&rom, anes_core::NesConfig::default()).unwrap();
    for _ in 0..30 {
        ran.run_frame(FrameInput::default());
    }
    let mut snapshot = Vec::new();
    ran.save_state(&mut snapshot);
    let mut restored = NesMachine::from_ines(&rom, anes_core::NesConfig::default()).unwrap();
    restored.load_state(&snapshot).unwrap();
    for granularity in [Granularity::Instruction, Granularity::Scanline] {
        for threading in [Threading::SameThread, Threading::Threaded { window: 64 }] {
            let config = config(granularity, threading);
            let mut lockstep = Lockstep::new(ran.clone(), restored.clone(), config).unwrap();
            let outcome = lockstep.run(&InputStream::new(), 10);
            assert_eq!(outcome, RunOutcome::Agreed { frames: 10 }, "{granularity} {threading:?}");
        }
    }
}
