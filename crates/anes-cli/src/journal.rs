//! `anes journal inspect` and `anes journal accept-loss`: a pipeline's journal read without changing
//! it, and an operator's acceptance of acknowledged records that cannot be read.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anes_ops::config::{Config, PipelineConfig, StoreBackend};
use anes_ops::journal::{JournalContents, MARK_FILE};
use anyhow::{Context, bail};

use crate::bundled::DEMO_ROM;
use crate::output;

/// `anes journal --help`'s closing lines.
pub const EXAMPLES: &str = "\
Examples:
  # The journals of the example configuration's pipelines, kept in anes-data/ (stop it with Ctrl-C)
  anes serve --config deploy/anes.toml --data-dir anes-data
  # Then what pipeline p1's journal holds, and whether acknowledged records are missing
  anes journal inspect anes-data/p1/journal";

#[derive(Debug, clap::Subcommand)]
pub enum JournalCommand {
    /// Shows a pipeline's journal without changing it: the records it holds, its acknowledged mark,
    /// what cannot be read (damage, a write torn by a crash) and the acknowledged records that are
    /// missing. Exit status 1 when acknowledged records are missing.
    #[command(after_help = "\
Examples:
  # After anes serve --config deploy/anes.toml --data-dir anes-data ran: pipeline p1's journal
  anes journal inspect anes-data/p1/journal
  # The same, found through the configuration, as one JSON object
  anes journal inspect --config deploy/anes.toml --pipeline p1 --data-dir anes-data --json")]
    Inspect {
        /// A journal folder (`<data_dir>/<id>/journal`). With --config, leave it out.
        #[arg(required_unless_present = "config", conflicts_with = "config")]
        path: Option<PathBuf>,
        /// The service's configuration: read the journal of --pipeline where it keeps it (the data
        /// directory's, or the shared store's).
        #[arg(long, value_name = "FILE", requires = "pipeline")]
        config: Option<PathBuf>,
        /// The pipeline, with --config.
        #[arg(long, value_name = "ID")]
        pipeline: Option<String>,
        /// The data directory, with --config (overrides server.data_dir).
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Accepts the loss of acknowledged records that cannot be read, what `anes serve` refuses to
    /// start with ("records N..M are missing"): the pipeline is taken over like a start-up (its data
    /// directory's lock, a new store epoch, so a coordinator still running it is fenced) and the
    /// journal continues at the first missing record after the newest checkpoint. Producers resend
    /// from there. Restore the files from a backup instead when you can.
    #[command(after_help = "\
Exit status: 0 the loss was accepted, or nothing was missing (nothing changed); 2 bad input.

Examples:
  # After anes serve --config deploy/anes.toml --data-dir anes-data ran (nothing is missing there: it
  # says so and changes nothing)
  anes journal accept-loss --config deploy/anes.toml --pipeline p1 --data-dir anes-data")]
    AcceptLoss {
        /// The service's configuration.
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        /// The pipeline.
        #[arg(long, value_name = "ID")]
        pipeline: String,
        /// The data directory (overrides server.data_dir).
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn pipeline_config(
    config: &Path,
    pipeline: &str,
    data_dir: Option<&Path>,
) -> anyhow::Result<(Config, PipelineConfig)> {
    let mut loaded = Config::load(config)?;
    if let Some(dir) = data_dir {
        loaded.data_dir = dir.to_path_buf();
    }
    let source = if data_dir.is_some() { "--data-dir" } else { "server.data_dir" };
    anes_fs::folder_or_missing(&loaded.data_dir).map_err(|e| anyhow::anyhow!("{source} {e}"))?;
    let found = loaded.pipelines.iter().find(|p| p.settings.id == pipeline).cloned();
    let found = found.with_context(|| {
        format!(
            "{}: no pipeline {pipeline:?} (it has {})",
            config.display(),
            loaded.pipelines.iter().map(|p| p.settings.id.as_str()).collect::<Vec<_>>().join(", ")
        )
    })?;
    Ok((loaded, found))
}

/// A journal folder holds the acknowledged mark or a segment (`seg-*.ajnl`): anything else (a typo'd
/// path, an unrelated folder) would read as an empty journal with nothing missing, exit status 0.
fn check_journal_folder(path: &Path) -> anyhow::Result<()> {
    const HOLDS: &str = "a journal folder (<data_dir>/<pipeline>/journal) holds the acknowledged mark `acknowledged` and segments seg-<first record>.ajnl";
    let lost = || {
        let witness = anes_ops::journal::file::witness_path(path);
        match std::fs::symlink_metadata(&witness).is_ok() {
            true => format!(
                "; {} says a journal was kept here: it was lost (deleted, a volume not mounted). Restore it from a backup, or accept the loss with `anes journal accept-loss`",
                witness.display()
            ),
            false => String::new(),
        }
    };
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            bail!("{}: no such folder: {HOLDS}{}", path.display(), lost())
        }
        Err(e) => return Err(e).with_context(|| path.display().to_string()),
        Ok(meta) if !meta.is_dir() => bail!("{}: not a folder: {HOLDS}", path.display()),
        Ok(_) => {}
    }
    let entries = std::fs::read_dir(path).with_context(|| path.display().to_string())?;
    for entry in entries {
        let name = entry.with_context(|| path.display().to_string())?.file_name();
        let name = name.to_string_lossy();
        let segment = name.strip_prefix("seg-").and_then(|n| n.strip_suffix(".ajnl")).is_some();
        if segment || name == MARK_FILE {
            return Ok(());
        }
    }
    bail!("{}: not a journal, neither its mark nor a segment is there: {HOLDS}{}", path.display(), lost())
}

/// What `inspect` reports.
#[derive(serde::Serialize)]
struct Inspection<'a> {
    #[serde(flatten)]
    contents: &'a JournalContents,
    /// The records held: first and end.
    held: Option<(u64, u64)>,
    /// Acknowledged records that cannot be read.
    missing: Vec<anes_ops::journal::MissingRange>,
}

pub fn main(command: &JournalCommand) -> anyhow::Result<ExitCode> {
    match command {
        JournalCommand::Inspect { path, config, pipeline, data_dir, json } => {
            let contents = match (path, config, pipeline) {
                (Some(path), _, _) => {
                    check_journal_folder(path)?;
                    anes_ops::journal::read_journal(path)?
                }
                (None, Some(config), Some(pipeline)) => {
                    let (loaded, found) = pipeline_config(config, pipeline, data_dir.as_deref())?;
                    match anes_ops::recovery::open_journal_store(&found)? {
                        None => {
                            let path =
                                anes_ops::recovery::pipeline_dir(&loaded.data_dir, pipeline).join("journal");
                            check_journal_folder(&path)?;
                            anes_ops::journal::read_journal(&path)?
                        }
                        Some(mut store) => anes_ops::journal::read_shared(store.as_mut(), 0)?,
                    }
                }
                _ => anyhow::bail!("give a journal folder, or --config FILE --pipeline ID"),
            };
            let start = contents.start().unwrap_or(0);
            let missing = contents.acknowledged_end.map_or_else(Vec::new, |end| contents.missing(start, end));
            let inspection = Inspection {
                contents: &contents,
                held: contents.start().map(|s| (s, contents.end())),
                missing,
            };
            let mut out = output::stdout();
            if *json {
                output::write_json(&mut out, &inspection)?;
            } else {
                writeln!(out, "journal       {}", contents.source)?;
                writeln!(out, "places        {}", contents.places.len())?;
                for (name, first) in &contents.places {
                    writeln!(out, "  {name} (from {first})")?;
                }
                match inspection.held {
                    Some((first, end)) => writeln!(out, "records       {first}..{end}")?,
                    None => writeln!(out, "records       none")?,
                }
                match contents.acknowledged_end {
                    Some(end) => writeln!(out, "acknowledged  up to {end}")?,
                    None => {
                        writeln!(out, "acknowledged  unknown (no mark: a journal of an earlier version)")?
                    }
                }
                writeln!(out, "problems      {}", contents.problems.len())?;
                for p in &contents.problems {
                    writeln!(out, "  {p}")?;
                }
                writeln!(out, "missing       {}", inspection.missing.len())?;
                for m in &inspection.missing {
                    writeln!(out, "  {m}")?;
                }
            }
            out.flush()?;
            Ok(if inspection.missing.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        JournalCommand::AcceptLoss { config, pipeline, data_dir, json } => {
            let (loaded, found) = pipeline_config(config, pipeline, data_dir.as_deref())?;
            // The filesystem store's journal is in the pipeline's data directory: a typo'd --data-dir
            // would otherwise get a lock, a store epoch and a journal made up in a new folder. A shared
            // store holds the journal itself; the data directory only holds the lock then.
            if matches!(found.store.backend, StoreBackend::Filesystem(_)) {
                let dir = anes_ops::recovery::pipeline_dir(&loaded.data_dir, pipeline);
                if !dir.is_dir() {
                    bail!(
                        "{}: no such folder: pipeline {pipeline}'s data directory (<data_dir>/{pipeline}, with its journal/ and LOCK) is not there; check --data-dir or server.data_dir",
                        dir.display()
                    );
                }
            }
            let rom = match &found.rom {
                Some(path) => anes_fs::read_capped(path, anes_core::cart::MAX_ROM_FILE_LEN as u64, "ROM")?,
                None => DEMO_ROM.to_vec(),
            };
            let loss = anes_ops::recovery::accept_journal_loss(&found, &loaded.data_dir, &rom)?;
            let mut out = output::stdout();
            if *json {
                output::write_json(&mut out, &serde_json::json!({ "accepted_loss": loss }))?;
            } else {
                match &loss {
                    None => writeln!(
                        out,
                        "pipeline {pipeline}: no acknowledged record is missing; nothing changed"
                    )?,
                    Some(loss) => {
                        writeln!(out, "pipeline {pipeline}: journal {}", loss.journal)?;
                        for m in &loss.missing {
                            writeln!(out, "  given up: {m}")?;
                        }
                        if loss.acknowledged_before.is_none() {
                            writeln!(out, "  the acknowledged mark was missing or damaged: made again")?;
                        }
                        writeln!(
                            out,
                            "the journal continues at {} (the newest checkpoint is at {}): producers resend from {}",
                            loss.continues_at, loss.checkpoint_seq, loss.continues_at
                        )?;
                    }
                }
            }
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
