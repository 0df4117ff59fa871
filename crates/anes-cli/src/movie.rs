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
        /// The movie to read (.fm2 text, or anes binary).
        input: PathBuf,
        /// Where to write the anes input stream.
        output: PathBuf,
    },
    /// Prints what an input stream holds: frames, resets, button activity.
    Info {
        /// The input stream or .fm2 movie.
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
            let frames = stream.frames();
            let count = |c: Command| frames.iter().filter(|f| f.command == c).count();
            let pressed = |port: usize| frames.iter().filter(|f| f.pads[port] != 0).count();
            let mut out = output::stdout();
            writeln!(out, "frames         {}", frames.len())?;
            writeln!(out, "soft resets    {}", count(Command::SoftReset))?;
            writeln!(out, "power cycles   {}", count(Command::PowerCycle))?;
            writeln!(out, "port 1 active  {} frames", pressed(0))?;
            writeln!(out, "port 2 active  {} frames", pressed(1))?;
            out.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
