//! `anes dlq inspect PATH [--json]`: what a dead-letter queue file holds, read without changing it.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::output;

/// `anes dlq --help`'s closing lines.
pub const EXAMPLES: &str = "\
Examples:
  # A queue file as earlier versions wrote it (a test fixture): five records and a torn tail
  anes dlq inspect crates/anes-cli/tests/fixtures/queue.adlq";

#[derive(Debug, clap::Subcommand)]
pub enum DlqCommand {
    /// Shows a dead-letter queue (`<data_dir>/<id>/dlq/queue.adlq`): its records, damage, a torn tail.
    #[command(after_help = "\
Examples:
  # A queue file as earlier versions wrote it (a test fixture): five records and a torn tail
  anes dlq inspect crates/anes-cli/tests/fixtures/queue.adlq
  anes dlq inspect crates/anes-cli/tests/fixtures/queue.adlq --json
  # Where an earlier version kept pipeline demo's queue
  anes dlq inspect anes-data/demo/dlq/queue.adlq")]
    Inspect {
        /// The queue file.
        path: PathBuf,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Records listed in the text form (all of them are in the JSON).
const SHOWN: usize = 20;

pub fn main(command: &DlqCommand) -> anyhow::Result<ExitCode> {
    let DlqCommand::Inspect { path, json } = command;
    let queue = anes_ops::dlq::inspect(path)?;
    let mut out = output::stdout();
    if *json {
        output::write_json(&mut out, &queue)?;
    } else {
        writeln!(out, "file        {} ({} bytes)", queue.path, queue.file_bytes)?;
        writeln!(out, "pipeline    {}", queue.pipeline_id)?;
        writeln!(out, "records     {}", queue.records.len())?;
        if let (Some(first), Some(last)) = (queue.records.first(), queue.records.last()) {
            writeln!(
                out,
                "sequence    {} to {}{}",
                first.seq,
                last.seq,
                if queue.contiguous { "" } else { " (with gaps)" }
            )?;
        }
        writeln!(out, "torn tail   {} bytes (cut off at the next start)", queue.torn_tail_bytes)?;
        writeln!(out, "damage      {}", queue.damage.len())?;
        for d in &queue.damage {
            writeln!(out, "  at offset {}, {} bytes: {}", d.offset, d.len, d.reason)?;
        }
        for r in queue.records.iter().take(SHOWN) {
            writeln!(
                out,
                "  seq {:>10}  port1 {:#04x}  port2 {:#04x}  command {}",
                r.seq, r.pads[0], r.pads[1], r.command
            )?;
        }
        if queue.records.len() > SHOWN {
            writeln!(out, "  ... {} more (--json lists them all)", queue.records.len() - SHOWN)?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
