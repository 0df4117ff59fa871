//! `anes serve`: the operations service (crate anes-ops). Without `--config`, one pipeline `demo`
//! replays the bundled demo ROM's input stream in a loop at real-time speed, on 127.0.0.1:9650.
//!
//! Exit status: 0 after SIGTERM or SIGINT (intake stopped, final verified checkpoints taken); 1 when a
//! final checkpoint could not be written to the state directory; 2 for a bad configuration or when the
//! service cannot start.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anes_core::movie::InputStream;
use anes_ops::assign::Replica;
use anes_ops::config::Config;
use anes_ops::service::{ServiceOptions, read_token, run_service};
use anyhow::{Context, bail};

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
Exit status: 0 after SIGTERM or SIGINT (intake stopped, final verified checkpoints taken); 1 stopped, \
but a final checkpoint could not be written to --state-dir (the log says why); 2 a bad configuration \
(a --state-dir that is not a folder too), or the service could not start.

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
    /// Directory for the final checkpoints written at shutdown, <id>.snap and <id>.json (overrides
    /// server.state_dir): a folder, or made then; anything else is refused at start.
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
    let data_dir_source = if args.data_dir.is_some() { "--data-dir" } else { "server.data_dir" };
    anes_fs::folder_or_missing(&config.data_dir).map_err(|e| anyhow::anyhow!("{data_dir_source} {e}"))?;
    init_logging(args.log_format);
    if let Some(replica) = replica(args)? {
        anes_ops::assign::keep_share(&mut config, replica);
    }
    let state_dir_source = if args.state_dir.is_some() { "--state-dir" } else { "server.state_dir" };
    if let Some(dir) = &config.state_dir {
        let ids: Vec<&str> = config.pipelines.iter().map(|p| p.settings.id.as_str()).collect();
        check_state_dir(dir, state_dir_source, &ids)?;
    }
    let state_dir = config.state_dir.clone();
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
    // A final checkpoint taken but not written is state the operator counted on: not a clean stop.
    let unwritten: Vec<&str> = reports
        .iter()
        .filter(|r| r.final_checkpoint_seq.is_some() && r.final_checkpoint_file.is_none())
        .map(|r| r.id.as_str())
        .collect();
    if let (Some(dir), false) = (&state_dir, unwritten.is_empty()) {
        eprintln!(
            "error: {state_dir_source} {}: the final checkpoint of pipeline {} could not be written (the log line \"writing the final checkpoint failed\" says why)",
            dir.display(),
            unwritten.join(", ")
        );
        return Ok(ExitCode::from(EXIT_CHECKPOINT_UNWRITTEN));
    }
    Ok(ExitCode::SUCCESS)
}

/// Exit status when the service stopped but a final checkpoint could not be written to the state
/// directory.
const EXIT_CHECKPOINT_UNWRITTEN: u8 = 1;

/// The final checkpoints are written into `dir` only at shutdown (`<id>.snap`, `<id>.json`, the
/// folder made then): checked at start, so a file, a FIFO or a folder that cannot be made there is
/// refused now rather than found out when the checkpoints are lost. Creates nothing.
fn check_state_dir(dir: &Path, source: &str, ids: &[&str]) -> anyhow::Result<()> {
    let shown = dir.display();
    let what = "the folder the final checkpoints <id>.snap and <id>.json are written into at shutdown";
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {
            for id in ids {
                for name in [format!("{id}.snap"), format!("{id}.json")] {
                    let path = dir.join(name);
                    if std::fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
                        bail!(
                            "{source} {shown}: {} is a folder, where pipeline {id}'s final checkpoint goes",
                            path.display()
                        );
                    }
                }
            }
            Ok(())
        }
        Ok(meta) => bail!(
            "{source} {shown}: exists and is not a folder ({}): it names {what}",
            anes_fs::FileKind::of(meta.file_type())
        ),
        // Not there, or a file in the way above it (ENOTDIR): whether it can be made tells.
        Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => {
            if std::fs::symlink_metadata(dir).is_ok() {
                bail!("{source} {shown}: a symbolic link to nothing: it names {what}");
            }
            // Made at shutdown: the nearest existing folder above must be a folder.
            let above = dir
                .ancestors()
                .skip(1)
                .map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p })
                .find(|p| std::fs::symlink_metadata(p).is_ok());
            match above.map(|p| (p, std::fs::metadata(p))) {
                Some((_, Ok(meta))) if meta.is_dir() => Ok(()),
                Some((p, _)) => bail!(
                    "{source} {shown}: cannot be made: {} is not a folder; it names {what}",
                    p.display()
                ),
                None => Ok(()),
            }
        }
        Err(e) => Err(e).with_context(|| format!("{source} {shown}")),
    }
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
