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
//! stream so far. What "the same divergence" means and how trials are kept short is in `trial.rs`:
//! same kind, same frame, B's fault plan applied; trials start from the reference's checkpoint
//! before their first change and stop once their run meets a known one.
//!
//! It works through [`Machine`] for any machine with snapshots and an input type implementing
//! [`ShrinkInput`]. Deterministic: the same machines, stream and fault plan give the same
//! [`Shrunk::repro`] and [`Shrunk::report`], whatever [`ShrinkConfig::jobs`] (trials are asked in
//! a fixed order and the first that reproduces wins); only [`ShrinkStats`] (trials run, frames,
//! time) varies, and a time budget that stops the search stops it wherever it was.
//!
//! ```
//! use anes_core::{movie::FrameInput, NesConfig};
//! use anes_lockstep::{FaultPlan, NesMachine, ShrinkConfig, shrink};
//! # let rom = anes_lockstep::testing::tiny_rom();
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
mod trial;

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

pub use ddmin::{Budget, Halt, Minimized, RemovalOracle, ddmin};
pub use error::ShrinkError;
pub use input::ShrinkInput;
pub use report::{CommandJson, PressJson, ShrinkReport, StreamJson, TargetJson};

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
}

impl Default for ShrinkConfig {
    /// No faults, a checkpoint every 30 frames, one job, no budget.
    fn default() -> Self {
        ShrinkConfig {
            faults: FaultPlan::new(),
            checkpoint_every: 30,
            jobs: 1,
            max_trials: None,
            budget: None,
            expect: None,
        }
    }
}

/// What a shrink cost: varies with `jobs` and time, so it is kept out of the report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ShrinkStats {
    /// Trials run, including those a wave ran past its first reproducing candidate.
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

/// The result of [`shrink`].
#[derive(Debug, Clone)]
pub struct Shrunk<I> {
    /// The minimal stream: frames 0 through the divergent one.
    pub repro: Vec<I>,
    /// Frames of the stream given.
    pub original_frames: u64,
    /// The frame the machines were at when given (0: power-on): the repro replays from their
    /// state then, and its frames before this one hold no press.
    pub start_frame: u64,
    /// Presses in the stream given.
    pub original_presses: u64,
    /// The lockstep runner's evidence of the divergence on [`Shrunk::repro`] from power-on
    /// (localized, without pictures).
    pub evidence: Evidence,
    /// The fault plan of machine B.
    pub faults: FaultPlan,
    /// `None` when the search finished (the repro is 1-minimal); the budget that stopped it
    /// otherwise.
    pub stopped_by: Option<Budget>,
    /// What it cost.
    pub stats: ShrinkStats,
}

/// Shrinks the divergence of `a` and `b` (both at power-on, or both restored at the same frame,
/// which then reads `stream` from that frame on) over `stream`, B getting `config.faults` (see the
/// module docs). `progress` is called on this thread after every batch of
/// trials.
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
    let started = Instant::now();
    // The lockstep runner feeds input-stream frame n to the frame that starts with n frames
    // completed: machines restored from a snapshot read the stream from their frame on.
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
    let first = trial::run((a.clone(), b.clone()), &power_on, stream, frames - 1, None, None, every)?;
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
        machines: (&a, &b),
        stats: ShrinkStats {
            trials: 0,
            trials_in_order: 0,
            frames_emulated: first.frames,
            naive_frames: 0,
            seconds: 0.0,
            jobs: config.jobs.max(1),
        },
        reference: Reference::new(cut, target, power_on, first, every),
        jobs: config.jobs.max(1),
        deadline: config.budget.map(|budget| started + budget),
        max_trials: config.max_trials,
        pass: Pass::Presses,
        progress,
        failed_streams: HashSet::new(),
    };
    let mut stopped_by = None;
    'rounds: loop {
        let before = oracle.reference.stream.clone();
        for pass in [Pass::Presses, Pass::Buttons, Pass::Commands] {
            oracle.pass = pass;
            let atoms = pass.atoms(&oracle.reference.stream);
            let jobs = oracle.jobs;
            let result = ddmin(atoms, &mut oracle, jobs)?;
            if result.stopped_by.is_some() {
                stopped_by = result.stopped_by;
                break 'rounds;
            }
        }
        if oracle.reference.stream == before {
            break;
        }
    }
    let repro = oracle.reference.stream;
    let mut stats = oracle.stats;

    let final_config =
        LockstepConfig { faults: config.faults.clone(), pictures: false, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(a, b, final_config)?;
    let outcome = lockstep.run_interleaved(&repro, repro.len() as u64 - start);
    let final_frames = lockstep.next_frame() - start;
    stats.frames_emulated += final_frames;
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
    Ok(Shrunk {
        repro,
        original_frames: frames,
        original_presses: count_presses(given),
        start_frame: start,
        evidence,
        faults: config.faults.clone(),
        stopped_by,
        stats,
    })
}

/// Trials in lockstep against the reference (see `trial.rs`).
struct LockstepOracle<'m, 'p, A: Machine, B> {
    /// Both machines at power-on; every trial runs clones.
    machines: (&'m A, &'m B),
    reference: Reference<A::Input>,
    stats: ShrinkStats,
    jobs: usize,
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

/// A candidate stream and the frames where it differs from the reference.
struct Candidate<I> {
    stream: Vec<I>,
    first: u64,
    last: u64,
}

/// Runs `candidate` (number `index` of its batch) against `reference` on clones of `machines`.
fn run_candidate<A, B>(
    reference: &Reference<A::Input>,
    candidate: &Candidate<A::Input>,
    machines: (A, B),
    cancel: Option<(&AtomicUsize, usize)>,
) -> Result<TrialRun, ShrinkError>
where
    A: Machine,
    B: Machine<Input = A::Input>,
    A::Input: ShrinkInput,
{
    let run = trial::run(
        machines,
        reference.checkpoint_before(candidate.first),
        &candidate.stream,
        reference.target.frame,
        Some(reference.target),
        Some(Shortcuts { reference, last_change: candidate.last, cancel }),
        reference.checkpoint_every,
    )?;
    if let Some((winner, index)) = cancel.filter(|_| run.reproduced) {
        winner.fetch_min(index, Ordering::Relaxed);
    }
    Ok(run)
}

/// Runs `candidates` (`None` where the answer is already known): one at a time until one
/// reproduces (`jobs` 1), or all at once on their own threads, those after one that reproduced
/// cancelled. The runs, by candidate.
fn run_all<A, B>(
    (a, b): (&A, &B),
    reference: &Reference<A::Input>,
    candidates: &[Option<Candidate<A::Input>>],
    jobs: usize,
) -> Vec<Option<Result<TrialRun, ShrinkError>>>
where
    A: Machine + Clone + Send,
    B: Machine<Input = A::Input> + Clone + Send,
    A::Input: ShrinkInput,
{
    if jobs == 1 || candidates.iter().flatten().count() <= 1 {
        let mut runs = Vec::new();
        for candidate in candidates {
            let run = candidate.as_ref().map(|c| run_candidate(reference, c, (a.clone(), b.clone()), None));
            let stop = run.as_ref().is_some_and(|r| r.as_ref().map_or(true, |r| r.reproduced));
            runs.push(run);
            if stop {
                break;
            }
        }
        return runs;
    }
    let winner = AtomicUsize::new(usize::MAX);
    std::thread::scope(|scope| {
        let handles: Vec<_> = candidates
            .iter()
            .enumerate()
            .map(|(index, candidate)| {
                let candidate = candidate.as_ref()?;
                let machines = (a.clone(), b.clone());
                let winner = &winner;
                Some(
                    scope.spawn(move || run_candidate(reference, candidate, machines, Some((winner, index)))),
                )
            })
            .collect();
        handles.into_iter().map(|h| h.map(|h| h.join().expect("a trial thread panicked"))).collect()
    })
}

impl<A, B> RemovalOracle<Atom> for LockstepOracle<'_, '_, A, B>
where
    A: Machine + Clone + Send,
    B: Machine<Input = A::Input> + Clone + Send,
    A::Input: ShrinkInput,
{
    type Error = ShrinkError;

    fn first_reproducing(&mut self, removals: &[Vec<Atom>]) -> Result<Option<usize>, Halt<ShrinkError>> {
        if self.deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return Err(Halt::Budget(Budget::Time));
        }
        let allowed = self.max_trials.map_or(u64::MAX, |max| max.saturating_sub(self.stats.trials_in_order));
        if allowed == 0 {
            return Err(Halt::Budget(Budget::Trials));
        }
        let removals = &removals[..removals.len().min(usize::try_from(allowed).unwrap_or(usize::MAX))];
        let candidates: Vec<Candidate<A::Input>> = removals
            .iter()
            .map(|atoms| {
                let mut stream = self.reference.stream.clone();
                for atom in atoms {
                    atom.remove_from(&mut stream);
                }
                let frames = atoms.iter().map(|atom| atom.frame());
                Candidate {
                    stream,
                    first: frames.clone().min().unwrap_or(0),
                    last: frames.max().unwrap_or(0),
                }
            })
            .collect();
        // A stream that failed before fails again: no trial for it.
        let keys: Vec<StreamKey> = candidates.iter().map(|c| stream_key(&c.stream)).collect();
        let to_run: Vec<Option<Candidate<A::Input>>> = candidates
            .into_iter()
            .zip(&keys)
            .map(|(candidate, key)| (!self.failed_streams.contains(key)).then_some(candidate))
            .collect();
        let runs = run_all(self.machines, &self.reference, &to_run, self.jobs);
        let mut winner = None;
        for (index, run) in runs.iter().enumerate() {
            if winner.is_none() {
                self.stats.trials_in_order += 1;
            }
            let Some(run) = run else { continue };
            let run = run.as_ref().map_err(|e| Halt::Failed(e.clone()))?;
            self.stats.trials += 1;
            self.stats.frames_emulated += run.frames;
            if run.cancelled {
                continue;
            }
            if run.reproduced {
                winner = winner.or(Some(index));
                continue;
            }
            let candidate = to_run[index].as_ref().expect("a run has its candidate");
            self.reference.remember_failure(candidate.last, run);
            self.failed_streams.insert(keys[index]);
        }
        if let Some(index) = winner {
            let run =
                runs.into_iter().nth(index).flatten().expect("the winner's run").expect("checked above");
            let Candidate { stream, last, .. } =
                to_run.into_iter().nth(index).flatten().expect("the winner's candidate");
            self.reference.accept(stream, last, run);
        }
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
        Ok(winner)
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
        NesMachine::from_ines(&crate::testing::tiny_rom(), NesConfig::default()).unwrap()
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
