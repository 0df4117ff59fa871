//! Shrinking a divergence to a minimal reproduction: the smallest input stream (fewest presses,
//! fewest buttons, fewest console commands) on which the two machines still diverge the same way.
//!
//! [`shrink`] runs the machines over the stream once to find the divergence, then:
//! 1. cuts every frame after the divergent one (they cannot matter: the comparator stops there);
//! 2. delta debugging ([`ddmin`]) over the frames that carry presses (removing a press releases its
//!    buttons, the frame stays, so frame numbers and the stream length do not change);
//! 3. ddmin over the single buttons of the presses left;
//! 4. ddmin over the console commands (soft resets, power cycles);
//!
//! and repeats 2-4 until a round changes nothing, so the result is 1-minimal: removing any one press,
//! button or command left was tried on the final stream and stops it reproducing
//! ([`Shrunk::stopped_by`] is `None`), unless a budget (time, trials) stopped it first with the best
//! stream so far. Then (5., [`ShrinkConfig::move_start`]) the start moves to the latest checkpoint
//! from which it still reproduces ([`StartSearch`]): the repro is a snapshot plus a short stream.
//! Minimality carries over: from the checkpoint the machines run exactly as from the old start. What "the same divergence" means and how trials are kept short is in `trial.rs`:
//! same kind, same frame, B's fault plan applied; trials start from the reference's checkpoint
//! before their first change and stop once their run meets a known one.
//!
//! It works through [`Machine`] for any machine with snapshots and an input type implementing
//! [`ShrinkInput`]: clones of the pair ([`shrink`]), or pairs made by the caller ([`shrink_pairs`],
//! for machines that cannot be cloned, e.g. consoles in worker processes), one per job, each trial
//! restoring its pair from a checkpoint. Deterministic: the same machines, stream and fault plan give the same
//! [`Shrunk::repro`] and [`Shrunk::report`], whatever [`ShrinkConfig::jobs`] (trials run side by
//! side, but only their answers that a one-at-a-time search would give count: see `run_all`);
//! only [`ShrinkStats`] (trials run, frames, time) varies, and a time budget that stops the search
//! stops it wherever it was.
//!
//! ```
//! use anes_core::{movie::FrameInput, NesConfig};
//! use anes_lockstep::{FaultPlan, NesMachine, ShrinkConfig, shrink};
//! # let rom = anes_fixtures::tiny_rom();
//! let a = NesMachine::from_ines(&rom, NesConfig::default()).unwrap();
//! let stream = vec![FrameInput::buttons(0x10, 0); 40];
//! let config = ShrinkConfig { faults: FaultPlan::parse(["flip:ram:0x0300:0@200000"]).unwrap(), ..ShrinkConfig::default() };
//! let shrunk = shrink(a.clone(), a, &stream, &config, &mut |_| {}).unwrap();
//! // The tiny ROM ignores its pads: no press is needed, and the stream ends at the divergent frame.
//! assert_eq!(shrunk.report().shrunk.presses, 0);
//! assert_eq!(shrunk.repro.len() as u64, shrunk.report().target.frame + 1);
//! ```

mod ddmin;
mod error;
mod input;
mod report;
mod stream;
mod trial;

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

pub use ddmin::{Budget, Halt, Minimized, RemovalOracle, ddmin};
pub use error::ShrinkError;
pub use input::ShrinkInput;
pub use report::{CommandJson, PressJson, ShrinkReport, StartJson, StreamJson, TargetJson};
pub use stream::{MinimizedStream, StreamHalt, StreamLimits, minimize_stream};

use crate::config::LockstepConfig;
use crate::evidence::Evidence;
use crate::fault::FaultPlan;
use crate::lockstep::Lockstep;
use crate::machine::Machine;
use crate::outcome::{DivergenceKind, RunOutcome};
use input::{Atom, Pass, count_presses};
use trial::{Checkpoint, Reference, Shortcuts, Target, TrialRun};

/// How a shrink runs.
#[derive(Debug, Clone)]
pub struct ShrinkConfig {
    /// Faults injected into machine B, as in a lockstep run.
    pub faults: FaultPlan,
    /// Both machines are saved every this many frames of the stream that reproduces (at least 1):
    /// a trial replays at most this many frames before its first change.
    pub checkpoint_every: u64,
    /// Trials run at once, each on its own thread (at least 1).
    pub jobs: usize,
    /// Stop after this many trials, counted in the order a one-at-a-time search asks them (so the
    /// result does not depend on `jobs`).
    pub max_trials: Option<u64>,
    /// Stop when this much time has passed since the start.
    pub budget: Option<Duration>,
    /// The divergence the first run must show (kind, input-stream frame), e.g. the one an evidence
    /// bundle recorded: another one, or none, is an error before any shrinking.
    pub expect: Option<(DivergenceKind, u64)>,
    /// Once the stream is 1-minimal, move the repro's start to the latest checkpoint from which
    /// it still reproduces (see [`StartSearch`]).
    pub move_start: bool,
}

impl Default for ShrinkConfig {
    /// No faults, a checkpoint every 30 frames, one job, no budget, the start moved.
    fn default() -> Self {
        ShrinkConfig {
            faults: FaultPlan::new(),
            checkpoint_every: 30,
            jobs: 1,
            max_trials: None,
            budget: None,
            expect: None,
            move_start: true,
        }
    }
}

/// What a shrink cost: varies with `jobs` and time, so it is kept out of the report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ShrinkStats {
    /// Trials run, including those whose answer could not be used (cancelled or superseded).
    pub trials: u64,
    /// Trials a one-at-a-time search asks (what [`ShrinkConfig::max_trials`] counts).
    pub trials_in_order: u64,
    /// Frames each machine ran, the first and the final full runs included.
    pub frames_emulated: u64,
    /// Frames each machine would have run if every trial replayed the cut stream from power-on (the
    /// first and the final runs included).
    pub naive_frames: u64,
    /// Wall-clock time of the whole shrink.
    pub seconds: f64,
    /// Trials run at once.
    pub jobs: usize,
    /// [`ShrinkStats::frames_emulated`] by phase.
    pub phase_frames: PhaseFrames,
}

/// Frames each machine ran in each phase of a shrink.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PhaseFrames {
    /// The first run, over the whole stream given.
    pub first_run: u64,
    /// Trials of the ddmin passes over presses.
    pub presses: u64,
    /// Trials of the ddmin passes over single buttons.
    pub buttons: u64,
    /// Trials of the ddmin passes over console commands.
    pub commands: u64,
    /// Trials of the start search.
    pub start_search: u64,
    /// The final run, with localization, that makes the evidence.
    pub final_run: u64,
}

/// Where a shrink is, reported after every batch of trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShrinkProgress {
    /// `presses`, `buttons` or `commands`.
    pub pass: &'static str,
    /// Frames holding a press in the stream that reproduces now.
    pub presses: u64,
    /// Trials run so far.
    pub trials: u64,
    /// Frames each machine ran so far.
    pub frames_emulated: u64,
}

/// How the repro's start was chosen, after the stream was shrunk: the checkpoints of the
/// stream that reproduces (both machines agreed there; every [`ShrinkConfig::checkpoint_every`]
/// frames) are tried latest first, each with machine A's snapshot loaded into both machines (the
/// repro is one snapshot), B's faults that had not fired by then pending; the first from which
/// the divergence reproduces becomes the start: the repro is then the snapshot plus the frames
/// from it to the divergent one. [`Shrunk::repro`] keeps its frames before the start (the
/// snapshot holds their effect; a replay from it does not read them), so it also replays from
/// where the machines were given, e.g. in an emulator that cannot load the snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartSearch {
    /// The start moved to the checkpoint at `frame`, `tried` checkpoints tried.
    Moved {
        /// Input-stream index of the repro's first frame.
        frame: u64,
        /// Checkpoints tried (the latest first).
        tried: u64,
    },
    /// No checkpoint after the start reproduced (or there was none): the start did not move.
    Kept {
        /// Checkpoints tried.
        tried: u64,
        /// Why the last one tried did not do (`None`: there was none to try).
        why: Option<String>,
    },
    /// Not searched.
    Skipped {
        /// Why not.
        why: &'static str,
    },
}

/// At most this many checkpoints are tried for the start, the latest first: the latest reproduces
/// unless a machine cannot load the other's snapshot, and each try replays every frame from its
/// checkpoint to the divergent one.
const START_TRIES_MAX: u64 = 8;

/// Candidates asked at once per job (with more than one job; see `run_all`).
const WAVE_PER_JOB: usize = 4;

/// The result of [`shrink`].
#[derive(Debug, Clone)]
pub struct Shrunk<I> {
    /// The minimal stream: frames 0 through the divergent one.
    pub repro: Vec<I>,
    /// Frames of the stream given.
    pub original_frames: u64,
    /// The frame the repro starts at: the machines' frame when given (0: power-on), or the
    /// checkpoint the start moved to ([`Shrunk::start_snapshot`]).
    pub start_frame: u64,
    /// The frame the machines were at when given: [`Shrunk::repro`]'s frames before it hold no
    /// press or command, and it replays from there too.
    pub given_start_frame: u64,
    /// Machine A's snapshot at [`Shrunk::start_frame`] when the start moved (both machines load it
    /// to replay the repro); `None` when the repro starts where the machines were given.
    pub start_snapshot: Option<Vec<u8>>,
    /// How the start was searched for.
    pub start_search: StartSearch,
    /// Presses in the stream given.
    pub original_presses: u64,
    /// The lockstep runner's evidence of the divergence on [`Shrunk::repro`] from its start
    /// (localized, without pictures).
    pub evidence: Evidence,
    /// The fault plan of machine B.
    pub faults: FaultPlan,
    /// B's faults still to fire at [`Shrunk::start_frame`]: [`Shrunk::faults`] less those that
    /// fired before a moved start (they must not fire again in a replay from the snapshot).
    pub start_faults: FaultPlan,
    /// `None` when the search finished (the repro is 1-minimal); the budget that stopped it
    /// otherwise.
    pub stopped_by: Option<Budget>,
    /// What it cost.
    pub stats: ShrinkStats,
}

/// Shrinks the divergence of `a` and `b` (both at power-on, or both restored at the same frame,
/// which then reads `stream` from that frame on) over `stream`, B getting `config.faults` (see the
/// module docs). Trials run on `config.jobs` clones of the pair. `progress` is called on this
/// thread after every batch of trials.
pub fn shrink<A, B>(
    a: A,
    b: B,
    stream: &[A::Input],
    config: &ShrinkConfig,
    progress: &mut dyn FnMut(ShrinkProgress),
) -> Result<Shrunk<A::Input>, ShrinkError>
where
    A: Machine + Clone + Send,
    B: Machine<Input = A::Input> + Clone + Send,
    A::Input: ShrinkInput,
{
    let mut pairs = vec![(a, b)];
    for _ in 1..config.jobs.max(1) {
        let copy = pairs[0].clone();
        pairs.push(copy);
    }
    shrink_pairs(pairs, stream, config, progress)
}

/// [`shrink`] for machines that cannot be cloned (a console in a worker process: one process per
/// machine, reused by every trial): `pairs[0]` is the pair to shrink, as `a` and `b` of [`shrink`];
/// trials run on as many pairs at once as there are (`config.jobs` is not read), each trial
/// restoring its pair from snapshots of the first, so the other pairs' states do not matter.
///
/// # Panics
/// If `pairs` is empty.
pub fn shrink_pairs<A, B>(
    pairs: Vec<(A, B)>,
    stream: &[A::Input],
    config: &ShrinkConfig,
    progress: &mut dyn FnMut(ShrinkProgress),
) -> Result<Shrunk<A::Input>, ShrinkError>
where
    A: Machine + Send,
    B: Machine<Input = A::Input> + Send,
    A::Input: ShrinkInput,
{
    assert!(!pairs.is_empty(), "a shrink needs a pair of machines");
    let mut slots: Vec<trial::Slot<A, B>> = pairs.into_iter().map(Some).collect();
    let jobs = slots.len();
    let started = Instant::now();
    // The lockstep runner feeds input-stream frame n to the frame that starts with n frames
    // completed: machines restored from a snapshot read the stream from their frame on.
    let (a, b) = slots[0].as_ref().expect("every slot holds a pair");
    // Views of machines that differ by design (`Machine::whole_state_hash`): no one snapshot
    // starts both, so the start cannot move.
    let views = a.whole_state_hash().is_some() || b.whole_state_hash().is_some();
    let start = a.record().frame;
    if b.record().frame != start {
        return Err(ShrinkError::NotAtOneFrame { a: start, b: b.record().frame });
    }
    let every = config.checkpoint_every.max(1);
    let frames = stream.len() as u64;
    if frames <= start {
        return Err(ShrinkError::NoDivergence { frames: 0 });
    }
    // Frames before the start are never run: what they hold is released, so every press and
    // command left to remove is one a trial from the start can remove.
    let given = stream;
    let stream: Vec<A::Input> = (0..)
        .zip(given)
        .map(|(frame, &input)| if frame < start { input.released().without_command() } else { input })
        .collect();
    let stream = &stream[..];
    let (mut snap_a, mut snap_b) = (Vec::new(), Vec::new());
    a.save_state(&mut snap_a);
    b.save_state(&mut snap_b);
    let power_on = Checkpoint { frame: start, a: snap_a, b: snap_b, pending: config.faults.clone() };
    let first = trial::run(&mut slots[0], &power_on, stream, frames - 1, None, None, every)?;
    let Some(divergence) = first.divergence.clone() else {
        return match config.expect {
            Some(expected) => Err(ShrinkError::OtherDivergence {
                expected,
                found: format!("the machines agreed over all {frames} frames"),
            }),
            None => Err(ShrinkError::NoDivergence { frames }),
        };
    };
    let target = Target { kind: divergence.kind, frame: divergence.frame };
    let first_frames = first.frames;
    if let Some(expected) = config.expect.filter(|&e| e != (target.kind, target.frame)) {
        return Err(ShrinkError::OtherDivergence { expected, found: divergence.to_string() });
    }
    let cut = stream[..=target.frame as usize].to_vec();
    let mut oracle = LockstepOracle {
        slots,
        stats: ShrinkStats {
            trials: 0,
            trials_in_order: 0,
            frames_emulated: first.frames,
            naive_frames: 0,
            seconds: 0.0,
            jobs,
            phase_frames: PhaseFrames { first_run: first.frames, ..PhaseFrames::default() },
        },
        reference: Reference::new(cut, target, power_on, first, every),
        deadline: config.budget.map(|budget| started + budget),
        max_trials: config.max_trials,
        pass: Pass::Presses,
        progress,
        failed_streams: HashSet::new(),
    };
    // Candidates asked at once: several per job, so a job that finishes early takes the next one.
    let wave = if jobs == 1 { 1 } else { jobs * WAVE_PER_JOB };
    let mut stopped_by = None;
    'rounds: loop {
        let before = oracle.reference.stream.clone();
        for pass in [Pass::Presses, Pass::Buttons, Pass::Commands] {
            oracle.pass = pass;
            let atoms = pass.atoms(&oracle.reference.stream);
            let result = ddmin(atoms, &mut oracle, wave)?;
            if result.stopped_by.is_some() {
                stopped_by = result.stopped_by;
                break 'rounds;
            }
        }
        if oracle.reference.stream == before {
            break;
        }
    }
    let start_search = match (stopped_by, config.move_start) {
        (None, true) if views => StartSearch::Skipped {
            why: "the machines differ in state by design: one snapshot cannot start both",
        },
        (None, true) => oracle.move_start()?,
        (Some(_), true) => StartSearch::Skipped { why: "a budget stopped the search first" },
        (_, false) => StartSearch::Skipped { why: "not asked" },
    };
    let LockstepOracle { mut slots, reference, mut stats, .. } = oracle;
    let repro_start = reference.checkpoints.values().next().expect("the start is always kept").clone();
    let repro = reference.stream;

    // A checkpoint every frame: the localization replays only the divergent frame's instructions,
    // which through a worker (builds mode) is a round trip each.
    let final_config = LockstepConfig {
        faults: repro_start.pending.clone(),
        pictures: false,
        checkpoint_every: 1,
        checkpoints_kept: 2,
        ..LockstepConfig::default()
    };
    let (mut a, mut b) = slots[0].take().expect("every slot holds a pair");
    a.load_state(&repro_start.a).map_err(ShrinkError::Restore)?;
    b.load_state(&repro_start.b).map_err(ShrinkError::Restore)?;
    let mut lockstep = Lockstep::new(a, b, final_config)?;
    let outcome = lockstep.run_interleaved(&repro, repro.len() as u64 - repro_start.frame);
    let final_frames = lockstep.next_frame() - repro_start.frame;
    stats.frames_emulated += final_frames;
    stats.phase_frames.final_run = final_frames;
    // The first and the final run are the same either way.
    stats.naive_frames = first_frames + stats.trials * (target.frame + 1 - start) + final_frames;
    match &outcome {
        RunOutcome::Diverged(d) if d.kind == target.kind && d.frame == target.frame => {}
        RunOutcome::Diverged(d) => return Err(ShrinkError::ReproLost { found: d.to_string() }),
        RunOutcome::Agreed { frames } => {
            return Err(ShrinkError::ReproLost {
                found: format!("the machines agreed over {frames} frames"),
            });
        }
    }
    let evidence = lockstep.evidence().cloned().expect("a divergence keeps its evidence");
    stats.seconds = started.elapsed().as_secs_f64();
    let moved = matches!(start_search, StartSearch::Moved { .. });
    Ok(Shrunk {
        repro,
        original_frames: frames,
        original_presses: count_presses(given),
        given_start_frame: start,
        start_frame: repro_start.frame,
        start_snapshot: moved.then_some(repro_start.a),
        start_search,
        evidence,
        faults: config.faults.clone(),
        start_faults: repro_start.pending,
        stopped_by,
        stats,
    })
}

/// Trials in lockstep against the reference (see `trial.rs`).
struct LockstepOracle<'p, A: Machine, B> {
    /// The pairs trials run on, one per job: a wave's candidate `i` runs on pair `i`.
    slots: Vec<trial::Slot<A, B>>,
    reference: Reference<A::Input>,
    stats: ShrinkStats,
    deadline: Option<Instant>,
    max_trials: Option<u64>,
    pass: Pass,
    progress: &'p mut dyn FnMut(ShrinkProgress),
    /// Candidate streams that did not reproduce.
    failed_streams: HashSet<StreamKey>,
}

/// A stream's identity: the blake3 hash of its evidence encoding.
type StreamKey = [u8; 32];

fn stream_key<I: ShrinkInput>(stream: &[I]) -> StreamKey {
    let mut bytes = Vec::new();
    I::encode_inputs(stream, &mut bytes);
    *blake3::hash(&bytes).as_bytes()
}

/// A candidate: the atoms it removes from the reference, its stream, and the frames where that
/// differs from the reference's.
struct Candidate<I> {
    atoms: Vec<Atom>,
    stream: Vec<I>,
    first: u64,
    last: u64,
}

impl<I: ShrinkInput> Candidate<I> {
    fn new(reference: &[I], atoms: &[Atom]) -> Self {
        let mut stream = reference.to_vec();
        for atom in atoms {
            atom.remove_from(&mut stream);
        }
        let frames = atoms.iter().map(|atom| atom.frame());
        Candidate {
            atoms: atoms.to_vec(),
            stream,
            first: frames.clone().min().unwrap_or(0),
            last: frames.max().unwrap_or(0),
        }
    }
}

/// Runs `candidate` against `reference` on the pair in `slot`; side by side with others, it
/// publishes its outcome in the wave (see [`trial::Wave`]).
fn run_candidate<A, B>(
    reference: &Reference<A::Input>,
    candidate: &Candidate<A::Input>,
    slot: &mut trial::Slot<A, B>,
    wave: Option<trial::Wave<'_>>,
) -> Result<TrialRun, ShrinkError>
where
    A: Machine,
    B: Machine<Input = A::Input>,
    A::Input: ShrinkInput,
{
    let publish = wave.as_ref().map(|w| &w.invalid_before[w.index]);
    let run = trial::run(
        slot,
        reference.checkpoint_before(candidate.first),
        &candidate.stream,
        reference.target.frame,
        Some(reference.target),
        Some(Shortcuts { reference, last_change: candidate.last, wave }),
        reference.checkpoint_every,
    );
    if let Some(publish) = publish {
        let invalid_before = match &run {
            Ok(run) if run.cancelled => u64::MAX,
            Ok(run) if run.reproduced => run.rejoins_at(),
            Ok(_) => 0,
            Err(_) => u64::MAX,
        };
        publish.store(invalid_before, Ordering::Relaxed);
    }
    run
}

/// Runs `candidates` (`None` where the answer is already known): one at a time on the first slot
/// when there is one slot or one candidate to run, else on a thread per slot, each taking the next
/// candidate in order as it becomes free; a trial is cancelled once its answer can no longer be
/// used (see [`trial::Wave`]). The runs, by candidate.
fn run_all<A, B>(
    slots: &mut [trial::Slot<A, B>],
    reference: &Reference<A::Input>,
    candidates: &[Option<Candidate<A::Input>>],
) -> Vec<Option<Result<TrialRun, ShrinkError>>>
where
    A: Machine + Send,
    B: Machine<Input = A::Input> + Send,
    A::Input: ShrinkInput,
{
    if slots.len() == 1 || candidates.iter().flatten().count() <= 1 {
        let mut runs = Vec::new();
        for candidate in candidates {
            let run = candidate.as_ref().map(|c| run_candidate(reference, c, &mut slots[0], None));
            // Later candidates would run against the old reference: asked again instead.
            let reproduced = run.as_ref().is_some_and(|r| r.as_ref().map_or(true, |r| r.reproduced));
            runs.push(run);
            if reproduced {
                break;
            }
        }
        return runs;
    }
    let invalid_before: Vec<AtomicU64> = candidates.iter().map(|_| AtomicU64::new(0)).collect();
    let next = AtomicUsize::new(0);
    let runs: Vec<Mutex<Option<Result<TrialRun, ShrinkError>>>> =
        candidates.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for slot in slots.iter_mut() {
            let (invalid_before, next, runs) = (&invalid_before, &next, &runs);
            scope.spawn(move || {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(candidate) = candidates.get(index) else { return };
                    let Some(candidate) = candidate else { continue };
                    let wave = trial::Wave { invalid_before, index };
                    let run = run_candidate(reference, candidate, slot, Some(wave));
                    *runs[index].lock().unwrap_or_else(|p| p.into_inner()) = Some(run);
                }
            });
        }
    });
    runs.into_iter().map(|run| run.into_inner().unwrap_or_else(|p| p.into_inner())).collect()
}

impl<A, B> LockstepOracle<'_, A, B>
where
    A: Machine + Send,
    B: Machine<Input = A::Input> + Send,
    A::Input: ShrinkInput,
{
    /// Moves the reference's start to its latest checkpoint from which the target still
    /// reproduces with A's snapshot in both machines (see [`StartSearch`]). The trials count in
    /// the stats.
    fn move_start(&mut self) -> Result<StartSearch, ShrinkError> {
        let start = *self.reference.checkpoints.keys().next().expect("the start is always kept");
        let later: Vec<u64> = self.reference.checkpoints.range(start + 1..).map(|(&f, _)| f).rev().collect();
        let mut tried = 0;
        let mut why = None;
        for frame in later.into_iter().take(START_TRIES_MAX as usize) {
            if self.deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                why = Some("the time budget ran out".to_string());
                break;
            }
            let at = &self.reference.checkpoints[&frame];
            let moved = Checkpoint { frame, a: at.a.clone(), b: at.a.clone(), pending: at.pending.clone() };
            tried += 1;
            let target = self.reference.target;
            let stream = &self.reference.stream;
            let run = match trial::run(
                &mut self.slots[0],
                &moved,
                stream,
                target.frame,
                Some(target),
                None,
                u64::MAX,
            ) {
                Ok(run) => run,
                // A machine that cannot load the other's snapshot: the start stays.
                Err(ShrinkError::Restore(e)) => {
                    return Ok(StartSearch::Kept {
                        tried,
                        why: Some(format!("a machine refused A's snapshot: {e}")),
                    });
                }
                Err(e) => return Err(e),
            };
            self.stats.trials += 1;
            self.stats.frames_emulated += run.frames;
            self.stats.phase_frames.start_search += run.frames;
            if run.reproduced {
                self.reference.checkpoints = [(frame, moved)].into();
                return Ok(StartSearch::Moved { frame, tried });
            }
            why = Some(match run.divergence {
                Some(d) => format!("from frame {frame}: {d}"),
                None => format!("from frame {frame} the machines agreed through frame {}", target.frame),
            });
        }
        Ok(StartSearch::Kept { tried, why })
    }
}

impl<A, B> RemovalOracle<Atom> for LockstepOracle<'_, A, B>
where
    A: Machine + Send,
    B: Machine<Input = A::Input> + Send,
    A::Input: ShrinkInput,
{
    type Error = ShrinkError;

    fn try_removals(&mut self, removals: &[Vec<Atom>]) -> Result<Vec<bool>, Halt<ShrinkError>> {
        if self.deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return Err(Halt::Budget(Budget::Time));
        }
        let allowed = self.max_trials.map_or(u64::MAX, |max| max.saturating_sub(self.stats.trials_in_order));
        if allowed == 0 {
            return Err(Halt::Budget(Budget::Trials));
        }
        let removals = &removals[..removals.len().min(usize::try_from(allowed).unwrap_or(usize::MAX))];
        let candidates: Vec<Candidate<A::Input>> =
            removals.iter().map(|atoms| Candidate::new(&self.reference.stream, atoms)).collect();
        let starts: Vec<u64> =
            candidates.iter().map(|c| self.reference.checkpoint_before(c.first).frame).collect();
        // A stream that failed before fails again: no trial for it.
        let to_run: Vec<Option<Candidate<A::Input>>> = candidates
            .into_iter()
            .map(|candidate| {
                (!self.failed_streams.contains(&stream_key(&candidate.stream))).then_some(candidate)
            })
            .collect();
        let runs = run_all(&mut self.slots, &self.reference, &to_run);
        for run in runs.iter().flatten() {
            let run = run.as_ref().map_err(|e| Halt::Failed(e.clone()))?;
            self.stats.trials += 1;
            self.stats.frames_emulated += run.frames;
            *match self.pass {
                Pass::Presses => &mut self.stats.phase_frames.presses,
                Pass::Buttons => &mut self.stats.phase_frames.buttons,
                Pass::Commands => &mut self.stats.phase_frames.commands,
            } += run.frames;
        }
        // The answers of a one-at-a-time search, as far as these runs give them: a candidate after
        // one that reproduced is asked against the stream without that one, from the same state
        // as long as its trial started where that stream's run had rejoined the reference's.
        let mut answers = Vec::new();
        let mut invalid_before = 0;
        for ((candidate, run), start) in to_run.into_iter().zip(runs).zip(starts) {
            if start < invalid_before {
                break;
            }
            let (Some(candidate), Some(run)) = (candidate, run) else {
                answers.push(false);
                continue;
            };
            let run = run.expect("errors returned above");
            if run.cancelled {
                break;
            }
            let candidate = match answers.contains(&true) {
                true => Candidate::new(&self.reference.stream, &candidate.atoms),
                false => candidate,
            };
            if run.reproduced {
                invalid_before = invalid_before.max(run.rejoins_at());
                answers.push(true);
                self.reference.accept(candidate.stream, candidate.last, run);
            } else {
                answers.push(false);
                self.reference.remember_failure(candidate.last, &run);
                self.failed_streams.insert(stream_key(&candidate.stream));
            }
        }
        self.stats.trials_in_order += answers.len() as u64;
        (self.progress)(ShrinkProgress {
            pass: match self.pass {
                Pass::Presses => "presses",
                Pass::Buttons => "buttons",
                Pass::Commands => "commands",
            },
            presses: count_presses(&self.reference.stream),
            trials: self.stats.trials,
            frames_emulated: self.stats.frames_emulated,
        });
        Ok(answers)
    }
}

impl<I: ShrinkInput> Shrunk<I> {
    /// True when the search finished: removing any one press, button or command of the repro stops
    /// it reproducing.
    pub fn one_minimal(&self) -> bool {
        self.stopped_by.is_none()
    }
}

#[cfg(test)]
mod tests {
    use anes_core::NesConfig;
    use anes_core::movie::FrameInput;

    use super::*;
    use crate::machine::NesMachine;

    const FLIP: &str = "flip:ram:0x0300:0@200000";

    fn powered_on() -> NesMachine {
        NesMachine::from_ines(&anes_fixtures::tiny_rom(), NesConfig::default()).unwrap()
    }

    fn config() -> ShrinkConfig {
        ShrinkConfig { faults: FaultPlan::parse([FLIP]).unwrap(), ..ShrinkConfig::default() }
    }

    #[test]
    fn machines_restored_at_a_frame_shrink_from_there() {
        let stream = vec![FrameInput::buttons(0x10, 0); 40];
        let mut a = powered_on();
        for input in &stream[..3] {
            a.run_frame(*input);
        }
        // Where the lockstep runner, from the same start, sees the flip.
        let lockstep_config = LockstepConfig { faults: config().faults, ..LockstepConfig::default() };
        let mut lockstep = Lockstep::new(a.clone(), a.clone(), lockstep_config).unwrap();
        let RunOutcome::Diverged(expected) = lockstep.run_interleaved(&stream, 37) else {
            panic!("the flip shows");
        };

        let shrunk = shrink(a.clone(), a, &stream, &config(), &mut |_| {}).unwrap();
        assert_eq!(shrunk.start_frame, 3);
        assert_eq!(shrunk.report().target.frame, expected.frame);
        assert_eq!(shrunk.repro.len() as u64, expected.frame + 1);
        assert!(shrunk.repro[..3].iter().all(|f| *f == FrameInput::default()), "nothing before the start");
        assert_eq!(shrunk.original_presses, 40);
    }

    #[test]
    fn the_start_moves_to_the_latest_checkpoint_and_the_repro_replays_from_its_snapshot() {
        let stream = vec![FrameInput::buttons(0x10, 0); 40];
        let config = ShrinkConfig { checkpoint_every: 4, ..config() };
        let shrunk = shrink(powered_on(), powered_on(), &stream, &config, &mut |_| {}).unwrap();
        let target = shrunk.report().target.frame;
        assert!(target >= 4, "the flip shows after the first checkpoint: {target}");
        assert_eq!(shrunk.start_search, StartSearch::Moved { frame: target / 4 * 4, tried: 1 });
        assert_eq!(shrunk.start_frame, target / 4 * 4);
        assert_eq!(shrunk.report().start.search, "moved");
        // Replayed by the lockstep runner from the snapshot in both machines: the same divergence.
        let snapshot = shrunk.start_snapshot.clone().expect("a moved start has its snapshot");
        let (mut a, mut b) = (powered_on(), powered_on());
        a.load_state(&snapshot).unwrap();
        b.load_state(&snapshot).unwrap();
        let lockstep_config =
            LockstepConfig { faults: shrunk.start_faults.clone(), ..LockstepConfig::default() };
        let mut lockstep = Lockstep::new(a, b, lockstep_config).unwrap();
        let RunOutcome::Diverged(d) =
            lockstep.run_interleaved(&shrunk.repro, target + 1 - shrunk.start_frame)
        else {
            panic!("the repro diverges from its snapshot");
        };
        assert_eq!(d.frame, target);
        // Asked not to, it keeps power-on.
        let kept = ShrinkConfig { move_start: false, ..config };
        let shrunk = shrink(powered_on(), powered_on(), &stream, &kept, &mut |_| {}).unwrap();
        assert_eq!((shrunk.start_frame, shrunk.start_snapshot), (0, None));
    }

    #[test]
    fn the_result_is_the_same_whatever_the_jobs() {
        // A presses change the tiny ROM's RAM for good (it sums them), other buttons only for the
        // frame: removals that rejoin the reference's run and removals that never do, side by side.
        let stream: Vec<FrameInput> = (0..40u8)
            .map(|i| FrameInput::buttons([0x01, 0x10, 0, 0x81][usize::from(i % 4)], i & 0x0C))
            .collect();
        let runs: Vec<Shrunk<FrameInput>> = [1, 2, 3]
            .into_iter()
            .map(|jobs| {
                let config = ShrinkConfig { jobs, checkpoint_every: 4, ..config() };
                shrink(powered_on(), powered_on(), &stream, &config, &mut |_| {}).unwrap()
            })
            .collect();
        for shrunk in &runs[1..] {
            assert_eq!(shrunk.repro, runs[0].repro, "jobs {}", shrunk.stats.jobs);
            assert_eq!(shrunk.report(), runs[0].report(), "jobs {}", shrunk.stats.jobs);
        }
        assert_eq!(runs[0].report().shrunk.presses, 0);
        assert!(runs[0].one_minimal());
    }

    /// A console that dies in frame `dies_at` (input-stream index), as a worker process whose core
    /// crashed: from then on its records are placeholders that agree with nothing and it refuses
    /// every snapshot.
    #[derive(Debug, Clone)]
    struct Dying {
        nes: NesMachine,
        /// Makes its placeholder its own.
        id: u8,
        dies_at: u64,
        dead: bool,
    }

    impl Dying {
        fn placeholder(&self) -> anes_core::state::FrameRecord {
            anes_core::state::FrameRecord {
                frame: u64::MAX,
                cpu_cycle: u64::MAX,
                ppu_scanline: 0,
                ppu_dot: 0,
                state_hash: anes_core::state::StateHash([self.id; 32]),
            }
        }
    }

    impl Machine for Dying {
        type Input = FrameInput;
        fn steps_instructions(&self) -> bool {
            false
        }
        fn run_frame(&mut self, input: FrameInput) -> anes_core::state::FrameRecord {
            if self.nes.record().frame == self.dies_at {
                self.dead = true;
            }
            if self.dead { self.placeholder() } else { self.nes.run_frame(input) }
        }
        fn record(&self) -> anes_core::state::FrameRecord {
            if self.dead { self.placeholder() } else { self.nes.record() }
        }
        fn probe(&self) -> crate::Probe {
            self.nes.probe()
        }
        fn state_hash(&self) -> anes_core::state::StateHash {
            self.record().state_hash
        }
        fn section_count(&self) -> usize {
            if self.dead { 0 } else { self.nes.section_count() }
        }
        fn section_name(&self, index: usize) -> &'static str {
            self.nes.section_name(index)
        }
        fn section_bytes(&self, index: usize) -> &[u8] {
            if self.dead { &[] } else { self.nes.section_bytes(index) }
        }
        fn snapshot_len(&self) -> usize {
            self.nes.snapshot_len()
        }
        fn save_state(&self, out: &mut Vec<u8>) {
            out.clear();
            if !self.dead {
                self.nes.save_state(out);
            }
        }
        fn load_state(&mut self, bytes: &[u8]) -> Result<(), crate::MachineError> {
            if self.dead {
                return Err(crate::MachineError::Snapshot("the machine died".into()));
            }
            self.nes.load_state(bytes)
        }
    }

    #[test]
    fn a_machine_that_dies_ends_the_shrink_with_its_refusal_not_a_panic() {
        let alive = |id, dies_at| Dying { nes: powered_on(), id, dies_at, dead: false };
        // Without presses (no trial before the start search) and with them (trials refused), one
        // job and two; B alone dies, and both do (each refusing its snapshots).
        for presses in [0x00, 0x10] {
            let stream = vec![FrameInput::buttons(presses, 0); 40];
            for jobs in [1, 2] {
                for a_dies_at in [u64::MAX, 10] {
                    let config =
                        ShrinkConfig { faults: FaultPlan::new(), jobs, checkpoint_every: 4, ..config() };
                    match shrink(alive(1, a_dies_at), alive(2, 10), &stream, &config, &mut |_| {}) {
                        Err(ShrinkError::Restore(e)) => assert!(e.to_string().contains("died"), "{e}"),
                        other => panic!("{:?}", other.map(|s| s.repro.len())),
                    }
                }
            }
        }
    }

    #[test]
    fn machines_at_different_frames_are_refused() {
        let (a, mut b) = (powered_on(), powered_on());
        b.run_frame(FrameInput::default());
        let stream = vec![FrameInput::default(); 40];
        match shrink(a, b, &stream, &config(), &mut |_| {}) {
            Err(ShrinkError::NotAtOneFrame { a: 0, b: 1 }) => {}
            other => panic!("{:?}", other.map(|s| s.repro.len())),
        }
    }
}
