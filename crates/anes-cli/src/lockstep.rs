//! `anes lockstep`: two consoles run one ROM over one input stream in lockstep; any difference stops
//! the run, is localized to the first divergent instruction and kept as an evidence bundle, in a new
//! folder per run unless `--report` names one (see `evidence_dir.rs`).
//!
//! Exit status: 0 the machines agreed (and every injected fault was applied: masked faults are told
//! as such); 1 they diverged; 2 bad input, including an injected fault that machine B refused or
//! that the run ended before reaching (the summary is printed first, then one `error:` line per such
//! fault), or no result: a worker (`--libretro`, `--versus`) crashed, exited, hung or broke the
//! protocol (the summary stops at the last frame verified before it and names the worker, the frame
//! and what happened; then one `error:` line per failed worker).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anes_core::movie::{FrameInput, InputStream};
use anes_core::{PowerOnProfile, Region};
use anes_lockstep::{
    FaultPlan, Granularity, InputSource, Lockstep, LockstepConfig, Machine, NesMachine, ProgramView,
    Progress, RunOutcome, Summary, Threading,
};
use anes_ops::canary::{RetroFailure, RetroWorkerMachine, WorkerEnd};
use anyhow::Context;
use serde::Serialize;

use crate::rom::{RegionArg, Schedule};
use crate::{input_file, limited_read, output};

use crate::bundled::{DEMO_INPUT, DEMO_ROM};
use crate::evidence_dir::EvidenceDir;
use crate::versus_end::VERSUS_END_PICTURES;
/// Frames a ROM without an input file runs by default.
pub(crate) const DEFAULT_FRAMES: u64 = 5_000;
/// Exit status when the machines diverged.
const EXIT_DIVERGED: u8 = 1;
/// Exit status when an injected fault was refused or never reached (and nothing diverged): the run
/// did not test what it was asked to, which is bad input like any other.
const EXIT_FAULT_NOT_APPLIED: u8 = 2;
/// Exit status when a worker failed (crashed, exited, hung, broke the protocol): the run has no
/// result past the failure, as `anes audit` has none.
const EXIT_WORKER_FAILED: u8 = 2;
/// The threaded mode's window (how many sync records a worker may run ahead of the comparator) per
/// granularity: about 16 frames of records at frame and scanline granularity, about 2 frames' worth
/// of instructions (a frame has 7,000-15,000) at instruction granularity.
fn thread_window(granularity: Granularity) -> usize {
    match granularity {
        Granularity::Frame => 16,
        Granularity::Scanline => 16 * 262,
        Granularity::Instruction => 16_384,
    }
}

/// `anes lockstep --help`'s closing lines.
const AFTER_HELP: &str = "\
Exit status: 0 the machines agreed; 1 they diverged; 2 bad input, including an injected fault that \
machine B refused or that the run ended before reaching, or no result: a libretro worker crashed, \
exited, hung (no reply within --reply-timeout) or broke the protocol (named with the frame).

Examples:
  # The bundled demo ROM and its 5,000-frame input stream, compared at the end of every frame
  anes lockstep
  # Flip bit 3 of RAM $0342 in machine B at CPU cycle 1234567: the report names the first divergent
  # instruction and the differing fields; the evidence goes into evidence/ (exit status 1)
  anes lockstep --inject flip:ram:0x0342:3@1234567 --report evidence/
  # A ROM and an input stream (.input or FCEUX .fm2), compared after every instruction, one thread each
  anes lockstep roms/demo/demo.nes --input roms/demo/demo.input --frames 600 --granularity instruction --threads
  # Check anes itself: machine B runs the eager reference PPU schedule, A the fast lazy one
  anes lockstep roms/demo/demo.nes --input roms/demo/demo.input --frames 600 --ppu-b eager
  # A button flipped on port 1 at frame 300, one JSON summary object (exit status 1)
  anes lockstep --inject input:1:0@300 --json
  # anes against Debian's Nestopia frame by frame: system RAM and the picture through each palette
  anes lockstep ../shared/conformance/roms/apu_test/rom_singles/1-len_ctr.nes --frames 600 --versus /usr/lib/x86_64-linux-gnu/libretro/nestopia_libretro.so --option nestopia_overscan_v=disabled --option nestopia_palette=raw
  # The same, compared only at the last frame (the test's verdict on screen, RAM outside the free stack)
  anes lockstep ../shared/conformance/roms/apu_test/rom_singles/2-len_table.nes --frames 600 --at-end --versus /usr/lib/x86_64-linux-gnu/libretro/nestopia_libretro.so --option nestopia_overscan_v=disabled --option nestopia_palette=raw";

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
// The runs whose machines are worker processes: what --reply-timeout applies to.
#[command(group(clap::ArgGroup::new("worker_core").args(["libretro", "versus"])))]
pub struct Args {
    /// The iNES ROM file (default: the bundled demo ROM and its input stream).
    rom: Option<PathBuf>,
    /// Input stream: an anes input file (.input) or an FCEUX movie (.fm2).
    #[arg(long)]
    input: Option<PathBuf>,
    /// Frames to run (default: the input's length, or 5,000).
    #[arg(long)]
    frames: Option<u64>,
    /// When to compare the machines: frame, scanline or instruction.
    #[arg(long, default_value = "frame")]
    granularity: Granularity,
    /// Run each machine on its own worker thread.
    #[arg(long)]
    threads: bool,
    /// Take a verified checkpoint every K frames.
    #[arg(long, default_value_t = 60, value_name = "K")]
    checkpoint_every: u64,
    /// Inject a fault into machine B: flip:SECTION:OFFSET:BIT@CYCLE, stall:N@CYCLE (N from 1 to
    /// 29781, one frame) or input:PORT:BIT@FRAME (repeatable). Each fault's fate is reported:
    /// detected, masked (the machines agreed at the next sync point), refused by machine B, or not
    /// reached; a refused or unreached fault makes the exit status 2 unless the machines diverged.
    #[arg(long = "inject", value_name = "SPEC")]
    inject: Vec<String>,
    /// Directory for the evidence bundle of a divergence (default: a new folder
    /// anes-evidence/<UTC time>-<ROM name>/ in the current directory, never one that exists). An
    /// existing DIR must be empty, unless --force.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    /// Write the bundle into --report DIR even if it is not empty: the bundle's files there are
    /// replaced, other files are left alone.
    #[arg(long, requires = "report")]
    force: bool,
    /// Machine B's PPU schedule: lazy (as A) or eager, the reference schedule, which makes the run a
    /// check of anes's lazy PPU on this ROM and input.
    #[arg(long, value_enum, default_value_t = Schedule::Lazy, value_name = "SCHEDULE")]
    ppu_b: Schedule,
    /// Machine B's APU schedule: lazy (as A) or eager, the reference schedule, which makes the run a
    /// check of anes's lazy APU on this ROM and input.
    #[arg(long, value_enum, default_value_t = Schedule::Lazy, value_name = "SCHEDULE")]
    apu_b: Schedule,
    /// The consoles' region (both machines): overrides the ROM header's (NES 2.0 byte 12; NTSC for
    /// iNES 1.0) and an .fm2 movie's palFlag.
    #[arg(long, value_enum, value_name = "REGION")]
    region: Option<RegionArg>,
    /// Both consoles' power-on profile.
    #[arg(long, value_name = "PROFILE", default_value = "default", long_help = crate::rom::POWER_ON_HELP)]
    power_on: PowerOnProfile,
    /// Machine B's power-on profile (default: --power-on's). When its choices differ from A's, the
    /// machines are compared by what their programs do (CPU registers and cycles, the PPU registers
    /// written, the pictures rendered: anes_lockstep::ProgramView), not by their whole states,
    /// which differ from power-on by design.
    #[arg(long, value_name = "PROFILE", conflicts_with = "inject")]
    power_on_b: Option<PowerOnProfile>,
    /// Run a libretro core in two `anes worker --libretro` processes instead of two anes consoles:
    /// ROM is the core's content. Frames are compared by the serialized state, every memory region
    /// the core exposes, the picture and the audio; a difference is localized to the frame and the
    /// region's bytes. Fault sections are the core's (`flip:system_ram:0x10:3@FRAME`, `map.ram.0`,
    /// `state`, `picture`, `audio`; the cycle after `@` is the frame).
    #[arg(long, value_name = "CORE.so", requires = "rom",
          conflicts_with_all = ["ppu_b", "apu_b", "region", "power_on_b", "threads"])]
    libretro: Option<PathBuf>,
    /// Machine B's core (default: --libretro's): two builds of one core, or two cores of one system.
    #[arg(long, value_name = "CORE.so", requires = "libretro")]
    libretro_b: Option<PathBuf>,
    /// A core option for both libretro machines, KEY=VALUE (repeatable).
    #[arg(long = "option", value_name = "KEY=VALUE", requires = "libretro", value_parser = crate::worker::core_option)]
    options: Vec<(String, String)>,
    /// A core option for machine B only, KEY=VALUE (repeatable; replaces --option's for B).
    #[arg(long = "option-b", value_name = "KEY=VALUE", requires = "libretro", value_parser = crate::worker::core_option)]
    options_b: Vec<(String, String)>,
    /// anes against another NES emulator: machine A is the anes console, B this libretro NES core
    /// (in an `anes worker --libretro --nes-view` process), compared frame by frame by the 2 KiB of
    /// system RAM and the picture through each one's palette (the colour map between the two
    /// pictures must be one-to-one over the frame), after aligning the power-on phase (--phase).
    /// B's picture must be 256x240 in a palette that keeps the NES colours apart: for Nestopia,
    /// `--option nestopia_overscan_v=disabled --option nestopia_palette=raw`.
    #[arg(long, value_name = "CORE.so", requires = "rom",
          conflicts_with_all = ["libretro", "ppu_b", "apu_b", "region", "power_on_b", "threads"])]
    versus: Option<PathBuf>,
    /// With --versus: anes's CPU/PPU power-on phase (0-3), or `auto`: the phase whose first frames
    /// agree longest with the other emulator's (ties: the lowest).
    #[arg(long, value_name = "PHASE", default_value = "auto", requires = "versus", value_parser = phase_arg)]
    phase: PhaseChoice,
    /// With --versus: compare only the last of --frames frames, by the picture (a test ROM's verdict
    /// on screen) and the RAM outside anes's free stack (the stack page below its stack pointer,
    /// where earlier pushes lie: reported, not compared), instead of at every frame boundary, where
    /// two emulators ending their frames a few CPU cycles apart sample a running program at
    /// different instructions. Exit status 0 when they agree, 1 when not (both pictures kept).
    #[arg(long, requires = "versus", conflicts_with = "inject")]
    at_end: bool,
    /// Seconds a libretro worker (--libretro, --versus) may take to send its next reply before it
    /// counts as hung: the run then ends with the failure, as with a worker that crashed.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, requires = "worker_core",
          value_parser = clap::value_parser!(u64).range(1..))]
    reply_timeout: u64,
    /// Print one JSON summary object instead of text.
    #[arg(long)]
    json: bool,
}

/// `--phase`: `auto` (`None`) or a phase from 0 to 3.
#[derive(Debug, Clone, Copy)]
struct PhaseChoice(Option<u8>);

fn phase_arg(text: &str) -> Result<PhaseChoice, String> {
    match text {
        "auto" => Ok(PhaseChoice(None)),
        _ => match text.parse::<u8>() {
            Ok(phase) if phase <= 3 => Ok(PhaseChoice(Some(phase))),
            _ => Err(format!("{text:?}: expected auto or a phase from 0 to 3")),
        },
    }
}

/// The JSON summary: the library's, and the run's region and where it ended.
#[derive(serde::Serialize)]
struct JsonSummary<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    /// `ntsc`, `pal` or `dendy` (absent for libretro cores).
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<&'static str>,
    /// Machine A's CPU cycle at the end of the last verified frame.
    final_cpu_cycle: u64,
    /// Machine A's power-on profile.
    power_on: String,
    /// Machine B's.
    power_on_b: String,
    /// Workers that failed (crashed, exited, hung, broke the protocol): the run ended at the first
    /// failure; nothing after the last verified frame was compared. Absent when none failed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    worker_failures: Vec<WorkerFailed>,
}

/// A machine that may fail outside the comparison: a libretro worker whose process crashed, exited,
/// hung or broke the protocol. Its records after the failure agree with no other machine's
/// (`anes_ops::canary::RetroWorkerMachine`), so a run stops at the first sync point after it; the
/// run then reports the failure, not a divergence.
pub(crate) trait WorkerHealth {
    /// Why the machine's worker failed, if it did (`None` for a machine in this process).
    fn worker_failure(&self) -> Option<RetroFailure> {
        None
    }
}

impl WorkerHealth for NesMachine {}
impl WorkerHealth for ProgramView {}
impl WorkerHealth for anes_retro_host::nes_view::NesView {}
impl WorkerHealth for RetroWorkerMachine {
    fn worker_failure(&self) -> Option<RetroFailure> {
        self.failure()
    }
}

/// A worker that failed during a run, as summaries report it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct WorkerFailed {
    /// Which worker: `A` or `B` (lockstep, shrink), `baseline` or `candidate` (canary).
    pub worker: &'static str,
    /// The core it ran.
    pub core: String,
    /// The frame it failed at (input-stream index: the frame it was running).
    pub frame: u64,
    /// The request it failed on (`frames`, `snapshot`, `restore`...).
    pub command: &'static str,
    /// `crashed`, `exited`, `hung`, `protocol` or `failed` (refused or answered wrongly).
    pub what: &'static str,
    /// The signal that ended it, when it crashed.
    pub signal: Option<i32>,
    /// Its exit status, when it exited.
    pub exit_status: Option<i32>,
    /// What happened, for people: `core crashed (signal 11, SIGSEGV) at frame 49`.
    pub message: String,
    /// The worker client's own words (the worker executable, the stream's end, the process's exit).
    pub detail: String,
}

impl WorkerFailed {
    /// `worker` of `core` failed as `failure` says.
    pub fn new(worker: &'static str, core: &str, failure: &RetroFailure) -> WorkerFailed {
        let (what, signal, exit_status) = match failure.end {
            Some(WorkerEnd::Signal(signal)) => ("crashed", Some(signal), None),
            Some(WorkerEnd::Exited(code)) => ("exited", None, Some(code)),
            Some(WorkerEnd::Hung(_)) => ("hung", None, None),
            Some(WorkerEnd::Protocol) => ("protocol", None, None),
            None => ("failed", None, None),
        };
        WorkerFailed {
            worker,
            core: core.to_owned(),
            frame: failure.frame,
            command: failure.command,
            what,
            signal,
            exit_status,
            message: failure.to_string(),
            detail: failure.error.to_string(),
        }
    }

    /// One line: `worker B (CORE.so): core crashed (signal 11, SIGSEGV) at frame 49`.
    pub fn line(&self) -> String {
        let who = match self.worker {
            "A" | "B" => format!("worker {}", self.worker),
            side => format!("the {side}'s worker"),
        };
        format!("{who} ({}): {}", self.core, self.message)
    }
}

/// The failures of machines `a` and `b` (named `names`, running `cores`), earliest frame first.
pub(crate) fn worker_failures(
    a: &impl WorkerHealth,
    b: &impl WorkerHealth,
    names: (&'static str, &'static str),
    cores: (&str, &str),
) -> Vec<WorkerFailed> {
    let mut failed: Vec<WorkerFailed> = [
        a.worker_failure().map(|f| WorkerFailed::new(names.0, cores.0, &f)),
        b.worker_failure().map(|f| WorkerFailed::new(names.1, cores.1, &f)),
    ]
    .into_iter()
    .flatten()
    .collect();
    failed.sort_by_key(|f| f.frame);
    failed
}

/// The ROM file named (its bytes and name for messages), or the bundled demo.
pub(crate) fn read_rom(path: Option<&Path>) -> anyhow::Result<(Vec<u8>, String)> {
    Ok(match path {
        Some(path) => (limited_read::read_limited(path, limited_read::ROM)?, path.display().to_string()),
        None => (DEMO_ROM.to_vec(), "the bundled demo ROM".to_string()),
    })
}

/// The input stream named, or the demo's own when the ROM is the bundled demo, or none.
pub(crate) fn read_inputs(path: Option<&Path>, rom_given: bool) -> anyhow::Result<InputStream> {
    read_inputs_with_region(path, rom_given).map(|(stream, _)| stream)
}

/// [`read_inputs`], and the region the input file asks for (an .fm2 movie's `palFlag 1`: PAL).
pub(crate) fn read_inputs_with_region(
    path: Option<&Path>,
    rom_given: bool,
) -> anyhow::Result<(InputStream, Option<Region>)> {
    Ok(match (path, rom_given) {
        (Some(path), _) => input_file::read_input_with_region(path)?,
        (None, false) => {
            (InputStream::from_bytes(DEMO_INPUT).context("the bundled demo input stream")?, None)
        }
        (None, true) => (InputStream::new(), None),
    })
}

/// How to build the two consoles of a run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PairSpec {
    /// Machine B's PPU schedule.
    pub ppu_b: Schedule,
    /// Machine B's APU schedule.
    pub apu_b: Schedule,
    /// Both consoles' region (`None`: the ROM header's).
    pub region: Option<Region>,
    /// Machine A's power-on profile.
    pub power_on: PowerOnProfile,
    /// Machine B's (`None`: A's).
    pub power_on_b: Option<PowerOnProfile>,
}

/// Machines A and B at power-on.
pub(crate) enum Pair {
    /// The same power-on: compared by their whole states.
    Same(NesMachine, NesMachine),
    /// Different power-on choices: compared by what their programs do.
    Views(ProgramView, ProgramView),
}

impl Pair {
    /// Machine A's console.
    pub fn nes_a(&self) -> &anes_core::Nes {
        match self {
            Pair::Same(a, _) => a.nes(),
            Pair::Views(a, _) => a.nes(),
        }
    }
}

/// Machines A and B at power-on as `spec` says; views when their power-on choices differ.
pub(crate) fn machine_pair(rom: &[u8], rom_name: &str, spec: PairSpec) -> anyhow::Result<Pair> {
    let config_a = spec.power_on.config();
    let config_b = spec.power_on_b.unwrap_or(spec.power_on).config();
    let machine = NesMachine::from_ines_with_region(rom, config_a, spec.region)
        .with_context(|| rom_name.to_string())?;
    let mut machine_b = NesMachine::from_ines_with_region(rom, config_b, spec.region)
        .with_context(|| rom_name.to_string())?;
    machine_b.nes_mut().set_ppu_catch_up(spec.ppu_b.into());
    machine_b.nes_mut().set_apu_catch_up(spec.apu_b.into());
    Ok(if config_a == config_b {
        Pair::Same(machine, machine_b)
    } else {
        Pair::Views(ProgramView::new(machine), ProgramView::new(machine_b))
    })
}

pub fn main(args: &Args) -> anyhow::Result<ExitCode> {
    if let (Some(core), Some(content)) = (&args.libretro, &args.rom) {
        return libretro_main(args, core, content);
    }
    if let (Some(core), Some(rom)) = (&args.versus, &args.rom) {
        return versus_main(args, core, rom);
    }
    let (rom, rom_name) = read_rom(args.rom.as_deref())?;
    let (inputs, movie_region) = read_inputs_with_region(args.input.as_deref(), args.rom.is_some())?;
    let frames = args.frames.unwrap_or(if inputs.is_empty() { DEFAULT_FRAMES } else { inputs.len() as u64 });
    let faults = FaultPlan::parse(&args.inject).context("--inject")?;
    let evidence_dir = match &args.report {
        Some(dir) => EvidenceDir::given(dir.clone(), args.force)?,
        None => EvidenceDir::new_for(args.rom.as_deref()),
    };
    let spec = PairSpec {
        ppu_b: args.ppu_b,
        apu_b: args.apu_b,
        region: args.region.map(Region::from).or(movie_region),
        power_on: args.power_on,
        power_on_b: args.power_on_b,
    };
    let pair = machine_pair(&rom, &rom_name, spec)?;
    let region = pair.nes_a().region();
    let config = LockstepConfig {
        granularity: args.granularity,
        threading: if args.threads {
            Threading::Threaded { window: thread_window(args.granularity) }
        } else {
            Threading::SameThread
        },
        checkpoint_every: args.checkpoint_every,
        faults,
        ..LockstepConfig::default()
    };
    let run = Run { args, rom_name: &rom_name, inputs: &inputs, frames, region, evidence_dir, cores: None };
    match pair {
        Pair::Same(a, b) => run.finish(Lockstep::new(a, b, config).context("lockstep configuration")?),
        Pair::Views(a, b) => run.finish(Lockstep::new(a, b, config).context("lockstep configuration")?),
    }
}

/// Spawns a libretro worker (this executable, `worker --libretro`) for `core` and `content`.
pub(crate) fn spawn_retro(
    core: &Path,
    content: &Path,
    options: &[(String, String)],
    ignore_audio: bool,
) -> anyhow::Result<anes_ops::canary::RetroWorkerMachine> {
    spawn_retro_timed(core, content, options, ignore_audio, anes_ops::canary::DEFAULT_REPLY_TIMEOUT)
}

/// [`spawn_retro`], the worker counted as hung after `reply_timeout` without a reply.
pub(crate) fn spawn_retro_timed(
    core: &Path,
    content: &Path,
    options: &[(String, String)],
    ignore_audio: bool,
    reply_timeout: Duration,
) -> anyhow::Result<anes_ops::canary::RetroWorkerMachine> {
    let spec = anes_ops::canary::RetroWorkerSpec {
        program: std::env::current_exe().context("the path of this executable (the worker program)")?,
        core: core.to_owned(),
        content: content.to_owned(),
        options: options.to_vec(),
        reply_timeout,
        ignore_audio,
        nes_view: false,
    };
    Ok(anes_ops::canary::RetroWorkerMachine::spawn(&spec)?)
}

/// Frames the power-on phase is chosen over (at most): enough for programs to set up and draw.
const ALIGN_FRAMES: u64 = 300;

/// The anes console under the NES view, powered on in `phase`.
fn anes_view(rom: &[u8], rom_name: &str, phase: u8) -> anyhow::Result<anes_retro_host::nes_view::NesView> {
    // Profile `default` is phase 0; the others are the same power-on in phases 1-3.
    let profile = if phase == 0 { PowerOnProfile::default() } else { PowerOnProfile::Phase(phase) };
    let machine = NesMachine::from_ines_with_region(rom, profile.config(), None)
        .with_context(|| rom_name.to_string())?;
    Ok(anes_retro_host::nes_view::NesView::new(machine))
}

/// The NES core `core` in a worker under the NES view.
fn spawn_view(
    core: &Path,
    content: &Path,
    options: &[(String, String)],
    reply_timeout: Duration,
) -> anyhow::Result<anes_ops::canary::RetroWorkerMachine> {
    let spec = anes_ops::canary::RetroWorkerSpec {
        program: std::env::current_exe().context("the path of this executable (the worker program)")?,
        core: core.to_owned(),
        content: content.to_owned(),
        options: options.to_vec(),
        reply_timeout,
        ignore_audio: true,
        nes_view: true,
    };
    Ok(anes_ops::canary::RetroWorkerMachine::spawn(&spec)?)
}

/// For each phase 0-3, how many of the first `frames` frames agree with the other emulator's
/// (`other`, a worker of `core` just loaded) before the first that does not: the power-on phase is
/// the one that agrees longest.
fn phase_agreement(
    rom: &[u8],
    rom_name: &str,
    core: &Path,
    mut other: RetroWorkerMachine,
    inputs: &InputStream,
    frames: u64,
) -> anyhow::Result<[u64; 4]> {
    let mut records = vec![other.record()];
    for frame in 0..frames {
        records.push(other.run_frame(inputs.input(frame)));
    }
    if let Some(failure) = other.failure() {
        anyhow::bail!("{}: {failure}", core.display());
    }
    let mut agreed = [0; 4];
    for (phase, agreed) in (0u8..4).zip(agreed.iter_mut()) {
        let mut anes = anes_view(rom, rom_name, phase)?;
        if anes.record() != records[0] {
            continue;
        }
        for frame in 0..frames {
            if anes.run_frame(inputs.input(frame)) != records[frame as usize + 1] {
                break;
            }
            *agreed += 1;
        }
    }
    Ok(agreed)
}

/// `anes lockstep ROM --versus CORE`: the anes console against a libretro NES core.
fn versus_main(args: &Args, core: &Path, rom_path: &Path) -> anyhow::Result<ExitCode> {
    let (rom, rom_name) = read_rom(Some(rom_path))?;
    let reply_timeout = Duration::from_secs(args.reply_timeout);
    let (inputs, _) = read_inputs_with_region(args.input.as_deref(), true)?;
    let frames = args.frames.unwrap_or(if inputs.is_empty() { DEFAULT_FRAMES } else { inputs.len() as u64 });
    if args.granularity != Granularity::Frame {
        anyhow::bail!("--granularity {}: a libretro core runs whole frames only", args.granularity);
    }
    let faults = FaultPlan::parse(&args.inject).context("--inject")?;
    let evidence_dir = match &args.report {
        // Compared at the end, the bundle is the two pictures: checked (and with --force replaced)
        // as bundle files, before any frame runs.
        Some(dir) if args.at_end => EvidenceDir::given_with(dir.clone(), args.force, &VERSUS_END_PICTURES)?,
        Some(dir) => EvidenceDir::given(dir.clone(), args.force)?,
        None => EvidenceDir::new_for(Some(rom_path)),
    };
    let (phase, agreed) = match args.phase.0 {
        Some(phase) => (phase, None),
        None => {
            let other = spawn_view(core, rom_path, &args.options, reply_timeout)?;
            let agreed = phase_agreement(&rom, &rom_name, core, other, &inputs, frames.min(ALIGN_FRAMES))?;
            // The first of the longest: ties go to the lowest phase.
            let best = (0..4).fold(0, |best, p| if agreed[p] > agreed[best] { p } else { best });
            (best as u8, Some(agreed))
        }
    };
    if !args.json {
        match agreed {
            Some(agreed) => println!(
                "phase             {phase} (frames agreeing from power-on, phases 0-3: {})",
                agreed.map(|n| n.to_string()).join(", ")
            ),
            None => println!("phase             {phase} (--phase)"),
        }
    }
    let mut a = anes_view(&rom, &rom_name, phase)?;
    let mut b = spawn_view(core, rom_path, &args.options, reply_timeout)?;
    // The machines are paired after their first frame: a replay from a checkpoint must not start
    // at power-on, where Nestopia, loaded from the state it serialized before its first
    // `retro_run`, draws another first frame (docs/LIBRETRO.md, its audit); a difference in frame
    // 0 is then reported as one at the pairing.
    if frames > 0 {
        a.run_frame(inputs.input(0));
        b.run_frame(inputs.input(0));
    }
    if args.at_end {
        let evidence = || evidence_dir.prepare();
        let report = crate::versus_end::run(&mut a, &mut b, &inputs, frames, evidence, args.json)?;
        if let Some(failure) = b.failure() {
            anyhow::bail!("{}: {failure}", core.display());
        }
        return Ok(if report.agrees() { ExitCode::SUCCESS } else { ExitCode::from(EXIT_DIVERGED) });
    }
    let config =
        LockstepConfig { checkpoint_every: args.checkpoint_every, faults, ..LockstepConfig::default() };
    let run = Run {
        args,
        rom_name: &rom_name,
        inputs: &inputs,
        frames: frames.saturating_sub(1),
        region: Region::Ntsc,
        evidence_dir,
        cores: Some((format!("anes (power-on phase {phase})"), core.display().to_string())),
    };
    let (code, diverged_at) =
        run.finish_at(Lockstep::new(a, b, config).context("lockstep configuration")?)?;
    if let (Some(frame), false) = (diverged_at, args.json) {
        // Is the difference only where each emulator's frame ends? Look for the other's RAM of that
        // frame among anes's instruction boundaries around it.
        let mut other = spawn_view(core, rom_path, &args.options, reply_timeout)?;
        for c in 1..=frame {
            other.run_frame(inputs.input(c - 1));
        }
        let other_ram = other.section_bytes(0).to_vec();
        if let Some(failure) = other.failure() {
            anyhow::bail!("{}: {failure}", core.display());
        }
        let profile = if phase == 0 { PowerOnProfile::default() } else { PowerOnProfile::Phase(phase) };
        let mut anes = NesMachine::from_ines_with_region(&rom, profile.config(), None)
            .with_context(|| rom_name.to_string())?;
        let found = crate::versus_end::sampling_offset(&mut anes, |f| inputs.input(f), frame, &other_ram);
        println!("sampling offset   {found}");
    }
    Ok(code)
}

/// `anes lockstep --libretro CORE CONTENT`: two workers, compared frame by frame.
fn libretro_main(args: &Args, core: &Path, content: &Path) -> anyhow::Result<ExitCode> {
    let (inputs, _) = read_inputs_with_region(args.input.as_deref(), true)?;
    let frames = args.frames.unwrap_or(if inputs.is_empty() { DEFAULT_FRAMES } else { inputs.len() as u64 });
    let faults = FaultPlan::parse(&args.inject).context("--inject")?;
    let evidence_dir = match &args.report {
        Some(dir) => EvidenceDir::given(dir.clone(), args.force)?,
        None => EvidenceDir::new_for(Some(content)),
    };
    let core_b = args.libretro_b.as_deref().unwrap_or(core);
    let options_b = if args.options_b.is_empty() { &args.options } else { &args.options_b };
    let reply_timeout = Duration::from_secs(args.reply_timeout);
    let a = spawn_retro_timed(core, content, &args.options, false, reply_timeout)?;
    let b = spawn_retro_timed(core_b, content, options_b, false, reply_timeout)?;
    if args.granularity != Granularity::Frame {
        anyhow::bail!("--granularity {}: a libretro core runs whole frames only", args.granularity);
    }
    let config =
        LockstepConfig { checkpoint_every: args.checkpoint_every, faults, ..LockstepConfig::default() };
    let content_name = content.display().to_string();
    let run = Run {
        args,
        rom_name: &content_name,
        inputs: &inputs,
        frames,
        region: Region::Ntsc,
        evidence_dir,
        cores: Some((core.display().to_string(), core_b.display().to_string())),
    };
    run.finish(Lockstep::new(a, b, config).context("lockstep configuration")?)
}

/// A run once its machines are paired.
struct Run<'a> {
    args: &'a Args,
    rom_name: &'a str,
    inputs: &'a InputStream,
    frames: u64,
    region: Region,
    evidence_dir: EvidenceDir,
    /// Libretro cores A and B, when the machines are libretro workers.
    cores: Option<(String, String)>,
}

impl Run<'_> {
    fn finish<A, B>(self, lockstep: Lockstep<A, B>) -> anyhow::Result<ExitCode>
    where
        A: Machine<Input = FrameInput> + Send + WorkerHealth,
        B: Machine<Input = FrameInput> + Send + WorkerHealth,
    {
        self.finish_at(lockstep).map(|(code, _)| code)
    }

    /// [`Run::finish`], and machine A's frame count at the divergence, if any.
    fn finish_at<A, B>(self, mut lockstep: Lockstep<A, B>) -> anyhow::Result<(ExitCode, Option<u64>)>
    where
        A: Machine<Input = FrameInput> + Send + WorkerHealth,
        B: Machine<Input = FrameInput> + Send + WorkerHealth,
    {
        let Run { args, rom_name, inputs, frames, region, evidence_dir, cores } = self;
        let bar =
            if args.json { indicatif::ProgressBar::hidden() } else { indicatif::ProgressBar::new(frames) };
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} frames verified, {elapsed} {msg}")
                .expect("valid template"),
        );
        let started = Instant::now();
        let mut on_progress = |p: Progress| {
            if p.frames_verified % 16 == 0 {
                bar.set_position(p.frames_verified);
                if args.threads {
                    bar.set_message(format!("(leading worker {} frames ahead)", p.drift_frames));
                }
            }
        };
        let outcome = lockstep.run_with(inputs, frames, &mut on_progress);
        let seconds = started.elapsed().as_secs_f64();
        bar.finish_and_clear();

        // A failed worker's records agree with nothing: the run stopped at the failure, which is
        // what it reports, not the "divergence" the comparator saw there.
        let failures = match &cores {
            Some((core_a, core_b)) => {
                worker_failures(lockstep.machine_a(), lockstep.machine_b(), ("A", "B"), (core_a, core_b))
            }
            None => Vec::new(),
        };
        let mut bundle = None;
        let diverged_at = match &outcome {
            RunOutcome::Diverged(divergence) if failures.is_empty() => Some(divergence.a.frame),
            _ => None,
        };
        if let (RunOutcome::Diverged(_), true) = (&outcome, failures.is_empty()) {
            let evidence = lockstep.evidence().expect("a divergence keeps its evidence");
            let dir = evidence_dir.prepare()?;
            // The error names the file and carries the OS error as its source: printed once.
            let page = evidence.write_bundle(&dir)?;
            bundle = Some((dir, page));
        }
        let summary = Summary {
            frames_verified: lockstep.frames_verified(),
            sync_points: lockstep.sync_points(),
            fps_per_instance: if seconds > 0.0 { lockstep.frames_verified() as f64 / seconds } else { 0.0 },
            final_state_hash: lockstep.last_verified_record().state_hash.to_string(),
            divergence: lockstep.evidence().filter(|_| bundle.is_some()).map(|e| e.report()),
            faults: lockstep.fault_fates(),
            evidence: bundle.as_ref().map(|(dir, _)| dir.display().to_string()),
        };
        let power_on_b = args.power_on_b.unwrap_or(args.power_on);
        let mut out = output::stdout();
        if args.json {
            let final_cpu_cycle = lockstep.last_verified_record().cpu_cycle;
            output::write_json(
                &mut out,
                &JsonSummary {
                    summary: &summary,
                    region: cores.is_none().then(|| region.name()),
                    final_cpu_cycle,
                    power_on: args.power_on.to_string(),
                    power_on_b: power_on_b.to_string(),
                    worker_failures: failures.clone(),
                },
            )?;
        } else {
            if let Some((core_a, core_b)) = &cores {
                writeln!(out, "content           {rom_name}")?;
                writeln!(out, "core A            {core_a}")?;
                writeln!(out, "core B            {core_b}")?;
            } else {
                writeln!(out, "rom               {rom_name}")?;
                writeln!(out, "region            {region}")?;
                writeln!(out, "power-on          {} ({})", args.power_on, args.power_on.config())?;
            }
            if cores.is_none() && power_on_b.config() != args.power_on.config() {
                writeln!(
                    out,
                    "power-on B        {power_on_b} ({}); compared by what the program does",
                    power_on_b.config()
                )?;
            }
            writeln!(out, "frames verified   {}", summary.frames_verified)?;
            writeln!(out, "sync points       {} ({} granularity)", summary.sync_points, args.granularity)?;
            writeln!(out, "speed             {:.0} frames/s per instance", summary.fps_per_instance)?;
            writeln!(out, "final state hash  {}", summary.final_state_hash)?;
            for fault in &summary.faults {
                writeln!(out, "fault             {}: {}", fault.spec, fault.fate)?;
            }
            for failed in &failures {
                writeln!(out, "FAILED            {}", failed.line())?;
            }
            match (&summary.divergence, &bundle) {
                _ if !failures.is_empty() => {}
                (Some(report), Some((_, page))) => {
                    writeln!(out, "DIVERGENCE        {}", report.message)?;
                    for field in &report.fields {
                        writeln!(out, "  {}: {} vs {}", field.name, field.a, field.b)?;
                    }
                    if report.fields_omitted > 0 {
                        writeln!(out, "  ... and {} more fields", report.fields_omitted)?;
                    }
                    writeln!(out, "evidence          {}", page.display())?;
                }
                _ => writeln!(out, "no divergence")?,
            }
        }
        out.flush()?;
        if !failures.is_empty() {
            for failed in &failures {
                eprintln!("error: {}", failed.line());
            }
            return Ok((ExitCode::from(EXIT_WORKER_FAILED), None));
        }
        if bundle.is_some() {
            return Ok((ExitCode::from(EXIT_DIVERGED), diverged_at));
        }
        // Without a divergence, a fault that was not applied leaves the run short of what was asked.
        let unapplied: Vec<_> = summary.faults.iter().filter(|f| !f.fate.was_applied()).collect();
        for fault in &unapplied {
            eprintln!("error: --inject {}: {}", fault.spec, fault.fate);
        }
        let code =
            if unapplied.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(EXIT_FAULT_NOT_APPLIED) };
        Ok((code, None))
    }
}
