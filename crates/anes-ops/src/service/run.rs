//! The service's process: the tokio runtime that hosts the HTTP server ([`crate::http`]), the signals,
//! and the shutdown sequence (SIGTERM or SIGINT: readiness fails, every pipeline drains to a final
//! verified checkpoint, then the server stops).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::bootstrap::{ServiceOptions, start_pipelines};
use super::driver::PipelineReport;
use super::error::StartError;
use crate::alertmanager::Deduplicator;
use crate::config::Config;
use crate::http::AppState;
use crate::metrics::Metrics;

/// Runs the service until SIGTERM or SIGINT: binds the listener, starts the pipelines, serves HTTP,
/// then drains every pipeline (intake stops, a final verified checkpoint is taken) and returns how
/// each ended.
pub fn run_service(
    config: Config,
    options: ServiceOptions,
    drill: bool,
) -> Result<Vec<PipelineReport>, StartError> {
    if !config.listen.ip().is_loopback() && options.token.is_none() {
        return Err(StartError::NoToken(config.listen));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("anes-http")
        .enable_all()
        .build()
        .map_err(|e| StartError::Setup(format!("cannot start the HTTP runtime: {e}")))?;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(config.listen))
        .map_err(|source| StartError::Bind { addr: config.listen, source })?;
    let addr = listener.local_addr().map_err(|source| StartError::Bind { addr: config.listen, source })?;
    let metrics = Arc::new(Metrics::new());
    let pipelines = start_pipelines(&config, &options, &metrics)?;
    let stopping = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let metrics_for_http = Arc::clone(&metrics);
    let state = AppState {
        pipelines: Arc::new(pipelines.handles.clone()),
        metrics,
        token: options.token.as_deref().map(Arc::from),
        drill: drill || config.drill,
        evidence_dir: config.evidence_dir.clone(),
        dedup: Arc::new(Mutex::new(Deduplicator::new())),
        stopping: Arc::clone(&stopping),
    };
    tracing::info!(
        listen = %addr,
        pipelines = %pipelines.handles.iter().map(|h| h.id.as_str()).collect::<Vec<_>>().join(","),
        drill = state.drill,
        token = state.token.is_some(),
        "anes serve: listening on http://{addr}/"
    );
    runtime.block_on(async move {
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(crate::http::serve(
            listener,
            crate::http::router(state),
            config.http_limits,
            Some(metrics_for_http),
            async {
                let _ = stop_rx.await;
            },
        ));
        let signal = wait_for_signal().await;
        stopping.store(true, std::sync::atomic::Ordering::Relaxed);
        tracing::info!(signal, "stopping: intake stops, final verified checkpoints follow");
        let reports = tokio::task::spawn_blocking(move || pipelines.drain())
            .await
            .map_err(|e| StartError::Setup(format!("draining failed: {e}")))?;
        let _ = stop_tx.send(());
        match tokio::time::timeout(Duration::from_secs(5), server).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "the HTTP server task failed"),
            Err(_) => tracing::warn!("the HTTP server did not stop within 5 s"),
        }
        Ok(reports)
    })
}

async fn wait_for_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = tokio::signal::ctrl_c() => "SIGINT",
            },
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "SIGINT"
    }
}
