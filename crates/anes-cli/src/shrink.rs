//! `anes shrink`: the smallest input stream on which the two consoles still diverge the same way
//! (see `anes_lockstep::shrink`), written as `repro.input`, `repro.fm2`, `report.json` and
//! `report.html` into `--out DIR`. The machines differ as in `anes lockstep` (`--inject`,
//! `--ppu-b`, `--apu-b`), or as an evidence bundle recorded (`--evidence`): one of `anes lockstep`
//! replays from power-on; one of a `serve` incident from its checkpoint (the service keeps no
//! inputs before it), and the repro then starts there too: `repro.snap` beside it. `--start SNAP`
//! starts any shrink, or the replay of such a repro, from a snapshot. `--baseline`/`--candidate`
//! shrinks two builds' worker processes, `--libretro CORE` two `anes worker --libretro` processes of a
//! core (the ROM is then its content): the same search through `anes_lockstep::shrink_pairs`, the
//! same files.
//!
//! The four files are the same bytes for the same ROM, stream, faults and schedules, whatever
//! `--jobs`; what the search cost (trials, frames emulated, time) is printed, not written, because
//! it varies. A run stopped by `--budget` keeps the best stream so far and says so.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anes_core::movie::{FrameInput, InputStream};
use anes_core::{PowerOnProfile, Region};
use anes_lockstep::{
    DivergenceKind, FaultPlan, InputSource, LockstepError, Machine, ShrinkConfig, ShrinkError,
    ShrinkProgress, Shrunk,
};
use anes_ops::canary::{RemoteMachine, spawn_loaded};
use anyhow::{Context, bail};
use serde::Serialize;

use crate::input_file::{read_input, read_input_with_region};
use crate::lockstep::{DEFAULT_FRAMES, Pair, PairSpec, read_inputs, read_rom};
use crate::rom::{RegionArg, Schedule};
use crate::{limited_read, output};

/// Exit status when a divergence was shrunk (the machines diverged, as `anes lockstep` says).
const EXIT_DIVERGED: u8 = 1;
/// Exit status for bad input, including an evidence bundle this run cannot reproduce.
const EXIT_BAD_INPUT: u8 = 2;
/// The longest stream a shrink takes: it holds one input per frame in memory (3 bytes each).
const MAX_FRAMES: u64 = 1 << 24;
/// The files a shrink writes into `--out DIR`.
const OUTPUT_FILES: [&str; 4] = ["repro.input", "repro.fm2", "report.json", "report.html"];
/// Machine A's state at the repro's start, written when the start is not power-on.
const START_FILE: &str = "repro.snap";

/// `anes shrink --help`'s closing lines.
const AFTER_HELP: &str = "\
The repro has the same kind of divergence at the end of the same frame, machine B with the same \
faults. repro.input, repro.fm2, report.json and report.html are the same bytes on every run and \
whatever --jobs; trials, frames emulated and time are printed only.

Exit status: 1 the divergence was shrunk and the repro written (the machines diverged, as with anes \
lockstep); 0 the machines agreed: nothing to shrink, nothing written; 2 bad input, including an \
--evidence bundle whose divergence this run does not reproduce, or no result: a worker (--libretro, \
--baseline) crashed, exited, hung or broke the protocol (named with the frame; nothing written).

Examples:
  # The bundled demo's 5,000 frames with bit 3 of RAM $0342 flipped in machine B at CPU cycle
  # 1234567, shrunk to a few frames without a press (exit status 1)
  anes shrink --inject flip:ram:0x0342:3@1234567 --out repro/
  # Replay that repro from the snapshot its start moved to
  anes shrink --start repro/repro.snap --input repro/repro.input --inject flip:ram:0x0342:3@1234567 --out again/
  # Shrink the evidence bundle of an anes lockstep run, two trials at once
  anes lockstep --inject flip:ram:0x0342:3@1234567 --report bundle/
  anes shrink --evidence bundle/ --out bundle-repro/ --jobs 2
  # Machine B on the eager PPU schedule: a divergence from the lazy one would be shrunk within 120 s
  # (exit status 0: they agree, nothing is written)
  anes shrink roms/demo/demo.nes --input roms/demo/demo.input --frames 600 --ppu-b eager --out eager/ --budget 120
  # Two workers of Debian's Nestopia (libretro-nestopia), a RAM byte flipped in machine B at frame
  # 400, over the demo's input: shrunk to no press (exit status 1)
  anes shrink roms/demo/demo.nes --libretro /usr/lib/x86_64-linux-gnu/libretro/nestopia_libretro.so --input roms/demo/demo.input --frames 600 --inject flip:system_ram:0x123:3@400 --out nestopia-repro/";

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// The iNES ROM file (default: the bundled demo ROM and its input stream).
    rom: Option<PathBuf>,
    /// Input stream: an anes input file (.input) or an FCEUX movie (.fm2).
    #[arg(long, conflicts_with = "evidence")]
    input: Option<PathBuf>,
    /// Directory for repro.input, repro.fm2, report.json and report.html (created if missing;
    /// those files in it are replaced, anything else is left alone).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// An evidence bundle written by `anes lockstep`: its inputs and faults are the run to shrink,
    /// and its divergence the one the repro must keep. Give the ROM it was recorded with (checked
    /// against the bundle's snapshots) and the --ppu-b/--apu-b it ran with (a bundle does not
    /// record them).
    #[arg(long, value_name = "DIR")]
    evidence: Option<PathBuf>,
    /// Start both consoles from this snapshot (an `anes` snapshot, e.g. a repro.snap) instead of
    /// power-on: the input stream is read from the snapshot's frame on. Replays a repro whose start
    /// moved: `anes shrink ROM --start repro.snap --input repro.input --inject SPEC --out DIR`.
    #[arg(long, value_name = "SNAP", conflicts_with = "evidence")]
    start: Option<PathBuf>,
    /// Frames of the input to run (default: the input's length, or 5,000).
    #[arg(long)]
    frames: Option<u64>,
    /// Both consoles' region (default: a .fm2 movie's palFlag, else the ROM header's, else NTSC).
    /// A PAL repro.fm2 says palFlag 1; report.json names the region.
    #[arg(long, value_enum)]
    region: Option<RegionArg>,
    /// Machine A is this `anes` build, run as a worker process (`anes canary`'s baseline): the
    /// two machines differ by build. One worker per build per --jobs, reused by every trial.
    #[arg(long, value_name = "BIN", conflicts_with_all = ["inject", "ppu_b", "apu_b"])]
    baseline: Option<PathBuf>,
    /// With --baseline: machine B's `anes` build (default: this one).
    #[arg(long, value_name = "BIN", requires = "baseline")]
    candidate: Option<PathBuf>,
    /// Shrink over a libretro core instead of anes consoles: ROM is the core's content, each machine
    /// an `anes worker --libretro` process (one pair per --jobs, reused by every trial and restored
    /// from the snapshots the core serializes, so state a core keeps outside them is not restored:
    /// `anes audit --shrink` asks every trial from power-on). The machines differ by --libretro-b,
    /// --option-b or --inject (sections as `anes lockstep --libretro`'s, the number after `@` a
    /// frame).
    #[arg(long, value_name = "CORE.so", requires = "rom",
          conflicts_with_all = ["baseline", "ppu_b", "apu_b", "region", "power_on_b"])]
    libretro: Option<PathBuf>,
    /// Machine B's core (default: --libretro's): two builds of one core.
    #[arg(long, value_name = "CORE.so", requires = "libretro")]
    libretro_b: Option<PathBuf>,
    /// A core option for both libretro machines, KEY=VALUE (repeatable).
    #[arg(long = "option", value_name = "KEY=VALUE", requires = "libretro", value_parser = crate::worker::core_option)]
    options: Vec<(String, String)>,
    /// A core option for machine B only, KEY=VALUE (repeatable; replaces --option's for B).
    #[arg(long = "option-b", value_name = "KEY=VALUE", requires = "libretro", value_parser = crate::worker::core_option)]
    options_b: Vec<(String, String)>,
    /// Keep the repro's start where the run started (power-on, --start or the bundle's checkpoint)
    /// instead of moving it to the latest checkpoint from which it still reproduces.
    #[arg(long)]
    keep_start: bool,
    /// Inject a fault into machine B, as `anes lockstep --inject` (repeatable).
    #[arg(long = "inject", value_name = "SPEC", conflicts_with = "evidence")]
    inject: Vec<String>,
    /// Machine B's PPU schedule: lazy (as A) or eager.
    #[arg(long, value_enum, default_value_t = Schedule::Lazy, value_name = "SCHEDULE")]
    ppu_b: Schedule,
    /// Machine B's APU schedule: lazy (as A) or eager.
    #[arg(long, value_enum, default_value_t = Schedule::Lazy, value_name = "SCHEDULE")]
    apu_b: Schedule,
    /// Both consoles' power-on profile (not with --baseline, whose workers power on with the default).
    #[arg(
        long,
        value_name = "PROFILE",
        default_value = "default",
        long_help = crate::rom::POWER_ON_HELP,
        conflicts_with = "baseline"
    )]
    power_on: PowerOnProfile,
    /// Machine B's power-on profile, as `anes lockstep --power-on-b` (the machines are then compared
    /// by what their programs do, and the repro starts at power-on); what `anes sweep` prints to
    /// shrink a dependence on power-on state.
    #[arg(long, value_name = "PROFILE", conflicts_with_all = ["inject", "evidence", "start", "baseline"])]
    power_on_b: Option<PowerOnProfile>,
    /// Trials run at once, one thread each. The result does not depend on it.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: u16,
    /// Stop after this many seconds (at most a year, 31536000) with the smallest repro found so far.
    #[arg(long, value_name = "SECONDS")]
    budget: Option<f64>,
    /// Seconds a worker (--baseline, --libretro) may take to send its next reply before it counts as
    /// hung. --budget does not cut a worker's call short: a hung one holds the shrink this long.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    reply_timeout: u64,
    /// Stop after this many trials (counted in the order a one-job search runs them).
    #[arg(long, value_name = "N")]
    max_trials: Option<u64>,
    /// Save both machines every K frames of the stream that reproduces: a trial replays at most K
    /// frames before its first change.
    #[arg(long, default_value_t = 30, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    checkpoint_every: u64,
    /// Print one JSON object (the report, what it cost, the files) instead of text.
    #[arg(long)]
    json: bool,
}

/// What `--json` prints.
#[derive(Debug, Serialize)]
struct Summary<'a> {
    out: String,
    files: Vec<&'static str>,
    stats: anes_lockstep::ShrinkStats,
    report: &'a anes_lockstep::ShrinkReport,
}

/// The run an evidence bundle describes.
struct Bundle {
    inputs: InputStream,
    faults: FaultPlan,
    divergence: (DivergenceKind, u64),
    /// Machine A's snapshot at the bundle's checkpoint (empty when it has none): carries the ROM
    /// identity.
    checkpoint_a: Vec<u8>,
    /// A `serve` incident's bundle (`pipeline-report.json` beside it): its inputs before the
    /// checkpoint are not kept, so the run starts from `checkpoint_a`.
    from_checkpoint: bool,
    /// An `anes canary` bundle (`canary.json` beside it): its machines differ by build.
    from_canary: bool,
}

pub fn main(args: &Args) -> anyhow::Result<ExitCode> {
    let (rom, rom_name) = read_rom(args.rom.as_deref())?;
    let bundle = args.evidence.as_deref().map(read_bundle).transpose()?;
    let (inputs, faults, movie_region) = match (&bundle, &args.input) {
        (Some(bundle), _) => (bundle.inputs.clone(), bundle.faults.clone(), None),
        (None, Some(path)) => {
            let (inputs, region) = read_input_with_region(path)?;
            (inputs, FaultPlan::parse(&args.inject).context("--inject")?, region)
        }
        (None, None) => (
            read_inputs(None, args.rom.is_some())?,
            FaultPlan::parse(&args.inject).context("--inject")?,
            None,
        ),
    };
    if let (Some(bundle), None) = (&bundle, &args.baseline) {
        if bundle.from_canary {
            let dir = args.evidence.as_deref().unwrap_or(Path::new("--evidence"));
            bail!(
                "{}: an anes canary bundle: its builds differ, pass them as --baseline BIN --candidate BIN (canary.json names them)",
                dir.display()
            );
        }
    }
    let frames = args.frames.unwrap_or(if inputs.is_empty() { DEFAULT_FRAMES } else { inputs.len() as u64 });
    if frames > MAX_FRAMES {
        bail!("--frames {frames}: a shrink takes at most {MAX_FRAMES} frames");
    }
    check_out_dir(&args.out)?;
    let region = args.region.map(Region::from).or(movie_region);
    let start = match (&bundle, &args.start) {
        (Some(bundle), _) if bundle.from_checkpoint => {
            let dir = args.evidence.as_deref().unwrap_or(Path::new("--evidence"));
            Some((dir.join("checkpoint_a.snap"), bundle.checkpoint_a.clone()))
        }
        (_, Some(path)) => Some((path.clone(), limited_read::read_limited(path, limited_read::SNAPSHOT)?)),
        _ => None,
    };
    let stream: Vec<_> = (0..frames).map(|n| inputs.input(n)).collect();
    let config = ShrinkConfig {
        faults,
        checkpoint_every: args.checkpoint_every,
        jobs: usize::from(args.jobs),
        max_trials: args.max_trials,
        budget: args.budget.map(budget_duration).transpose()?,
        expect: bundle.as_ref().map(|b| b.divergence),
        move_start: !args.keep_start,
    };
    let bar = output::progress_bar(count_presses(&stream), args.json);
    let original_presses = count_presses(&stream);
    let mut on_progress = |p: ShrinkProgress| {
        bar.set_position(original_presses.saturating_sub(p.presses));
        bar.set_message(format!("{} presses left, {} pass, {} trials", p.presses, p.pass, p.trials));
    };
    let checks = Checks {
        rom_name: &rom_name,
        start: start.as_ref().map(|(path, snapshot)| (path.as_path(), snapshot.as_slice())),
        bundle_checkpoint: match (&bundle, &args.evidence) {
            (Some(bundle), Some(dir)) if !bundle.checkpoint_a.is_empty() => {
                Some((dir.as_path(), bundle.checkpoint_a.as_slice()))
            }
            _ => None,
        },
    };
    let (result, ran) = match (&args.libretro, &args.baseline) {
        (Some(core), _) => {
            let content = args.rom.as_deref().context("--libretro needs the core's content")?;
            let cores = Cores {
                reply_timeout: Duration::from_secs(args.reply_timeout),
                core_a: core,
                core_b: args.libretro_b.as_deref().unwrap_or(core),
                content,
                options_a: &args.options,
                options_b: if args.options_b.is_empty() { &args.options } else { &args.options_b },
                jobs: usize::from(args.jobs),
            };
            let result = shrink_cores(&cores, &rom, &checks, &stream, &config, &mut on_progress)?;
            let ran = Ran::Libretro { core_a: cores.core_a, core_b: cores.core_b, content };
            (result, ran)
        }
        (None, Some(baseline)) => {
            let candidate = match &args.candidate {
                Some(path) => path.clone(),
                None => {
                    std::env::current_exe().context("the path of this executable (the default candidate)")?
                }
            };
            let builds = Builds { baseline, candidate: &candidate, jobs: usize::from(args.jobs) };
            let timeout = Duration::from_secs(args.reply_timeout);
            let (result, region) =
                shrink_builds(&rom, region, &builds, timeout, &checks, &stream, &config, &mut on_progress)?;
            (result, Ran::Nes { region, power_on: (args.power_on, args.power_on) })
        }
        (None, None) => {
            let spec = PairSpec {
                ppu_b: args.ppu_b,
                apu_b: args.apu_b,
                region,
                power_on: args.power_on,
                power_on_b: args.power_on_b,
            };
            let pair = crate::lockstep::machine_pair(&rom, &rom_name, spec)?;
            let region = pair.nes_a().region();
            let result = match pair {
                Pair::Same(mut a, mut b) => {
                    checks.apply(&mut a, &mut b, &rom, region)?;
                    anes_lockstep::shrink(a, b, &stream, &config, &mut on_progress)
                }
                Pair::Views(mut a, mut b) => {
                    checks.apply(&mut a, &mut b, &rom, region)?;
                    anes_lockstep::shrink(a, b, &stream, &config, &mut on_progress)
                }
            };
            (result, Ran::Nes { region, power_on: (args.power_on, args.power_on_b.unwrap_or(args.power_on)) })
        }
    };
    bar.finish_and_clear();
    let shrunk = match result {
        Ok(shrunk) => shrunk,
        Err(ShrinkError::NoDivergence { frames }) => {
            let mut out = output::stdout();
            writeln!(out, "no divergence over {frames} frames: nothing to shrink")?;
            out.flush()?;
            return Ok(ExitCode::SUCCESS);
        }
        Err(e @ ShrinkError::OtherDivergence { .. }) => {
            let dir = args.evidence.as_deref().unwrap_or(Path::new("--evidence"));
            eprintln!(
                "error: {}: the bundle's divergence does not reproduce: {e} (a bundle does not record machine B's schedules or builds: pass the --ppu-b/--apu-b or --baseline/--candidate its run had)",
                dir.display()
            );
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        Err(e @ ShrinkError::ReproLost { .. }) if args.libretro.is_some() => bail!(
            "{rom_name}: {e}: a core that keeps state outside its snapshots (anes audit finds it) is shrunk from power-on by `anes audit CORE CONTENT --input FILE --shrink DIR`"
        ),
        // Machine B tells a spec that parses but does not fit it: named where the spec was given.
        Err(e @ ShrinkError::Lockstep(LockstepError::FaultPlan(_))) => {
            let source = match &args.evidence {
                Some(dir) => format!("{}: faults", dir.join("report.json").display()),
                None => "--inject".to_string(),
            };
            return Err(e).context(source);
        }
        Err(e) => return Err(e).context(rom_name),
    };
    let rom_file =
        args.rom.as_deref().and_then(Path::file_name).map_or("demo.nes".into(), |n| n.to_string_lossy());
    let given_start = start.as_ref().map(|(_, snapshot)| snapshot.as_slice());
    let written = write_repro(&args.out, &shrunk, &ran, &rom_file, given_start)?;
    let report = shrunk.report();
    let mut out = output::stdout();
    if args.json {
        let summary = Summary {
            out: args.out.display().to_string(),
            files: written,
            stats: shrunk.stats,
            report: &report,
        };
        output::write_json(&mut out, &summary)?;
    } else {
        let s = &shrunk.stats;
        match &ran {
            Ran::Nes { region, .. } => {
                writeln!(out, "rom               {rom_name}")?;
                writeln!(out, "region            {}", region.name())?;
            }
            Ran::Libretro { core_a, core_b, .. } => {
                writeln!(out, "content           {rom_name}")?;
                writeln!(out, "core A            {}", core_a.display())?;
                writeln!(out, "core B            {}", core_b.display())?;
            }
        }
        if shrunk.start_frame > 0 {
            let moved = match report.start.search {
                "moved" => format!(
                    ", the latest checkpoint it reproduces from; repro.input also replays from frame {}",
                    shrunk.given_start_frame
                ),
                _ => String::new(),
            };
            writeln!(out, "start             frame {} ({START_FILE}{moved})", shrunk.start_frame)?;
        }
        writeln!(out, "divergence        {}", report.divergence.message)?;
        writeln!(
            out,
            "given             {} frames, {} presses",
            report.original.frames, report.original.presses
        )?;
        let minimal = minimality(report.stopped_by);
        writeln!(
            out,
            "repro             {} frames, {} presses ({minimal})",
            report.shrunk.frames, report.shrunk.presses
        )?;
        for press in &report.presses {
            writeln!(
                out,
                "  frame {:>7}  pad {}  {}",
                press.frame,
                press.port + 1,
                press.buttons.join(" + ")
            )?;
        }
        for command in &report.commands {
            writeln!(out, "  frame {:>7}  console {}", command.frame, command.command)?;
        }
        let saved =
            if s.frames_emulated > 0 { s.naive_frames as f64 / s.frames_emulated as f64 } else { 0.0 };
        writeln!(
            out,
            "search            {} ({} in order, {}), {} frames emulated per machine vs {} replaying each trial from power-on ({saved:.1}x less), {:.1} s",
            counted(s.trials, "trial"),
            s.trials_in_order,
            counted(s.jobs as u64, "job"),
            s.frames_emulated,
            s.naive_frames,
            s.seconds
        )?;
        writeln!(out, "repro written to  {}", args.out.join("report.html").display())?;
    }
    out.flush()?;
    Ok(ExitCode::from(EXIT_DIVERGED))
}

/// `1 job`, `2 jobs`.
/// How minimal a shrink's result is: `1-minimal`, or which budget stopped it.
pub(crate) fn minimality(stopped_by: Option<impl std::fmt::Display>) -> String {
    match stopped_by {
        None => "1-minimal".to_owned(),
        Some(budget) => format!("stopped by the {budget} budget, not proven minimal"),
    }
}

fn counted(count: u64, noun: &str) -> String {
    format!("{count} {noun}{}", if count == 1 { "" } else { "s" })
}

/// What is checked and loaded before a shrink: the start snapshot (`--start`, a serve bundle's
/// checkpoint) goes into both machines; an evidence bundle's checkpoint must load (it names the ROM
/// and region the bundle was recorded with).
pub(crate) struct Checks<'a> {
    pub rom_name: &'a str,
    pub start: Option<(&'a Path, &'a [u8])>,
    pub bundle_checkpoint: Option<(&'a Path, &'a [u8])>,
}

impl Checks<'_> {
    /// Checks and loads into `a` and `b`, consoles of `rom` in `region`.
    fn apply<A: Machine, B: Machine>(
        &self,
        a: &mut A,
        b: &mut B,
        rom: &[u8],
        region: Region,
    ) -> anyhow::Result<()> {
        let rom_name = self.rom_name;
        if let Some((dir, checkpoint)) = self.bundle_checkpoint {
            let mut before = Vec::new();
            a.save_state(&mut before);
            let path = dir.join("checkpoint_a.snap");
            a.load_state(checkpoint)
                .map_err(|e| snapshot_refused(&path, checkpoint, rom, rom_name, region, &e.to_string()))?;
            a.load_state(&before).map_err(|e| anyhow::anyhow!("{rom_name}: {e}"))?;
        }
        if let Some((path, snapshot)) = self.start {
            let refused = |e: anes_lockstep::MachineError| {
                snapshot_refused(path, snapshot, rom, rom_name, region, &e.to_string())
            };
            a.load_state(snapshot).map_err(refused)?;
            b.load_state(snapshot).map_err(refused)?;
        }
        Ok(())
    }
}

/// Why the snapshot in `path` did not load into a console of `rom` in `region`, told apart by
/// loading it into a fresh one: taken with another ROM or region, written by another snapshot format,
/// damaged (framing, checksums, impossible contents), or, when a fresh console takes it,
/// `machine_error`, what the machine said.
fn snapshot_refused(
    path: &Path,
    snapshot: &[u8],
    rom: &[u8],
    rom_name: &str,
    region: Region,
    machine_error: &str,
) -> anyhow::Error {
    use anes_core::state::SnapshotError;
    let shown = path.display();
    let loaded = anes_core::Cartridge::from_ines(rom).map(|cart| {
        anes_core::Nes::with_region(cart, anes_core::NesConfig::default(), Some(region)).load_state(snapshot)
    });
    match loaded {
        Ok(Err(e @ (SnapshotError::WrongRom { .. } | SnapshotError::WrongRegion { .. }))) => {
            anyhow::anyhow!("{shown}: recorded with another ROM or region than {rom_name} ({region}): {e}")
        }
        Ok(Err(e @ (SnapshotError::UnsupportedVersion { .. } | SnapshotError::SectionVersion { .. }))) => {
            anyhow::anyhow!("{shown}: written by an anes with another snapshot format: {e}")
        }
        Ok(Err(e)) => anyhow::anyhow!("{shown}: damaged: {e}"),
        Ok(Ok(())) | Err(_) => anyhow::anyhow!("{shown}: refused by the machine: {machine_error}"),
    }
}

/// The two builds of a `--baseline`/`--candidate` shrink.
pub(crate) struct Builds<'a> {
    pub baseline: &'a Path,
    pub candidate: &'a Path,
    /// Workers per build: trials run at once.
    pub jobs: usize,
}

/// Shrinks with machine A in `builds.baseline` and B in `builds.candidate`: `jobs` worker processes
/// per build, each pair reused by every trial (restored from snapshots), counted as hung after
/// `timeout` without a reply. Returns the result and the region the builds loaded.
#[allow(clippy::too_many_arguments)]
pub(crate) fn shrink_builds(
    rom: &[u8],
    region: Option<Region>,
    builds: &Builds<'_>,
    timeout: Duration,
    checks: &Checks<'_>,
    stream: &[FrameInput],
    config: &ShrinkConfig,
    progress: &mut dyn FnMut(ShrinkProgress),
) -> anyhow::Result<(Result<Shrunk<FrameInput>, ShrinkError>, Region)> {
    let mut workers = Vec::new();
    let mut loaded = region;
    for _ in 0..builds.jobs.max(1) {
        let (a, region_a) = spawn_loaded(builds.baseline, rom, region, timeout).context("--baseline")?;
        let (b, region_b) = spawn_loaded(builds.candidate, rom, region, timeout).context("--candidate")?;
        if region_a != region_b {
            bail!(
                "the builds loaded the ROM in different regions ({} and {}): pass --region",
                region_a.map_or("none", |r| r.name()),
                region_b.map_or("none", |r| r.name())
            );
        }
        loaded = region_a;
        workers.push((a, b));
    }
    let region = loaded.unwrap_or(Region::Ntsc);
    let mut pairs = Vec::new();
    for (a, b) in &mut workers {
        let a = RemoteMachine::new(a, rom, u64::MAX, 0, Some(region)).context("--baseline")?;
        let b = RemoteMachine::new(b, rom, u64::MAX, 0, Some(region)).context("--candidate")?;
        pairs.push((a, b));
    }
    let (a, b) = &mut pairs[0];
    checks.apply(a, b, rom, region)?;
    Ok((anes_lockstep::shrink_pairs(pairs, stream, config, progress), region))
}

/// The two libretro machines of a `--libretro` shrink.
pub(crate) struct Cores<'a> {
    pub core_a: &'a Path,
    pub core_b: &'a Path,
    pub content: &'a Path,
    pub options_a: &'a [(String, String)],
    pub options_b: &'a [(String, String)],
    /// Worker pairs: trials run at once.
    pub jobs: usize,
    /// How long a worker may take to reply before it counts as hung.
    pub reply_timeout: Duration,
}

/// Shrinks with machine A a worker of `cores.core_a` and B one of `cores.core_b` (`anes worker
/// --libretro`), `jobs` pairs, each reused by every trial (restored from the core's snapshots). A
/// worker that failed (crashed, exited, hung, broke the protocol) is the error, whatever the search
/// made of its placeholders (they agree with nothing, so the search saw a divergence there and then
/// checkpoints that do not restore).
pub(crate) fn shrink_cores(
    cores: &Cores<'_>,
    content: &[u8],
    checks: &Checks<'_>,
    stream: &[FrameInput],
    config: &ShrinkConfig,
    progress: &mut dyn FnMut(ShrinkProgress),
) -> anyhow::Result<Result<Shrunk<FrameInput>, ShrinkError>> {
    let mut pairs = Vec::new();
    for _ in 0..cores.jobs.max(1) {
        let a = spawn_core(cores, cores.core_a, cores.options_a)
            .with_context(|| format!("machine A: {}", cores.core_a.display()))?;
        let b = spawn_core(cores, cores.core_b, cores.options_b)
            .with_context(|| format!("machine B: {}", cores.core_b.display()))?;
        pairs.push((a, b));
    }
    // The shrinker takes the machines: their failures are read through watches.
    let watches: Vec<_> = pairs.iter().map(|(a, b)| (a.failure_watch(), b.failure_watch())).collect();
    let failed = || {
        let mut failed: Vec<(anes_ops::canary::RetroFailure, &str, &Path)> = watches
            .iter()
            .flat_map(|(a, b)| {
                [(a.failure(), "A", cores.core_a), (b.failure(), "B", cores.core_b)]
                    .map(|(failure, side, core)| failure.map(|f| (f, side, core)))
            })
            .flatten()
            .collect();
        failed.sort_by_key(|(f, _, _)| f.frame);
        failed.into_iter().next()
    };
    let (a, b) = &mut pairs[0];
    // The region only names what a refused snapshot was taken with; a core's content has none.
    let checked = checks.apply(a, b, content, Region::Ntsc);
    if let Some((failure, side, core)) = failed() {
        return Err(anyhow::Error::new(failure).context(format!("worker {side} ({})", core.display())));
    }
    checked?;
    let result = anes_lockstep::shrink_pairs(pairs, stream, config, progress);
    if let Some((failure, side, core)) = failed() {
        return Err(anyhow::Error::new(failure).context(format!("worker {side} ({})", core.display())));
    }
    Ok(result)
}

/// A libretro worker (this executable, `worker --libretro`) of `core` on the shrink's content, as
/// `anes lockstep --libretro` spawns it but with the shrink's reply timeout.
fn spawn_core(
    cores: &Cores<'_>,
    core: &Path,
    options: &[(String, String)],
) -> anyhow::Result<anes_ops::canary::RetroWorkerMachine> {
    let spec = anes_ops::canary::RetroWorkerSpec {
        program: std::env::current_exe().context("the path of this executable (the worker program)")?,
        core: core.to_owned(),
        content: cores.content.to_owned(),
        options: options.to_vec(),
        reply_timeout: cores.reply_timeout,
        ignore_audio: false,
        nes_view: false,
    };
    Ok(anes_ops::canary::RetroWorkerMachine::spawn(&spec)?)
}

/// What the two machines of a shrink were, for its report.
pub(crate) enum Ran<'a> {
    /// anes consoles (in process or as builds' workers) of this region, with these power-on
    /// profiles (A's, B's).
    Nes { region: Region, power_on: (PowerOnProfile, PowerOnProfile) },
    /// Workers of a libretro core (two builds when the cores differ) on this content.
    Libretro { core_a: &'a Path, core_b: &'a Path, content: &'a Path },
}

/// Writes the repro files of `shrunk` into `out` (see [`OUTPUT_FILES`]), `repro.snap` when the
/// repro starts from a snapshot (`given_start`, or the one the start moved to), and removes a
/// `repro.snap` of an earlier shrink otherwise. Returns the files written.
pub(crate) fn write_repro(
    out: &Path,
    shrunk: &Shrunk<FrameInput>,
    ran: &Ran<'_>,
    rom_file: &str,
    given_start: Option<&[u8]>,
) -> anyhow::Result<Vec<&'static str>> {
    check_out_dir(out)?;
    let report = shrunk.report();
    let repro = InputStream::from_frames(shrunk.repro.clone());
    let mut json = serde_json::to_value(&report).context("report.json")?;
    // A libretro core's repro.fm2 says NTSC (palFlag 0): the movie holds only its pads.
    let region = match ran {
        Ran::Nes { region, power_on } => {
            json["region"] = region.name().into();
            json["power_on"] = power_on.0.to_string().into();
            json["power_on_b"] = power_on.1.to_string().into();
            *region
        }
        Ran::Libretro { core_a, core_b, content } => {
            json["libretro"] = serde_json::json!({
                "core": core_a.display().to_string(),
                "core_b": core_b.display().to_string(),
                "content": content.display().to_string(),
            });
            Region::Ntsc
        }
    };
    json["start_frame"] = shrunk.start_frame.into();
    let json = serde_json::to_string_pretty(&json).context("report.json")? + "\n";
    std::fs::create_dir_all(out).with_context(|| out.display().to_string())?;
    for (name, bytes) in [
        ("repro.input", repro.to_bytes()),
        ("repro.fm2", repro.to_fm2_of_region(rom_file, region).into_bytes()),
        ("report.json", json.into_bytes()),
        ("report.html", report.html().into_bytes()),
    ] {
        write_regular(&out.join(name), &bytes)?;
    }
    let mut written = OUTPUT_FILES.to_vec();
    let start_path = out.join(START_FILE);
    let snapshot = shrunk.start_snapshot.as_deref().or(given_start.filter(|_| shrunk.start_frame > 0));
    match snapshot {
        Some(snapshot) => {
            write_regular(&start_path, snapshot)?;
            written.push(START_FILE);
        }
        // A repro.snap of an earlier shrink into this folder would say the repro starts there.
        None if std::fs::symlink_metadata(&start_path).is_ok() => {
            std::fs::remove_file(&start_path).with_context(|| start_path.display().to_string())?;
        }
        None => {}
    }
    Ok(written)
}

fn count_presses(stream: &[anes_core::movie::FrameInput]) -> u64 {
    stream.iter().filter(|f| f.pads != [0, 0]).count() as u64
}

/// The longest `--budget`: one year. The search adds it to the time it started, which a Duration
/// near its own limit would overflow.
const MAX_BUDGET_SECONDS: u64 = 365 * 24 * 60 * 60;

fn budget_duration(seconds: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|budget| budget.as_secs_f64() <= MAX_BUDGET_SECONDS as f64)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "--budget {seconds}: expected a number of seconds from 0 to {MAX_BUDGET_SECONDS} (one year)"
            )
        })
}

/// `--out DIR` must be a directory or not exist yet; the files it would replace must be regular.
fn check_out_dir(dir: &Path) -> anyhow::Result<()> {
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| dir.display().to_string()),
        Ok(meta) if !meta.is_dir() => {
            bail!("{}: exists and is not a directory (--out needs a folder)", dir.display())
        }
        Ok(_) => {}
    }
    for name in OUTPUT_FILES.into_iter().chain([START_FILE]) {
        let path = dir.join(name);
        if let Ok(meta) = std::fs::symlink_metadata(&path) {
            if !meta.file_type().is_file() {
                bail!(
                    "{}: exists and is not a regular file; it is left alone (name another --out)",
                    path.display()
                );
            }
        }
    }
    Ok(())
}

/// Writes `bytes` to `path`, refusing anything there that is not a regular file (a FIFO, a device,
/// a symlink, a directory): `path` is replaced whole through a temporary file.
fn write_regular(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_file() {
            bail!("{}: exists and is not a regular file; it is left alone", path.display());
        }
    }
    Ok(anes_fs::write_output(path, bytes)?)
}

/// Reads what `anes lockstep` keeps in a bundle: `report.json` (the divergence's kind and frame as
/// the comparator saw it, the faults that fired in B), `inputs.input` (frames 0 through the
/// divergent one) and `checkpoint_a.snap` (its header names the ROM).
fn read_bundle(dir: &Path) -> anyhow::Result<Bundle> {
    let name = dir.display();
    let report_path = dir.join("report.json");
    let text = limited_read::read_limited(&report_path, limited_read::REPORT)?;
    let report: serde_json::Value =
        serde_json::from_slice(&text).with_context(|| format!("{}: not JSON", report_path.display()))?;
    let field = |pointer: &str| {
        report.pointer(pointer).with_context(|| {
            format!("{}: no {pointer} field: not a lockstep evidence report", report_path.display())
        })
    };
    let kind = match field("/detected/b/cpu_cycle")? == field("/detected/a/cpu_cycle")? {
        true => DivergenceKind::State,
        false => DivergenceKind::CycleMisalignment,
    };
    let frame = field("/detected/frame")?
        .as_u64()
        .with_context(|| format!("{}: detected.frame is not a frame number", report_path.display()))?;
    let specs: Vec<String> = field("/faults")?
        .as_array()
        .with_context(|| format!("{}: faults is not a list", report_path.display()))?
        .iter()
        .map(|f| f.get("spec").and_then(|s| s.as_str()).map(str::to_string))
        .collect::<Option<_>>()
        .with_context(|| format!("{}: a fault without its spec", report_path.display()))?;
    let faults = FaultPlan::parse(&specs).with_context(|| format!("{}: faults", report_path.display()))?;
    let inputs = read_input(&dir.join("inputs.input"))?;
    if (inputs.len() as u64) <= frame {
        bail!("{name}: inputs.input holds {} frames, not through the divergent frame {frame}", inputs.len());
    }
    let checkpoint_path = dir.join("checkpoint_a.snap");
    let checkpoint_a = match std::fs::symlink_metadata(&checkpoint_path) {
        Ok(_) => limited_read::read_limited(&checkpoint_path, limited_read::SNAPSHOT)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| checkpoint_path.display().to_string()),
    };
    let from_checkpoint = dir.join("pipeline-report.json").exists();
    if from_checkpoint && checkpoint_a.is_empty() {
        bail!("{name}: a serve incident's bundle without checkpoint_a.snap: its run's start is unknown");
    }
    let from_canary = dir.join("canary.json").exists();
    Ok(Bundle { inputs, faults, divergence: (kind, frame), checkpoint_a, from_checkpoint, from_canary })
}
