//! `anes worker`: one console driven over stdin and stdout by the worker protocol (crate anes-workers,
//! `worker::protocol`): what `anes serve` starts for pipelines with `workers = "process"`, and what a
//! canary of another build can be driven through.

use std::process::ExitCode;

use anes_workers::protocol::Encoding;
use anyhow::Context;

/// Encoding on the pipes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Protocol {
    /// Length-prefixed binary frames.
    Binary,
    /// One JSON object per line.
    JsonLines,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Encoding of commands (stdin) and replies (stdout).
    #[arg(long, value_enum, default_value_t = Protocol::Binary)]
    protocol: Protocol,
}

pub fn main(args: &Args) -> anyhow::Result<ExitCode> {
    let encoding = match args.protocol {
        Protocol::Binary => Encoding::Binary,
        Protocol::JsonLines => Encoding::JsonLines,
    };
    anes_workers::stdio::serve(encoding, std::io::stdin(), std::io::stdout().lock())
        .context("worker protocol")?;
    Ok(ExitCode::SUCCESS)
}
