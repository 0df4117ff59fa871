//! Investigating a divergence: a referee console replays the inputs from the last verified checkpoint
//! to find which worker left the true path, and the lockstep runner re-runs the same stretch with the
//! faults that fired in that worker, to localize the first divergent instruction and write its evidence
//! bundle (`Evidence::write_bundle`). A pipeline report (`pipeline-report.json`) is written either way.

use std::path::{Path, PathBuf};

use anes_core::hex::to_hex;
use anes_core::movie::{FrameInput, InputStream};
use anes_core::state::FrameRecord;
use anes_lockstep::{FaultPlan, Lockstep, LockstepConfig, RunOutcome};
use serde::Serialize;
use thiserror::Error;

use crate::pipeline::Investigation;
use crate::worker::WorkerId;
use crate::worker::protocol::WireRecord;

pub use anes_pipeline::referee::{RefereeError, console, referee};

/// Why an investigation could not run.
#[derive(Debug, Error)]
pub enum InvestigationError {
    /// The referee could not replay the checkpoint.
    #[error(transparent)]
    Referee(#[from] RefereeError),
    /// The report's folder could not be made.
    #[error("writing {path}: {source}")]
    Io {
        /// The folder that could not be made.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// Writing the report failed ([`anes_fs::write_output`]).
    #[error("writing the report: {0}")]
    Write(#[from] anes_fs::WriteError),
}

#[derive(Debug, Serialize)]
struct PipelineReport<'a> {
    pipeline_id: &'a str,
    incident: u64,
    seq: u64,
    worker_a: WireRecord,
    worker_b: WireRecord,
    /// The referee console's record (`null` for a libretro pipeline, which has none).
    referee: Option<WireRecord>,
    suspects: &'a [WorkerId],
    checkpoint_seq: u64,
    checkpoint_state_hash: String,
    faults_a: &'a [String],
    faults_b: &'a [String],
    lockstep_bundle: Option<String>,
    lockstep_note: String,
}

/// Writes the evidence of `investigation` into `dir`: `pipeline-report.json` and, when the lockstep
/// runner reproduces the divergence from the checkpoint, its bundle (`report.html` and the rest).
/// Returns the file to link: `report.html` when there is one, else `pipeline-report.json`.
pub fn write_evidence(
    rom: &[u8],
    pipeline_id: &str,
    investigation: &Investigation,
    suspects: &[WorkerId],
    referee_record: FrameRecord,
    dir: &Path,
) -> Result<PathBuf, InvestigationError> {
    let checkpoint = investigation.checkpoint.as_ref().ok_or(RefereeError::NoCheckpoint)?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| InvestigationError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    // The lockstep runner injects faults into its machine B: the suspect plays B, its twin A.
    let suspect = match suspects {
        [one] => Some(*one),
        _ => None,
    };
    let b_worker = suspect.unwrap_or(WorkerId::B);
    let specs = &investigation.faults[b_worker.index()];
    let (bundle, note) = match lockstep_bundle(rom, &checkpoint.snapshot, &investigation.inputs, specs, dir) {
        Ok(Some(path)) => (
            Some(path.display().to_string()),
            format!("reproduced by the lockstep runner with worker {b_worker} as its machine B"),
        ),
        Ok(None) => (None, "the lockstep runner did not reproduce it from the checkpoint".to_string()),
        Err(e) => (None, format!("the lockstep runner could not run: {e}")),
    };
    write_report(pipeline_id, investigation, Some(referee_record), suspects, (bundle, note), dir)
}

/// Writes `pipeline-report.json` into `dir` and returns the file to link: the lockstep bundle's
/// `report.html` when `lockstep` (its path and a note on it) names one, else the JSON.
fn write_report(
    pipeline_id: &str,
    investigation: &Investigation,
    referee_record: Option<FrameRecord>,
    suspects: &[WorkerId],
    (bundle, note): (Option<String>, String),
    dir: &Path,
) -> Result<PathBuf, InvestigationError> {
    let checkpoint = investigation.checkpoint.as_ref().ok_or(RefereeError::NoCheckpoint)?;
    let report = PipelineReport {
        pipeline_id,
        incident: investigation.incident,
        seq: investigation.seq,
        worker_a: investigation.records[0].into(),
        worker_b: investigation.records[1].into(),
        referee: referee_record.map(Into::into),
        suspects,
        checkpoint_seq: checkpoint.seq,
        checkpoint_state_hash: to_hex(&checkpoint.state_hash),
        faults_a: &investigation.faults[0],
        faults_b: &investigation.faults[1],
        lockstep_bundle: bundle.clone(),
        lockstep_note: note,
    };
    let path = dir.join("pipeline-report.json");
    let json = serde_json::to_vec_pretty(&report).expect("reports serialize");
    anes_fs::write_output(&path, &json)?;
    Ok(if bundle.is_some() { dir.join("report.html") } else { path })
}

/// What a libretro pipeline's investigation runs: its workers' program, cores and content.
#[derive(Debug, Clone)]
pub struct RetroPipeline {
    /// The `anes` executable (its `worker --libretro`).
    pub program: PathBuf,
    /// The cores and options of workers A and B.
    pub spec: crate::config::LibretroSpec,
    /// The content both load.
    pub content: PathBuf,
}

/// [`write_evidence`] for a libretro pipeline: there is no referee (a third instance of either core
/// would not say which build is right), so the lockstep runner replays the stretch from the
/// checkpoint with a worker of each core (`anes worker --libretro`, worker B's faults fired again)
/// and localizes the first differing frame to its regions and byte offsets. Returns the file to
/// link, as [`write_evidence`].
pub fn write_retro_evidence(
    retro: &RetroPipeline,
    pipeline_id: &str,
    investigation: &Investigation,
    dir: &Path,
) -> Result<PathBuf, InvestigationError> {
    let checkpoint = investigation.checkpoint.as_ref().ok_or(RefereeError::NoCheckpoint)?;
    std::fs::create_dir_all(dir)
        .map_err(|source| InvestigationError::Io { path: dir.to_path_buf(), source })?;
    let specs = &investigation.faults[WorkerId::B.index()];
    let (bundle, note) =
        match retro_lockstep_bundle(retro, &checkpoint.snapshot, &investigation.inputs, specs, dir) {
            Ok(Some(path)) => (
                Some(path.display().to_string()),
                "reproduced by the lockstep runner with a worker of each core (no referee: libretro)"
                    .to_string(),
            ),
            Ok(None) => (None, "the lockstep runner did not reproduce it from the checkpoint".to_string()),
            Err(e) => (None, format!("the lockstep runner could not run: {e}")),
        };
    write_report(pipeline_id, investigation, None, &[], (bundle, note), dir)
}

fn retro_lockstep_bundle(
    retro: &RetroPipeline,
    snapshot: &[u8],
    inputs: &[FrameInput],
    fault_specs: &[String],
    dir: &Path,
) -> Result<Option<PathBuf>, String> {
    let machine = |worker: usize| {
        let spec = crate::canary::RetroWorkerSpec {
            program: retro.program.clone(),
            core: retro.spec.cores[worker].clone(),
            content: retro.content.clone(),
            options: retro.spec.options[worker].clone(),
            reply_timeout: crate::canary::DEFAULT_REPLY_TIMEOUT,
            ignore_audio: false,
            nes_view: false,
        };
        let mut machine = crate::canary::RetroWorkerMachine::spawn(&spec).map_err(|e| e.to_string())?;
        anes_lockstep::Machine::load_state(&mut machine, snapshot).map_err(|e| e.to_string())?;
        Ok::<_, String>(machine)
    };
    let (a, b) = (machine(0)?, machine(1)?);
    let start = anes_lockstep::Machine::record(&a).frame;
    run_bundle(a, b, start, inputs, fault_specs, dir)
}

/// Runs `a` and `b` (both at frame `start`) in lockstep over `inputs` with `fault_specs` in B, and
/// writes the bundle of a divergence into `dir`.
fn run_bundle<M: anes_lockstep::Machine<Input = FrameInput>>(
    a: M,
    b: M,
    start: u64,
    inputs: &[FrameInput],
    fault_specs: &[String],
    dir: &Path,
) -> Result<Option<PathBuf>, String> {
    // The lockstep runner reads input-stream frame n when a machine has completed n frames.
    let offset = usize::try_from(start).map_err(|_| "frame counter out of range".to_string())?;
    let mut frames = vec![FrameInput::default(); offset];
    frames.extend_from_slice(inputs);
    let stream = InputStream::from_frames(frames);
    let faults = FaultPlan::parse(fault_specs).map_err(|e| e.to_string())?;
    let config = LockstepConfig { faults, checkpoint_every: 1 << 20, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(a, b, config).map_err(|e| e.to_string())?;
    match lockstep.run_interleaved(&stream, inputs.len() as u64) {
        RunOutcome::Agreed { .. } => Ok(None),
        RunOutcome::Diverged(_) => {
            let evidence = lockstep.evidence().ok_or("no evidence kept")?;
            evidence.write_bundle(dir).map(Some).map_err(|e| e.to_string())
        }
    }
}

fn lockstep_bundle(
    rom: &[u8],
    snapshot: &[u8],
    inputs: &[FrameInput],
    fault_specs: &[String],
    dir: &Path,
) -> Result<Option<PathBuf>, String> {
    let a = console(rom, snapshot).map_err(|e| e.to_string())?;
    let b = a.clone();
    let start = a.nes().frame();
    run_bundle(a, b, start, inputs, fault_specs, dir)
}

/// Largest evidence file the HTTP API serves. A bundle's files are tens of KiB (snapshots, PNGs, a
/// report.html that embeds them); the cap keeps one request from reading an unbounded file into memory.
pub const SERVED_FILE_LIMIT: u64 = 16 << 20;

/// Why an evidence file is not served.
#[derive(Debug, Error)]
pub enum ServeRefusal {
    /// No such file (or directory on the way).
    #[error("no evidence file {0}")]
    NotFound(String),
    /// A symbolic link, at the file or at a directory on the way.
    #[error("{0}: a symbolic link; evidence is served only from regular files inside the evidence directory")]
    Symlink(String),
    /// A regular file with more than one name: a hard link may name a file outside the evidence
    /// directory (the service never makes one, so it was planted), and no path tells where the file is.
    #[error(
        "{path}: a file with {links} links; evidence is served only from files with one name, inside the evidence directory"
    )]
    HardLink {
        /// The path under the evidence directory.
        path: String,
        /// Its link count.
        links: u64,
    },
    /// A FIFO, device, socket or directory.
    #[error("{path}: a {kind}, not a regular file; evidence is served only from regular files")]
    NotRegular {
        /// The path under the evidence directory.
        path: String,
        /// What it is.
        kind: &'static str,
    },
    /// Larger than [`SERVED_FILE_LIMIT`].
    #[error("{path}: {bytes} bytes; evidence files are served up to {limit} bytes")]
    TooLarge {
        /// The path under the evidence directory.
        path: String,
        /// The file's size in bytes.
        bytes: u64,
        /// [`SERVED_FILE_LIMIT`].
        limit: u64,
    },
    /// Any other failure to open or read it.
    #[error("{path}: {source}")]
    Io {
        /// The path under the evidence directory.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// Reads `root/<names...>` for the HTTP API, refusing symbolic links anywhere below `root` (to files
/// inside the directory as well as outside: the service never writes a link, so one is planted), files
/// with more than one hard link (for the same reason), every file that is not regular, and files over
/// `limit` bytes. Each step is opened relative to the
/// directory opened before it with `O_NOFOLLOW`, and the file with `O_NONBLOCK` and checked through its
/// descriptor, so a link swapped in between a check and the open is still refused and a FIFO never
/// blocks. `root` itself may be a link (the operator's choice of directory).
pub fn read_served_file(root: &Path, names: &[&str], limit: u64) -> Result<Vec<u8>, ServeRefusal> {
    use std::io::Read;

    use rustix::fs::{FileType, Mode, OFlags, fstat, open, openat};
    use rustix::io::Errno;

    let shown = names.join("/");
    let refusal = |errno: Errno| match errno {
        Errno::NOENT | Errno::NOTDIR => ServeRefusal::NotFound(shown.clone()),
        Errno::LOOP => ServeRefusal::Symlink(shown.clone()),
        other => ServeRefusal::Io { path: shown.clone(), source: other.into() },
    };
    let directory = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = open(root, directory, Mode::empty()).map_err(refusal)?;
    let Some((file_name, dir_names)) = names.split_last() else {
        return Err(ServeRefusal::NotFound(shown));
    };
    for name in dir_names {
        dir = openat(&dir, *name, directory | OFlags::NOFOLLOW, Mode::empty()).map_err(|e| match e {
            // O_DIRECTORY | O_NOFOLLOW on a link gives ENOTDIR on Linux, not ELOOP.
            Errno::NOTDIR if is_symlink(&dir, name) => ServeRefusal::Symlink(shown.clone()),
            other => refusal(other),
        })?;
    }
    let fd = openat(
        &dir,
        *file_name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(refusal)?;
    let stat = fstat(&fd).map_err(refusal)?;
    let kind = match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => None,
        FileType::Directory => Some("directory"),
        FileType::Fifo => Some("FIFO"),
        FileType::CharacterDevice => Some("character device"),
        FileType::BlockDevice => Some("block device"),
        FileType::Socket => Some("socket"),
        _ => Some("special file"),
    };
    if let Some(kind) = kind {
        return Err(ServeRefusal::NotRegular { path: shown, kind });
    }
    // The open file's own count of names: a planted link to a file outside keeps it at 2 or more for
    // as long as the outside name exists.
    #[allow(clippy::useless_conversion)] // st_nlink is u32 on some targets
    let links = u64::from(stat.st_nlink);
    if links > 1 {
        return Err(ServeRefusal::HardLink { path: shown, links });
    }
    let bytes = u64::try_from(stat.st_size).unwrap_or(u64::MAX);
    if bytes > limit {
        return Err(ServeRefusal::TooLarge { path: shown, bytes, limit });
    }
    // A file growing after the fstat is still cut at the limit.
    let mut contents = Vec::with_capacity(usize::try_from(bytes).unwrap_or(0));
    std::fs::File::from(fd)
        .take(limit + 1)
        .read_to_end(&mut contents)
        .map_err(|source| ServeRefusal::Io { path: shown.clone(), source })?;
    if contents.len() as u64 > limit {
        return Err(ServeRefusal::TooLarge { path: shown, bytes: contents.len() as u64, limit });
    }
    Ok(contents)
}

fn is_symlink(dir: &rustix::fd::OwnedFd, name: &str) -> bool {
    use rustix::fs::{AtFlags, FileType, statat};
    statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Symlink)
}
