//! The runner: two machines, one input stream, a comparison at every sync point. This module pairs
//! the machines, runs them on the calling thread and rolls them back; the threaded runner is in
//! `threaded.rs`, the comparison in `comparator.rs`, the checkpoints in `checkpoint.rs` and the
//! evidence collection in `collect.rs`.

use std::sync::Arc;

use anes_core::state::{FrameRecord, StateHash};

use crate::checkpoint::CheckpointRing;
use crate::comparator::Comparator;
use crate::config::{Granularity, LockstepConfig, Threading};
use crate::evidence::Evidence;
use crate::fate::FaultOutcome;
use crate::input::InputSource;
use crate::machine::Machine;
use crate::outcome::{Divergence, LockstepError, Progress, Rollback, RollbackError, RunOutcome};
use crate::schedule::{FaultSchedule, FiredFault};
use crate::side::{Side, SyncRecord};
use crate::status::LockstepStatus;

/// Two deterministic machines run over one input stream and compared at every sync point.
///
/// Any difference is fatal for the run: intake of input stops, the first divergent instruction after
/// the last sync point where the machines agreed is localized, replaying from the last verified
/// checkpoint (when [`LockstepConfig::localize`] is on), and the evidence is kept until dropped;
/// [`Lockstep::rollback`] returns both machines to the last verified checkpoint so the run can resume.
///
/// ```
/// use anes_lockstep::{FaultPlan, Lockstep, LockstepConfig, NesMachine, RunOutcome};
/// use anes_core::{movie::InputStream, NesConfig};
/// # let rom = anes_fixtures::tiny_rom();
/// let a = NesMachine::from_ines(&rom, NesConfig::default()).unwrap();
/// let b = NesMachine::from_ines(&rom, NesConfig::default()).unwrap();
/// let inputs = InputStream::new();
///
/// // Two identical machines agree.
/// let mut lockstep = Lockstep::new(a.clone(), b.clone(), LockstepConfig::default()).unwrap();
/// assert_eq!(lockstep.run(&inputs, 20), RunOutcome::Agreed { frames: 20 });
///
/// // A bit flipped in B's RAM is caught at the next sync point and localized to the instruction.
/// let faults = FaultPlan::parse(["flip:ram:0x0010:3@50000"]).unwrap();
/// let config = LockstepConfig { checkpoint_every: 5, faults, ..LockstepConfig::default() };
/// let mut lockstep = Lockstep::new(a, b, config).unwrap();
/// assert!(matches!(lockstep.run(&inputs, 20), RunOutcome::Diverged(_)));
/// let found = lockstep.evidence().unwrap().localization.as_ref().unwrap();
/// assert!(found.cpu_cycle < 50000 && 50000 <= found.end_cpu_cycle);
/// assert!(found.fields.iter().any(|f| f.name == "ram[$0010]"));
///
/// // Rollback restores agreement, and the transient fault does not recur.
/// lockstep.rollback().unwrap();
/// assert_eq!(lockstep.run(&inputs, 10), RunOutcome::Agreed { frames: 10 });
/// ```
#[derive(Debug)]
pub struct Lockstep<A, B> {
    pub(crate) a: Side<A>,
    pub(crate) b: Side<B>,
    pub(crate) config: LockstepConfig,
    pub(crate) cmp: Comparator,
    pub(crate) ring: CheckpointRing,
    evidence: Vec<Evidence>,
    /// The machines differed when paired; the evidence is collected by the first run.
    evidence_pending: bool,
    /// The threaded runner's batch vectors, kept between runs (see `threaded.rs`).
    pub(crate) batch_pool: Vec<crate::batch::Batch>,
}

impl<A: Machine, B: Machine<Input = A::Input>> Lockstep<A, B> {
    /// Pairs two machines that are at the same point (typically both just powered on with the same
    /// ROM and config) and takes the first checkpoint. Input-stream frame `n` is fed to the frame that
    /// starts with `n` frames completed, so machines that already ran some frames continue the stream
    /// where they are.
    pub fn new(a: A, b: B, config: LockstepConfig) -> Result<Lockstep<A, B>, LockstepError> {
        if config.checkpoint_every == 0 {
            return Err(LockstepError::Config("checkpoint_every must be at least 1"));
        }
        if config.checkpoints_kept == 0 {
            return Err(LockstepError::Config("checkpoints_kept must be at least 1"));
        }
        if config.hash_every_instructions == 0 {
            return Err(LockstepError::Config("hash_every_instructions must be at least 1"));
        }
        if config.threading == (Threading::Threaded { window: 0 }) {
            return Err(LockstepError::Config("the threaded window must be at least 1 sync record"));
        }
        if config.granularity != Granularity::Frame && !(a.steps_instructions() && b.steps_instructions()) {
            return Err(LockstepError::Config(
                "scanline and instruction granularity need machines that step instructions",
            ));
        }
        let faults = FaultSchedule::new(&config.faults, &b)?;
        let start_frame = a.record().frame;
        // Buffers beyond the kept ones hold checkpoints saved but not yet verified: one on the same
        // thread; in threaded mode as many as a worker can save while as far ahead as it can get.
        let in_flight = match config.threading {
            Threading::SameThread => 1,
            Threading::Threaded { window } => {
                crate::batch::BatchPlan::new(window).max_lead() as u64 / config.checkpoint_every + 2
            }
        };
        let mut ring = usize::try_from(in_flight)
            .ok()
            .and_then(|in_flight| {
                CheckpointRing::new(config.checkpoints_kept, in_flight, (a.snapshot_len(), b.snapshot_len()))
            })
            .ok_or(LockstepError::Config(
                "too many checkpoint buffers: lower checkpoints_kept or the threaded window, or raise checkpoint_every",
            ))?;
        ring.save_start(&a, &b);
        // Lagging steps only where both machines lag alike: the same kind of stepping on both
        // sides, and no fault to fire in B alone.
        let lagging =
            a.lag_signature().is_some() && a.lag_signature() == b.lag_signature() && config.faults.is_empty();
        let mut a = Side::new(a, FaultSchedule::default(), start_frame);
        let mut b = Side::new(b, faults, start_frame);
        a.lagging = lagging;
        b.lagging = lagging;
        let mut cmp = Comparator {
            start_frame,
            verified_until: start_frame,
            sync_points: 0,
            last_verified: a.machine.record(),
            divergence: None,
            status: Arc::new(LockstepStatus::default()),
        };
        let first = (
            SyncRecord { frame: start_frame, record: a.machine.record(), frame_end: false, digest: 0 },
            SyncRecord { frame: start_frame, record: b.machine.record(), frame_end: false, digest: 0 },
        );
        let agree = cmp.compare(&first.0, &first.1, config.checkpoint_every, &mut ring.verified);
        if agree {
            ring.verify_start(start_frame, first.0.record.state_hash);
        }
        Ok(Lockstep {
            a,
            b,
            config,
            cmp,
            ring,
            evidence: Vec::new(),
            evidence_pending: !agree,
            batch_pool: Vec::new(),
        })
    }

    /// Runs `frames` more frames (or until a divergence) on the calling thread, whatever
    /// [`LockstepConfig::threading`] says. Works for machines that cannot be sent between threads.
    pub fn run_interleaved<S: InputSource<A::Input> + ?Sized>(
        &mut self,
        inputs: &S,
        frames: u64,
    ) -> RunOutcome {
        self.run_interleaved_with(inputs, frames, &mut |_| {})
    }

    /// [`Lockstep::run_interleaved`], calling `progress` after every verified frame.
    pub fn run_interleaved_with<S: InputSource<A::Input> + ?Sized>(
        &mut self,
        inputs: &S,
        frames: u64,
        progress: &mut dyn FnMut(Progress),
    ) -> RunOutcome {
        if let Some(outcome) = self.already_diverged(inputs) {
            return outcome;
        }
        let target = self.cmp.verified_until.saturating_add(frames);
        let (granularity, every) = (self.config.granularity, self.config.checkpoint_every);
        self.start_run();
        while self.cmp.verified_until < target {
            let (a, b) = match self.run_lagging_in_frame(granularity, every) {
                Some(pair) => pair,
                None => (
                    self.a.advance(&mut self.ring.a, inputs, granularity, every),
                    self.b.advance(&mut self.ring.b, inputs, granularity, every),
                ),
            };
            if !self.cmp.compare(&a, &b, every, &mut self.ring.verified) {
                return self.end_run(inputs, frames, true);
            }
            if a.frame_end {
                progress(self.cmp.progress());
            }
        }
        self.end_run(inputs, frames, true)
    }

    /// Inside a frame where both machines step lagging (instruction or scanline granularity, no
    /// fault planned), pairs of steps compared in place by lagging digest and CPU cycle (the rest
    /// of their records, the frame and the PPU's position, is state the digest covers), with the
    /// live count of sync points brought up to date once at the end. Returns the first pair the
    /// comparator must see itself, in full: the frame's end (either machine's) or a difference;
    /// `None` when the sides do not both lag inside a frame.
    fn run_lagging_in_frame(
        &mut self,
        granularity: Granularity,
        every: u64,
    ) -> Option<(SyncRecord, SyncRecord)> {
        if !(self.a.lags_inside_frame(granularity) && self.b.lags_inside_frame(granularity)) {
            return None;
        }
        let by_line = granularity == Granularity::Scanline;
        let mut agreeing = 0;
        let (a, b) = loop {
            let a = self.a.step_lagging_in_frame(by_line);
            let b = self.b.step_lagging_in_frame(by_line);
            match (a, b) {
                (Some(a), Some(b)) if a == b => agreeing += 1,
                pair => break pair,
            }
        };
        self.cmp.count_agreeing(agreeing);
        let a = match a {
            Some(_) => self.a.lagging_sync_inside_frame(),
            None => self.a.lagging_frame_end(),
        };
        let b = match b {
            Some(_) => self.b.lagging_sync_inside_frame(),
            None => self.b.lagging_frame_end(),
        };
        self.a.save_if_due(&a, &mut self.ring.a, every);
        self.b.save_if_due(&b, &mut self.ring.b, every);
        Some((a, b))
    }

    /// Numbers both sides' next sync records after the comparator's last one.
    pub(crate) fn start_run(&mut self) {
        self.a.sync_point = self.cmp.sync_points + 1;
        self.b.sync_point = self.cmp.sync_points + 1;
    }

    /// Ends a run of `frames` frames: settles the faults that fired and, at a divergence, collects
    /// its evidence. `at_sync_point`: the machines stopped where they were last compared (one thread).
    pub(crate) fn end_run<S: InputSource<A::Input> + ?Sized>(
        &mut self,
        inputs: &S,
        frames: u64,
        at_sync_point: bool,
    ) -> RunOutcome {
        let diverged_at = self.cmp.divergence.as_ref().map(|d| d.sync_point);
        self.b.faults.settle(self.cmp.sync_points, diverged_at);
        match diverged_at {
            Some(_) => self.diverged(inputs, at_sync_point),
            None => RunOutcome::Agreed { frames },
        }
    }

    /// While diverged, runs do nothing. A divergence found when the machines were paired (they differ
    /// from the start) gets its evidence on the first run, which has the inputs.
    pub(crate) fn already_diverged<S: InputSource<A::Input> + ?Sized>(
        &mut self,
        inputs: &S,
    ) -> Option<RunOutcome> {
        let divergence = self.cmp.divergence.as_ref()?;
        if self.evidence_pending {
            self.evidence_pending = false;
            // Nothing ran since the pairing: the machines are still at the sync point.
            return Some(self.diverged(inputs, true));
        }
        Some(RunOutcome::Diverged(Box::new(divergence.clone())))
    }

    /// Ends a run at the divergence the comparator just found: collects and keeps its evidence.
    fn diverged<S: InputSource<A::Input> + ?Sized>(&mut self, inputs: &S, at_sync_point: bool) -> RunOutcome {
        let mut divergence = self.cmp.divergence.clone().expect("called on a divergence");
        let evidence = self.collect_evidence(inputs, &mut divergence, at_sync_point);
        // Records inside a frame were compared by digest: the evidence filled in their state hashes.
        self.cmp.divergence = Some(divergence.clone());
        self.evidence.push(evidence);
        RunOutcome::Diverged(Box::new(divergence))
    }

    /// Restores both machines to the last verified checkpoint and verifies that both state hashes
    /// equal the hash recorded for it before resuming (recovery mode). A checkpoint that fails
    /// verification is discarded and the previous one tried. The evidence is kept.
    pub fn rollback(&mut self) -> Result<Rollback, RollbackError> {
        let mut discarded = 0;
        let (a, b) = (&mut self.a, &mut self.b);
        while let Some(restored) =
            self.ring.restore_newest(&mut a.machine, &mut b.machine, self.cmp.sync_points)
        {
            let Ok(checkpoint) = restored else {
                discarded += 1;
                continue;
            };
            for side_frame in [&mut a.frame, &mut b.frame] {
                *side_frame = checkpoint.frame;
            }
            a.in_frame = false;
            b.in_frame = false;
            self.cmp.verified_until = checkpoint.frame;
            self.cmp.last_verified = a.machine.record();
            self.cmp.divergence = None;
            self.cmp.status.set_frames_verified(checkpoint.frame - self.cmp.start_frame);
            self.cmp.status.set_drift_frames(0);
            self.cmp.status.set_diverged(false);
            self.cmp.status.count_rollback();
            return Ok(Rollback { frame: checkpoint.frame, state_hash: checkpoint.state_hash, discarded });
        }
        Err(RollbackError::NoVerifiedCheckpoint { discarded })
    }

    /// Frames both machines agreed on since the Lockstep was created. Nothing after the last verified
    /// frame counts; after a rollback this falls back to the checkpoint.
    pub fn frames_verified(&self) -> u64 {
        self.cmp.verified_until - self.cmp.start_frame
    }

    /// Machine A's record at the end of the last verified frame (at creation: where it started). Its
    /// state hash is the run's final state hash.
    pub fn last_verified_record(&self) -> FrameRecord {
        self.cmp.last_verified
    }

    /// Input-stream index of the next frame to verify.
    pub fn next_frame(&self) -> u64 {
        self.cmp.verified_until
    }

    /// Sync points compared since the Lockstep was created.
    pub fn sync_points(&self) -> u64 {
        self.cmp.sync_points
    }

    /// Lead of the leading machine over the comparator, in frames, as last measured (0 on one thread).
    pub fn drift_frames(&self) -> u64 {
        self.cmp.status.drift_frames()
    }

    /// True from a divergence until a successful [`Lockstep::rollback`].
    pub fn is_diverged(&self) -> bool {
        self.cmp.divergence.is_some()
    }

    /// The divergence that stopped the run, until a rollback.
    pub fn divergence(&self) -> Option<&Divergence> {
        self.cmp.divergence.as_ref()
    }

    /// The evidence of the latest divergence (kept across rollbacks).
    pub fn evidence(&self) -> Option<&Evidence> {
        self.evidence.last()
    }

    /// The evidence of every divergence since the Lockstep was created, oldest first.
    pub fn evidence_history(&self) -> &[Evidence] {
        &self.evidence
    }

    /// Input-stream frame indexes of the verified checkpoints kept, oldest first.
    pub fn checkpoint_frames(&self) -> impl Iterator<Item = u64> + '_ {
        self.ring.verified.frames()
    }

    /// The state hash both machines had at the last verified frame end (or checkpoint).
    pub fn last_verified_checkpoint(&self) -> Option<(u64, StateHash)> {
        self.ring.verified.newest().map(|c| (c.frame, c.state_hash))
    }

    /// Faults that fired in machine B so far.
    pub fn fired_faults(&self) -> Vec<FiredFault> {
        self.b.faults.fired().cloned().collect()
    }

    /// Every fault of the plan, in plan order, with its fate so far: detected or masked at the sync
    /// point after it was applied, refused by machine B, or not reached yet.
    pub fn fault_fates(&self) -> Vec<FaultOutcome> {
        let diverged_at = self.cmp.divergence.as_ref().map(|d| d.sync_point);
        self.b.faults.fates(self.cmp.sync_points, diverged_at)
    }

    /// Live status, shareable with other threads (metrics exporters, watchdogs).
    pub fn status(&self) -> Arc<LockstepStatus> {
        Arc::clone(&self.cmp.status)
    }

    /// The configuration the runner was built with (sync granularity, checkpoints, threading...).
    pub fn config(&self) -> &LockstepConfig {
        &self.config
    }

    /// Machine A.
    pub fn machine_a(&self) -> &A {
        &self.a.machine
    }

    /// Machine B.
    pub fn machine_b(&self) -> &B {
        &self.b.machine
    }

    /// Takes both machines back.
    pub fn into_machines(self) -> (A, B) {
        (self.a.machine, self.b.machine)
    }
}

impl<A: Machine + Send, B: Machine<Input = A::Input> + Send> Lockstep<A, B> {
    /// Runs `frames` more frames, or until a divergence, as [`LockstepConfig::threading`] says.
    /// `inputs`: an anes [`anes_core::movie::InputStream`], or a slice or `Vec` of the machines'
    /// inputs (see [`InputSource`]).
    pub fn run<S: InputSource<A::Input> + Sync + ?Sized>(&mut self, inputs: &S, frames: u64) -> RunOutcome {
        self.run_with(inputs, frames, &mut |_| {})
    }

    /// [`Lockstep::run`], calling `progress` (on the calling thread) after every verified frame.
    pub fn run_with<S: InputSource<A::Input> + Sync + ?Sized>(
        &mut self,
        inputs: &S,
        frames: u64,
        progress: &mut dyn FnMut(Progress),
    ) -> RunOutcome {
        match self.config.threading {
            Threading::SameThread => self.run_interleaved_with(inputs, frames, progress),
            Threading::Threaded { window } => self.run_threaded(inputs, frames, window, progress),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Fault, FaultPlan, NesMachine};
    use anes_core::movie::InputStream;
    use anes_fixtures::{FakeMachine, tiny_rom};

    fn pair() -> (NesMachine, NesMachine) {
        let a = NesMachine::from_ines(&tiny_rom(), anes_core::NesConfig::default()).unwrap();
        (a.clone(), a)
    }

    #[test]
    fn corrupted_checkpoint_is_discarded_and_the_previous_one_used() {
        let (a, b) = pair();
        let faults = FaultPlan::new().with(Fault::FlipBit {
            section: "ram".into(),
            offset: 0x300,
            bit: 0,
            cpu_cycle: 29_781 * 25,
        });
        let config = LockstepConfig { checkpoint_every: 10, faults, ..LockstepConfig::default() };
        let mut lockstep = Lockstep::new(a, b, config).unwrap();
        assert!(matches!(lockstep.run(&InputStream::new(), 40), RunOutcome::Diverged(_)));
        assert_eq!(lockstep.checkpoint_frames().collect::<Vec<_>>(), [0, 10, 20]);
        lockstep.ring.corrupt_for_test(2);
        let rollback = lockstep.rollback().unwrap();
        assert_eq!((rollback.frame, rollback.discarded), (10, 1));
        assert!(lockstep.evidence().is_some(), "rollback keeps the evidence");
        assert_eq!(lockstep.run(&InputStream::new(), 30), RunOutcome::Agreed { frames: 30 });
        assert_eq!(lockstep.frames_verified(), 40);
    }

    #[test]
    fn no_checkpoint_left_is_an_error() {
        let mut lockstep =
            Lockstep::new(FakeMachine::new(1), FakeMachine::new(2), LockstepConfig::default()).unwrap();
        assert!(lockstep.is_diverged(), "different seeds differ at once");
        assert_eq!(lockstep.rollback(), Err(RollbackError::NoVerifiedCheckpoint { discarded: 0 }));
        assert!(matches!(lockstep.run(&InputStream::new(), 5), RunOutcome::Diverged(_)));
        let evidence = lockstep.evidence().expect("the first run collects the evidence");
        assert_eq!(evidence.divergence.sync_point, 1);
        assert!(evidence.localization_error.as_deref().unwrap().contains("no verified checkpoint"));
        assert_eq!(lockstep.evidence_history().len(), 1);
        let _ = lockstep.run(&InputStream::new(), 5);
        assert_eq!(lockstep.evidence_history().len(), 1, "collected once");
    }
}
