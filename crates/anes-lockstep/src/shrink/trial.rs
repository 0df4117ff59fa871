//! The oracle that runs two machines in lockstep over a candidate stream and says whether the same
//! divergence reproduces, and the reference it works from: the stream that reproduces now, with its
//! per-frame state hashes and both machines' snapshots every `checkpoint_every` frames.
//!
//! **Same divergence**: the comparator stops at the end of the same frame (input-stream index) with
//! the same kind (`state` or `cycle_misalignment`), machine B getting the same fault plan. An earlier
//! divergence, a later one or none does not count: the repro must show the finding it was made for,
//! not another one the shrinking ran into.
//!
//! A trial whose candidate first differs from the reference at frame k starts from the reference's
//! checkpoint at or before k (restored snapshots, B's faults that had not fired by then) and stops
//! at the first of:
//! - a divergence: it reproduces if it is the same one;
//! - the end of the target frame with the machines agreeing: it does not;
//! - after the candidate's last change, the end of a frame at which machine A's state hash equals
//!   the reference's there: every later input is the reference's, so everything after is the
//!   reference's run: it reproduces;
//! - after the candidate's last change, a state hash that an earlier failed trial had at that
//!   frame with the same inputs after it: it does not.
//!
//! The last two rely on what the lockstep checkpoints rely on: the state hash covers the whole
//! state, so equal hashes at a frame end and equal inputs after it mean equal runs after it. At a
//! frame end before the divergence both machines agreed, so A's hash stands for B's.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};

use anes_core::state::StateHash;

use super::error::ShrinkError;
use crate::config::{Granularity, LockstepConfig, Threading};
use crate::fault::FaultPlan;
use crate::lockstep::Lockstep;
use crate::machine::Machine;
use crate::outcome::{Divergence, DivergenceKind, RunOutcome};

/// The divergence every trial must reproduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Target {
    pub kind: DivergenceKind,
    /// Input-stream index of the frame at whose end the comparator saw it.
    pub frame: u64,
}

impl Target {
    fn matches(self, divergence: &Divergence) -> bool {
        divergence.kind == self.kind && divergence.frame == self.frame
    }
}

/// Both machines saved at a frame boundary of the reference, with the faults still to fire after it.
#[derive(Debug, Clone)]
pub(crate) struct Checkpoint {
    /// Input-stream index of the next frame to run from it.
    pub frame: u64,
    pub a: Vec<u8>,
    pub b: Vec<u8>,
    pub pending: FaultPlan,
}

/// At most this many (frame, hash) pairs of failed trials are remembered: 32 bytes each plus the
/// set's overhead, about 200 MB at the cap. Past it, trials simply run to their end.
const FAILED_STATES_MAX: usize = 4 << 20;

/// The stream that reproduces now and what is known about its run.
#[derive(Debug)]
pub(crate) struct Reference<I> {
    pub stream: Vec<I>,
    pub target: Target,
    /// `hashes[f]`: the state hash after frame `f`, for every frame before the target frame.
    pub hashes: Vec<StateHash>,
    /// Checkpoints by frame; the start (power-on, or where the machines were given) always.
    pub checkpoints: BTreeMap<u64, Checkpoint>,
    /// States after frame `f` (at `(f, hash)`) from which the reference's inputs after `f` do not
    /// reproduce.
    pub failed: HashSet<(u64, StateHash)>,
    pub checkpoint_every: u64,
}

/// What one run of the machines saw.
#[derive(Debug)]
pub(crate) struct TrialRun {
    /// The frame it started from.
    pub start: u64,
    /// `hashes[i]`: the state hash after frame `start + i`, for the frames it verified.
    pub hashes: Vec<StateHash>,
    /// Checkpoints saved on the way (every `checkpoint_every` frames).
    pub checkpoints: Vec<Checkpoint>,
    /// The divergence that stopped it, if one did.
    pub divergence: Option<Divergence>,
    /// Whether it reproduces the target (after an initial run: whether it diverged at all).
    pub reproduced: bool,
    /// Frames each machine ran.
    pub frames: u64,
    /// Stopped because its answer can no longer be used (see [`Wave`]).
    pub cancelled: bool,
    /// The frame at whose end it met the reference's state, when it reproduced that way.
    pub rejoined: Option<u64>,
}

impl TrialRun {
    /// For a run that reproduced: the first frame from which the new reference runs as the old
    /// one did (the state at its start and every input from it on are the old reference's), so a
    /// trial against the old reference that started there answers for the new one too.
    /// `u64::MAX` when it reproduced without meeting the old reference's run.
    pub(crate) fn rejoins_at(&self) -> u64 {
        self.rejoined.map_or(u64::MAX, |frame| frame + 1)
    }
}

/// Trials run side by side against one reference, in the order a one-at-a-time search asks them.
/// Each publishes in `invalid_before[its index]`, when it ends, the frame before which a later
/// trial's start no longer stands for the one-at-a-time search: [`TrialRun::rejoins_at`] if it
/// reproduced (the search would ask the later ones against the stream without it), `u64::MAX` if it
/// was cancelled (the search stops at it), 0 if it did not reproduce. A trial that started before
/// the value of one asked before it is cancelled: its answer cannot be used.
pub(crate) struct Wave<'r> {
    pub invalid_before: &'r [AtomicU64],
    pub index: usize,
}

impl Wave<'_> {
    fn superseded(&self, start: u64) -> bool {
        self.invalid_before[..self.index].iter().any(|v| v.load(Ordering::Relaxed) > start)
    }
}

/// The lockstep configuration of a trial: frame sync, no localization, no pictures, the runner's
/// own checkpoints unused (the shrinker keeps its own).
fn trial_config(faults: FaultPlan) -> LockstepConfig {
    LockstepConfig {
        granularity: Granularity::Frame,
        threading: Threading::SameThread,
        checkpoint_every: u64::MAX,
        checkpoints_kept: 1,
        localize: false,
        pictures: false,
        faults,
        ..LockstepConfig::default()
    }
}

/// The faults of `plan` that have not fired in `fired` (spec strings, each standing for one entry).
fn pending_after<A: Machine, B: Machine<Input = A::Input>>(
    plan: &FaultPlan,
    lockstep: &Lockstep<A, B>,
) -> FaultPlan {
    let mut fired: Vec<String> = lockstep.fired_faults().into_iter().map(|f| f.spec).collect();
    let mut pending = FaultPlan::new();
    for fault in plan.faults() {
        let spec = fault.to_string();
        match fired.iter().position(|s| *s == spec) {
            Some(i) => {
                fired.swap_remove(i);
            }
            None => {
                pending.push(fault.clone());
            }
        }
    }
    pending
}

/// What a run checks after each frame it verified, besides the target.
pub(crate) struct Shortcuts<'r, I> {
    pub reference: &'r Reference<I>,
    /// The candidate's last frame that differs from the reference.
    pub last_change: u64,
    /// Trials running side by side (see [`Wave`]).
    pub wave: Option<Wave<'r>>,
}

/// A pair of machines a trial borrows: restored from a checkpoint at its start, so whatever an
/// earlier trial left in them does not matter. Empty only after a trial failed (the shrink ends).
pub(crate) type Slot<A, B> = Option<(A, B)>;

/// Runs the machines in `slot` (restored from `start`) in lockstep over `stream` until a
/// divergence, the end of frame `until` (inclusive), or a shortcut decides (see the module docs).
/// The machines go back into `slot`, wherever the run stopped, also when one refuses its checkpoint
/// (a machine in a worker process that died refuses every one): the caller may go on without that
/// start, and ends the shrink with the refusal otherwise.
pub(crate) fn run<A, B>(
    slot: &mut Slot<A, B>,
    start: &Checkpoint,
    stream: &[A::Input],
    until: u64,
    target: Option<Target>,
    shortcuts: Option<Shortcuts<'_, A::Input>>,
    checkpoint_every: u64,
) -> Result<TrialRun, ShrinkError>
where
    A: Machine,
    B: Machine<Input = A::Input>,
{
    let (mut a, mut b) = slot.take().expect("a failed trial ends the shrink");
    if let Err(e) = a.load_state(&start.a).and_then(|()| b.load_state(&start.b)) {
        *slot = Some((a, b));
        return Err(ShrinkError::Restore(e));
    }
    // The runner drops machines it refuses: a plan that no longer fits B (one whose worker died
    // shows no sections) is refused here instead, with the machines back in the slot.
    if let Err(e) = crate::schedule::FaultSchedule::new(&start.pending, &b) {
        *slot = Some((a, b));
        return Err(ShrinkError::Lockstep(e.into()));
    }
    let mut lockstep = Lockstep::new(a, b, trial_config(start.pending.clone()))?;
    let trial = run_from(&mut lockstep, start, stream, until, target, shortcuts, checkpoint_every);
    *slot = Some(lockstep.into_machines());
    Ok(trial)
}

fn run_from<A, B>(
    lockstep: &mut Lockstep<A, B>,
    start: &Checkpoint,
    stream: &[A::Input],
    until: u64,
    target: Option<Target>,
    shortcuts: Option<Shortcuts<'_, A::Input>>,
    checkpoint_every: u64,
) -> TrialRun
where
    A: Machine,
    B: Machine<Input = A::Input>,
{
    let mut trial = TrialRun {
        start: start.frame,
        hashes: Vec::new(),
        checkpoints: Vec::new(),
        divergence: None,
        reproduced: false,
        frames: 0,
        cancelled: false,
        rejoined: None,
    };
    loop {
        if shortcuts.as_ref().and_then(|s| s.wave.as_ref()).is_some_and(|w| w.superseded(start.frame)) {
            trial.cancelled = true;
            return trial;
        }
        let frame = lockstep.next_frame();
        let outcome = lockstep.run_interleaved(stream, 1);
        trial.frames += 1;
        if let RunOutcome::Diverged(divergence) = outcome {
            trial.reproduced = target.is_none_or(|t| t.matches(&divergence));
            trial.divergence = Some(*divergence);
            return trial;
        }
        let hash = rejoin_hash(lockstep);
        if frame >= until {
            return trial;
        }
        if let Some(s) = &shortcuts {
            if frame >= s.last_change {
                if s.reference.hashes.get(frame as usize) == Some(&hash) {
                    trial.reproduced = true;
                    trial.rejoined = Some(frame);
                    trial.hashes.push(hash);
                    return trial;
                }
                if s.reference.failed.contains(&(frame, hash)) {
                    return trial;
                }
            }
        }
        trial.hashes.push(hash);
        let next = frame + 1;
        // After a power cycle the machine's frame counter restarts at 0 and no longer names the
        // stream's frame, which a run started from the snapshot would go by: no checkpoint there.
        if next % checkpoint_every == 0 && lockstep.machine_a().record().frame == next {
            let (mut snap_a, mut snap_b) = (Vec::new(), Vec::new());
            lockstep.machine_a().save_state(&mut snap_a);
            lockstep.machine_b().save_state(&mut snap_b);
            let pending = pending_after(&start.pending, lockstep);
            trial.checkpoints.push(Checkpoint { frame: next, a: snap_a, b: snap_b, pending });
        }
    }
}

/// What identifies both machines' states at the last verified frame: the verified record's hash,
/// unless a machine's state hash is a view (then both machines' whole hashes).
fn rejoin_hash<A: Machine, B: Machine<Input = A::Input>>(lockstep: &Lockstep<A, B>) -> StateHash {
    match (lockstep.machine_a().whole_state_hash(), lockstep.machine_b().whole_state_hash()) {
        (None, None) => lockstep.last_verified_record().state_hash,
        (a, b) => {
            let a = a.unwrap_or_else(|| lockstep.machine_a().state_hash());
            let b = b.unwrap_or_else(|| lockstep.machine_b().state_hash());
            StateHash(*blake3::Hasher::new().update(a.as_bytes()).update(b.as_bytes()).finalize().as_bytes())
        }
    }
}

impl<I: Copy + Eq> Reference<I> {
    /// The reference from the initial run, which diverged as `target` says, over `stream` (already
    /// cut after the target frame).
    pub(crate) fn new(
        stream: Vec<I>,
        target: Target,
        power_on: Checkpoint,
        run: TrialRun,
        every: u64,
    ) -> Self {
        let mut checkpoints = BTreeMap::new();
        checkpoints.insert(power_on.frame, power_on);
        let mut reference = Reference {
            stream,
            target,
            hashes: Vec::new(),
            checkpoints,
            failed: HashSet::new(),
            checkpoint_every: every,
        };
        reference.take_run(run);
        reference
    }

    /// The checkpoint a trial whose first change is at frame `first` starts from.
    pub(crate) fn checkpoint_before(&self, first: u64) -> &Checkpoint {
        // Frames before the start hold no press or command, so no candidate changes one.
        self.checkpoints.range(..=first).next_back().map(|(_, c)| c).expect("the start is always kept")
    }

    /// Takes the hashes and checkpoints of `run`, whose frames now belong to the reference.
    fn take_run(&mut self, run: TrialRun) {
        let target = self.target.frame as usize;
        self.hashes.resize(target, StateHash::default());
        for (frame, hash) in (run.start as usize..target).zip(run.hashes) {
            self.hashes[frame] = hash;
        }
        for checkpoint in run.checkpoints.into_iter().filter(|c| c.frame <= self.target.frame) {
            self.checkpoints.insert(checkpoint.frame, checkpoint);
        }
    }

    /// `candidate` (changed from frame `first` through `last`) reproduced in `run`: it becomes the
    /// reference. Frames the run did not reach (it met the reference's run) keep their hashes and
    /// checkpoints; failed states before `last` no longer have the reference's inputs after them.
    pub(crate) fn accept(&mut self, candidate: Vec<I>, last: u64, run: TrialRun) {
        self.stream = candidate;
        self.take_run(run);
        self.failed.retain(|&(frame, _)| frame >= last);
    }

    /// Remembers the states of a failed trial (changed through frame `last`) from which the
    /// reference's inputs do not reproduce.
    pub(crate) fn remember_failure(&mut self, last: u64, run: &TrialRun) {
        for (frame, hash) in (run.start..).zip(&run.hashes) {
            if self.failed.len() >= FAILED_STATES_MAX {
                return;
            }
            if frame >= last {
                self.failed.insert((frame, *hash));
            }
        }
    }
}
