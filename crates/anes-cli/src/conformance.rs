//! `anes conformance`: run a manifest's test ROMs, print one row per ROM and a closing
//! `N passed, M failed` line, optionally checked against a baseline.

use std::io::Write;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anes_conformance::{
    Baseline, BaselineReport, Manifest, RomEntry, RomResult, Summary, default_jobs, run_roms,
};
use anes_core::PowerOnProfile;
use anyhow::bail;
use serde::Serialize;

use crate::output;

/// `anes conformance --help`'s closing lines.
const AFTER_HELP: &str = "\
One row per ROM (status, expectation, result code, frames, path, the ROM's own text), then \
\"N passed, M failed\"; M counts the ROMs the manifest expects to pass that did not.

Exit status: 0 every ROM expected to pass passed (with --baseline: no baseline ROM regressed); 1 one \
did not; 2 bad input (a malformed manifest or baseline, a filter matching nothing).

Examples:
  # The public test ROM suites (kept in ../shared/conformance beside the repository), one suite
  anes conformance --manifest ../shared/conformance/manifest.toml --filter ppu_vbl_nmi
  # As JSON: one object with a row per ROM
  anes conformance --manifest ../shared/conformance/manifest.toml --filter cpu_interrupts_v2 --json
  # The whole manifest against the ROMs known to pass: fails only on a regression, lists new passes
  anes conformance --manifest ../shared/conformance/manifest.toml --baseline tests/conformance-baseline.txt --jobs 2";

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// The manifest (TOML, at most 1 MiB); ROM paths in it are relative to it, ROMs at most 16 MiB.
    #[arg(long)]
    manifest: PathBuf,
    /// Run only ROMs whose path contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// ROMs run in parallel [default: available parallelism].
    #[arg(long)]
    jobs: Option<NonZeroUsize>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// ROMs that must pass (one manifest path per line, `#` comments). With it, the exit status is 1
    /// only if one of them did not pass, and passing ROMs missing from it are listed.
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// The power-on profile of every ROM whose manifest entry names none (a `power_on` key wins):
    /// default, vblank-set, warm-up, quick-power-cycle, console-palette, ram-ff, phase-1..3 or
    /// random:SEED. The baseline is the default's.
    #[arg(long, value_name = "PROFILE", default_value = "default")]
    power_on: PowerOnProfile,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    results: &'a [RomResult],
    passed: usize,
    failed: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline: Option<JsonBaseline>,
}

#[derive(Serialize)]
struct JsonBaseline {
    regressed: Vec<String>,
    not_run: Vec<String>,
    new_passes: Vec<String>,
}

pub fn main(args: &Args) -> anyhow::Result<ExitCode> {
    let manifest = Manifest::load(&args.manifest)?;
    let baseline = match &args.baseline {
        Some(path) => {
            let baseline = Baseline::load(path)?;
            baseline.check_against(&manifest)?;
            Some(baseline)
        }
        None => None,
    };
    if manifest.roms.is_empty() {
        bail!("{}: the manifest lists no [[rom]] tables", args.manifest.display());
    }
    let roms: Vec<RomEntry> = manifest
        .select(args.filter.as_deref())
        .into_iter()
        .map(|rom| RomEntry { power_on: Some(rom.power_on.unwrap_or(args.power_on)), ..rom.clone() })
        .collect();
    let roms: Vec<&RomEntry> = roms.iter().collect();
    if roms.is_empty() {
        bail!(
            "{}: no ROM path contains {:?}",
            args.manifest.display(),
            args.filter.as_deref().unwrap_or_default()
        );
    }
    let progress = output::progress_bar(roms.len() as u64, args.json);
    let jobs = args.jobs.unwrap_or_else(default_jobs);
    let started = Instant::now();
    let results = run_roms(&roms, jobs, &|result| {
        progress.set_message(result.path.clone());
        progress.inc(1);
    });
    progress.finish_and_clear();

    let summary = Summary::of(&results);
    let report = baseline.as_ref().map(|baseline| baseline.compare(&results));
    let mut out = output::stdout();
    if args.json {
        let baseline = report.as_ref().map(|report| JsonBaseline {
            regressed: report.regressed.iter().map(|r| r.path.clone()).collect(),
            not_run: report.not_run.clone(),
            new_passes: report.new_passes.clone(),
        });
        let json = JsonReport { results: &results, passed: summary.passed, failed: summary.failed, baseline };
        output::write_json(&mut out, &json)?;
    } else {
        write_table(&mut out, &results)?;
        if let (Some(baseline), Some(report)) = (&baseline, &report) {
            write_baseline(&mut out, baseline, report)?;
        }
        write_timing(&mut out, &results, jobs, started.elapsed())?;
        writeln!(out, "{summary}")?;
    }
    out.flush()?;
    let failed = match &report {
        Some(report) => !report.regressed.is_empty(),
        None => summary.failed > 0,
    };
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn write_table(out: &mut impl Write, results: &[RomResult]) -> anyhow::Result<()> {
    let width = results.iter().map(|r| r.path.len()).max().unwrap_or(0);
    writeln!(out, "{:<7} {:<6} {:>4} {:>6}  {:<width$}  TEXT", "STATUS", "EXPECT", "CODE", "FRAMES", "PATH")?;
    for result in results {
        let code = result.code.map_or_else(|| "-".to_owned(), |code| format!("${code:02X}"));
        writeln!(
            out,
            "{:<7} {:<6} {:>4} {:>6}  {:<width$}  {}",
            result.status.to_string(),
            result.expected.to_string(),
            code,
            result.frames,
            result.path,
            truncate(&one_line(&result.text), TEXT_WIDTH_MAX),
        )?;
        write_subtests(out, result)?;
    }
    Ok(())
}

/// One line per test of a ROM that holds many (AccuracyCoin), under the ROM's row: status, number,
/// name, the ROM's code with what it means, and the start frames where it failed.
fn write_subtests(out: &mut impl Write, result: &RomResult) -> anyhow::Result<()> {
    for test in &result.subtests {
        let mut line =
            format!("  {:<7} #{:<3} {}", test.status.to_string(), test.index, one_line(&test.name));
        if let Some(code) = test.code_label() {
            let kind = if test.status == anes_conformance::Status::Pass { "success" } else { "error" };
            line.push_str(&format!(" [{kind} {code}]"));
        }
        if !test.failed_at.is_empty() && test.failed_at.len() < result.start_points.len() {
            let frames: Vec<String> = test.failed_at.iter().map(u64::to_string).collect();
            line.push_str(&format!(" at start frames {}", frames.join(",")));
        }
        if !test.meaning.is_empty() {
            line.push_str(&format!(": {}", test.meaning));
        }
        writeln!(out, "{}", truncate(&line, TEXT_WIDTH_MAX))?;
    }
    Ok(())
}

/// Where the time went, to keep CI within budget as the core gets slower and the manifest longer.
fn write_timing(
    out: &mut impl Write,
    results: &[RomResult],
    jobs: NonZeroUsize,
    elapsed: Duration,
) -> anyhow::Result<()> {
    let frames: u64 = results.iter().map(|r| r.frames).sum();
    write!(
        out,
        "ran {} ROMs ({frames} frames) in {:.1} s with {jobs} jobs",
        results.len(),
        elapsed.as_secs_f64()
    )?;
    if let Some(slowest) = results.iter().max_by_key(|r| r.wall_time) {
        write!(out, "; slowest {} ({:.1} s)", slowest.path, slowest.wall_time.as_secs_f64())?;
    }
    writeln!(out)?;
    Ok(())
}

fn write_baseline(out: &mut impl Write, baseline: &Baseline, report: &BaselineReport) -> anyhow::Result<()> {
    let file = baseline.path.display();
    for result in &report.regressed {
        writeln!(
            out,
            "REGRESSED (in {file}): {} is {}: {}",
            result.path,
            result.status,
            one_line(&result.text)
        )?;
    }
    for rom in &report.not_run {
        writeln!(out, "not run (filtered out), in {file}: {rom}")?;
    }
    for rom in &report.new_passes {
        writeln!(out, "passes but is not in {file} yet: {rom}")?;
    }
    writeln!(
        out,
        "baseline {file}: {} ROMs and {} test lists, {} regressed, {} not run, {} new passes",
        baseline.roms.len(),
        baseline.tests.len(),
        report.regressed.len(),
        report.not_run.len(),
        report.new_passes.len()
    )?;
    Ok(())
}

/// Characters of a ROM's text shown in a table row (`--json` has all of it).
const TEXT_WIDTH_MAX: usize = 160;

/// `text` cut to `max` characters, marked with "..." when cut.
fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The ROM's text on one line: lines joined with " | ", runs of spaces collapsed.
fn one_line(text: &str) -> String {
    text.lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" | ")
}

#[cfg(test)]
mod tests {
    use super::{one_line, truncate, write_subtests};
    use anes_conformance::{Expected, RomResult, StartPoint, Status, SubTest};

    #[test]
    fn subtests_are_listed_under_their_rom() {
        let test = |index, status, code, meaning: &str, failed_at: Vec<u64>| SubTest {
            index,
            page: 1,
            name: format!("Test   {index}"),
            status,
            code,
            meaning: meaning.into(),
            failed_at,
        };
        let point = |start_frame| StartPoint {
            start_frame,
            status: Status::Fail,
            passed: 1,
            total: 3,
            frames: 0,
            text: String::new(),
        };
        let result = RomResult {
            path: "ac.nes".into(),
            suite: String::new(),
            protocol: "accuracycoin".into(),
            expected: Expected::Pass,
            status: Status::Fail,
            code: None,
            text: String::new(),
            frames: 0,
            wall_time: std::time::Duration::ZERO,
            subtests: vec![
                test(1, Status::Pass, Some(1), "Like a G.", vec![]),
                test(2, Status::Fail, Some(11), "Too late.", vec![40]),
                test(3, Status::Fail, None, "", vec![40, 41]),
            ],
            start_points: vec![point(40), point(41)],
        };
        let mut out = Vec::new();
        write_subtests(&mut out, &result).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "  pass    #1   Test 1 [success 1]: Like a G.\n\
             \x20 fail    #2   Test 2 [error B] at start frames 40: Too late.\n\
             \x20 fail    #3   Test 3\n"
        );
    }

    #[test]
    fn text_is_shown_on_one_bounded_line() {
        assert_eq!(one_line("  Failed #2 \n\n  while   running\n"), "Failed #2 | while running");
        assert_eq!(truncate("abcdef", 3), "abc...");
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("\u{e9}\u{e9}\u{e9}\u{e9}", 2), "\u{e9}\u{e9}...");
    }
}
