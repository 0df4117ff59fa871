//! `anes`: the command line of the anes NES lockstep harness.
//!
//! Exit status: 0 success; 1 a conformance run failed (a ROM expected to pass did not, or a baseline ROM
//! regressed), two consoles diverged, or a swept program depends on its power-on state; 2 bad input
//! (missing or malformed file, bad ROM, bad arguments), reported as one line `error: <file>:
//! <problem>` on stderr.

mod audit;
mod bundled;
mod canary;
mod conformance;
mod dlq;
mod evidence_dir;
mod input_file;
mod journal;
mod limited_read;
mod lockstep;
mod movie;
mod output;
mod rom;
mod run;
mod serve;
mod shrink;
mod sweep;
mod trace;
mod worker;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Deterministic NES emulation: conformance runs, headless runs, CPU traces and input streams.
#[derive(Debug, Parser)]
#[command(name = "anes", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: AnesCommand,
}

#[derive(Debug, Subcommand)]
enum AnesCommand {
    /// Runs two consoles in lockstep over one input stream; localizes and keeps any divergence.
    Lockstep(lockstep::Args),
    /// Shrinks a divergence to a minimal repro: the fewest presses, buttons and console commands on
    /// which the two consoles still diverge the same way (repro.input, repro.fm2, report.json/html).
    Shrink(shrink::Args),
    /// Runs the test ROMs of a conformance manifest and reports one result per ROM.
    Conformance(conformance::Args),
    /// Runs a ROM under the default power-on state and others in lockstep and reports which end in
    /// another picture or RAM, each localized to where the program first ran differently: whether
    /// the program depends on its power-on state (exit status 1).
    Sweep(sweep::Args),
    /// Runs a ROM headless for some frames and prints where the machine stopped.
    Run(run::Args),
    /// Prints the CPU trace of a ROM in nestest.log's format.
    Trace(trace::Args),
    /// Input-stream tools: convert FCEUX .fm2 movies, show what a stream holds.
    #[command(subcommand)]
    Movie(movie::MovieCommand),
    /// Runs the operations service: dual-worker pipelines, /metrics, the Alertmanager webhook and
    /// automated rollback (default: pipeline `demo` on 127.0.0.1:9650).
    Serve(serve::Args),
    /// Journal tools: show what a pipeline's journal holds and misses; accept the loss of records that
    /// cannot be read.
    #[command(subcommand)]
    Journal(journal::JournalCommand),
    /// Dead-letter queue files of earlier versions (the queue is journaled now): show what one holds.
    #[command(subcommand)]
    Dlq(dlq::DlqCommand),
    /// One worker console speaking the worker protocol over stdin and stdout (started by `serve`), or
    /// over TCP with --listen (a remote worker).
    Worker(worker::Args),
    /// The canary gate: the baseline and the candidate build replay one input stream; the first
    /// differing frame stops the run and is localized to the instruction and the state field.
    Canary(canary::Args),
    /// Measures which savestate level a libretro core reaches (serialize twice, two instances,
    /// run-ahead, a fresh instance, constant size) against its .info claim (exit status 1 when it
    /// claims more), each failure localized to the frame, region and bytes.
    Audit(audit::Args),
}

/// Exit status for bad input.
const EXIT_BAD_INPUT: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        AnesCommand::Lockstep(args) => lockstep::main(&args),
        AnesCommand::Shrink(args) => shrink::main(&args),
        AnesCommand::Conformance(args) => conformance::main(&args),
        AnesCommand::Sweep(args) => sweep::main(&args),
        AnesCommand::Run(args) => run::main(&args),
        AnesCommand::Trace(args) => trace::main(&args),
        AnesCommand::Movie(command) => movie::main(&command),
        AnesCommand::Serve(args) => serve::main(&args),
        AnesCommand::Worker(args) => worker::main(&args),
        AnesCommand::Journal(command) => journal::main(&command),
        AnesCommand::Dlq(command) => dlq::main(&command),
        AnesCommand::Canary(args) => canary::main(&args),
        AnesCommand::Audit(args) => audit::main(&args),
    };
    match result {
        Ok(code) => code,
        // A closed pipe (`anes trace ... | head`) is the reader's choice, not an error.
        Err(err) if output::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {}", one_line(&format!("{err:#}")));
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

/// Error messages are one line, whatever the sources put in them.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
