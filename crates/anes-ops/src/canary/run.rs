//! One canary run: the baseline (a build, or a golden log) and the candidate build fed the identical
//! input stream, their frame records compared as they arrive, the run stopped at the first difference
//! and the difference explained.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anes_core::Region;
use anes_core::hex::to_hex;
use anes_core::movie::InputStream;
use anes_core::state::FrameRecord;
use anes_lockstep::{DivergenceKind, Evidence, Lockstep, LockstepConfig, RunOutcome};
use serde::Serialize;
use thiserror::Error;

use super::client::{DEFAULT_REPLY_TIMEOUT, WorkerError, WorkerProcess};
use super::log::GoldenLog;
use super::remote::RemoteMachine;
use super::status::CanaryStatus;
use crate::worker::protocol::{BuildInfo, Reply, WireInput, WorkerCommand};

/// What to run.
#[derive(Debug, Clone)]
pub struct CanaryConfig {
    /// The iNES file.
    pub rom: Vec<u8>,
    /// The input stream (frame `i` of the run gets input `i`; past its end, no buttons).
    pub inputs: InputStream,
    /// Frames to compare (at least 1: an empty comparison proves nothing).
    pub frames: u64,
    /// A checkpoint (both builds' snapshots of an agreed state) every this many frames: a difference is
    /// explained by replaying from the last one.
    pub checkpoint_every: u64,
    /// Frames sent to a worker in one batch.
    pub batch: usize,
    /// Localize a difference to the instruction (both baseline and candidate must be builds).
    pub localize: bool,
    /// How long a worker may take to send its next reply before it counts as hung.
    pub reply_timeout: Duration,
    /// The consoles' region, sent to both builds in `Load`; `None`: the ROM header's. A build that
    /// answers with another region (one older than regions answers none) fails the gate at load.
    pub region: Option<Region>,
}

impl CanaryConfig {
    /// A run of `frames` frames of `rom` with `inputs`, checkpoints every 60 frames, localization on,
    /// [`DEFAULT_REPLY_TIMEOUT`].
    pub fn new(rom: Vec<u8>, inputs: InputStream, frames: u64) -> CanaryConfig {
        CanaryConfig {
            rom,
            inputs,
            frames,
            checkpoint_every: 60,
            batch: 64,
            localize: true,
            reply_timeout: DEFAULT_REPLY_TIMEOUT,
            region: None,
        }
    }
}

/// What the candidate is compared with.
#[derive(Debug, Clone, Copy)]
pub enum Baseline<'a> {
    /// Another build's `anes` executable, run as a worker.
    Build(&'a Path),
    /// A golden log of frame records.
    Log(&'a GoldenLog),
}

/// Why a run could not be made (bad input; not a verdict about the candidate).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CanaryError {
    /// A worker could not be started or did not complete the handshake (its hello, of this protocol
    /// version): the executable is not an anes worker this build can drive.
    #[error(transparent)]
    Worker(#[from] WorkerError),
    /// The ROM was refused.
    #[error("the ROM is refused: {0}")]
    Rom(String),
    /// The golden log is shorter than the run.
    #[error("the golden log holds {records} records; the run needs {frames}")]
    LogTooShort {
        /// Records in the log.
        records: usize,
        /// Frames asked for.
        frames: u64,
    },
    /// A configuration value out of range.
    #[error("invalid canary configuration: {0}")]
    Config(&'static str),
}

/// Whether a difference is a regression: builds of one emulation epoch must agree frame by frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum EpochVerdict {
    /// Both builds have this epoch: a difference is a regression.
    SameEpoch {
        /// The emulation epoch both builds report.
        epoch: u32,
    },
    /// The candidate changed emulated behaviour on purpose (it bumped the epoch): a difference is the
    /// expected change, to be reviewed and re-blessed, not a regression.
    DifferentEpoch {
        /// The baseline's epoch.
        baseline: u32,
        /// The candidate's epoch.
        candidate: u32,
    },
    /// The baseline's epoch is not known (a golden log without an `EPOCH` file beside it).
    Unknown,
}

impl EpochVerdict {
    fn of(baseline: Option<u32>, candidate: u32) -> EpochVerdict {
        match baseline {
            Some(epoch) if epoch == candidate => EpochVerdict::SameEpoch { epoch },
            Some(baseline) => EpochVerdict::DifferentEpoch { baseline, candidate },
            None => EpochVerdict::Unknown,
        }
    }

    /// One line for people.
    pub fn describe(&self) -> String {
        match self {
            EpochVerdict::SameEpoch { epoch } => format!("same epoch ({epoch}): regression"),
            EpochVerdict::DifferentEpoch { baseline, candidate } => {
                format!("different epoch ({baseline} -> {candidate}): expected change")
            }
            EpochVerdict::Unknown => "baseline epoch unknown".to_string(),
        }
    }
}

/// The first difference.
#[derive(Debug, Clone)]
pub struct CanaryDivergence {
    /// Input-stream index of the first frame whose records differ; `None` when the builds differ at
    /// power-on (before any input).
    pub frame: Option<u64>,
    /// State, or cycle misalignment (the CPU cycles differ).
    pub kind: DivergenceKind,
    /// The baseline's record there.
    pub baseline: FrameRecord,
    /// The candidate's record there.
    pub candidate: FrameRecord,
    /// Regression or expected change.
    pub epochs: EpochVerdict,
    /// The lockstep runner's evidence of the first divergent instruction and the fields it changed,
    /// when both sides are builds and localization succeeded.
    pub evidence: Option<Evidence>,
    /// Why there is no evidence, when localization was tried and failed.
    pub localization_error: Option<String>,
}

/// How the run ended.
#[derive(Debug, Clone)]
pub enum CanaryOutcome {
    /// Every frame's records agreed.
    Same,
    /// The records differ.
    Diverged(Box<CanaryDivergence>),
    /// A worker died, hung, broke the protocol or refused the ROM after its handshake: the candidate is
    /// not fit either.
    WorkerFailed {
        /// `baseline` or `candidate`.
        side: &'static str,
        /// What happened.
        reason: String,
        /// Frames both had agreed on before.
        frame: u64,
    },
}

/// The result of a run.
#[derive(Debug, Clone)]
pub struct CanaryReport {
    /// The baseline build, when the baseline is a build.
    pub baseline_build: Option<BuildInfo>,
    /// The candidate build.
    pub candidate_build: BuildInfo,
    /// blake3 of the ROM's PRG and CHR data, as the candidate named it (`None`: it never loaded the ROM).
    pub rom_identity: Option<[u8; 32]>,
    /// Frames whose records agreed.
    pub frames_agreed: u64,
    /// The candidate's record after the last agreed frame (its state hash is the run's final state hash
    /// when the builds agree); `None` when a worker failed before both had powered on.
    pub last_agreed: Option<FrameRecord>,
    /// The console region the candidate powered on (`None`: it never loaded the ROM).
    pub region: Option<Region>,
    /// Agreement, the first difference with its epoch verdict, or why the comparison could not run.
    pub outcome: CanaryOutcome,
}

impl CanaryReport {
    /// True when the builds agreed on every frame.
    pub fn agreed(&self) -> bool {
        matches!(self.outcome, CanaryOutcome::Same)
    }
}

/// Runs a canary: the candidate executable against the baseline over `config.frames` frames, stopping at
/// the first differing frame; `progress` is called with the frames agreed so far; `status` is updated for
/// the metrics exporter.
pub fn run_canary(
    config: &CanaryConfig,
    baseline: Baseline<'_>,
    candidate: &Path,
    status: &Arc<CanaryStatus>,
    progress: &mut dyn FnMut(u64),
) -> Result<CanaryReport, CanaryError> {
    if config.frames == 0 {
        return Err(CanaryError::Config("no frames to compare: an empty comparison proves nothing"));
    }
    if config.checkpoint_every == 0 || config.batch == 0 {
        return Err(CanaryError::Config("checkpoint_every and batch must be at least 1"));
    }
    if let Baseline::Log(log) = baseline {
        if (log.records.len() as u64) < config.frames {
            return Err(CanaryError::LogTooShort { records: log.records.len(), frames: config.frames });
        }
    }
    anes_core::Cartridge::from_ines(&config.rom).map_err(|e| CanaryError::Rom(e.to_string()))?;
    // The handshake tells an anes worker from any other executable (bad input); whatever goes wrong
    // after it, from loading the ROM on, is the build's failure and a verdict.
    let candidate = WorkerProcess::spawn(candidate, config.reply_timeout)?;
    let baseline_worker = match baseline {
        Baseline::Build(program) => Some(WorkerProcess::spawn(program, config.reply_timeout)?),
        Baseline::Log(_) => None,
    };
    let builds = (baseline_worker.as_ref().map(|w| w.build().clone()), candidate.build().clone());
    let mut sides = match Sides::load(config, baseline_worker, candidate) {
        Ok(sides) => sides,
        Err((side, e)) => {
            status.start(config.frames);
            status.diverged();
            return Ok(CanaryReport {
                baseline_build: builds.0,
                candidate_build: builds.1,
                rom_identity: None,
                frames_agreed: 0,
                last_agreed: None,
                region: None,
                outcome: CanaryOutcome::WorkerFailed { side, reason: e.to_string(), frame: 0 },
            });
        }
    };
    let report = sides.compare(config, baseline, status, progress);
    sides.stop();
    report
}

/// One worker with what the comparison keeps about it.
#[derive(Debug)]
struct Side {
    name: &'static str,
    worker: WorkerProcess,
    /// Its snapshot at the last agreed checkpoint.
    checkpoint: Vec<u8>,
    /// Frames sent so far.
    sent: u64,
}

impl Side {
    fn load(
        name: &'static str,
        mut worker: WorkerProcess,
        config: &CanaryConfig,
    ) -> Result<(Side, [u8; 32], FrameRecord, Option<Region>), WorkerError> {
        let load = WorkerCommand::Load {
            rom: config.rom.clone(),
            checkpoint_every: config.checkpoint_every,
            region: config.region,
            power_on: None,
        };
        let (identity, record, region) = match worker.request(&load, "load")? {
            Reply::Loaded { rom_identity, record, region } => {
                if let Some(asked) = config.region {
                    if region != Some(asked) {
                        return Err(WorkerError::Refused {
                            program: worker.program().into(),
                            command: "load",
                            message: match region {
                                Some(got) => format!("asked for a {asked} console, it loaded a {got} one"),
                                None => format!(
                                    "asked for a {asked} console, it does not say a region (a build older than regions)"
                                ),
                            },
                        });
                    }
                }
                (rom_identity, FrameRecord::from(record), region)
            }
            other => return Err(worker.unexpected("load", &other)),
        };
        let checkpoint = match worker.recv()? {
            Reply::Snapshot { bytes, .. } => bytes,
            other => return Err(worker.unexpected("load", &other)),
        };
        Ok((Side { name, worker, checkpoint, sent: 0 }, identity, record, region))
    }

    /// Keeps up to `window` frames in flight.
    fn feed(&mut self, config: &CanaryConfig, upto: u64) -> Result<(), WorkerError> {
        while self.sent < upto {
            let end = (self.sent + config.batch as u64).min(upto);
            let inputs = (self.sent..end)
                .map(|i| WireInput::from(config.inputs.frame(usize::try_from(i).unwrap_or(usize::MAX))))
                .collect();
            self.worker.send(&WorkerCommand::Frames { first_seq: self.sent, inputs })?;
            self.sent = end;
        }
        Ok(())
    }

    /// The record of frame `seq`, and the snapshot after it when a checkpoint interval ends there.
    fn next(
        &mut self,
        seq: u64,
        checkpoint_every: u64,
    ) -> Result<(FrameRecord, Option<Vec<u8>>), WorkerError> {
        let record = match self.worker.recv()? {
            Reply::Record { seq: got, record } if got == seq => FrameRecord::from(record),
            Reply::Error { message } => {
                return Err(WorkerError::Refused {
                    program: self.worker.program().into(),
                    command: "frames",
                    message,
                });
            }
            other => return Err(self.worker.unexpected("frames", &other)),
        };
        if (seq + 1) % checkpoint_every != 0 {
            return Ok((record, None));
        }
        match self.worker.recv()? {
            Reply::Snapshot { seq: got, bytes, .. } if got == seq + 1 => Ok((record, Some(bytes))),
            other => Err(self.worker.unexpected("frames", &other)),
        }
    }

    /// Goes back to the last agreed checkpoint, reading past whatever replies were still in flight.
    fn restore_checkpoint(&mut self, seq: u64) -> Result<(), WorkerError> {
        self.worker.send(&WorkerCommand::Restore { seq, snapshot: self.checkpoint.clone() })?;
        loop {
            match self.worker.recv()? {
                Reply::Restored { .. } => return Ok(()),
                Reply::Record { .. } | Reply::Snapshot { .. } => {}
                Reply::Error { message } => {
                    return Err(WorkerError::Refused {
                        program: self.worker.program().into(),
                        command: "restore",
                        message,
                    });
                }
                other => return Err(self.worker.unexpected("restore", &other)),
            }
        }
    }
}

/// The baseline (when it is a build) and the candidate.
#[derive(Debug)]
struct Sides {
    baseline: Option<Side>,
    candidate: Side,
    power_on: (Option<FrameRecord>, FrameRecord),
    identities: (Option<[u8; 32]>, [u8; 32]),
    /// The candidate's console region, as its `Loaded` said.
    region: Option<Region>,
}

impl Sides {
    /// Has both workers (handshake done) load the ROM; `Err` names the side that failed.
    fn load(
        config: &CanaryConfig,
        baseline: Option<WorkerProcess>,
        candidate: WorkerProcess,
    ) -> Result<Sides, (&'static str, WorkerError)> {
        let (candidate, candidate_identity, candidate_power_on, region) =
            Side::load("candidate", candidate, config).map_err(|e| ("candidate", e))?;
        let (baseline, baseline_identity, baseline_power_on) = match baseline {
            Some(worker) => {
                let (side, identity, record, _) =
                    Side::load("baseline", worker, config).map_err(|e| ("baseline", e))?;
                (Some(side), Some(identity), Some(record))
            }
            None => (None, None, None),
        };
        Ok(Sides {
            baseline,
            candidate,
            power_on: (baseline_power_on, candidate_power_on),
            identities: (baseline_identity, candidate_identity),
            region,
        })
    }

    fn stop(self) {
        if let Some(side) = self.baseline {
            side.worker.shutdown();
        }
        self.candidate.worker.shutdown();
    }

    fn compare(
        &mut self,
        config: &CanaryConfig,
        baseline: Baseline<'_>,
        status: &Arc<CanaryStatus>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<CanaryReport, CanaryError> {
        let candidate_build = self.candidate.worker.build().clone();
        let baseline_build = self.baseline.as_ref().map(|s| s.worker.build().clone());
        let baseline_epoch = match baseline {
            Baseline::Build(_) => baseline_build.as_ref().map(|b| b.emulation_epoch),
            Baseline::Log(log) => log.epoch,
        };
        let epochs = EpochVerdict::of(baseline_epoch, candidate_build.emulation_epoch);
        let mut report = CanaryReport {
            baseline_build,
            candidate_build,
            rom_identity: Some(self.identities.1),
            frames_agreed: 0,
            last_agreed: Some(self.power_on.1),
            region: self.region,
            outcome: CanaryOutcome::Same,
        };
        status.start(config.frames);
        // Power-on: the builds must read the ROM and power on alike.
        if let (Some(identity), Some(record)) = (self.identities.0, self.power_on.0) {
            if identity != self.identities.1 || record != self.power_on.1 {
                status.diverged();
                report.outcome = CanaryOutcome::Diverged(Box::new(CanaryDivergence {
                    frame: None,
                    kind: DivergenceKind::between(&record, &self.power_on.1),
                    baseline: record,
                    candidate: self.power_on.1,
                    epochs,
                    evidence: None,
                    localization_error: (identity != self.identities.1).then(|| {
                        format!(
                            "the builds identify the ROM differently ({} vs {})",
                            to_hex(&identity),
                            to_hex(&self.identities.1)
                        )
                    }),
                }));
                return Ok(report);
            }
        }
        let window = 4 * config.batch as u64;
        let mut checkpoint_seq = 0;
        for seq in 0..config.frames {
            let upto = (seq + window).min(config.frames);
            let (expected, got) = match self.step(config, baseline, seq, upto) {
                Ok(pair) => pair,
                Err((side, e)) => {
                    status.diverged();
                    report.outcome = CanaryOutcome::WorkerFailed { side, reason: e.to_string(), frame: seq };
                    return Ok(report);
                }
            };
            status.set_records(seq + 1, seq + 1);
            if expected.0 != got.0 {
                status.diverged();
                let (evidence, localization_error) = match (baseline, config.localize) {
                    (Baseline::Build(_), true) => self.localize(config, checkpoint_seq, seq),
                    (Baseline::Build(_), false) => (None, None),
                    (Baseline::Log(_), _) => (None, Some("the baseline is a log: no build to replay".into())),
                };
                report.outcome = CanaryOutcome::Diverged(Box::new(CanaryDivergence {
                    frame: Some(seq),
                    kind: DivergenceKind::between(&expected.0, &got.0),
                    baseline: expected.0,
                    candidate: got.0,
                    epochs,
                    evidence,
                    localization_error,
                }));
                return Ok(report);
            }
            if let (Some(a), Some(b)) = (expected.1, got.1) {
                if let Some(side) = self.baseline.as_mut() {
                    side.checkpoint = a;
                }
                self.candidate.checkpoint = b;
                checkpoint_seq = seq + 1;
            }
            report.frames_agreed = seq + 1;
            report.last_agreed = Some(got.0);
            progress(seq + 1);
        }
        Ok(report)
    }

    /// Feeds both sides ahead and reads frame `seq` of each: (baseline, candidate), each with the
    /// snapshot after it at a checkpoint.
    #[allow(clippy::type_complexity)]
    fn step(
        &mut self,
        config: &CanaryConfig,
        baseline: Baseline<'_>,
        seq: u64,
        upto: u64,
    ) -> Result<((FrameRecord, Option<Vec<u8>>), (FrameRecord, Option<Vec<u8>>)), (&'static str, WorkerError)>
    {
        let every = config.checkpoint_every;
        if let Some(side) = self.baseline.as_mut() {
            side.feed(config, upto).map_err(|e| (side.name, e))?;
        }
        self.candidate.feed(config, upto).map_err(|e| ("candidate", e))?;
        let expected = match (self.baseline.as_mut(), baseline) {
            (Some(side), _) => side.next(seq, every).map_err(|e| (side.name, e))?,
            (None, Baseline::Log(log)) => (log.records[seq as usize], Some(Vec::new())),
            (None, Baseline::Build(_)) => unreachable!("a build baseline has a side"),
        };
        let got = self.candidate.next(seq, every).map_err(|e| ("candidate", e))?;
        Ok((expected, got))
    }

    /// Replays both builds from the last agreed checkpoint through the lockstep runner, whose machines
    /// are the two workers: the first divergent instruction, the fields it changed and the evidence
    /// bundle, exactly as `anes lockstep` finds them.
    fn localize(
        &mut self,
        config: &CanaryConfig,
        checkpoint_seq: u64,
        seq: u64,
    ) -> (Option<Evidence>, Option<String>) {
        let Some(baseline) = self.baseline.as_mut() else {
            return (None, Some("no baseline build".into()));
        };
        let candidate = &mut self.candidate;
        if let Err(e) = baseline
            .restore_checkpoint(checkpoint_seq)
            .and_then(|()| candidate.restore_checkpoint(checkpoint_seq))
        {
            return (
                None,
                Some(format!("cannot go back to the checkpoint before frame {checkpoint_seq}: {e}")),
            );
        }
        let (rom, every, region) = (&config.rom, config.checkpoint_every, config.region);
        let machines =
            RemoteMachine::new(&mut baseline.worker, rom, every, checkpoint_seq, region).and_then(|a| {
                RemoteMachine::new(&mut candidate.worker, rom, every, checkpoint_seq, region).map(|b| (a, b))
            });
        let (a, b) = match machines {
            Ok(pair) => pair,
            Err(e) => return (None, Some(format!("the ROM is refused by this build: {e}"))),
        };
        // A checkpoint every frame: the localization replays at most the divergent frame.
        let lockstep_config =
            LockstepConfig { checkpoint_every: 1, checkpoints_kept: 2, ..LockstepConfig::default() };
        let mut lockstep = match Lockstep::new(a, b, lockstep_config) {
            Ok(lockstep) => lockstep,
            Err(e) => return (None, Some(format!("the lockstep runner refused the replay: {e}"))),
        };
        let outcome = lockstep.run_interleaved(&config.inputs, seq + 1 - checkpoint_seq);
        let (a, b) = (lockstep.machine_a(), lockstep.machine_b());
        if let Some(failure) = a.failure().or_else(|| b.failure()) {
            return (None, Some(format!("a worker failed during the replay: {failure}")));
        }
        match outcome {
            RunOutcome::Diverged(_) => match lockstep.evidence() {
                Some(evidence) => (Some(evidence.clone()), None),
                None => (None, Some("the replay diverged but kept no evidence".into())),
            },
            RunOutcome::Agreed { .. } => (
                None,
                Some(format!(
                    "the replay from frame {checkpoint_seq} agreed through frame {seq}: a build is not deterministic"
                )),
            ),
        }
    }
}
