//! Localization: from a divergence seen at a sync point back to the first instruction after which the
//! two machines' states differ, with a field-level diff and, for every differing byte, the last write.
//!
//! Hashing the whole state after every instruction is slow, so the replay compares cheaply first: the
//! [`Probe`] (CPU cycle, raster position, registers) after every instruction and the full state hash
//! every N instructions and at every frame end, keeping snapshots of the last window that agreed.
//! On the first mismatch it restores that window and replays it comparing the full hash after every
//! instruction: the result is exactly the first divergent instruction.

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
}

/// Where a replay starts: a verified checkpoint.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReplayStart<'s> {
    pub frame: u64,
    pub state_hash: StateHash,
    pub snapshot_a: &'s [u8],
    pub snapshot_b: &'s [u8],
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
    /// Instructions stepped since the checkpoint.
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
    /// where the instruction started. Watched bytes are checked after each machine's instruction and
    /// again after B's faults fire.
    fn step(&mut self, mut watch: Option<&mut Vec<Watched>>) -> (bool, bool, [Before; 2]) {
        if self.need_begin {
            let input = self.inputs.input(self.frame);
            self.a.begin_frame(input);
            let input_b = self.faults.input_for(self.frame, input, &*self.b, 0);
            self.b.begin_frame(input_b);
            self.need_begin = false;
        }
        let before = [
            Before { probe: self.a.probe(), frame: self.frame },
            Before { probe: self.b.probe(), frame: self.frame },
        ];
        let done_a = self.a.step_instruction();
        let done_b = self.b.step_instruction();
        if let Some(watch) = watch.as_deref_mut() {
            check_watch(watch, 0, &*self.a, before[0], WriteCause::Instruction);
            check_watch(watch, 1, &*self.b, before[1], WriteCause::Instruction);
        }
        if self.faults.has_pending() && self.faults.due_before(self.b.probe().cpu_cycle) {
            self.faults.fire_due(self.frame, &mut *self.b, 0);
            if let Some(watch) = watch {
                check_watch(watch, 1, &*self.b, before[1], WriteCause::Fault);
            }
        }
        self.steps += 1;
        if done_a && done_b {
            self.frame += 1;
            self.need_begin = true;
        }
        (done_a, done_b, before)
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

/// Replays from `start` and finds the first divergent instruction of the run that diverged as
/// `divergence` says, for machines that both step instructions (the caller brackets the replay with
/// the fault schedule's `begin_replay` / `end_replay`). Leaves the machines at the end of the divergent
/// frame (for the pictures).
pub(crate) fn localize_instruction<A, B, S>(
    a: &mut A,
    b: &mut B,
    faults: &mut FaultSchedule,
    inputs: &S,
    start: ReplayStart<'_>,
    divergence: &Divergence,
    config: &LockstepConfig,
) -> Result<Found, LocalizeError>
where
    A: Machine + ?Sized,
    B: Machine<Input = A::Input> + ?Sized,
    S: InputSource<A::Input> + ?Sized,
{
    let hash_every = u64::from(config.hash_every_instructions);
    let mut pair = Pair { a, b, faults, inputs, frame: start.frame, need_begin: true, steps: 0 };
    let mut origin = Window {
        a: start.snapshot_a.to_vec(),
        b: start.snapshot_b.to_vec(),
        frame: start.frame,
        need_begin: true,
        steps: 0,
        marks: Vec::new(),
    };
    pair.faults.replay_marks(&mut origin.marks);
    pair.restore(&origin)?;
    if pair.a.state_hash() != start.state_hash || pair.b.state_hash() != start.state_hash {
        return Err(LocalizeError::CheckpointMismatch { frame: start.frame });
    }

    // Coarse pass: probes after every instruction, the full hash every `hash_every` and at frame ends.
    let mut window = Window {
        a: Vec::with_capacity(start.snapshot_a.len()),
        b: Vec::with_capacity(start.snapshot_b.len()),
        frame: 0,
        need_begin: true,
        steps: 0,
        marks: Vec::new(),
    };
    pair.save(&mut window);
    // The sync point where the comparator saw the divergence is always compared in full: a difference
    // the program overwrites soon after (seen only at a fine granularity) must not slip through.
    let not_reproduced = LocalizeError::NotReproduced { from: start.frame, to: divergence.frame };
    let mismatch_steps = loop {
        let (done_a, done_b, before) = pair.step(None);
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
        let (done_a, done_b, before) = pair.step(None);
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

    // Provenance: replay from the checkpoint watching only the differing bytes.
    let mut watch: Vec<Watched> = Vec::new();
    for field in &fields {
        for offset in field.bytes.clone() {
            watch.push(Watched { section: field.section_index, offset, value: [0; 2], last: [None; 2] });
        }
    }
    pair.restore(&origin)?;
    for byte in &mut watch {
        byte.value = [
            pair.a.section_bytes(byte.section).get(byte.offset).copied().unwrap_or(0),
            pair.b.section_bytes(byte.section).get(byte.offset).copied().unwrap_or(0),
        ];
    }
    while pair.steps < found_steps {
        pair.step(Some(&mut watch));
    }
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
    let picture_size = if config.pictures { pair.a.picture_size() } else { None };
    let (mut picture_a, mut picture_b) = (Vec::new(), Vec::new());
    if picture_size.is_some() {
        let frame = pair.frame;
        if !pair.need_begin {
            for _ in 0..MAX_PICTURE_STEPS {
                if pair.a.step_instruction() {
                    break;
                }
            }
            for _ in 0..MAX_PICTURE_STEPS {
                let done = pair.b.step_instruction();
                if pair.faults.has_pending() && pair.faults.due_before(pair.b.probe().cpu_cycle) {
                    pair.faults.fire_due(frame, &mut *pair.b, 0);
                }
                if done {
                    break;
                }
            }
        }
        pair.a.picture_rgb(&mut picture_a);
        pair.b.picture_rgb(&mut picture_b);
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
            checkpoint_frame: start.frame,
            instructions_replayed: found_steps,
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
