//! `anes audit CORE CONTENT`: measures which `savestate_features` level a libretro core reaches on a
//! content over a run (`anes_retro_host::audit`: five checks, each instance in an `anes worker
//! --libretro` process of its own), prints one row per check with the first failure localized, and
//! compares the level reached with the core's `.info` claim.
//!
//! Exit status: 0 the core reaches what its `.info` claims (or more); 1 it claims more than it
//! reaches; 2 bad input (no core, no content, the core refuses it, a bad option).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anes_core::movie::FrameInput;
use anes_retro_host::audit::{AuditConfig, AuditReport, Check, CheckOutcome, audit};
use anes_retro_host::{CoreInfo, SavestateLevel};
use anyhow::Context;

use crate::{input_file, output};

/// Exit status when the core claims more than it reaches.
const EXIT_OVERCLAIMS: u8 = 1;

#[derive(Debug, clap::Args)]
#[command(after_help = "Exit status: 0 the core reaches the level its .info claims; 1 it claims more \
than it reaches; 2 bad input.

Examples:
  # Debian's Gambatte on a Game Boy test program (libretro-gambatte and libretro-core-info installed)
  anes audit /usr/lib/x86_64-linux-gnu/libretro/gambatte_libretro.so ../shared/libretro/gb/cpu_instrs/cpu_instrs.gb --frames 300
  # Nestopia, its audio left out of the comparison, as JSON
  anes audit /usr/lib/x86_64-linux-gnu/libretro/nestopia_libretro.so ../shared/conformance/roms/instr_test-v5/official_only.nes --ignore-audio --json")]
pub struct Args {
    /// The libretro core (a shared object).
    core: PathBuf,
    /// The content it loads.
    content: PathBuf,
    /// Frames each instance runs.
    #[arg(long, default_value_t = 600)]
    frames: u64,
    /// Input stream (an anes .input or an FCEUX .fm2): NES-style pads mapped to the RetroPad (A, B,
    /// Select, Start, the D-pad). Default: no buttons.
    #[arg(long)]
    input: Option<PathBuf>,
    /// Run-ahead window K: each window's frames are run three times from its first frame's state.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=60))]
    runahead: u64,
    /// The frame whose state a fresh instance loads (default: half of --frames).
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
}

pub fn main(args: &Args) -> anyhow::Result<ExitCode> {
    if !args.content.is_file() {
        anyhow::bail!("{}: no such content file", args.content.display());
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
    let config = AuditConfig { frames: args.frames, runahead: args.runahead, fresh_at: args.fresh_at };
    let report = audit(&mut make, &inputs, &config, &mut |check, frame| {
        let done = if check == Check::RunAhead { frame } else { args.frames + frame };
        bar.set_position(done);
        bar.set_message(format!("{}: frame {frame}", check.name()));
    })
    .map_err(|e| anyhow::anyhow!("{}: {e}", args.core.display()))?;
    bar.finish_and_clear();

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
            },
        )?;
    } else {
        write_table(&mut out, args, info_path.as_deref(), claim, &report, inputs.len())?;
    }
    out.flush()?;
    Ok(if overclaims { ExitCode::from(EXIT_OVERCLAIMS) } else { ExitCode::SUCCESS })
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
            let first = report.first_failure().map_or(String::new(), |c| {
                format!(": check {} ({}) fails", c.check.number(), c.check.name())
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
