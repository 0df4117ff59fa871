//! `anes canary`: the baseline build (or a golden log) and the candidate build replay the identical input
//! stream; the first differing frame stops the run and is explained.

mod corpus;

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anes_core::movie::InputStream;
use anes_ops::canary::{
    Baseline, CanaryConfig, CanaryOutcome, CanaryReport, CanaryStatus, GoldenLog, MetricsServer, push,
    run_canary,
};
use anyhow::Context;
use serde::Serialize;

use crate::bundled::{DEMO_INPUT, DEMO_ROM};
use crate::evidence_dir::EvidenceDir;
use crate::rom::RegionArg;
use crate::{input_file, limited_read, output};

/// Exit status when the builds differ (or a worker failed).
const EXIT_DIVERGED: u8 = 1;

/// `anes canary --help`'s closing lines.
const AFTER_HELP: &str = "\
Exit status: 0 the builds agree on every frame; 1 they differ, or a worker died, hung (no reply within \
--reply-timeout), broke the protocol or refused the ROM after its handshake; 2 bad input (missing or \
malformed file, an executable that does not complete the worker handshake, nothing to compare: \
--frames 0 or a shard without cases).

Examples:
  # This build against the golden log of the bundled demo's 5,000 frames
  anes canary --baseline-log tests/golden/demo.records
  # The same on a PAL console
  anes canary --baseline-log tests/golden/demo.pal.records --region pal
  # Every bundled ROM against its golden log, with JUnit XML for CI
  anes canary --corpus tests/canary/golden.toml --jobs 2 --junit canary.xml
  # Today's build against a new one on recorded traffic (anes movie cut); a difference is shrunk
  anes canary roms/demo/demo.nes --input traffic.input --baseline /opt/anes/current/anes --candidate target/release/anes --shrink
  # The result pushed to a Pushgateway, labelled pipeline_id=canary-42
  anes canary --baseline-log tests/golden/demo.records --pushgateway http://127.0.0.1:9091 --pipeline-id canary-42";

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
// What the candidate is compared with: a build, a golden log, or each case's in a corpus.
#[command(group(
    clap::ArgGroup::new("compared_with").args(["baseline", "baseline_log", "corpus", "libretro_baseline"]).required(true).multiple(true)
))]
pub struct Args {
    /// The iNES ROM file (default: the bundled demo ROM and its 5,000-frame input stream).
    rom: Option<PathBuf>,
    /// The baseline build: the `anes` executable that takes traffic today.
    #[arg(long, value_name = "BIN", conflicts_with = "baseline_log")]
    baseline: Option<PathBuf>,
    /// Compare with a golden log of frame records (`frame cpu_cycle scanline dot state_hash` per line,
    /// as in tests/golden/) instead of a baseline build; an `EPOCH` file beside it names its epoch.
    #[arg(long, value_name = "FILE")]
    baseline_log: Option<PathBuf>,
    /// The candidate build's `anes` executable (default: this one).
    #[arg(long, value_name = "BIN")]
    candidate: Option<PathBuf>,
    /// Input stream: an anes input file (.input, e.g. cut from a serve journal) or an FCEUX .fm2 movie.
    #[arg(long)]
    input: Option<PathBuf>,
    /// Frames to compare (default: the input's length, or 5,000).
    #[arg(long)]
    frames: Option<u64>,
    /// Frames between the agreed checkpoints a difference is replayed from.
    #[arg(long, default_value_t = 60)]
    checkpoint_every: u64,
    /// Do not replay a difference to localize it (only the frame and records are reported).
    #[arg(long)]
    no_localize: bool,
    /// Seconds a worker may take to send its next reply before it counts as hung (exit status 1).
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    reply_timeout: u64,
    /// Write the evidence of a difference into DIR (must be new or empty unless --force); default: a
    /// new folder anes-evidence/<UTC time>-<rom>/.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    /// With --report: replace the bundle files of a folder that is not empty.
    #[arg(long, requires = "report")]
    force: bool,
    /// Serve the run's metrics (worker_state_divergence_flag, worker_drift_offset_records) on
    /// http://ADDR/metrics while it runs.
    #[arg(long, value_name = "ADDR")]
    metrics_listen: Option<SocketAddr>,
    /// With --metrics-listen: keep serving this many seconds after the run, so a scrape sees the result.
    #[arg(long, default_value_t = 0, value_name = "SECONDS")]
    metrics_hold: u64,
    /// Push the run's metrics to a Pushgateway-compatible URL (http://host:port) at the start, at a
    /// difference and at the end.
    #[arg(long, value_name = "URL")]
    pushgateway: Option<String>,
    /// The pipeline_id label of the exported metrics.
    #[arg(long, default_value = "canary")]
    pipeline_id: String,
    /// Corpus mode: run every (ROM, input) pair of this manifest (TOML) in parallel.
    #[arg(long, value_name = "MANIFEST")]
    corpus: Option<PathBuf>,
    /// Corpus mode: run only shard K of N (1-based), e.g. 2/4: cases K, K+N, K+2N, ... in manifest order.
    #[arg(long, value_name = "K/N", requires = "corpus")]
    shard: Option<corpus::Shard>,
    /// Corpus mode: cases run at once (default: the available cores).
    #[arg(long, requires = "corpus")]
    jobs: Option<usize>,
    /// Corpus mode: write JUnit XML results to FILE.
    #[arg(long, value_name = "FILE", requires = "corpus")]
    junit: Option<PathBuf>,
    /// The consoles' region, sent to both builds: overrides the ROM header's (NES 2.0 byte 12; NTSC
    /// for iNES 1.0) and an .fm2 movie's palFlag. A build that loads another region (or is older than
    /// regions) fails the gate. In corpus mode it applies to every case without its own `region`.
    #[arg(long, value_enum, value_name = "REGION")]
    region: Option<RegionArg>,
    /// When the builds differ, shrink the input to the smallest stream on which they still differ
    /// the same way (`anes shrink --baseline --candidate`) and write the repro into the evidence
    /// bundle's `repro/` folder, named in the report and the JUnit XML. Needs --baseline BIN.
    #[arg(long, requires = "baseline")]
    shrink: bool,
    /// Libretro mode: the baseline is this build of a libretro core (a shared object) and ROM is its
    /// content; both builds run in `anes worker --libretro` processes, compared frame by frame by
    /// state, memory regions, picture and audio. Needs --libretro-candidate.
    #[arg(long, value_name = "CORE.so", requires_all = ["libretro_candidate", "rom"],
          conflicts_with_all = ["baseline", "baseline_log", "corpus", "shrink", "region"])]
    libretro_baseline: Option<PathBuf>,
    /// Libretro mode: the candidate build of the core.
    #[arg(long, value_name = "CORE.so", requires = "libretro_baseline")]
    libretro_candidate: Option<PathBuf>,
    /// Libretro mode: a core option for both builds, KEY=VALUE (repeatable).
    #[arg(long = "option", value_name = "KEY=VALUE", requires = "libretro_baseline", value_parser = crate::worker::core_option)]
    options: Vec<(String, String)>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn main(args: &Args) -> anyhow::Result<ExitCode> {
    if let (Some(baseline), Some(candidate), Some(content)) =
        (&args.libretro_baseline, &args.libretro_candidate, &args.rom)
    {
        return libretro_main(args, baseline, candidate, content);
    }
    let candidate = match &args.candidate {
        Some(path) => path.clone(),
        None => std::env::current_exe().context("the path of this executable (the default candidate)")?,
    };
    if let Some(manifest) = &args.corpus {
        return corpus::main(args, manifest, &candidate);
    }
    let (rom, rom_name) = match &args.rom {
        Some(path) => (limited_read::read_limited(path, limited_read::ROM)?, path.display().to_string()),
        None => (DEMO_ROM.to_vec(), "the bundled demo ROM".to_string()),
    };
    let (inputs, movie_region) = match (&args.input, &args.rom) {
        (Some(path), _) => input_file::read_input_with_region(path)?,
        (None, None) => (InputStream::from_bytes(DEMO_INPUT).context("the bundled demo input stream")?, None),
        (None, Some(_)) => (InputStream::new(), None),
    };
    let log = read_log(args.baseline_log.as_deref())?;
    let frames = args.frames.unwrap_or(match (&log, inputs.is_empty()) {
        (Some(log), true) => log.records.len() as u64,
        (_, true) => 5_000,
        (_, false) => inputs.len() as u64,
    });
    let baseline = match (&args.baseline, &log, &args.baseline_log) {
        (Some(program), _, _) => Baseline::Build(program),
        (None, Some(log), Some(path)) => {
            check_log_covers(path, log, frames)?;
            Baseline::Log(log)
        }
        _ => anyhow::bail!("--baseline BIN or --baseline-log FILE says what the candidate is compared with"),
    };
    let evidence_dir = match &args.report {
        Some(dir) => EvidenceDir::given_with(dir.clone(), args.force, CANARY_FILES)?,
        None => EvidenceDir::new_for(args.rom.as_deref()),
    };
    if let (true, Some(dir)) = (args.shrink, &args.report) {
        // The repro's folder in the bundle: a file there would lose the repro after the shrinking.
        anes_fs::folder_or_missing(&dir.join("repro"))
            .map_err(|e| anyhow::anyhow!("{e}; --shrink writes the repro into this folder of --report"))?;
    }
    let mut config = CanaryConfig::new(rom, inputs, frames);
    config.checkpoint_every = args.checkpoint_every;
    config.localize = !args.no_localize;
    config.reply_timeout = Duration::from_secs(args.reply_timeout);
    config.region = args.region.map(Into::into).or(movie_region);

    let status = CanaryStatus::new(&args.pipeline_id);
    let server = match args.metrics_listen {
        Some(address) => Some(
            MetricsServer::start(address, Arc::clone(&status))
                .with_context(|| format!("--metrics-listen {address}"))?,
        ),
        None => None,
    };
    let push_now = |when: &str| {
        if let Some(url) = &args.pushgateway {
            if let Err(e) = push(url, &status) {
                eprintln!("warning: --pushgateway: push {when}: {e}");
            }
        }
    };
    push_now("at the start");
    let bar = output::progress_bar(frames, args.json);
    let started = Instant::now();
    let report = run_canary(&config, baseline, &candidate, &status, &mut |agreed| {
        if agreed % 16 == 0 {
            bar.set_position(agreed);
        }
    })?;
    let seconds = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    if report.agreed() {
        status.finished();
    }
    push_now("at the end");

    let bundle = match &report.outcome {
        CanaryOutcome::Diverged(divergence) => match &divergence.evidence {
            Some(evidence) => {
                let dir = evidence_dir.prepare()?;
                evidence.write_bundle(&dir)?;
                anes_fs::write_output(
                    &dir.join("canary.json"),
                    &serde_json::to_vec_pretty(&Summary::of(&report, &rom_name, frames, seconds, None))?,
                )?;
                Some(dir)
            }
            None => None,
        },
        _ => None,
    };
    let mut summary = Summary::of(&report, &rom_name, frames, seconds, bundle.as_deref());
    if let (true, Some(dir), Baseline::Build(baseline)) = (args.shrink, &bundle, baseline) {
        let rom_file =
            args.rom.as_deref().and_then(Path::file_name).map_or("demo.nes".into(), |n| n.to_string_lossy());
        summary.attach_repro(shrink_into(dir, &config, &report, baseline, &candidate, &rom_file, args.json));
    }
    let mut out = output::stdout();
    if args.json {
        output::write_json(&mut out, &summary)?;
    } else {
        summary.write_text(&mut out)?;
    }
    out.flush()?;
    if let Some(server) = &server {
        if args.metrics_hold > 0 {
            eprintln!("serving metrics on http://{}/metrics for {} s", server.address(), args.metrics_hold);
            std::thread::sleep(Duration::from_secs(args.metrics_hold));
        }
    }
    Ok(if report.agreed() { ExitCode::SUCCESS } else { ExitCode::from(EXIT_DIVERGED) })
}

/// What `anes canary --libretro-baseline` reports.
#[derive(Debug, Serialize)]
struct LibretroSummary<'a> {
    content: String,
    baseline: String,
    candidate: String,
    /// `same`, `diverged` or `worker_failed`.
    result: &'static str,
    frames: u64,
    frames_agreed: u64,
    /// The first frame (counted from 0) whose state, memory, picture or audio differ.
    first_differing_frame: Option<u64>,
    final_state_hash: String,
    fps_per_build: f64,
    divergence: Option<&'a anes_lockstep::Report>,
    evidence: Option<String>,
    /// The workers that failed (crashed, exited, hung, broke the protocol), earliest first: the run
    /// ended at the first; `frames_agreed` counts only frames compared before it.
    worker_failures: Vec<crate::lockstep::WorkerFailed>,
}

/// The canary of two builds of a libretro core: the lockstep runner over two worker processes, which
/// stops at the first frame whose records differ and replays from the last agreed checkpoint to
/// name the regions and bytes.
fn libretro_main(args: &Args, baseline: &Path, candidate: &Path, content: &Path) -> anyhow::Result<ExitCode> {
    let inputs = match &args.input {
        Some(path) => input_file::read_input_with_region(path)?.0,
        None => InputStream::new(),
    };
    let frames = args.frames.unwrap_or(if inputs.is_empty() { 5_000 } else { inputs.len() as u64 });
    if frames == 0 {
        anyhow::bail!("--frames 0: an empty comparison proves nothing");
    }
    let evidence_dir = match &args.report {
        Some(dir) => EvidenceDir::given(dir.clone(), args.force)?,
        None => EvidenceDir::new_for(Some(content)),
    };
    let reply_timeout = Duration::from_secs(args.reply_timeout);
    let a = crate::lockstep::spawn_retro_timed(baseline, content, &args.options, false, reply_timeout)
        .with_context(|| format!("the baseline {}", baseline.display()))?;
    let b = crate::lockstep::spawn_retro_timed(candidate, content, &args.options, false, reply_timeout)
        .with_context(|| format!("the candidate {}", candidate.display()))?;
    let config = anes_lockstep::LockstepConfig {
        checkpoint_every: args.checkpoint_every,
        ..anes_lockstep::LockstepConfig::default()
    };
    let mut lockstep = anes_lockstep::Lockstep::new(a, b, config).context("lockstep configuration")?;
    let stream: Vec<_> = (0..inputs.len()).map(|n| inputs.frame(n)).collect();
    let bar = output::progress_bar(frames, args.json);
    let started = Instant::now();
    let outcome = lockstep.run_with(&stream, frames, &mut |p| {
        if p.frames_verified % 16 == 0 {
            bar.set_position(p.frames_verified);
        }
    });
    let seconds = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    // A failed worker's records agree with nothing: the run stopped there, and that is the result.
    let failures = crate::lockstep::worker_failures(
        lockstep.machine_a(),
        lockstep.machine_b(),
        ("baseline", "candidate"),
        (&baseline.display().to_string(), &candidate.display().to_string()),
    );
    let mut bundle = None;
    let mut report = None;
    if let (anes_lockstep::RunOutcome::Diverged(_), true) = (outcome, failures.is_empty()) {
        let evidence = lockstep.evidence().expect("a divergence keeps its evidence");
        let dir = evidence_dir.prepare()?;
        evidence.write_bundle(&dir)?;
        report = Some(evidence.report());
        bundle = Some(dir);
    }
    let summary = LibretroSummary {
        content: content.display().to_string(),
        baseline: baseline.display().to_string(),
        candidate: candidate.display().to_string(),
        result: match (&report, failures.is_empty()) {
            (_, false) => "worker_failed",
            (Some(_), true) => "diverged",
            (None, true) => "same",
        },
        frames,
        frames_agreed: lockstep.frames_verified(),
        first_differing_frame: report.as_ref().map(|r| r.frame),
        final_state_hash: lockstep.last_verified_record().state_hash.to_string(),
        fps_per_build: if seconds > 0.0 { lockstep.frames_verified() as f64 / seconds } else { 0.0 },
        divergence: report.as_ref(),
        evidence: bundle.as_ref().map(|d| d.display().to_string()),
        worker_failures: failures,
    };
    let mut out = output::stdout();
    if args.json {
        output::write_json(&mut out, &summary)?;
    } else {
        writeln!(out, "content           {}", summary.content)?;
        writeln!(out, "baseline          {}", summary.baseline)?;
        writeln!(out, "candidate         {}", summary.candidate)?;
        writeln!(out, "frames agreed     {} of {}", summary.frames_agreed, frames)?;
        for failed in &summary.worker_failures {
            writeln!(out, "FAILED            {}", failed.line())?;
        }
        match (&report, &bundle) {
            _ if !summary.worker_failures.is_empty() => {}
            (Some(report), Some(dir)) => {
                writeln!(out, "DIFFERENT         from frame {}: {}", report.frame, report.message)?;
                for field in report.fields.iter().take(16) {
                    writeln!(out, "  {}: {} vs {}", field.name, field.a, field.b)?;
                }
                let more = report.fields.len().saturating_sub(16) + report.fields_omitted;
                if more > 0 {
                    writeln!(out, "  ... and {more} more")?;
                }
                writeln!(out, "evidence          {}", dir.display())?;
            }
            _ => writeln!(out, "same              the builds agree on every frame")?,
        }
    }
    out.flush()?;
    // A worker that died, hung or broke the protocol fails the gate as a difference does.
    let failed = !summary.worker_failures.is_empty();
    Ok(if report.is_some() || failed { ExitCode::from(EXIT_DIVERGED) } else { ExitCode::SUCCESS })
}

/// `--shrink`: the smallest input on which the builds still differ as `report` says, written into
/// `bundle/repro` (one worker per build, as `anes shrink --baseline --candidate --jobs 1`). The
/// folder, or why there is none.
pub(crate) fn shrink_into(
    bundle: &Path,
    config: &CanaryConfig,
    report: &CanaryReport,
    baseline: &Path,
    candidate: &Path,
    rom_file: &str,
    quiet: bool,
) -> Result<PathBuf, String> {
    use anes_lockstep::InputSource;
    let CanaryOutcome::Diverged(divergence) = &report.outcome else {
        return Err("the builds did not differ".into());
    };
    let Some(frame) = divergence.frame else {
        return Err("the builds differ at power-on: no input to shrink".into());
    };
    let stream: Vec<_> = (0..=frame).map(|n| config.inputs.input(n)).collect();
    let shrink_config = anes_lockstep::ShrinkConfig {
        expect: Some((divergence.kind, frame)),
        ..anes_lockstep::ShrinkConfig::default()
    };
    let builds = crate::shrink::Builds { baseline, candidate, jobs: 1 };
    let checks = crate::shrink::Checks { rom_name: rom_file, start: None, bundle_checkpoint: None };
    let region = report.region.or(config.region);
    let bar = output::progress_bar(0, quiet);
    bar.set_message("shrinking the input");
    let result = crate::shrink::shrink_builds(
        &config.rom,
        region,
        &builds,
        config.reply_timeout,
        &checks,
        &stream,
        &shrink_config,
        &mut |p| bar.set_message(format!("shrinking: {} presses left, {} trials", p.presses, p.trials)),
    );
    bar.finish_and_clear();
    let (result, region) = result.map_err(|e| format!("{e:#}"))?;
    let shrunk = result.map_err(|e| e.to_string())?;
    let out = bundle.join("repro");
    let ran = crate::shrink::Ran::Nes { region, power_on: (Default::default(), Default::default()) };
    crate::shrink::write_repro(&out, &shrunk, &ran, rom_file, None).map_err(|e| format!("{e:#}"))?;
    Ok(out)
}

/// What the canary writes into an evidence bundle besides the lockstep's files: `--report DIR
/// --force` checks these names too before the run.
const CANARY_FILES: &[&str] = &["canary.json"];

/// The golden log at `path` has a record for each of the `frames` compared: checked before any
/// worker starts, naming the file (the run's own check cannot name it).
fn check_log_covers(path: &Path, log: &GoldenLog, frames: u64) -> anyhow::Result<()> {
    let records = log.records.len();
    if (records as u64) < frames {
        anyhow::bail!(
            "{}: the golden log holds {records} records; the run needs {frames} (one per frame compared; --frames N compares fewer)",
            path.display()
        );
    }
    Ok(())
}

fn read_log(path: Option<&Path>) -> anyhow::Result<Option<GoldenLog>> {
    let Some(path) = path else { return Ok(None) };
    let bytes = limited_read::read_limited(path, limited_read::GOLDEN_LOG)?;
    let text = String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{}: not UTF-8 text", path.display()))?;
    let log = GoldenLog::parse(&text).with_context(|| path.display().to_string())?;
    Ok(Some(log.with_epoch_beside(path).with_context(|| path.display().to_string())?))
}

/// What `anes canary` reports (text, or one JSON object).
#[derive(Debug, Serialize)]
pub struct Summary {
    /// The ROM.
    pub rom: String,
    /// `same`, `diverged` or `worker_failed`.
    pub result: &'static str,
    /// Frames asked for.
    pub frames: u64,
    /// Frames whose records agreed.
    pub frames_agreed: u64,
    /// The candidate's state hash after the last agreed frame (null: a worker failed before both
    /// powered on).
    pub final_state_hash: Option<String>,
    /// Frames per second of each build (wall clock).
    pub fps_per_build: f64,
    /// The baseline build (version, commit, epoch), when it is a build.
    pub baseline: Option<anes_ops::worker::protocol::BuildInfo>,
    /// The candidate build.
    pub candidate: anes_ops::worker::protocol::BuildInfo,
    /// The console region the candidate ran (`ntsc`, `pal`, `dendy`; null: it never loaded the ROM).
    pub region: Option<&'static str>,
    /// The first difference.
    pub divergence: Option<DivergenceSummary>,
    /// Where the evidence bundle went.
    pub evidence: Option<String>,
    /// With --shrink: the folder of the minimal repro (`repro.input`, `report.json`...).
    pub repro: Option<String>,
    /// With --shrink: why there is no repro, when there is none.
    pub repro_error: Option<String>,
}

/// The first difference, for people and machines.
#[derive(Debug, Serialize)]
pub struct DivergenceSummary {
    /// Input-stream index of the first differing frame (null: at power-on).
    pub frame: Option<u64>,
    /// `state` or `cycle_misalignment`.
    pub kind: &'static str,
    /// Regression (same epoch) or expected change (different epoch).
    pub epochs: anes_ops::canary::EpochVerdict,
    /// The baseline's record: frame, CPU cycle, scanline, dot, state hash.
    pub baseline: String,
    /// The candidate's record.
    pub candidate: String,
    /// The first divergent instruction, when localized (`$E06F: INC $02`).
    pub instruction: Option<String>,
    /// CPU cycle at the start of that instruction.
    pub cpu_cycle: Option<u64>,
    /// The differing fields after it: `name: baseline vs candidate`.
    pub fields: Vec<String>,
    /// Why the difference was not localized, if it was not.
    pub localization_error: Option<String>,
    /// A worker's failure, when that ended the run.
    pub failure: Option<String>,
}

fn record_text(r: &anes_core::FrameRecord) -> String {
    format!(
        "frame {} cycle {} scanline {} dot {} hash {}",
        r.frame, r.cpu_cycle, r.ppu_scanline, r.ppu_dot, r.state_hash
    )
}

impl Summary {
    fn of(report: &CanaryReport, rom: &str, frames: u64, seconds: f64, bundle: Option<&Path>) -> Summary {
        let divergence = match &report.outcome {
            CanaryOutcome::Same => None,
            CanaryOutcome::Diverged(d) => {
                let localization = d.evidence.as_ref().and_then(|e| e.localization.as_ref());
                Some(DivergenceSummary {
                    frame: d.frame,
                    kind: d.kind.name(),
                    epochs: d.epochs,
                    baseline: record_text(&d.baseline),
                    candidate: record_text(&d.candidate),
                    instruction: localization.map(|l| format!("${:04X}: {}", l.pc, l.instruction)),
                    cpu_cycle: localization.map(|l| l.cpu_cycle),
                    fields: localization
                        .map(|l| l.fields.iter().map(|f| format!("{}: {} vs {}", f.name, f.a, f.b)).collect())
                        .unwrap_or_default(),
                    localization_error: d
                        .localization_error
                        .clone()
                        .or_else(|| d.evidence.as_ref().and_then(|e| e.localization_error.clone())),
                    failure: None,
                })
            }
            CanaryOutcome::WorkerFailed { side, reason, frame } => Some(DivergenceSummary {
                frame: Some(*frame),
                kind: "worker_failed",
                epochs: anes_ops::canary::EpochVerdict::Unknown,
                baseline: String::new(),
                candidate: String::new(),
                instruction: None,
                cpu_cycle: None,
                fields: Vec::new(),
                localization_error: None,
                failure: Some(format!("the {side} worker failed: {reason}")),
            }),
        };
        Summary {
            rom: rom.to_string(),
            result: match report.outcome {
                CanaryOutcome::Same => "same",
                CanaryOutcome::Diverged(_) => "diverged",
                CanaryOutcome::WorkerFailed { .. } => "worker_failed",
            },
            frames,
            frames_agreed: report.frames_agreed,
            final_state_hash: report.last_agreed.map(|r| r.state_hash.to_string()),
            fps_per_build: if seconds > 0.0 { report.frames_agreed as f64 / seconds } else { 0.0 },
            baseline: report.baseline_build.clone(),
            candidate: report.candidate_build.clone(),
            region: report.region.map(|r| r.name()),
            divergence,
            evidence: bundle.map(|p| p.display().to_string()),
            repro: None,
            repro_error: None,
        }
    }

    /// Names the repro `--shrink` wrote, or why it wrote none.
    pub(crate) fn attach_repro(&mut self, repro: Result<PathBuf, String>) {
        match repro {
            Ok(dir) => self.repro = Some(dir.display().to_string()),
            Err(why) => self.repro_error = Some(why),
        }
    }

    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        let build = |b: &anes_ops::worker::protocol::BuildInfo| {
            format!(
                "{} ({}), emulation epoch {}",
                b.version,
                b.git_commit.as_deref().unwrap_or("no commit"),
                b.emulation_epoch
            )
        };
        writeln!(out, "rom               {}", self.rom)?;
        match &self.baseline {
            Some(b) => writeln!(out, "baseline          {}", build(b))?,
            None => writeln!(out, "baseline          golden log")?,
        }
        writeln!(out, "candidate         {}", build(&self.candidate))?;
        if let Some(region) = self.region {
            writeln!(out, "region            {region}")?;
        }
        writeln!(out, "frames agreed     {} of {}", self.frames_agreed, self.frames)?;
        writeln!(out, "speed             {:.0} frames/s per build", self.fps_per_build)?;
        writeln!(out, "final state hash  {}", self.final_state_hash.as_deref().unwrap_or("none"))?;
        match &self.divergence {
            None => writeln!(out, "same: no difference")?,
            Some(d) if d.failure.is_some() => {
                writeln!(out, "FAILED            {}", d.failure.as_deref().unwrap_or(""))?;
            }
            Some(d) => {
                let at = d.frame.map_or("at power-on".to_string(), |f| format!("in frame {f}"));
                writeln!(out, "DIFFERENCE        {} {at}: {}", d.kind, d.epochs.describe())?;
                writeln!(out, "  baseline        {}", d.baseline)?;
                writeln!(out, "  candidate       {}", d.candidate)?;
                if let (Some(instruction), Some(cycle)) = (&d.instruction, d.cpu_cycle) {
                    writeln!(out, "  instruction     {instruction} (CPU cycle {cycle})")?;
                }
                for field in &d.fields {
                    writeln!(out, "  {field}")?;
                }
                if let Some(why) = &d.localization_error {
                    writeln!(out, "  not localized   {why}")?;
                }
            }
        }
        if let Some(dir) = &self.evidence {
            writeln!(out, "evidence          {dir}/report.html")?;
        }
        if let Some(dir) = &self.repro {
            writeln!(out, "repro             {dir}/report.html")?;
        }
        if let Some(why) = &self.repro_error {
            writeln!(out, "no repro          {why}")?;
        }
        Ok(())
    }
}
