//! When the faults of a [`FaultPlan`] fire, during a run and again during a localization replay, and
//! what became of each: every fault that fired is settled at the end of the run by the comparator's
//! verdict on the first sync point after it.

use serde::Serialize;

use crate::fate::{FaultFate, FaultOutcome};
use crate::fault::{Fault, FaultPlan, MAX_STALL_CYCLES};
use crate::input::EvidenceInput;
use crate::machine::{Machine, MachineError};

/// A fault that fired (or was refused by the machine when it came due).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FiredFault {
    /// The fault, as a spec string.
    pub spec: String,
    /// Input-stream frame index during which it fired.
    pub frame: u64,
    /// B's CPU cycle at the instruction boundary where it was applied.
    pub cpu_cycle: u64,
    /// Why the machine refused it, if it did (e.g. the flipped state would be impossible).
    pub refused: Option<String>,
}

#[derive(Debug, Clone)]
struct Entry {
    fault: Fault,
    /// Section index for flips, resolved against the machine once.
    section: usize,
    fired: Option<FiredFault>,
    /// Ordinal of the first sync point after it fired, which decides its fate.
    judged_at: u64,
    /// Whether the machines differed there, once a run compared it.
    detected: Option<bool>,
    /// Re-applied during the current replay.
    replayed: bool,
}

impl Entry {
    /// The fate of this fault when the comparator has compared `compared` sync points and, if
    /// `diverged_at` is set, found the last of them different.
    fn fate(&self, compared: u64, diverged_at: Option<u64>) -> FaultFate {
        let Some(fired) = self.fired.as_ref().filter(|_| self.judged_at <= compared) else {
            return FaultFate::NotReached;
        };
        let (frame, cpu_cycle, sync_point) = (fired.frame, fired.cpu_cycle, self.judged_at);
        if let Some(reason) = &fired.refused {
            return FaultFate::Refused { frame, cpu_cycle, reason: reason.clone() };
        }
        // Every sync point before the one that diverged agreed.
        match self.detected.unwrap_or(diverged_at == Some(sync_point)) {
            true => FaultFate::Detected { frame, cpu_cycle, sync_point },
            false => FaultFate::Masked { frame, cpu_cycle, sync_point },
        }
    }
}

/// The fault plan of machine B, with what has fired. Empty (and free) for machine A.
#[derive(Debug, Clone, Default)]
pub(crate) struct FaultSchedule {
    entries: Vec<Entry>,
    /// Lowest CPU cycle of an eligible state fault; `u64::MAX` when none (the hot path tests only this).
    next_due: u64,
    /// While replaying: faults that fired at or after this frame fire again; others never.
    replay_from: Option<u64>,
}

/// Why a fault plan does not fit the machine it targets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FaultPlanError {
    /// The flip names a section the machine does not have.
    #[error("fault {spec}: machine B has no section {section:?} (it has: {available})")]
    UnknownSection {
        /// The fault as its spec text.
        spec: String,
        /// Section asked for.
        section: String,
        /// Sections the machine has.
        available: String,
    },
    /// A stall built without [`crate::FaultPlan::parse`] is longer than [`crate::MAX_STALL_CYCLES`]
    /// (or of no cycles).
    #[error("fault {spec}: a stall of {cycles} cycles is out of range: 1 to {max} (one frame of CPU cycles)")]
    StallOutOfRange {
        /// The fault as its spec text.
        spec: String,
        /// The cycles asked for.
        cycles: u32,
        /// The longest stall allowed.
        max: u32,
    },
    /// The flip's offset is past the end of its section.
    #[error("fault {spec}: offset {offset:#x} is outside section {section} ({len} bytes)")]
    OffsetOutOfRange {
        /// The fault as its spec text.
        spec: String,
        /// The section the flip targets.
        section: String,
        /// Offset asked for.
        offset: usize,
        /// Machine B's length of that section, in bytes.
        len: usize,
    },
}

impl FaultSchedule {
    /// Resolves `plan` against `machine`'s sections.
    pub(crate) fn new<M: Machine + ?Sized>(plan: &FaultPlan, machine: &M) -> Result<Self, FaultPlanError> {
        let mut entries = Vec::with_capacity(plan.faults().len());
        for fault in plan.faults() {
            if let Fault::Stall { cycles, .. } = *fault {
                if !(1..=MAX_STALL_CYCLES).contains(&cycles) {
                    return Err(FaultPlanError::StallOutOfRange {
                        spec: fault.to_string(),
                        cycles,
                        max: MAX_STALL_CYCLES,
                    });
                }
            }
            let mut section = 0;
            if let Fault::FlipBit { section: name, offset, .. } = fault {
                section = (0..machine.section_count())
                    .find(|&i| machine.section_name(i) == name)
                    .ok_or_else(|| FaultPlanError::UnknownSection {
                        spec: fault.to_string(),
                        section: name.clone(),
                        available: (0..machine.section_count())
                            .map(|i| machine.section_name(i))
                            .collect::<Vec<_>>()
                            .join(", "),
                    })?;
                let len = machine.section_bytes(section).len();
                if *offset >= len {
                    return Err(FaultPlanError::OffsetOutOfRange {
                        spec: fault.to_string(),
                        section: name.clone(),
                        offset: *offset,
                        len,
                    });
                }
            }
            entries.push(Entry {
                fault: fault.clone(),
                section,
                fired: None,
                judged_at: 0,
                detected: None,
                replayed: false,
            });
        }
        let mut schedule = FaultSchedule { entries, next_due: u64::MAX, replay_from: None };
        schedule.update_next_due();
        Ok(schedule)
    }

    fn eligible(&self, entry: &Entry) -> bool {
        match self.replay_from {
            None => entry.fired.is_none(),
            Some(from) => {
                !entry.replayed
                    && entry.fired.as_ref().is_some_and(|f| f.frame >= from && f.refused.is_none())
            }
        }
    }

    fn update_next_due(&mut self) {
        self.next_due = self
            .entries
            .iter()
            .filter(|e| self.eligible(e))
            .filter_map(|e| e.fault.cpu_cycle())
            .min()
            .unwrap_or(u64::MAX);
    }

    /// True when a state fault may fire before B's CPU passes `cycle`.
    #[inline]
    pub(crate) fn due_before(&self, cycle: u64) -> bool {
        self.next_due <= cycle
    }

    /// True when a state fault is waiting at all.
    #[inline]
    pub(crate) fn has_pending(&self) -> bool {
        self.next_due != u64::MAX
    }

    /// B's input for frame `frame`, with the input faults of that frame applied. `sync_point` is the
    /// ordinal of B's next sync record (ignored while replaying).
    pub(crate) fn input_for<M: Machine + ?Sized>(
        &mut self,
        frame: u64,
        mut input: M::Input,
        machine: &M,
        sync_point: u64,
    ) -> M::Input {
        if self.entries.is_empty() {
            return input;
        }
        for i in 0..self.entries.len() {
            let entry = &self.entries[i];
            let Fault::CorruptInput { port, bit, frame: at } = entry.fault else { continue };
            if at != frame || !self.eligible(entry) {
                continue;
            }
            let refused = (!input.flip_button(port, bit))
                .then(|| format!("this machine's input has no button {bit} on port {port}"));
            self.mark_fired(i, (frame, machine.probe().cpu_cycle, sync_point), refused);
        }
        input
    }

    /// Marks a fault fired at `(frame, cpu_cycle, ordinal of the next sync record)`.
    fn mark_fired(
        &mut self,
        index: usize,
        (frame, cpu_cycle, sync_point): (u64, u64, u64),
        refused: Option<String>,
    ) {
        let entry = &mut self.entries[index];
        if self.replay_from.is_some() {
            entry.replayed = true;
        } else {
            entry.fired = Some(FiredFault { spec: entry.fault.to_string(), frame, cpu_cycle, refused });
            entry.judged_at = sync_point;
            entry.detected = None;
        }
    }

    /// Applies every state fault whose cycle B's CPU has reached. Call after each instruction of B
    /// when [`FaultSchedule::due_before`] says so; `sync_point` is the ordinal of B's next sync record
    /// (ignored while replaying). Returns true when something was applied.
    pub(crate) fn fire_due<M: Machine + ?Sized>(
        &mut self,
        frame: u64,
        machine: &mut M,
        sync_point: u64,
    ) -> bool {
        let cycle = machine.probe().cpu_cycle;
        let mut applied = false;
        for i in 0..self.entries.len() {
            let entry = &self.entries[i];
            let Some(at) = entry.fault.cpu_cycle() else { continue };
            if at > cycle || !self.eligible(entry) {
                continue;
            }
            let result = match entry.fault {
                Fault::FlipBit { offset, bit, .. } => machine.flip_state_bit(entry.section, offset, bit),
                Fault::Stall { cycles, .. } => machine.stall_cycles(cycles),
                Fault::CorruptInput { .. } => Ok(()),
            };
            applied |= result.is_ok();
            self.mark_fired(i, (frame, cycle, sync_point), result.err().map(|e: MachineError| e.to_string()));
        }
        self.update_next_due();
        applied
    }

    /// Starts a replay from the checkpoint at `frame`: faults that fired at or after it fire again.
    pub(crate) fn begin_replay(&mut self, frame: u64) {
        self.replay_from = Some(frame);
        for entry in &mut self.entries {
            entry.replayed = false;
        }
        self.update_next_due();
    }

    /// Ends a replay: faults are back to firing once, and those that fired stay fired.
    pub(crate) fn end_replay(&mut self) {
        self.replay_from = None;
        self.update_next_due();
    }

    /// The replay flags, to restore when a replay restarts from a mid-run snapshot.
    pub(crate) fn replay_marks(&self, out: &mut Vec<bool>) {
        out.clear();
        out.extend(self.entries.iter().map(|e| e.replayed));
    }

    /// Restores flags saved by [`FaultSchedule::replay_marks`].
    pub(crate) fn restore_replay_marks(&mut self, marks: &[bool]) {
        for (entry, &mark) in self.entries.iter_mut().zip(marks) {
            entry.replayed = mark;
        }
        self.update_next_due();
    }

    /// Faults that fired (or were refused), in plan order.
    pub(crate) fn fired(&self) -> impl Iterator<Item = &FiredFault> {
        self.entries.iter().filter_map(|e| e.fired.as_ref())
    }

    /// Settles the faults that fired when a run ends, the comparator having compared `compared` sync
    /// points and, if `diverged_at` is set, found the last of them different. A fault that fired
    /// after the last sync point compared (a worker thread runs ahead of the comparator) is put back
    /// as not fired: the run never got there, and it fires when a run after a rollback does, as it
    /// would have on one thread. The verdicts are kept: a rollback does not change them.
    pub(crate) fn settle(&mut self, compared: u64, diverged_at: Option<u64>) {
        for entry in &mut self.entries {
            if entry.fired.is_none() || entry.detected.is_some() {
                continue;
            }
            if entry.judged_at > compared {
                entry.fired = None;
                continue;
            }
            entry.detected = Some(diverged_at == Some(entry.judged_at));
        }
        self.update_next_due();
    }

    /// Every fault of the plan, in plan order, with its fate (see [`FaultSchedule::settle`]).
    pub(crate) fn fates(&self, compared: u64, diverged_at: Option<u64>) -> Vec<FaultOutcome> {
        self.entries
            .iter()
            .map(|e| FaultOutcome { spec: e.fault.to_string(), fate: e.fate(compared, diverged_at) })
            .collect()
    }
}
