//! `anes serve`: the operations service (crate anes-ops). Without `--config`, one pipeline `demo`
//! replays the bundled demo ROM's input stream in a loop at real-time speed, on 127.0.0.1:9650.
//!
//! Exit status: 0 after SIGTERM or SIGINT (intake stopped, final verified checkpoints taken); 2 for a
//! bad configuration or when the service cannot start.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anes_core::movie::InputStream;
use anes_ops::assign::Replica;
use anes_ops::config::Config;
use anes_ops::service::{ServiceOptions, read_token, run_service};
use anyhow::Context;

use crate::bundled::{DEMO_INPUT, DEMO_ROM};
use crate::output;

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// For people.
    Human,
    /// One JSON object per line.
    Json,
}

/// `anes serve --help`'s closing lines.
const AFTER_HELP: &str = "\
Exit status: 0 after SIGTERM or SIGINT (intake stopped, final verified checkpoints taken); 2 a bad \
configuration, or the service could not start.

Examples:
  # Pipeline demo on the bundled demo ROM: the status page on http://127.0.0.1:9650/, /metrics
  anes serve
  # The example configuration's pipelines, their journals and checkpoints in anes-data/, on a port
  # of the system's choice (the log names it)
  anes serve --config deploy/anes.toml --data-dir anes-data --listen 127.0.0.1:0
  # With the token that mutating endpoints (the Alertmanager webhook, drills) require, logs as JSON
  anes serve --config deploy/anes.toml --token-file /etc/anes/token --drill --log-format json";

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// TOML configuration (documented in deploy/anes.toml). Without it: one pipeline `demo` on the
    /// bundled demo ROM, its input looping at real-time speed, on 127.0.0.1:9650.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address to listen on (overrides server.listen).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// File whose first line is the bearer token for mutating endpoints (else ANES_TOKEN).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Enable POST /v1/pipelines/{id}/drill (fault injection into one worker).
    #[arg(long)]
    drill: bool,
    /// Directory for evidence bundles (overrides server.evidence_dir).
    #[arg(long, value_name = "DIR")]
    evidence_dir: Option<PathBuf>,
    /// Directory for the final checkpoints written at shutdown (overrides server.state_dir).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Directory of the pipelines' durable state: journal, dead-letter queue and (filesystem store)
    /// checkpoints (overrides server.data_dir; default anes-data beside the configuration file, or in
    /// the working directory without one).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Log format on stderr.
    #[arg(long, value_enum, default_value_t = LogFormat::Human)]
    log_format: LogFormat,
    /// Run only this replica's share of the configured pipelines: replica ORDINAL (0-based) of COUNT,
    /// by the rule of anes_ops::assign (rendezvous hashing of the pipeline ids), e.g. 1/3.
    #[arg(long, value_name = "ORDINAL/COUNT", conflicts_with = "replica_from_hostname")]
    replica: Option<String>,
    /// As --replica, with the ordinal taken from this host's name, a StatefulSet pod's
    /// (anes-coordinator-2 is ordinal 2), among COUNT replicas (the StatefulSet's replicas).
    #[arg(long, value_name = "COUNT")]
    replica_from_hostname: Option<u32>,
}

pub fn main(args: &Args) -> anyhow::Result<ExitCode> {
    let mut config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::demo(),
    };
    if let Some(listen) = args.listen {
        config.listen = listen;
    }
    if let Some(file) = &args.token_file {
        config.token_file = Some(file.clone());
    }
    if let Some(dir) = &args.evidence_dir {
        config.evidence_dir = dir.clone();
    }
    if let Some(dir) = &args.data_dir {
        config.data_dir = dir.clone();
    }
    if let Some(dir) = &args.state_dir {
        config.state_dir = Some(dir.clone());
    }
    init_logging(args.log_format);
    if let Some(replica) = replica(args)? {
        anes_ops::assign::keep_share(&mut config, replica);
    }
    let token = read_token(config.token_file.as_deref())?;
    let options = ServiceOptions {
        demo_rom: Arc::new(DEMO_ROM.to_vec()),
        demo_input: anes_ops::pipeline::stream_frames(
            &InputStream::from_bytes(DEMO_INPUT).context("the bundled demo input stream")?,
        )
        .into(),
        worker_program: std::env::current_exe().ok(),
        token,
    };
    let reports = run_service(config, options, args.drill)?;
    let mut out = output::stdout();
    output::write_json(&mut out, &serde_json::json!({ "pipelines": reports }))?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Largest host name file read (the kernel's limit is 64 bytes).
const MAX_HOSTNAME_FILE_LEN: u64 = 4 << 10;

fn replica(args: &Args) -> anyhow::Result<Option<Replica>> {
    if let Some(text) = &args.replica {
        return Ok(Some(Replica::parse(text)?));
    }
    let Some(count) = args.replica_from_hostname else {
        return Ok(None);
    };
    // The kernel's name for this UTS namespace: in a pod, the pod's name.
    let path = std::path::Path::new("/proc/sys/kernel/hostname");
    let hostname = anes_fs::read_text_capped(path, MAX_HOSTNAME_FILE_LEN, "host name")
        .map_err(|e| anyhow::anyhow!("--replica-from-hostname: {}: {}", path.display(), e.problem()))?;
    Ok(Some(Replica::from_hostname(hostname.trim(), count)?))
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("ANES_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let _ = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}
