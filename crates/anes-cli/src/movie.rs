//! `anes movie`: input-stream tools.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anes_core::Region;
use anes_core::movie::{ConsoleCommand, InputStream};
use anyhow::Context;

use crate::input_file::{read_input, read_input_with_region};
use crate::output;
use crate::rom::RegionArg;

/// `anes movie --help`'s closing lines.
pub const EXAMPLES: &str = "\
Examples:
  # What the demo's input stream holds: frames, resets, button activity
  anes movie info roms/demo/demo.input
  # Export it as an FCEUX movie and convert that back
  anes movie fm2 roms/demo/demo.input demo.fm2 --rom-name demo.nes
  anes movie convert demo.fm2 demo.input
  # Its last 600 frames as a stream of their own
  anes movie cut roms/demo/demo.input last-600.input --last 600";

#[derive(Debug, clap::Subcommand)]
pub enum MovieCommand {
    /// Converts an FCEUX .fm2 movie (or an anes input stream) into anes's binary input-stream format.
    #[command(after_help = "\
Examples:
  anes movie fm2 roms/demo/demo.input demo.fm2
  anes movie convert demo.fm2 demo.input")]
    Convert {
        /// The movie to read (.fm2 text, or anes binary; at most 64 MiB).
        input: PathBuf,
        /// Where to write the anes input stream.
        output: PathBuf,
    },
    /// Exports an input stream (or an .fm2 movie) as an FCEUX .fm2 movie, `palFlag 1` for PAL.
    #[command(after_help = "\
Examples:
  anes movie fm2 roms/demo/demo.input demo.fm2 --rom-name demo.nes
  # A movie played on a PAL console (palFlag 1)
  anes movie fm2 roms/demo/demo.input demo-pal.fm2 --region pal")]
    Fm2 {
        /// The input stream or .fm2 movie to read (at most 64 MiB).
        input: PathBuf,
        /// Where to write the .fm2 movie.
        output: PathBuf,
        /// The ROM's file name for the movie's `romFilename` (default: the output's name with .nes).
        #[arg(long, value_name = "NAME")]
        rom_name: Option<String>,
        /// The region the movie was played in (default: the input movie's palFlag, else NTSC). Dendy
        /// is written as palFlag 0, as FCEUX writes it: replay it with --region dendy.
        #[arg(long, value_enum, value_name = "REGION")]
        region: Option<RegionArg>,
    },
    /// Cuts a window out of a journal directory (`<data_dir>/<id>/journal`) or an input stream, as a
    /// standalone input stream that `anes run --input` and `anes lockstep --input` accept.
    #[command(after_help = "\
Examples:
  # Frames 300-899 of the demo's input stream
  anes movie cut roms/demo/demo.input window.input --from 300 --frames 600
  # The last 300 records a pipeline journaled (after anes serve --config deploy/anes.toml --data-dir
  # anes-data ran), as traffic to replay with anes canary --input
  anes movie cut anes-data/p1/journal traffic.input --last 300")]
    Cut {
        /// A journal directory, or an input stream / .fm2 movie (sequence numbers are frame indexes).
        source: PathBuf,
        /// Where to write the window.
        output: PathBuf,
        /// First sequence number of the window (with --frames).
        #[arg(long, requires = "frames", conflicts_with = "last")]
        from: Option<u64>,
        /// Frames in the window (with --from).
        #[arg(long, requires = "from")]
        frames: Option<u64>,
        /// The last N records instead.
        #[arg(long, conflicts_with_all = ["from", "frames"])]
        last: Option<u64>,
    },
    /// Prints what an input stream holds: frames, resets, button activity.
    #[command(after_help = "\
Examples:
  anes movie info roms/demo/demo.input")]
    Info {
        /// The input stream or .fm2 movie (at most 64 MiB).
        input: PathBuf,
    },
}

/// What `movie cut` cuts from.
enum Records {
    Journal(anes_ops::journal::JournalContents),
    Stream(InputStream),
}

pub fn main(command: &MovieCommand) -> anyhow::Result<ExitCode> {
    match command {
        MovieCommand::Convert { input, output: destination } => {
            let stream = read_input(input)?;
            anes_fs::write_output(destination, &stream.to_bytes())?;
            let mut out = output::stdout();
            writeln!(
                out,
                "{}: {} frames written to {}",
                input.display(),
                stream.len(),
                destination.display()
            )?;
            out.flush()?;
        }
        MovieCommand::Fm2 { input, output: destination, rom_name, region } => {
            let (stream, movie_region) = read_input_with_region(input)?;
            let region = region.map(Region::from).or(movie_region).unwrap_or(Region::Ntsc);
            let rom_name = match rom_name {
                Some(name) => name.clone(),
                None => destination
                    .with_extension("nes")
                    .file_name()
                    .map_or_else(|| "game.nes".to_string(), |name| name.to_string_lossy().into_owned()),
            };
            // Streamed: the runs of a few KiB of input may declare 2^32 - 1 frames, some 99 GB of movie.
            anes_fs::write_output_with(destination, |out| {
                let mut text = crate::output::FmtToIo::new(out);
                let written = stream.write_fm2_of_region(&rom_name, region, &mut text);
                text.result(written)
            })?;
            let mut out = output::stdout();
            writeln!(
                out,
                "{}: {} frames written to {} ({region})",
                input.display(),
                stream.len(),
                destination.display()
            )?;
            out.flush()?;
        }
        MovieCommand::Cut { source, output: destination, from, frames, last } => {
            // Both kinds stay run-length encoded: a stream may declare 2^32 - 1 frames in 320 KiB.
            let records = if source.is_dir() {
                Records::Journal(
                    anes_ops::journal::read_journal(source)
                        .with_context(|| format!("{}: journal", source.display()))?,
                )
            } else {
                Records::Stream(read_input(source)?)
            };
            let (start, end) = match &records {
                // Up to the acknowledged mark: records it claims that cannot be read are refused below,
                // never answered with a shorter window.
                Records::Journal(journal) => {
                    (journal.start().unwrap_or(0), journal.end().max(journal.acknowledged_end.unwrap_or(0)))
                }
                Records::Stream(stream) => (0, stream.len() as u64),
            };
            let (from, count) = match (from, frames, last) {
                (Some(f), Some(n), None) => (*f, *n),
                (None, None, Some(n)) => (end.saturating_sub(*n), (*n).min(end - start)),
                _ => anyhow::bail!("{}: give --from SEQ --frames N, or --last N", source.display()),
            };
            if from < start || from.checked_add(count).is_none_or(|e| e > end) || count == 0 {
                anyhow::bail!(
                    "{}: records {from}..{} asked for, but it holds {start}..{end}",
                    source.display(),
                    from.saturating_add(count)
                );
            }
            let stream = match &records {
                Records::Journal(journal) => journal.window(from, count)?,
                // Within the stream's length, which fits in usize.
                Records::Stream(stream) => stream.slice(from as usize..(from + count) as usize),
            };
            anes_fs::write_output(destination, &stream.to_bytes())?;
            let mut out = output::stdout();
            writeln!(
                out,
                "{}: records {from}..{} ({count} frames) written to {}",
                source.display(),
                from + count,
                destination.display()
            )?;
            out.flush()?;
        }
        MovieCommand::Info { input } => {
            let stream = read_input(input)?;
            // Counted run by run: a valid stream may hold billions of frames.
            let (mut soft_resets, mut power_cycles, mut active) = (0, 0, [0; 2]);
            for run in stream.runs() {
                match run.input.command {
                    ConsoleCommand::SoftReset => soft_resets += run.len,
                    ConsoleCommand::PowerCycle => power_cycles += run.len,
                    ConsoleCommand::None => {}
                }
                for (port, frames) in active.iter_mut().enumerate() {
                    if run.input.pads[port] != 0 {
                        *frames += run.len;
                    }
                }
            }
            let mut out = output::stdout();
            writeln!(out, "frames         {}", stream.len())?;
            writeln!(out, "soft resets    {soft_resets}")?;
            writeln!(out, "power cycles   {power_cycles}")?;
            writeln!(out, "port 1 active  {} frames", active[0])?;
            writeln!(out, "port 2 active  {} frames", active[1])?;
            out.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
