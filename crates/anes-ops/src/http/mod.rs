//! The HTTP API (axum): health, readiness, metrics, pipeline status as JSON and as a page, pushed input,
//! the Alertmanager webhook and drills. Every body is read with a size limit and parsed into types or
//! refused with a 4xx and a reason; mutating endpoints need the bearer token.

pub(crate) mod limits;
mod page;
mod raw_head;
mod serve;

pub use limits::HttpLimits;
pub use serve::{BodyTimeout, serve};

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anes_core::movie::{ConsoleCommand, FrameInput, InputStream};
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;

use crate::alertmanager::{self, Decision, Deduplicator};
use crate::evidence::{self, ServeRefusal};
use crate::metrics::{self, Metrics};
use crate::pipeline::{Drill, Event};
use crate::service::handle::{Control, PipelineHandle};
use crate::worker::WorkerId;

/// Largest pushed input batch body.
pub const INPUT_BODY_LIMIT: usize = 1 << 20;
/// Largest webhook body.
pub const WEBHOOK_BODY_LIMIT: usize = 1 << 20;
/// Largest drill body.
pub const DRILL_BODY_LIMIT: usize = 4 << 10;
/// Most frames in one pushed batch.
pub const MAX_PUSH_FRAMES: usize = 1 << 16;

/// What the handlers share.
#[derive(Debug, Clone)]
pub struct AppState {
    /// Every pipeline the service runs: its control channel and latest status.
    pub pipelines: Arc<Vec<PipelineHandle>>,
    /// The registry `/metrics` renders.
    pub metrics: Arc<Metrics>,
    /// The bearer token, if any.
    pub token: Option<Arc<str>>,
    /// Whether `POST /v1/pipelines/{id}/drill` may inject faults (`--drill`); off in production.
    pub drill: bool,
    /// The folder of evidence bundles `/evidence/...` serves from (regular files inside it only).
    pub evidence_dir: PathBuf,
    /// Alertmanager deliveries already acted on, so a retried webhook starts no second rollback.
    pub dedup: Arc<Mutex<Deduplicator>>,
    /// Set once shutdown began.
    pub stopping: Arc<std::sync::atomic::AtomicBool>,
}

impl AppState {
    fn pipeline(&self, id: &str) -> Option<&PipelineHandle> {
        self.pipelines.iter().find(|p| p.id == id)
    }
}

/// An error answer: status and a one-line reason, as JSON `{"error": "..."}`.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    reason: String,
}

impl ApiError {
    fn new(status: StatusCode, reason: impl Into<String>) -> ApiError {
        ApiError { status, reason: reason.into() }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, axum::Json(serde_json::json!({ "error": self.reason }))).into_response()
    }
}

/// The router with every endpoint.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(page::status_page))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .route("/v1/pipelines", get(list_pipelines))
        .route("/v1/pipelines/{id}", get(one_pipeline))
        .route("/v1/pipelines/{id}/input", post(push_input).layer(DefaultBodyLimit::max(INPUT_BODY_LIMIT)))
        .route("/v1/pipelines/{id}/drill", post(drill).layer(DefaultBodyLimit::max(DRILL_BODY_LIMIT)))
        .route("/v1/alertmanager", post(webhook).layer(DefaultBodyLimit::max(WEBHOOK_BODY_LIMIT)))
        .route("/evidence/{pipeline}/{incident}/{file}", get(evidence_file))
        .with_state(state)
}

fn authorize(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(token) = &state.token else {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "this server has no token configured (server.token_file, --token-file or ANES_TOKEN), so mutating endpoints are disabled",
        ));
    };
    let given =
        bearer_credential(headers).map_err(|reason| ApiError::new(StatusCode::UNAUTHORIZED, reason))?;
    // Compared in full whatever the first difference, so the time taken tells nothing.
    if constant_time_eq(given.as_bytes(), token.as_bytes()) {
        Ok(())
    } else {
        Err(ApiError::new(StatusCode::UNAUTHORIZED, "wrong bearer token"))
    }
}

/// The token of `Authorization: Bearer <token>`. The scheme is case-insensitive (RFC 9110 section
/// 11.1); the credential is exactly what follows one space, and must be a token68 (RFC 6750 section
/// 2.1): a value with spaces around or inside it is refused rather than trimmed, so what is compared is
/// what was sent.
fn bearer_credential(headers: &HeaderMap) -> Result<&str, String> {
    const MISSING: &str = "missing header Authorization: Bearer <token>";
    let value = headers.get(header::AUTHORIZATION).ok_or(MISSING)?;
    let value = value.to_str().map_err(|_| "the Authorization header is not visible ASCII")?;
    let (scheme, credential) = value.split_once([' ', '\t']).unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(format!("the Authorization scheme is {scheme:?}; this server takes Bearer <token>"));
    }
    let token68 = |b: u8| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b);
    let body = credential.trim_end_matches('=');
    let one_space = value.as_bytes().get(scheme.len()) == Some(&b' ');
    if !one_space || body.is_empty() || !body.bytes().all(token68) {
        return Err(
            "malformed Authorization header: write \"Bearer <token>\" with one space, no other whitespace, and a token of letters, digits and -._~+/ (then = padding)"
                .into(),
        );
    }
    Ok(credential)
}

/// A body that could not be read: too large (413), not in time (408), or cut off (400).
fn body_error(rejection: BytesRejection) -> ApiError {
    let mut source = std::error::Error::source(&rejection);
    while let Some(error) = source {
        if error.is::<BodyTimeout>() {
            return ApiError::new(StatusCode::REQUEST_TIMEOUT, error.to_string());
        }
        source = error.source();
    }
    ApiError::new(rejection.status(), rejection.body_text())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        diff |= usize::from(a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

async fn readyz(State(state): State<AppState>) -> Response {
    if state.stopping.load(std::sync::atomic::Ordering::Relaxed) {
        return (StatusCode::SERVICE_UNAVAILABLE, "stopping\n").into_response();
    }
    // The pipeline decides what keeps it from being ready (workers starting, fenced, stalled).
    let waiting: Vec<String> = state
        .pipelines
        .iter()
        .filter_map(|p| p.status().not_ready.as_ref().map(|reason| format!("{}: {reason}", p.id)))
        .collect();
    if waiting.is_empty() {
        (StatusCode::OK, "ready\n").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {}\n", waiting.join("; "))).into_response()
    }
}

async fn metrics_text(State(state): State<AppState>) -> Response {
    let mut text = String::with_capacity(64 << 10);
    if state.metrics.encode(&mut text).is_err() {
        return ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "encoding the metrics failed")
            .into_response();
    }
    ([(header::CONTENT_TYPE, HeaderValue::from_static(metrics::CONTENT_TYPE))], text).into_response()
}

async fn list_pipelines(State(state): State<AppState>) -> Response {
    let all: Vec<_> = state.pipelines.iter().map(|p| p.status().as_ref().clone()).collect();
    axum::Json(all).into_response()
}

async fn one_pipeline(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match state.pipeline(&id) {
        Some(p) => axum::Json(p.status().as_ref().clone()).into_response(),
        None => ApiError::new(StatusCode::NOT_FOUND, format!("no pipeline {id:?}")).into_response(),
    }
}

/// `?first_seq=N` for binary bodies.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InputQuery {
    first_seq: Option<u64>,
}

/// A JSON batch: `{"first_seq": 0, "frames": [[port1, port2], [port1, port2, command], ...]}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonBatch {
    first_seq: u64,
    frames: Vec<Vec<u8>>,
}

/// Parses a pushed batch: JSON (`application/json`) or an anes input stream (any other type, with
/// `?first_seq=`).
pub fn parse_batch(
    content_type: &str,
    first_seq: Option<u64>,
    body: &[u8],
) -> Result<(u64, Vec<FrameInput>), String> {
    let frames = if content_type.starts_with("application/json") {
        let batch: JsonBatch = serde_json::from_slice(body).map_err(|e| format!("JSON batch: {e}"))?;
        if first_seq.is_some_and(|q| q != batch.first_seq) {
            return Err("first_seq in the query and the body differ".into());
        }
        let mut frames = Vec::with_capacity(batch.frames.len().min(MAX_PUSH_FRAMES));
        for (i, f) in batch.frames.iter().enumerate() {
            let command = match f.len() {
                2 => ConsoleCommand::None,
                3 => ConsoleCommand::from_u8(f[2]).ok_or_else(|| {
                    format!(
                        "frames[{i}]: command {} is not 0 (none), 1 (soft reset) or 2 (power cycle)",
                        f[2]
                    )
                })?,
                n => {
                    return Err(format!(
                        "frames[{i}]: {n} numbers; write [port1, port2] or [port1, port2, command]"
                    ));
                }
            };
            frames.push(FrameInput { pads: [f[0], f[1]], command });
        }
        (batch.first_seq, frames)
    } else {
        let first_seq = first_seq.ok_or("an anes input stream body needs ?first_seq=N in the URL")?;
        let stream = InputStream::from_bytes(body).map_err(|e| format!("anes input stream: {e}"))?;
        // Counted before expanding: 320 KiB of runs may declare 2^32 - 1 frames (12 GiB expanded).
        if stream.len() > MAX_PUSH_FRAMES {
            return Err(format!("{} frames in one batch; at most {MAX_PUSH_FRAMES}", stream.len()));
        }
        (first_seq, crate::pipeline::stream_frames(&stream))
    };
    if frames.1.len() > MAX_PUSH_FRAMES {
        return Err(format!("{} frames in one batch; at most {MAX_PUSH_FRAMES}", frames.1.len()));
    }
    Ok(frames)
}

async fn push_input(
    State(state): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<InputQuery>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    authorize(&state, &headers)?;
    let pipeline = state
        .pipeline(&id)
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, format!("no pipeline {id:?}")))?;
    if !pipeline.accepts_push {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "pipeline {id:?} replays a recorded stream; it takes no pushed input (set input.source = \"push\")"
            ),
        ));
    }
    let body = body.map_err(body_error)?;
    let Query(query) = query.map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.body_text()))?;
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let (first_seq, inputs) = parse_batch(content_type, query.first_seq, &body)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e))?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    pipeline
        .control
        .send(Control::Push { first_seq, inputs, reply: tx })
        .map_err(|_| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the pipeline has stopped"))?;
    let answer = tokio::time::timeout(Duration::from_secs(10), rx)
        .await
        .map_err(|_| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the pipeline did not answer in 10 s"))?
        .map_err(|_| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the pipeline has stopped"))?;
    match answer {
        Err(gap) => Err(ApiError::new(StatusCode::CONFLICT, gap.to_string())),
        Ok(outcome) if outcome.refused.is_some() => {
            Ok((StatusCode::SERVICE_UNAVAILABLE, axum::Json(outcome)).into_response())
        }
        Ok(outcome) => Ok((StatusCode::OK, axum::Json(outcome)).into_response()),
    }
}

/// The longest stall a drill may ask for: the worker protocol's limit, whichever transport runs it.
const MAX_STALL_SECONDS: f64 = crate::worker::protocol::MAX_STALL_MILLIS as f64 / 1000.0;

/// A drill: exactly one of `fault`, `stall_seconds`, `crash`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DrillRequest {
    worker: WorkerId,
    fault: Option<String>,
    stall_seconds: Option<f64>,
    crash: Option<bool>,
}

/// The last CPU cycle a console reaches in 1,700 years of emulated time: a machine's master clock
/// ends there (`MAX_MASTER_CLOCK`) and a CPU cycle takes 12 master clocks or more. A fault planned
/// later never fires; no frame comes later either (a frame takes at least a cycle).
const LAST_REACHED_CPU_CYCLE: u64 =
    anes_core::clock::MAX_MASTER_CLOCK / anes_core::clock::MASTER_PER_CPU_CYCLE;

/// Parses a drill body into its target and drill, refusing a fault that could never fire on consoles
/// with `state_sections` (each state section's name and length).
pub fn parse_drill(body: &[u8], state_sections: &[(&str, usize)]) -> Result<(WorkerId, Drill), String> {
    let request: DrillRequest = serde_json::from_slice(body).map_err(|e| format!("drill: {e}"))?;
    let drill =
        match (request.fault, request.stall_seconds, request.crash) {
            (Some(spec), None, None) => {
                let full = if spec.contains('@') { spec.clone() } else { format!("{spec}@0") };
                let fault = full.parse::<anes_lockstep::Fault>().map_err(|e| format!("fault: {e}"))?;
                fault_fires(&fault, state_sections).map_err(|e| format!("fault {spec:?}: {e}"))?;
                Drill::Fault(spec)
            }
            (None, Some(s), None) if (0.0..=MAX_STALL_SECONDS).contains(&s) => {
                Drill::Stall(Duration::from_secs_f64(s))
            }
            (None, Some(s), None) => return Err(format!("stall_seconds {s}: use 0 to {MAX_STALL_SECONDS}")),
            (None, None, Some(true)) => Drill::Crash,
            _ => return Err(
                "give exactly one of \"fault\" (a lockstep fault spec), \"stall_seconds\" or \"crash\": true"
                    .into(),
            ),
        };
    Ok((request.worker, drill))
}

/// Why `fault` could never fire: a flip of a section the consoles do not have or past its end (the
/// worker would refuse it after the drill was accepted), or a cycle or frame no run reaches.
fn fault_fires(fault: &anes_lockstep::Fault, state_sections: &[(&str, usize)]) -> Result<(), String> {
    use anes_lockstep::Fault;
    let (when, at) = match *fault {
        Fault::FlipBit { cpu_cycle, .. } | Fault::Stall { cpu_cycle, .. } => ("CPU cycle", cpu_cycle),
        Fault::CorruptInput { frame, .. } => ("frame", frame),
    };
    if at > LAST_REACHED_CPU_CYCLE {
        return Err(format!(
            "{when} {at} is never reached (a console's clock passes cycle {LAST_REACHED_CPU_CYCLE} only after 1,700 years of emulated time)"
        ));
    }
    if let Fault::FlipBit { section, offset, .. } = fault {
        let Some(&(_, len)) = state_sections.iter().find(|(name, _)| name == section) else {
            let names: Vec<&str> = state_sections.iter().map(|(name, _)| *name).collect();
            return Err(format!("no state section {section:?} (sections: {})", names.join(", ")));
        };
        if *offset >= len {
            return Err(format!("offset {offset:#x} is outside section {section} ({len} bytes)"));
        }
    }
    Ok(())
}

/// The answer to a request a fenced pipeline cannot carry out: 409 naming the fence.
fn fenced_answer(id: &str, fence: crate::pipeline::Fence) -> Response {
    let body = serde_json::json!({
        "error": "fenced",
        "pipeline": id,
        "fence": fence,
        "reason": fence.describe(),
    });
    (StatusCode::CONFLICT, axum::Json(body)).into_response()
}

async fn drill(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    authorize(&state, &headers)?;
    if !state.drill {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "drills are off: start the service with --drill (or server.drill = true)",
        ));
    }
    let pipeline = state
        .pipeline(&id)
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, format!("no pipeline {id:?}")))?;
    let body = body.map_err(body_error)?;
    let (worker, drill) = parse_drill(&body, &pipeline.state_sections)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e))?;
    // A fenced pipeline takes no drill: it stopped taking records, so the fault would never fire.
    if let Some(fence) = pipeline.status().fence {
        return Ok(fenced_answer(&id, fence));
    }
    pipeline
        .control
        .send(Control::Event(Event::Drill { worker, drill }))
        .map_err(|_| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the pipeline has stopped"))?;
    Ok((StatusCode::ACCEPTED, axum::Json(serde_json::json!({ "accepted": true }))).into_response())
}

/// Ignored alerts of one notification logged one by one; the rest are counted in one line.
const LOGGED_IGNORED_ALERTS: usize = 8;

async fn webhook(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    authorize(&state, &headers)?;
    let body = body.map_err(body_error)?;
    let notification =
        alertmanager::parse(&body).map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.to_string()))?;
    // Decide now, act in the pipelines' own threads: the answer never waits for a rollback.
    let mut acted = 0;
    let mut ignored = 0;
    let mut fenced = Vec::new();
    for alert in &notification.alerts {
        let runs = |id: &str| state.pipeline(id).is_some();
        let decision = state.dedup.lock().unwrap_or_else(|p| p.into_inner()).decide(alert, runs);
        let (pipeline_id, event) = match decision {
            Decision::Firing { pipeline } => (pipeline, Event::AlertFiring),
            Decision::Resolved { pipeline } => (pipeline, Event::AlertResolved),
            Decision::Duplicate => {
                state.metrics.notification_ignored("duplicate");
                tracing::info!(fingerprint = %alert.fingerprint, starts_at = %alert.starts_at, "duplicate notification ignored");
                ignored += 1;
                continue;
            }
            Decision::NotOurs { reason } => {
                state.metrics.notification_ignored(reason);
                // One line for each of the first few, then one for the rest: a body of 1 MiB
                // can hold thousands of alerts.
                if ignored < LOGGED_IGNORED_ALERTS {
                    let labels = alertmanager::labels_for_log(&alert.labels);
                    if reason == "unknown_pipeline" {
                        tracing::warn!(labels = %labels, "alert for a pipeline this service does not run: ignored");
                    } else {
                        tracing::info!(labels = %labels, reason, "alert ignored");
                    }
                }
                ignored += 1;
                continue;
            }
        };
        let target = state.pipeline(&pipeline_id);
        // A fenced pipeline's rollback would restore workers whose checkpoints the store refuses: it
        // stays fenced, so the webhook says so instead of accepting. A resolution still reaches it.
        let fence = target.filter(|_| matches!(event, Event::AlertFiring)).and_then(|p| p.status().fence);
        match (target, fence) {
            (Some(_), Some(fence)) => {
                state.metrics.notification_ignored("fenced");
                tracing::warn!(pipeline = %pipeline_id, fingerprint = %alert.fingerprint, reason = %fence.describe(), "alert for a fenced pipeline: no rollback");
                fenced.push(serde_json::json!({
                    "id": pipeline_id,
                    "fence": fence,
                    "reason": fence.describe(),
                }));
            }
            (Some(p), None) => {
                tracing::warn!(pipeline = %pipeline_id, status = alert_status(alert.status), fingerprint = %alert.fingerprint, starts_at = %alert.starts_at, "alert notification");
                let _ = p.control.send(Control::Event(event));
                acted += 1;
            }
            (None, _) => {
                state.metrics.notification_ignored("unknown_pipeline");
                tracing::warn!(pipeline = %pipeline_id, "alert for a pipeline this service does not run: ignored");
                ignored += 1;
            }
        }
    }
    if ignored > LOGGED_IGNORED_ALERTS {
        tracing::info!(count = ignored - LOGGED_IGNORED_ALERTS, "more alerts of the notification ignored");
    }
    if !fenced.is_empty() {
        let body = serde_json::json!({ "error": "fenced", "pipelines": fenced, "acted_on": acted, "ignored": ignored });
        return Ok((StatusCode::CONFLICT, axum::Json(body)).into_response());
    }
    Ok(axum::Json(serde_json::json!({ "acted_on": acted, "ignored": ignored })).into_response())
}

fn alert_status(status: alertmanager::Status) -> &'static str {
    match status {
        alertmanager::Status::Firing => "firing",
        alertmanager::Status::Resolved => "resolved",
    }
}

fn safe_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

async fn evidence_file(
    State(state): State<AppState>,
    Path((pipeline, incident, file)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    if ![&pipeline, &incident, &file].iter().all(|n| safe_name(n)) {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, "bad evidence path"));
    }
    let root = state.evidence_dir.clone();
    let names = [pipeline, incident, file.clone()];
    let read = tokio::task::spawn_blocking(move || {
        let names = names.each_ref().map(String::as_str);
        evidence::read_served_file(&root, &names, evidence::SERVED_FILE_LIMIT)
    });
    let bytes = read
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("reading evidence: {e}")))?
        .map_err(|refusal| {
            let status = match &refusal {
                ServeRefusal::NotFound(_) => StatusCode::NOT_FOUND,
                ServeRefusal::Symlink(_)
                | ServeRefusal::HardLink { .. }
                | ServeRefusal::NotRegular { .. }
                | ServeRefusal::TooLarge { .. } => StatusCode::FORBIDDEN,
                ServeRefusal::Io { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied => {
                    StatusCode::FORBIDDEN
                }
                ServeRefusal::Io { .. } => StatusCode::INTERNAL_SERVER_ERROR,
            };
            ApiError::new(status, refusal.to_string())
        })?;
    let content_type = match file.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("json") => "application/json",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    };
    Ok(([(header::CONTENT_TYPE, content_type)], bytes).into_response())
}

#[cfg(test)]
mod tests;
