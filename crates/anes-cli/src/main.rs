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
mod versus_end;
mod worker;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// anes, the NES lockstep harness: two consoles in lockstep, every divergence localized (lockstep,
/// shrink, canary, serve); conformance suites, headless runs and CPU traces.
#[derive(Debug, Parser)]
#[command(name = "anes", version, propagate_version = true, after_help = EXAMPLES)]
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
    /// Input-stream tools: convert FCEUX .fm2 movies to input streams and back, cut a window out of a
    /// stream or a serve journal, show what a stream holds.
    #[command(subcommand, after_help = movie::EXAMPLES)]
    Movie(movie::MovieCommand),
    /// Runs the operations service: dual-worker pipelines, /metrics, the Alertmanager webhook and
    /// automated rollback (default: pipeline `demo` on 127.0.0.1:9650).
    Serve(serve::Args),
    /// Journal tools: show what a pipeline's journal holds and misses; accept the loss of records that
    /// cannot be read.
    #[command(subcommand, after_help = journal::EXAMPLES)]
    Journal(journal::JournalCommand),
    /// Dead-letter queue files of earlier versions (the queue is journaled now): show what one holds.
    #[command(subcommand, after_help = dlq::EXAMPLES)]
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

/// `anes --help`'s closing lines. Every command's help ends with examples that run as written from the
/// repository's root (`tests/help_examples.rs` runs them).
const EXAMPLES: &str = "\
Exit status: 0 success; 1 a finding (a divergence, a failed conformance ROM, a program that depends on \
its power-on state); 2 bad input, reported as one line `error: <file>: <problem>`.

Examples:
  # The main job: the bundled demo ROM's 5,000-frame input stream on two consoles in lockstep
  anes lockstep
  # Every command's help ends with examples like these
  anes lockstep --help";

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

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::Cli;

    /// Each command's help text with its path (`["anes", "movie", "cut"]`), depth first.
    fn helps(command: &mut clap::Command, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
        path.push(command.get_name().to_string());
        out.push((path.clone(), command.render_help().to_string()));
        for sub in command.get_subcommands_mut().filter(|sub| sub.get_name() != "help") {
            helps(sub, path, out);
        }
        path.pop();
    }

    /// A help text's examples: the lines after its last `Examples:` line that start with `anes`. None
    /// when the text does not end with such a section.
    fn trailing_examples(help: &str) -> Option<Vec<Vec<String>>> {
        let (_, section) = help.rsplit_once("\nExamples:\n")?;
        let mut examples = Vec::new();
        for line in section.lines().map(str::trim).filter(|line| !line.is_empty()) {
            if line.starts_with("anes ") {
                examples.push(line.split_whitespace().map(str::to_string).collect());
            } else if !line.starts_with('#') {
                return None;
            }
        }
        (!examples.is_empty()).then_some(examples)
    }

    /// Every command's help ends with examples, and every example parses as written (the ones that
    /// can run, run in `tests/help_examples.rs`; this also covers those that need a server).
    #[test]
    fn every_help_ends_with_examples_that_parse() {
        let mut all = Vec::new();
        helps(&mut Cli::command(), &mut Vec::new(), &mut all);
        assert!(all.len() >= 20, "{} commands", all.len());
        for (path, help) in &all {
            let examples = trailing_examples(help)
                .unwrap_or_else(|| panic!("`{} --help` does not end with examples:\n{help}", path.join(" ")));
            for words in examples {
                // `anes lockstep --help` is an example too: clap answers it with the help.
                if let Err(err) = Cli::try_parse_from(&words)
                    && err.kind() != clap::error::ErrorKind::DisplayHelp
                {
                    panic!(
                        "`{} --help`'s example `{}` does not parse: {err}",
                        path.join(" "),
                        words.join(" ")
                    );
                }
            }
        }
    }

    #[test]
    fn the_first_line_of_the_help_names_the_main_job() {
        let help = Cli::command().render_help().to_string();
        assert!(help.lines().next().is_some_and(|line| line.contains("lockstep")), "{help}");
    }
}
