//! `anes movie`: input-stream tools.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anes_core::movie::Command;

use crate::input_file::{read_input, write_atomically};
use crate::output;

#[derive(Debug, clap::Subcommand)]
pub enum MovieCommand {
    /// Converts an FCEUX .fm2 movie (or an anes input stream) into anes's binary input-stream format.
    Convert {
        /// The movie to read (.fm2 text, or anes binary; at most 64 MiB).
        input: PathBuf,
        /// Where to write the anes input stream.
        output: PathBuf,
    },
    /// Prints what an input stream holds: frames, resets, button activity.
    Info {
        /// The input stream or .fm2 movie (at most 64 MiB).
        input: PathBuf,
    },
}

pub fn main(command: &MovieCommand) -> anyhow::Result<ExitCode> {
    match command {
        MovieCommand::Convert { input, output: destination } => {
            let stream = read_input(input)?;
            write_atomically(destination, &stream.to_bytes())?;
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
        MovieCommand::Info { input } => {
            let stream = read_input(input)?;
            // Counted run by run: a valid stream may hold billions of frames.
            let (mut soft_resets, mut power_cycles, mut active) = (0, 0, [0; 2]);
            for run in stream.runs() {
                match run.input.command {
                    Command::SoftReset => soft_resets += run.len,
                    Command::PowerCycle => power_cycles += run.len,
                    Command::None => {}
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
