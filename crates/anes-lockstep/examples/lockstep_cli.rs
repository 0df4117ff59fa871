//! Stand-in for `anes lockstep` until the `anes` command line lands beside this crate: the same
//! subcommand module, compiled as an example. `cargo run -p anes-lockstep --example lockstep_cli -- ROM`.

#[path = "cli/lockstep.rs"]
mod lockstep;

use std::process::ExitCode;

use clap::Parser;

#[derive(Debug, Parser)]
#[command(name = "anes-lockstep")]
struct Cli {
    #[command(flatten)]
    args: lockstep::Args,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match lockstep::main(&cli.args) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
