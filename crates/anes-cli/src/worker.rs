//! `anes worker`: one console driven by the worker protocol (crate anes-workers, `protocol`): over
//! stdin and stdout, what `anes serve` starts for pipelines with `workers = "process"` and what a
//! canary of another build is driven through; or, with `--listen`, over TCP for a coordinator on
//! another machine (`workers = "remote"`).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anes_workers::protocol::Encoding;
use anes_workers::remote::listen::{ConnectionEvent, ListenSettings, serve_listener};
use anyhow::Context;

/// Encoding on the pipes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Protocol {
    /// Length-prefixed binary frames.
    Binary,
    /// One JSON object per line.
    JsonLines,
}

/// `anes worker --help`'s closing lines.
const AFTER_HELP: &str = "\
Exit status: 0 the coordinator shut the worker down or closed its input; 2 a broken protocol, or bad \
arguments.

Examples:
  # One console over stdin and stdout, one JSON object per line (it says hello and waits for commands)
  anes worker --protocol json-lines
  # A remote worker for a coordinator on another machine, over TLS ([pipeline.remote] in deploy/anes.toml)
  anes worker --listen 0.0.0.0:9651 --token-file /etc/anes/worker-token --tls-cert cert.pem --tls-key key.pem";

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// Encoding of commands (stdin) and replies (stdout).
    #[arg(long, value_enum, default_value_t = Protocol::Binary)]
    protocol: Protocol,
    /// Serve coordinators over TCP at HOST:PORT instead of stdin and stdout, one at a time, in the
    /// binary encoding (port 0: a free port; `listening on HOST:PORT` goes to stderr once bound).
    #[arg(long, value_name = "HOST:PORT", requires = "token_file", conflicts_with = "protocol")]
    listen: Option<String>,
    /// The file holding the token a coordinator must send first (with --listen).
    #[arg(long, value_name = "FILE", requires = "listen")]
    token_file: Option<PathBuf>,
    /// Seconds a coordinator may send nothing (no command, no heartbeat: it sends one every second)
    /// before its session is dropped and the worker is free for the next one (with --listen).
    #[arg(long, value_name = "SECONDS", requires = "listen", default_value_t = 4.0,
          value_parser = idle_timeout_seconds)]
    idle_timeout_seconds: f64,
    /// Serve over TLS with this PEM certificate chain (with --tls-key; the coordinator's
    /// `[pipeline.remote] tls_ca` must trust it). The token is still required inside TLS.
    #[arg(long, value_name = "FILE", requires_all = ["listen", "tls_key"])]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires_all = ["listen", "tls_cert"])]
    tls_key: Option<PathBuf>,
    /// Run this libretro core (a shared object) instead of the anes console, with --content; the
    /// parent's `load` must carry the content's bytes (or none). One core per process: cores keep
    /// their state in globals. What the core prints to stdout goes to stderr: the protocol is
    /// written to a descriptor of its own.
    #[arg(long, value_name = "CORE.so", requires = "content", conflicts_with = "listen")]
    libretro: Option<PathBuf>,
    /// The content file the libretro core loads (a ROM, a disc image).
    #[arg(long, value_name = "FILE", requires = "libretro")]
    content: Option<PathBuf>,
    /// A core option of the libretro core, KEY=VALUE (repeatable): one the core declares, with a
    /// value it lists; every other option keeps the core's default.
    #[arg(long = "option", value_name = "KEY=VALUE", requires = "libretro", value_parser = core_option)]
    options: Vec<(String, String)>,
    /// The folder answered to the core's GET_SYSTEM_DIRECTORY (BIOS files; default: an empty folder
    /// of the process's).
    #[arg(long, value_name = "DIR", requires = "libretro")]
    system_dir: Option<PathBuf>,
    /// Leave the audio out of each frame's hash (it stays in snapshots and diffs).
    #[arg(long, requires = "libretro")]
    ignore_audio: bool,
    /// Compare a NES core's frames by its 2 KiB of system RAM and its picture's colour classes
    /// only (the NES view of `anes lockstep --versus`), not by its whole state.
    #[arg(long, requires = "libretro")]
    nes_view: bool,
}

/// `KEY=VALUE`.
pub(crate) fn core_option(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => Err(format!("{text:?}: expected KEY=VALUE")),
    }
}

/// 2 to 3600 s: below two heartbeats a delayed one would end a live session.
fn idle_timeout_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if (2.0..=3600.0).contains(&s) => Ok(s),
        _ => Err(format!("{text:?}: use 2 to 3600 seconds")),
    }
}

pub fn main(args: &Args) -> anyhow::Result<ExitCode> {
    if let (Some(address), Some(token_file)) = (&args.listen, &args.token_file) {
        let tls = match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => {
                Some(anes_workers::remote::tls::server_config(cert, key).context("--tls-cert/--tls-key")?)
            }
            _ => None,
        };
        return listen(address, token_file, tls, Duration::from_secs_f64(args.idle_timeout_seconds));
    }
    let encoding = match args.protocol {
        Protocol::Binary => Encoding::Binary,
        Protocol::JsonLines => Encoding::JsonLines,
    };
    match (&args.libretro, &args.content) {
        (Some(core), Some(content)) => {
            // The core shares this process's stdout: the protocol moves to a descriptor of its own
            // before the core is loaded, and what the core prints goes to stderr.
            let protocol_out =
                anes_retro_host::divert_stdout().context("moving the worker protocol off stdout")?;
            let setup = anes_workers::retro_engine::RetroSetup {
                core: core.clone(),
                content: content.clone(),
                config: anes_retro_host::HostConfig {
                    options: args.options.clone(),
                    system_dir: args.system_dir.clone(),
                    ..Default::default()
                },
                hash_audio: !args.ignore_audio,
                nes_view: args.nes_view,
            };
            let mut engine = anes_workers::retro_engine::RetroEngine::new(setup);
            anes_workers::stdio::serve_with(encoding, std::io::stdin(), protocol_out, &mut engine)
                .context("worker protocol")?;
        }
        _ => anes_workers::stdio::serve(encoding, std::io::stdin(), std::io::stdout().lock())
            .context("worker protocol")?,
    }
    Ok(ExitCode::SUCCESS)
}

fn listen(
    address: &str,
    token_file: &std::path::Path,
    tls: Option<std::sync::Arc<anes_workers::remote::tls::ServerConfig>>,
    idle_timeout: Duration,
) -> anyhow::Result<ExitCode> {
    let token = anes_workers::remote::read_token_file(token_file)
        .map_err(anyhow::Error::msg)
        .context("--token-file")?;
    let listener = TcpListener::bind(address).with_context(|| format!("--listen {address}"))?;
    let bound = listener.local_addr().context("the listening address")?;
    eprintln!("listening on {bound}");
    // The busy grace outlasts the idle timeout (the default's rule): a coordinator that restarted
    // after its predecessor vanished is served once the dead session is dropped.
    let settings = ListenSettings {
        idle_timeout,
        busy_grace: idle_timeout + Duration::from_secs(1),
        ..Default::default()
    };
    serve_listener(&listener, &token, tls, settings, |event| match event {
        ConnectionEvent::SessionStarted { peer } => eprintln!("coordinator {peer}: session started"),
        ConnectionEvent::SessionEnded { peer, error: None } => eprintln!("coordinator {peer}: session ended"),
        ConnectionEvent::SessionEnded { peer, error: Some(e) } => {
            eprintln!("coordinator {peer}: session ended: {e}")
        }
        ConnectionEvent::Refused { peer, reason, not_logged: 0 } => {
            eprintln!("connection from {peer} refused: {reason}")
        }
        ConnectionEvent::Refused { peer, reason, not_logged } => eprintln!(
            "connection from {peer} refused: {reason} ({not_logged} more refusals of its address not logged since the last)"
        ),
        ConnectionEvent::AcceptFailed { error, retry_in } => {
            eprintln!("accepting a connection failed: {error}; retrying in {} s", retry_in.as_secs_f64())
        }
    })
}
