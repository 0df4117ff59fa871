//! `anes audit CORE CONTENT`: measures which `savestate_features` level a libretro core reaches on a
//! content over a run (`anes_retro_host::audit`: five checks, each instance in an `anes worker
//! --libretro` process of its own), prints one row per check with the first failure localized, and
//! compares the level reached with the core's `.info` claim. `--shrink DIR` cuts the input of the
//! first failing check to the presses it needs (`anes_lockstep::minimize_stream`, each trial an
//! audit of that check alone from power-on) and writes the repro into DIR.
//!
//! Frames are counted from 1 in everything it prints, as in `anes_retro_host::audit`: frame N is the
//! N-th frame from power-on (0: power-on), the state of frame N the state after it, and a press on
//! frame N the input of the stream's N-th frame (index N-1 of the `.input`).
//!
//! Exit status: 0 the core reaches what its `.info` claims (or more); 1 it claims more than it
//! reaches; 2 no result: bad input (no core, no content, the core refuses it, a bad option) or an
//! instance that failed outright (its worker crashed, hung or broke the protocol).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anes_core::movie::FrameInput;
use anes_lockstep::ShrinkInput;
use anes_retro_host::audit::{AuditConfig, AuditError, AuditReport, Check, CheckOutcome, audit};
use anes_retro_host::{CoreInfo, SavestateLevel};
use anyhow::Context;

use crate::{input_file, output};

/// Exit status when the core claims more than it reaches.
const EXIT_OVERCLAIMS: u8 = 1;

#[derive(Debug, clap::Args)]
#[command(after_help = "Exit status: 0 the core reaches the level its .info claims; 1 it claims more \
than it reaches; 2 no result (bad input, or a worker that crashed, hung or broke the protocol). With --shrink, the repro of the first failing check is written too \
(its input shrunk as anes shrink does, every trial from power-on in fresh workers).

Examples:
  # Debian's Gambatte on a Game Boy test program (libretro-gambatte and libretro-core-info installed)
  anes audit /usr/lib/x86_64-linux-gnu/libretro/gambatte_libretro.so ../shared/libretro/gb/cpu_instrs/cpu_instrs.gb --frames 300
  # Nestopia, its audio left out of the comparison, as JSON
  anes audit /usr/lib/x86_64-linux-gnu/libretro/nestopia_libretro.so ../shared/conformance/roms/instr_test-v5/official_only.nes --ignore-audio --json
  # Nestopia over the demo's input; the input of its first failing check shrunk into nestopia-audit/
  anes audit /usr/lib/x86_64-linux-gnu/libretro/nestopia_libretro.so roms/demo/demo.nes --input roms/demo/demo.input --frames 120 --shrink nestopia-audit/")]
pub struct Args {
    /// The libretro core (a shared object).
    core: PathBuf,
    /// The content it loads.
    content: PathBuf,
    /// Frames each instance runs (at least --runahead: one whole run-ahead window).
    #[arg(long, default_value_t = 600)]
    frames: u64,
    /// Input stream (an anes .input or an FCEUX .fm2): NES-style pads mapped to the RetroPad (A, B,
    /// Select, Start, the D-pad). Default: no buttons.
    #[arg(long)]
    input: Option<PathBuf>,
    /// Run-ahead window K: each window's frames are run three times from its first frame's state.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=60))]
    runahead: u64,
    /// The frame whose state a fresh instance loads, before --frames so that frames run after the
    /// hand-over (default: half of --frames).
    #[arg(long, value_name = "FRAME")]
    fresh_at: Option<u64>,
    /// A core option, KEY=VALUE (repeatable).
    #[arg(long = "option", value_name = "KEY=VALUE", value_parser = crate::worker::core_option)]
    options: Vec<(String, String)>,
    /// Compare frames without their audio (it is still diffed where something else differs): tells
    /// a core whose emulation is deterministic but whose resampled sound is not (the number of
    /// samples a frame hands over depends on a buffer no state holds) from one that loses state.
    #[arg(long)]
    ignore_audio: bool,
    /// The core's .info file (default: beside the core, else /usr/share/libretro/info/).
    #[arg(long, value_name = "FILE")]
    info: Option<PathBuf>,
    /// Shrink --input to the fewest presses and buttons on which the first failing check still
    /// fails at the same frame (`anes shrink`'s passes; every trial replays from power-on in fresh
    /// worker processes, so a fault hidden outside the state counts), and write repro.input,
    /// repro.fm2 and report.json into DIR (created if missing; those files replaced).
    #[arg(long, value_name = "DIR", requires = "input")]
    shrink: Option<PathBuf>,
    /// With --shrink: the check (1-5) whose failure to shrink, instead of the first that failed.
    #[arg(long, value_name = "N", requires = "shrink", value_parser = clap::value_parser!(u8).range(1..=5))]
    shrink_check: Option<u8>,
    /// With --shrink: stop after this many seconds with the smallest input found so far.
    #[arg(long, value_name = "SECONDS", requires = "shrink")]
    budget: Option<f64>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(serde::Serialize)]
struct JsonAudit<'a> {
    core: String,
    content: String,
    info: Option<String>,
    claims: Option<SavestateLevel>,
    /// Frames were compared without their audio (`--ignore-audio`).
    ignore_audio: bool,
    #[serde(flatten)]
    report: &'a AuditReport,
    overclaims: bool,
    /// What `--shrink` found.
    #[serde(skip_serializing_if = "Option::is_none")]
    shrink: Option<&'a AuditShrink>,
}

/// A failing check's input, shrunk (`--shrink`): written as `report.json`.
#[derive(Debug, serde::Serialize)]
struct AuditShrink {
    /// The check (1-5) and its name.
    check: u8,
    check_name: &'static str,
    /// The frame it fails at, with the input given and with the repro.
    frame: u64,
    /// What that check compared.
    what: String,
    given: anes_lockstep::StreamJson,
    repro: anes_lockstep::StreamJson,
    /// The presses left, frame by frame: each `frame` counted from 1 as every frame of the audit (the
    /// repro's input-stream index plus 1).
    presses: Vec<anes_lockstep::PressJson>,
    /// No press, button or command left can go without the check passing (not stopped early).
    one_minimal: bool,
    /// `time` when --budget stopped the search first.
    stopped_by: Option<&'static str>,
    /// Audits run after the first (each from power-on).
    trials: u64,
    /// The command that shows the failure on the repro.
    replay: String,
    /// Where repro.input, repro.fm2 and report.json are.
    out: String,
}

pub fn main(args: &Args) -> anyhow::Result<ExitCode> {
    let config = audit_config(args);
    // Before anything else: a run too short for a check to measure anything has no verdict to give.
    config.check()?;
    check_content(&args.content)?;
    // Before the audit, so a file where the folder goes is refused now, not after minutes of it.
    if let Some(dir) = &args.shrink {
        check_shrink_folder(dir)?;
    }
    let info_path = args.info.clone().or_else(|| anes_retro_host::info::info_path_for(&args.core));
    let claim = match &info_path {
        Some(path) => {
            let info = CoreInfo::load(path)?;
            Some(info.savestate_claim().map_err(|word| {
                anyhow::anyhow!(
                    "{}: savestate_features = {word:?} is not null, basic, serialized or deterministic",
                    path.display()
                )
            })?)
        }
        None => None,
    };
    let inputs: Vec<FrameInput> = match &args.input {
        Some(path) => {
            let stream = input_file::read_input_with_region(path)?.0;
            (0..stream.len().min(args.frames as usize)).map(|n| stream.frame(n)).collect()
        }
        None => Vec::new(),
    };
    // The first instance is made here, so a core or content the worker refuses is bad input (2).
    let mut first = Some(
        crate::lockstep::spawn_retro(&args.core, &args.content, &args.options, args.ignore_audio)
            .with_context(|| format!("{}", args.core.display()))?,
    );
    let mut make = || match first.take() {
        Some(machine) => Ok(machine),
        None => crate::lockstep::spawn_retro(&args.core, &args.content, &args.options, args.ignore_audio)
            .map_err(|e| format!("{e:#}")),
    };
    let bar = if args.json {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(args.frames * 2)
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {msg} {elapsed}").expect("valid template"),
    );
    let report = audit(&mut make, &inputs, &config, &mut |check, frame| {
        let done = if check == Check::RunAhead { frame } else { args.frames + frame };
        bar.set_position(done);
        bar.set_message(format!("{}: frame {frame}", check.name()));
    })
    .map_err(|e| match e {
        // It names the core.
        AuditError::Failed { .. } | AuditError::Config(_) => anyhow::anyhow!("{e}"),
        AuditError::Make { .. } => anyhow::anyhow!("{}: {e}", args.core.display()),
    })?;
    bar.finish_and_clear();

    let shrunk = match &args.shrink {
        Some(dir) => shrink_failure(args, dir, &inputs, &report)?,
        None => None,
    };
    let overclaims = claim.is_some_and(|claim| claim > report.reached);
    let mut out = output::stdout();
    if args.json {
        output::write_json(
            &mut out,
            &JsonAudit {
                core: args.core.display().to_string(),
                content: args.content.display().to_string(),
                info: info_path.as_ref().map(|p| p.display().to_string()),
                claims: claim,
                ignore_audio: args.ignore_audio,
                report: &report,
                overclaims,
                shrink: shrunk.as_ref(),
            },
        )?;
    } else {
        write_table(&mut out, args, info_path.as_deref(), claim, &report, inputs.len())?;
        match (&args.shrink, &shrunk) {
            (Some(_), Some(shrunk)) => write_shrunk(&mut out, shrunk)?,
            (Some(_), None) => match args.shrink_check {
                Some(n) => writeln!(out, "shrink    check {n} did not fail: nothing to shrink")?,
                None => writeln!(out, "shrink    no check failed: nothing to shrink")?,
            },
            (None, _) => {}
        }
    }
    out.flush()?;
    Ok(if overclaims { ExitCode::from(EXIT_OVERCLAIMS) } else { ExitCode::SUCCESS })
}

/// The audit `args` ask for.
fn audit_config(args: &Args) -> AuditConfig {
    AuditConfig { frames: args.frames, runahead: args.runahead, fresh_at: args.fresh_at, only: None }
}

fn write_table(
    out: &mut impl Write,
    args: &Args,
    info: Option<&Path>,
    claim: Option<SavestateLevel>,
    report: &AuditReport,
    input_frames: usize,
) -> anyhow::Result<()> {
    writeln!(out, "core      {}", args.core.display())?;
    writeln!(out, "content   {}", args.content.display())?;
    let input = match &args.input {
        Some(path) => format!("{input_frames} frames of {}", path.display()),
        None => "no buttons".to_owned(),
    };
    writeln!(out, "frames    {} ({input}), run-ahead windows of {}", report.frames, args.runahead)?;
    if args.ignore_audio {
        writeln!(out, "compared  state, memory and picture (--ignore-audio)")?;
    }
    writeln!(out, "state     {} bytes", report.state_len)?;
    match (claim, info) {
        (Some(claim), Some(info)) => writeln!(out, "claims    {claim} ({})", info.display())?,
        _ => writeln!(out, "claims    nothing (no .info file found; --info FILE names one)")?,
    }
    writeln!(out)?;
    writeln!(out, "  check               needed for     result  measured")?;
    for outcome in &report.checks {
        write_row(out, outcome)?;
    }
    writeln!(out)?;
    writeln!(out, "reaches   {}", report.reached)?;
    if let Some(why) = &report.basic_failure {
        writeln!(out, "          ({why})")?;
    }
    match claim {
        Some(claim) if claim > report.reached => {
            // The first check the claim needs that did not pass.
            let first = report.first_short_of(claim).map_or(String::new(), |c| {
                let how = if c.passed == Some(false) { "fails" } else { "was not measured" };
                format!(": check {} ({}) {how}", c.check.number(), c.check.name())
            });
            writeln!(out, "verdict   the core claims {claim} and reaches {}{first}", report.reached)?
        }
        Some(claim) => writeln!(out, "verdict   the core reaches what it claims ({claim})")?,
        None => {}
    }
    Ok(())
}

fn write_row(out: &mut impl Write, outcome: &CheckOutcome) -> anyhow::Result<()> {
    let check = outcome.check;
    let result = match outcome.passed {
        Some(true) => "pass",
        Some(false) => "FAIL",
        None => "-",
    };
    writeln!(
        out,
        "  {} {:<18} {:<14} {:<7} {}",
        check.number(),
        check.name(),
        check.needed_for().name(),
        result,
        outcome.detail
    )?;
    if let Some(finding) = &outcome.finding {
        writeln!(out, "      first at frame {}: {}", finding.frame, finding.what)?;
        for region in &finding.regions {
            let bytes: Vec<String> = region
                .bytes
                .iter()
                .take(4)
                .map(|(at, a, b)| format!("[{at:#06x}] {a:02x} vs {b:02x}"))
                .collect();
            let len = if region.len.0 == region.len.1 {
                format!("{} bytes", region.len.0)
            } else {
                format!("{} vs {} bytes", region.len.0, region.len.1)
            };
            writeln!(
                out,
                "        {} ({len}): {} differ{}{}",
                region.region,
                region.differing,
                if bytes.is_empty() { String::new() } else { format!(", {}", bytes.join(", ")) },
                if region.differing > 4 { ", ..." } else { "" }
            )?;
        }
    }
    Ok(())
}

/// The content must be a regular file (a link to one counts): a folder, a device or a FIFO is named
/// for what it is, not reported missing.
fn check_content(content: &Path) -> anyhow::Result<()> {
    let name = content.display();
    match std::fs::metadata(content) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(meta) => anyhow::bail!(
            "{name}: is {}, not a regular file (the content is a file the core loads)",
            anes_fs::FileKind::of(meta.file_type())
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => anyhow::bail!("{name}: no such content file"),
        Err(e) => Err(e).with_context(|| format!("{name}: the content file")),
    }
}

/// `--shrink DIR` must be a folder or not exist yet (it is created with the folders above it).
fn check_shrink_folder(dir: &Path) -> anyhow::Result<()> {
    anes_fs::folder_or_missing(dir)
        .map_err(|e| anyhow::anyhow!("--shrink {e}; a folder is expected (made if missing)"))
}

/// `--shrink DIR`: the input of the first failing check shrunk to the fewest presses and buttons on
/// which that check still fails at the same frame, every trial an audit of that check alone from
/// power-on in fresh workers; the repro written into `dir`. `None` when no check failed.
fn shrink_failure(
    args: &Args,
    dir: &Path,
    inputs: &[FrameInput],
    report: &AuditReport,
) -> anyhow::Result<Option<AuditShrink>> {
    let chosen = match args.shrink_check {
        Some(n) => Some(&report.checks[usize::from(n) - 1]).filter(|c| c.passed == Some(false)),
        None => report.first_failure(),
    };
    let Some(failed) = chosen else { return Ok(None) };
    let Some(finding) = &failed.finding else { return Ok(None) };
    let (check, target) = (failed.check, finding.frame);
    let fresh_at = audit_config(args).fresh_at();
    // The failure at frame N is seen after the inputs of frames 1 to N, except in a run-ahead window,
    // whose first run takes all its frames' inputs before the replays: later ones cannot matter,
    // and no trial runs past them.
    let k = args.runahead.max(1);
    let cut = match check {
        Check::RunAhead => target.saturating_sub(1) / k * k + k,
        _ => target,
    }
    .min(args.frames);
    let stream: Vec<FrameInput> =
        (0..cut).map(|n| inputs.get(n as usize).copied().unwrap_or_default()).collect();
    let config = AuditConfig {
        frames: args.frames.min(cut.max(target) + 1),
        runahead: args.runahead,
        fresh_at: Some(fresh_at),
        only: Some(check),
    };
    let limits = anes_lockstep::StreamLimits {
        max_trials: None,
        budget: args
            .budget
            .map(|seconds| {
                std::time::Duration::try_from_secs_f64(seconds).map_err(|_| {
                    anyhow::anyhow!("--budget {seconds}: expected a number of seconds, 0 or more")
                })
            })
            .transpose()?,
    };
    let bar = output::progress_bar(0, args.json);
    let mut trials = 0u64;
    let mut fails_alike = |candidate: &[FrameInput]| -> Result<bool, String> {
        trials += 1;
        bar.set_message(format!("shrinking the input of check {}: trial {trials}", check.number()));
        let mut make = || {
            crate::lockstep::spawn_retro(&args.core, &args.content, &args.options, args.ignore_audio)
                .map_err(|e| format!("{e:#}"))
        };
        let found = audit(&mut make, candidate, &config, &mut |_, _| {}).map_err(|e| e.to_string())?;
        Ok(found.outcome(check).finding.as_ref().is_some_and(|f| f.frame == target))
    };
    let found = anes_lockstep::minimize_stream(&stream, limits, &mut fails_alike);
    bar.finish_and_clear();
    let found = match found {
        Ok(found) => found,
        Err(anes_lockstep::StreamHalt::NotReproduced) => anyhow::bail!(
            "{}: check {} ({}) failed at frame {target} in the audit but not when run alone from power-on: the core is not deterministic enough to shrink its input",
            args.core.display(),
            check.number(),
            check.name()
        ),
        Err(anes_lockstep::StreamHalt::Failed(e)) => anyhow::bail!("{}: {e}", args.core.display()),
    };
    let mut presses = Vec::new();
    // Counted from 1, as the failure's frame: the press of stream index i is held on frame i+1.
    for (frame, input) in (1u64..).zip(&found.repro) {
        for port in 0..2u8 {
            let buttons: Vec<String> = input
                .held_buttons()
                .into_iter()
                .filter(|(p, _)| *p == port)
                .map(|(p, bit)| FrameInput::button_name(p, bit))
                .collect();
            if !buttons.is_empty() {
                presses.push(anes_lockstep::PressJson { frame, port, buttons });
            }
        }
    }
    let mut replay = format!(
        "anes audit {} {} --input {} --frames {} --runahead {} --fresh-at {fresh_at}",
        args.core.display(),
        args.content.display(),
        dir.join("repro.input").display(),
        args.frames,
        args.runahead
    );
    for (key, value) in &args.options {
        replay.push_str(&format!(" --option {key}={value}"));
    }
    if args.ignore_audio {
        replay.push_str(" --ignore-audio");
    }
    let shrunk = AuditShrink {
        check: check.number(),
        check_name: check.name(),
        frame: target,
        what: finding.what.clone(),
        given: anes_lockstep::StreamJson { frames: stream.len() as u64, presses: found.original_presses },
        repro: anes_lockstep::StreamJson { frames: found.repro.len() as u64, presses: found.presses },
        presses,
        one_minimal: found.stopped_by.is_none(),
        stopped_by: found.stopped_by.map(anes_lockstep::Budget::name),
        trials: found.trials,
        replay,
        out: dir.display().to_string(),
    };
    // Checked again: it may have changed during the audit and the shrinking.
    check_shrink_folder(dir)?;
    std::fs::create_dir_all(dir).with_context(|| format!("--shrink {}", dir.display()))?;
    let repro = anes_core::movie::InputStream::from_frames(found.repro);
    let content_file = args.content.file_name().map_or("content".into(), |n| n.to_string_lossy());
    let json = serde_json::to_string_pretty(&shrunk).context("report.json")? + "\n";
    for (name, bytes) in [
        ("repro.input", repro.to_bytes()),
        ("repro.fm2", repro.to_fm2_of_region(&content_file, anes_core::Region::Ntsc).into_bytes()),
        ("report.json", json.into_bytes()),
    ] {
        anes_fs::write_output(&dir.join(name), &bytes)?;
    }
    Ok(Some(shrunk))
}

/// The `--shrink` lines under the table.
fn write_shrunk(out: &mut impl Write, shrunk: &AuditShrink) -> anyhow::Result<()> {
    let minimal = crate::shrink::minimality(shrunk.stopped_by);
    writeln!(
        out,
        "shrink    check {} ({}) still fails at frame {} with {} of the {} presses given ({minimal}, {} trials)",
        shrunk.check,
        shrunk.check_name,
        shrunk.frame,
        shrunk.repro.presses,
        shrunk.given.presses,
        shrunk.trials
    )?;
    if shrunk.repro.presses == 0 {
        writeln!(out, "          it needs no input: it fails with no button pressed")?;
    }
    for press in &shrunk.presses {
        writeln!(
            out,
            "            frame {:>7}  pad {}  {}",
            press.frame,
            press.port + 1,
            press.buttons.join(" + ")
        )?;
    }
    writeln!(out, "          repro written to {} (replay: {})", shrunk.out, shrunk.replay)?;
    Ok(())
}
