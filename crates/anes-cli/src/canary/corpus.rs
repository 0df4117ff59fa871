//! `anes canary --corpus MANIFEST`: many (ROM, input) pairs, each a canary run, in parallel on the
//! available cores, shardable across machines (`--shard K/N`), with a summary table and JUnit XML.
//!
//! The manifest (TOML), paths relative to it:
//!
//! ```toml
//! [[case]]
//! rom = "roms/demo/demo.nes"
//! input = "roms/demo/demo.input"              # optional
//! frames = 5000                               # optional: the input's length, or 600
//! baseline_log = "tests/golden/demo.records"  # optional: compared with this log unless --baseline
//! name = "demo"                               # optional: the ROM's file name
//! region = "pal"                              # optional: ntsc, pal or dendy (default: --region, else the header's)
//!
//! [[conformance]]                             # every ROM of a conformance manifest, no input
//! manifest = "../../shared/conformance/manifest.toml"   # ANES_CONFORMANCE_DIR overrides its folder
//! frames = 600                                # at most; a ROM's frame budget if smaller
//! ```
//!
//! A conformance ROM runs in the region its manifest row names.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anes_core::Region;
use anes_core::movie::InputStream;
use anes_lockstep::markup::escape;
use anes_ops::canary::{Baseline, CanaryConfig, CanaryOutcome, CanaryStatus, run_canary};
use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use super::{Args, EXIT_DIVERGED, Summary};
use crate::evidence_dir::EvidenceDir;
use crate::{input_file, limited_read, output};

/// Frames a case without an input or a `frames` value runs.
const DEFAULT_FRAMES: u64 = 600;

/// `--shard K/N`: the K-th of N shards (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard, 1..=N.
    pub index: usize,
    /// Shards in all.
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Shard, String> {
        let (k, n) = text.split_once('/').ok_or_else(|| format!("{text:?} is not K/N (e.g. 2/4)"))?;
        let (index, count): (usize, usize) = match (k.trim().parse(), n.trim().parse()) {
            (Ok(k), Ok(n)) => (k, n),
            _ => return Err(format!("{text:?} is not K/N with whole numbers")),
        };
        if count == 0 || index == 0 || index > count {
            return Err(format!("shard {index} of {count}: K must be 1 to N"));
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// True when case number `i` (0-based, manifest order) belongs to this shard.
    pub fn holds(&self, i: usize) -> bool {
        i % self.count == self.index - 1
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestFile {
    #[serde(default)]
    case: Vec<CaseEntry>,
    #[serde(default)]
    conformance: Vec<ConformanceEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseEntry {
    rom: PathBuf,
    input: Option<PathBuf>,
    frames: Option<u64>,
    baseline_log: Option<PathBuf>,
    name: Option<String>,
    region: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConformanceEntry {
    manifest: PathBuf,
    frames: u64,
}

/// One case, resolved.
#[derive(Debug, Clone)]
struct Case {
    name: String,
    rom: PathBuf,
    input: Option<PathBuf>,
    frames: Option<u64>,
    baseline_log: Option<PathBuf>,
    /// `None`: `--region`, else the ROM header's.
    region: Option<Region>,
}

/// How one case ended.
#[derive(Debug, Serialize)]
struct CaseResult {
    name: String,
    /// `same`, `diverged`, `worker_failed` or `error` (the case could not run: bad file).
    result: &'static str,
    seconds: f64,
    summary: Option<Summary>,
    error: Option<String>,
}

/// The JSON object of a corpus run.
#[derive(Debug, Serialize)]
struct CorpusSummary {
    shard: Option<String>,
    cases: Vec<CaseResult>,
    same: usize,
    diverged: usize,
    failed: usize,
    errors: usize,
    seconds: f64,
}

fn load_manifest(path: &Path) -> anyhow::Result<Vec<Case>> {
    let bytes = limited_read::read_limited(path, limited_read::CORPUS)?;
    let text = String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{}: not UTF-8 text", path.display()))?;
    let file: ManifestFile = toml::from_str(&text).map_err(|e| {
        anyhow::anyhow!("{}: {}", path.display(), e.to_string().lines().collect::<Vec<_>>().join(" "))
    })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut cases = Vec::new();
    for entry in file.case {
        let rom = dir.join(&entry.rom);
        let name = entry.name.unwrap_or_else(|| entry.rom.display().to_string());
        let region = match entry.region.as_deref() {
            None => None,
            Some(text) => Some(Region::from_name(text).with_context(|| {
                format!("{}: case {name}: region {text:?} is not ntsc, pal or dendy", path.display())
            })?),
        };
        cases.push(Case {
            name,
            rom,
            input: entry.input.map(|p| dir.join(p)),
            frames: entry.frames,
            baseline_log: entry.baseline_log.map(|p| dir.join(p)),
            region,
        });
    }
    for entry in file.conformance {
        let manifest = match std::env::var_os("ANES_CONFORMANCE_DIR") {
            Some(folder) => PathBuf::from(folder).join("manifest.toml"),
            None => dir.join(&entry.manifest),
        };
        let conformance = anes_conformance::Manifest::load(&manifest)
            .with_context(|| format!("{}: [[conformance]] manifest", path.display()))?;
        for rom in &conformance.roms {
            let region = Region::from_name(&rom.region).with_context(|| {
                format!(
                    "{}: {}: region {:?} is not ntsc, pal or dendy",
                    manifest.display(),
                    rom.path,
                    rom.region
                )
            })?;
            cases.push(Case {
                name: rom.path.clone(),
                rom: rom.file.clone(),
                input: None,
                // A trace protocol's ROM (nestest) has no frame budget: it runs the corpus's frames.
                frames: Some(if rom.frame_budget == 0 {
                    entry.frames
                } else {
                    entry.frames.min(rom.frame_budget)
                }),
                baseline_log: None,
                region: Some(region),
            });
        }
    }
    if cases.is_empty() {
        bail!("{}: no [[case]] and no [[conformance]] entries", path.display());
    }
    Ok(cases)
}

pub fn main(args: &Args, manifest: &Path, candidate: &Path) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.junit {
        // Refused before the cases run, not after them.
        anes_fs::check_output(path)?;
    }
    let all = load_manifest(manifest)?;
    let total = all.len();
    let cases: Vec<Case> = all
        .into_iter()
        .enumerate()
        .filter(|(i, _)| args.shard.is_none_or(|s| s.holds(*i)))
        .map(|(_, c)| c)
        .collect();
    if let (Some(shard), true) = (args.shard, cases.is_empty()) {
        // An empty shard would pass while comparing nothing: more shards than cases is a mistake.
        bail!(
            "{}: shard {}/{} holds no case ({total} cases in all): nothing to compare",
            manifest.display(),
            shard.index,
            shard.count
        );
    }
    if args.baseline.is_none() {
        if let Some(case) = cases.iter().find(|c| c.baseline_log.is_none()) {
            bail!(
                "{}: case {} has no baseline_log, and no --baseline build was given",
                manifest.display(),
                case.name
            );
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = args.jobs.unwrap_or(cores).max(1).min(cases.len().max(1));
    let bar = output::progress_bar(cases.len() as u64, args.json);
    bar.set_message(format!("cases ({jobs} at once)"));
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<CaseResult>>> = Mutex::new((0..cases.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { return };
                    let result = run_case(args, case, candidate);
                    results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(result);
                    bar.inc(1);
                }
            });
        }
    });
    bar.finish_and_clear();
    let cases: Vec<CaseResult> = results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|r| r.expect("every case ran"))
        .collect();
    let count = |r: &str| cases.iter().filter(|c| c.result == r).count();
    let summary = CorpusSummary {
        shard: args.shard.map(|s| format!("{}/{}", s.index, s.count)),
        same: count("same"),
        diverged: count("diverged"),
        failed: count("worker_failed"),
        errors: count("error"),
        seconds: started.elapsed().as_secs_f64(),
        cases,
    };
    if let Some(path) = &args.junit {
        anes_fs::write_output(path, junit_xml(&summary).as_bytes())?;
    }
    let mut out = output::stdout();
    if args.json {
        output::write_json(&mut out, &summary)?;
    } else {
        for case in &summary.cases {
            let detail = match (&case.summary, &case.error) {
                (Some(s), _) => match &s.divergence {
                    Some(d) => d.failure.clone().unwrap_or_else(|| {
                        let at = d.frame.map_or("at power-on".to_string(), |f| format!("frame {f}"));
                        format!("{} {at}: {}", d.kind, d.epochs.describe())
                    }),
                    None => format!("{} frames", s.frames_agreed),
                },
                (None, Some(e)) => e.clone(),
                (None, None) => String::new(),
            };
            writeln!(out, "{:<13} {:>7.1}s  {:<60} {detail}", case.result, case.seconds, case.name)?;
        }
        writeln!(
            out,
            "{} cases{}: {} same, {} diverged, {} failed, {} errors in {:.1} s with {jobs} jobs",
            summary.cases.len(),
            summary.shard.as_ref().map_or(String::new(), |s| format!(" (shard {s})")),
            summary.same,
            summary.diverged,
            summary.failed,
            summary.errors,
            summary.seconds
        )?;
    }
    out.flush()?;
    Ok(if summary.same == summary.cases.len() { ExitCode::SUCCESS } else { ExitCode::from(EXIT_DIVERGED) })
}

fn run_case(args: &Args, case: &Case, candidate: &Path) -> CaseResult {
    let started = Instant::now();
    let outcome = (|| -> anyhow::Result<(Summary, &'static str)> {
        let rom = limited_read::read_limited(&case.rom, limited_read::ROM)?;
        let (inputs, movie_region) = match &case.input {
            Some(path) => input_file::read_input_with_region(path)?,
            None => (InputStream::new(), None),
        };
        let log = match (&args.baseline, &case.baseline_log) {
            (None, Some(path)) => super::read_log(Some(path))?,
            _ => None,
        };
        let frames =
            case.frames.unwrap_or(if inputs.is_empty() { DEFAULT_FRAMES } else { inputs.len() as u64 });
        let baseline = match (&args.baseline, &log, &case.baseline_log) {
            (Some(program), _, _) => Baseline::Build(program),
            (None, Some(log), Some(path)) => {
                super::check_log_covers(path, log, frames)?;
                Baseline::Log(log)
            }
            _ => bail!("no baseline"),
        };
        let mut config = CanaryConfig::new(rom, inputs, frames);
        config.checkpoint_every = args.checkpoint_every;
        config.localize = !args.no_localize;
        config.reply_timeout = std::time::Duration::from_secs(args.reply_timeout);
        config.region = case.region.or(args.region.map(Into::into)).or(movie_region);
        let status = CanaryStatus::new(&case.name);
        let report = run_canary(&config, baseline, candidate, &status, &mut |_| {})?;
        let seconds = started.elapsed().as_secs_f64();
        let mut bundle = None;
        if let CanaryOutcome::Diverged(d) = &report.outcome {
            if let Some(evidence) = &d.evidence {
                let dir = EvidenceDir::new_for(Some(&case.rom)).prepare()?;
                evidence.write_bundle(&dir)?;
                bundle = Some(dir);
            }
        }
        let mut summary = Summary::of(&report, &case.name, frames, seconds, bundle.as_deref());
        if let (true, Some(dir), Baseline::Build(baseline)) = (args.shrink, &bundle, baseline) {
            let rom_file = case.rom.file_name().map_or("rom.nes".into(), |n| n.to_string_lossy());
            let repro = super::shrink_into(dir, &config, &report, baseline, candidate, &rom_file, true);
            summary.attach_repro(repro);
        }
        Ok((
            summary,
            match report.outcome {
                CanaryOutcome::Same => "same",
                CanaryOutcome::Diverged(_) => "diverged",
                CanaryOutcome::WorkerFailed { .. } => "worker_failed",
            },
        ))
    })();
    let seconds = started.elapsed().as_secs_f64();
    match outcome {
        Ok((summary, result)) => {
            CaseResult { name: case.name.clone(), result, seconds, summary: Some(summary), error: None }
        }
        Err(e) => CaseResult {
            name: case.name.clone(),
            result: "error",
            seconds,
            summary: None,
            error: Some(format!("{e:#}").split_whitespace().collect::<Vec<_>>().join(" ")),
        },
    }
}

/// The results as JUnit XML: one test suite, one test case per corpus case; a difference or a failed
/// worker is a `<failure>`, a case that could not run an `<error>`.
fn junit_xml(summary: &CorpusSummary) -> String {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let failures = summary.diverged + summary.failed;
    xml.push_str(&format!(
        "<testsuites name=\"anes canary\" tests=\"{}\" failures=\"{failures}\" errors=\"{}\" time=\"{:.3}\">\n",
        summary.cases.len(),
        summary.errors,
        summary.seconds
    ));
    xml.push_str(&format!(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{}\" skipped=\"0\" time=\"{:.3}\">\n",
        escape(&format!("anes canary{}", summary.shard.as_ref().map_or(String::new(), |s| format!(" shard {s}")))),
        summary.cases.len(),
        summary.errors,
        summary.seconds
    ));
    for case in &summary.cases {
        xml.push_str(&format!(
            "    <testcase classname=\"anes.canary\" name=\"{}\" time=\"{:.3}\"",
            escape(&case.name),
            case.seconds
        ));
        match (case.result, &case.summary, &case.error) {
            ("same", _, _) => xml.push_str("/>\n"),
            ("error", _, error) => {
                let message = error.as_deref().unwrap_or("the case could not run");
                xml.push_str(&format!(
                    ">\n      <error message=\"{}\"/>\n    </testcase>\n",
                    escape(message)
                ));
            }
            (_, Some(s), _) => {
                let detail = serde_json::to_string_pretty(&s.divergence).unwrap_or_default();
                let mut message = s.divergence.as_ref().map_or(String::new(), |d| {
                    d.failure.clone().unwrap_or_else(|| {
                        let at = d.frame.map_or("at power-on".to_string(), |f| format!("in frame {f}"));
                        format!("{} {at}: {}", d.kind, d.epochs.describe())
                    })
                });
                if let Some(dir) = &s.repro {
                    message.push_str(&format!("; repro: {dir}"));
                }
                xml.push_str(&format!(
                    ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                    escape(&message),
                    case.result,
                    escape(&detail)
                ));
            }
            _ => xml.push_str("/>\n"),
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_the_cases_between_them() {
        let shards: Vec<Shard> = (1..=3).map(|k| format!("{k}/3").parse().unwrap()).collect();
        for i in 0..10 {
            assert_eq!(shards.iter().filter(|s| s.holds(i)).count(), 1, "case {i}");
        }
        assert!(shards[1].holds(1) && shards[1].holds(4));
        for bad in ["0/3", "4/3", "1/0", "x/2", "3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
