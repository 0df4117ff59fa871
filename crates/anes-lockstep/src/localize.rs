//! Localization: from a divergence seen at a sync point back to the first instruction after which the
//! two machines' states differ, with a field-level diff and, for every differing byte, the last write.
//!
//! The search starts where the comparator last saw the machines agree (the sync point before the one
//! that diverged), not at the checkpoint the replay restores: between the two, B may have differed
//! and healed (a masked fault, a difference the program overwrote), and that is not the divergence
//! that was detected. The caller brings both machines there from the checkpoint (`collect.rs`).
//!
//! Hashing the whole state after every instruction is slow, so the search compares cheaply first: the
//! [`Probe`] (CPU cycle, raster position, registers) after every instruction and the full state hash
//! every N instructions and at every frame end, keeping snapshots of the last window that agreed.
//! On the first mismatch it restores that window and replays it comparing the full hash after every
//! instruction: the result is exactly the first divergent instruction after the last agreement.

use anes_core::state::StateHash;
use serde::Serialize;
use thiserror::Error;

use crate::config::LockstepConfig;
use crate::diff::{FieldDiff, LastWrite, WriteCause, diff_fields};
use crate::input::InputSource;
use crate::machine::{Machine, MachineError, Probe};
use crate::outcome::{Divergence, DivergenceKind};
use crate::schedule::FaultSchedule;

/// Fields listed in a report at most; the rest are counted in [`Localization::fields_omitted`].
pub(crate) const MAX_FIELDS: usize = 512;
/// Instructions run to finish the divergent frame for its pictures before giving up.
const MAX_PICTURE_STEPS: u64 = 10_000_000;

/// The first divergent instruction and the state difference it left.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Localization {
    /// State or cycle misalignment (the CPU cycles differ after the instruction).
    pub kind: DivergenceKind,
    /// Input-stream index of the frame the instruction ran in.
    pub frame: u64,
    /// CPU cycle at the start of the instruction (as in a trace line).
    pub cpu_cycle: u64,
    /// Machine A's CPU cycle after the instruction.
    pub end_cpu_cycle: u64,
    /// Machine B's CPU cycle after the instruction.
    pub end_cpu_cycle_b: u64,
    /// PPU scanline (raster line) at the start of the instruction.
    pub scanline: u32,
    /// PPU dot (position in the raster line) at the start of the instruction.
    pub dot: u32,
    /// Program counter of the instruction.
    pub pc: u64,
    /// Its opcode byte.
    pub opcode: u8,
    /// Its disassembly (`LDA $0342 = 17`), from machine A.
    pub instruction: String,
    /// Input-stream index of the checkpoint the replay started from.
    pub checkpoint_frame: u64,
    /// Instructions replayed from the checkpoint, the divergent one included.
    pub instructions_replayed: u64,
    /// Every differing field after the instruction, grouped by section in the machine's order.
    pub fields: Vec<FieldDiff>,
    /// Differing fields beyond the listed ones.
    pub fields_omitted: usize,
}

impl Localization {
    /// The fields of one section.
    pub fn section_fields<'s>(&'s self, section: &'s str) -> impl Iterator<Item = &'s FieldDiff> + 's {
        self.fields.iter().filter(move |f| f.section == section)
    }

    /// Section names with differing fields, in order.
    pub fn sections(&self) -> Vec<&'static str> {
        let mut sections: Vec<&'static str> = Vec::new();
        for field in &self.fields {
            if sections.last() != Some(&field.section) {
                sections.push(field.section);
            }
        }
        sections
    }
}

/// Why localization did not find the instruction.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LocalizeError {
    /// A machine refused the checkpoint snapshot.
    #[error("restoring the checkpoint failed: {0}")]
    Restore(#[from] MachineError),
    /// The restored checkpoint does not have the hash recorded when it was verified.
    #[error("the checkpoint at frame {frame} does not restore to its recorded state hash")]
    CheckpointMismatch {
        /// Input-stream index of the checkpoint.
        frame: u64,
    },
    /// The replay reached the end of the divergent frame with both machines still agreeing: the
    /// divergence does not reproduce (a nondeterministic machine, or state outside the snapshot).
    #[error("replaying from frame {from} to the end of frame {to} reproduced no divergence")]
    NotReproduced {
        /// The frame of the verified checkpoint the replay started from.
        from: u64,
        /// The frame the divergence was seen in.
        to: u64,
    },
    /// Replayed from the checkpoint, the machines' whole states differ at the last sync point where
    /// the comparator saw them agree by state hash (a nondeterministic machine, or state outside the
    /// snapshot): there is no agreement to search from. (Where it saw them agree by digest, inside a
    /// frame, the search falls back to the frame's start.)
    #[error(
        "replayed from the checkpoint, the machines differ at sync point {sync_point} (frame {frame}), where the comparator saw them agree"
    )]
    LastAgreementNotReproduced {
        /// Ordinal of that sync point.
        sync_point: u64,
        /// Input-stream index of the frame in progress there, or of the next one at a frame end.
        frame: u64,
    },
}

/// Where a replay starts: a verified checkpoint.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReplayStart<'s> {
    pub frame: u64,
    pub state_hash: StateHash,
    pub snapshot_a: &'s [u8],
    pub snapshot_b: &'s [u8],
    /// B's fault replay marks at the checkpoint ([`FaultSchedule::replay_marks`] at the start of the
    /// replay session).
    pub fault_marks: &'s [bool],
}

/// Where the search for the first divergent instruction starts: the last sync point at which the
/// comparator saw the machines agree. Both machines are there, settled, when the search begins.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LastAgreement {
    /// Its ordinal.
    pub sync_point: u64,
    /// Input-stream index of the frame in progress there, or of the next one at a frame end.
    pub frame: u64,
    /// The sync point is inside `frame` (its input applied), not at its start.
    pub in_frame: bool,
    /// Both machines' probe there.
    pub probe: Probe,
    /// Both machines' state hash there.
    pub state_hash: StateHash,
}

/// What a localization found: the instruction, or (for machines that do not step instructions) the
/// frame.
#[derive(Debug)]
pub(crate) enum Located {
    Instruction(Localization),
    Frame(crate::FrameLocalization),
}

/// A localization with the raw material for the evidence bundle.
#[derive(Debug)]
pub(crate) struct Found {
    pub localization: Located,
    pub snapshot_a: Vec<u8>,
    pub snapshot_b: Vec<u8>,
    pub picture_size: Option<(u32, u32)>,
    pub picture_a: Vec<u8>,
    pub picture_b: Vec<u8>,
}

/// Both machines stepped together, instruction by instruction, with B's faults replayed.
struct Pair<'m, A: ?Sized, B: ?Sized, S: ?Sized> {
    a: &'m mut A,
    b: &'m mut B,
    faults: &'m mut FaultSchedule,
    inputs: &'m S,
    /// Frame the next instruction belongs to.
    frame: u64,
    /// The next step begins a new frame (applies its input first).
    need_begin: bool,
    /// Instructions stepped since the last agreement.
    steps: u64,
}

/// A point of the replay to come back to: snapshots plus the replay's own position.
struct Window {
    a: Vec<u8>,
    b: Vec<u8>,
    frame: u64,
    need_begin: bool,
    steps: u64,
    marks: Vec<bool>,
}

/// A watched byte of state and its last change in each machine.
struct Watched {
    section: usize,
    offset: usize,
    value: [u8; 2],
    last: [Option<LastWrite>; 2],
}

#[derive(Clone, Copy)]
struct Before {
    probe: Probe,
    frame: u64,
}

/// One machine's place in a replay of its own (the provenance pass runs each machine alone: B may
/// have taken other instructions than A where it differed and healed before the last agreement).
struct Solo {
    /// Frame the next instruction belongs to.
    frame: u64,
    /// The next step begins a new frame (applies its input first).
    need_begin: bool,
    /// Instructions stepped since the checkpoint.
    steps: u64,
}

/// Steps `machine` one instruction of `frame`, applying the frame's input first when `begin`, and with
/// `faults` (machine B's) firing what came due; watched bytes are checked after the instruction and
/// again after the faults, as `side`'s. Returns whether the instruction completed the frame and where
/// it started.
fn step_one<M, S>(
    machine: &mut M,
    mut faults: Option<&mut FaultSchedule>,
    inputs: &S,
    (frame, begin): (u64, bool),
    watch: &mut [Watched],
    side: usize,
) -> (bool, Before)
where
    M: Machine + ?Sized,
    S: InputSource<M::Input> + ?Sized,
{
    if begin {
        let input = inputs.input(frame);
        let input = match faults.as_deref_mut() {
            Some(faults) => faults.input_for(frame, input, &*machine, 0),
            None => input,
        };
        machine.begin_frame(input);
    }
    let before = Before { probe: machine.probe(), frame };
    let done = machine.step_instruction();
    check_watch(watch, side, &*machine, before, WriteCause::Instruction);
    if let Some(faults) = faults {
        if faults.has_pending() && faults.due_before(machine.probe().cpu_cycle) {
            faults.fire_due(frame, &mut *machine, 0);
            check_watch(watch, side, &*machine, before, WriteCause::Fault);
        }
    }
    (done, before)
}

impl<A, B, S> Pair<'_, A, B, S>
where
    A: Machine + ?Sized,
    B: Machine<Input = A::Input> + ?Sized,
    S: InputSource<A::Input> + ?Sized,
{
    fn save(&self, window: &mut Window) {
        self.a.save_state(&mut window.a);
        self.b.save_state(&mut window.b);
        window.frame = self.frame;
        window.need_begin = self.need_begin;
        window.steps = self.steps;
        self.faults.replay_marks(&mut window.marks);
    }

    fn restore(&mut self, window: &Window) -> Result<(), MachineError> {
        self.a.load_state(&window.a)?;
        self.b.load_state(&window.b)?;
        self.frame = window.frame;
        self.need_begin = window.need_begin;
        self.steps = window.steps;
        self.faults.restore_replay_marks(&window.marks);
        Ok(())
    }

    /// Steps both machines one instruction; returns whether each completed its frame and, per machine,
    /// where the instruction started.
    fn step(&mut self) -> (bool, bool, [Before; 2]) {
        let at = (self.frame, self.need_begin);
        let (done_a, before_a) = step_one(&mut *self.a, None, self.inputs, at, &mut [], 0);
        let (done_b, before_b) = step_one(&mut *self.b, Some(&mut *self.faults), self.inputs, at, &mut [], 1);
        self.need_begin = false;
        self.steps += 1;
        if done_a && done_b {
            self.frame += 1;
            self.need_begin = true;
        }
        (done_a, done_b, [before_a, before_b])
    }
}

fn check_watch(
    watch: &mut [Watched],
    side: usize,
    machine: &(impl Machine + ?Sized),
    before: Before,
    cause: WriteCause,
) {
    for byte in watch {
        let value = machine.section_bytes(byte.section).get(byte.offset).copied().unwrap_or(0);
        if value != byte.value[side] {
            byte.value[side] = value;
            byte.last[side] = Some(LastWrite {
                pc: before.probe.pc,
                cpu_cycle: before.probe.cpu_cycle,
                frame: before.frame,
                cause,
            });
        }
    }
}

/// Replays `machine` alone from the checkpoint (already loaded, with B's fault marks there) through
/// the last agreement and `steps_after` instructions past it, recording the last change of each
/// watched byte as `side`'s. Returns where it stopped.
#[allow(clippy::too_many_arguments)]
fn replay_provenance<M, S>(
    machine: &mut M,
    mut faults: Option<&mut FaultSchedule>,
    inputs: &S,
    checkpoint_frame: u64,
    agreed: &LastAgreement,
    steps_after: u64,
    watch: &mut [Watched],
    side: usize,
) -> Result<Solo, LocalizeError>
where
    M: Machine + ?Sized,
    S: InputSource<M::Input> + ?Sized,
{
    for byte in watch.iter_mut() {
        byte.value[side] = machine.section_bytes(byte.section).get(byte.offset).copied().unwrap_or(0);
    }
    let mut solo = Solo { frame: checkpoint_frame, need_begin: true, steps: 0 };
    let mut step = |machine: &mut M, solo: &mut Solo, watch: &mut [Watched]| {
        let at = (solo.frame, solo.need_begin);
        let (done, _) = step_one(machine, faults.as_deref_mut(), inputs, at, watch, side);
        solo.need_begin = done;
        solo.frame += u64::from(done);
        solo.steps += 1;
    };
    // The last agreement by the machine's own position (a frame end is where the next frame begins),
    // confirmed by its state hash.
    while !(solo.frame == agreed.frame
        && solo.need_begin != agreed.in_frame
        && machine.probe() == agreed.probe
        && machine.state_hash() == agreed.state_hash)
    {
        if solo.frame > agreed.frame {
            return Err(LocalizeError::LastAgreementNotReproduced {
                sync_point: agreed.sync_point,
                frame: agreed.frame,
            });
        }
        step(machine, &mut solo, watch);
    }
    for _ in 0..steps_after {
        step(machine, &mut solo, watch);
    }
    Ok(solo)
}

/// Finds the first divergent instruction after the last agreement `agreed` (both machines are there)
/// of the run that diverged as `divergence` says, for machines that both step instructions; the
/// provenance of the differing fields is replayed from `checkpoint` (the caller brackets the whole
/// replay, from the checkpoint on, with the fault schedule's `begin_replay` / `end_replay`). Leaves
/// the machines at the end of the divergent frame (for the pictures).
#[allow(clippy::too_many_arguments)]
pub(crate) fn localize_instruction<A, B, S>(
    a: &mut A,
    b: &mut B,
    faults: &mut FaultSchedule,
    inputs: &S,
    checkpoint: ReplayStart<'_>,
    agreed: &LastAgreement,
    divergence: &Divergence,
    config: &LockstepConfig,
) -> Result<Found, LocalizeError>
where
    A: Machine + ?Sized,
    B: Machine<Input = A::Input> + ?Sized,
    S: InputSource<A::Input> + ?Sized,
{
    let hash_every = u64::from(config.hash_every_instructions);
    let mut pair = Pair { a, b, faults, inputs, frame: agreed.frame, need_begin: !agreed.in_frame, steps: 0 };

    // Coarse pass: probes after every instruction, the full hash every `hash_every` and at frame ends.
    let mut window = Window {
        a: Vec::with_capacity(checkpoint.snapshot_a.len()),
        b: Vec::with_capacity(checkpoint.snapshot_b.len()),
        frame: 0,
        need_begin: true,
        steps: 0,
        marks: Vec::new(),
    };
    pair.save(&mut window);
    // The sync point where the comparator saw the divergence is always compared in full: a difference
    // the program overwrites soon after (seen only at a fine granularity) must not slip through.
    let not_reproduced = LocalizeError::NotReproduced { from: checkpoint.frame, to: divergence.frame };
    let mismatch_steps = loop {
        let (done_a, done_b, before) = pair.step();
        let at_detection = before[0].frame > divergence.frame
            || (before[0].frame == divergence.frame && pair.a.probe().cpu_cycle >= divergence.a.cpu_cycle);
        let mut differ = done_a != done_b || pair.a.probe() != pair.b.probe();
        if !differ && (done_a || at_detection || pair.steps % hash_every == 0) {
            differ = pair.a.state_hash() != pair.b.state_hash();
            if !differ && at_detection {
                return Err(not_reproduced);
            }
            if !differ {
                pair.save(&mut window);
            }
        }
        if differ {
            break pair.steps;
        }
    };

    // Exact pass over the last window: the full hash after every instruction.
    pair.restore(&window)?;
    let mut text = String::new();
    let (before, opcode) = loop {
        text.clear();
        pair.a.disassemble(&mut text);
        let opcode = pair.a.opcode();
        let (done_a, done_b, before) = pair.step();
        if done_a != done_b || pair.a.probe() != pair.b.probe() || pair.a.state_hash() != pair.b.state_hash()
        {
            break (before, opcode);
        }
        if pair.steps >= mismatch_steps {
            return Err(not_reproduced);
        }
    };
    let found_steps = pair.steps;
    let (end_a, end_b) = (pair.a.probe().cpu_cycle, pair.b.probe().cpu_cycle);
    let mut snapshot_a = Vec::new();
    let mut snapshot_b = Vec::new();
    pair.a.save_state(&mut snapshot_a);
    pair.b.save_state(&mut snapshot_b);
    let (mut fields, fields_omitted) = diff_fields(&*pair.a, &*pair.b, MAX_FIELDS);

    // Provenance: each machine replayed from the checkpoint through the divergent instruction,
    // watching only the differing bytes (a write before the last agreement is as much the last one).
    let mut watch: Vec<Watched> = Vec::new();
    for field in &fields {
        for offset in field.bytes.clone() {
            watch.push(Watched { section: field.section_index, offset, value: [0; 2], last: [None; 2] });
        }
    }
    let Pair { a, b, faults, inputs, .. } = pair;
    a.load_state(checkpoint.snapshot_a)?;
    let solo_a = replay_provenance(a, None, inputs, checkpoint.frame, agreed, found_steps, &mut watch, 0)?;
    b.load_state(checkpoint.snapshot_b)?;
    faults.restore_replay_marks(checkpoint.fault_marks);
    let solo_b = replay_provenance(
        b,
        Some(&mut *faults),
        inputs,
        checkpoint.frame,
        agreed,
        found_steps,
        &mut watch,
        1,
    )?;
    let mut watched = watch.iter();
    for field in &mut fields {
        for _ in field.bytes.clone() {
            let byte = watched.next().expect("one watched byte per field byte");
            for (side, last) in [&mut field.last_write_a, &mut field.last_write_b].into_iter().enumerate() {
                if let Some(write) = byte.last[side] {
                    if last
                        .is_none_or(|l| (l.cpu_cycle, l.cause as u8) < (write.cpu_cycle, write.cause as u8))
                    {
                        *last = Some(write);
                    }
                }
            }
        }
    }

    // Pictures: finish the divergent frame on each machine.
    let picture_size = if config.pictures { a.picture_size() } else { None };
    let (mut picture_a, mut picture_b) = (Vec::new(), Vec::new());
    if picture_size.is_some() {
        if !solo_a.need_begin {
            for _ in 0..MAX_PICTURE_STEPS {
                if a.step_instruction() {
                    break;
                }
            }
        }
        if !solo_b.need_begin {
            for _ in 0..MAX_PICTURE_STEPS {
                let done = b.step_instruction();
                if faults.has_pending() && faults.due_before(b.probe().cpu_cycle) {
                    faults.fire_due(solo_b.frame, &mut *b, 0);
                }
                if done {
                    break;
                }
            }
        }
        a.picture_rgb(&mut picture_a);
        b.picture_rgb(&mut picture_b);
    }

    let kind = if end_a != end_b { DivergenceKind::CycleMisalignment } else { DivergenceKind::State };
    Ok(Found {
        localization: Located::Instruction(Localization {
            kind,
            frame: before[0].frame,
            cpu_cycle: before[0].probe.cpu_cycle,
            end_cpu_cycle: end_a,
            end_cpu_cycle_b: end_b,
            scanline: before[0].probe.scanline,
            dot: before[0].probe.dot,
            pc: before[0].probe.pc,
            opcode,
            instruction: text,
            checkpoint_frame: checkpoint.frame,
            instructions_replayed: solo_a.steps,
            fields,
            fields_omitted,
        }),
        snapshot_a,
        snapshot_b,
        picture_size,
        picture_a,
        picture_b,
    })
}
