//! The API in-process (no socket): real pipelines with thread workers behind the router.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use anes_core::movie::{FrameInput, InputStream};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use proptest::prelude::*;
use tower::ServiceExt;

use super::*;
use crate::config::Config;
use crate::runtime::{ServiceOptions, start_pipelines};

const TOKEN: &str = "s3cret-token";
const FIRING: &str = include_str!("../../tests/fixtures/alertmanager-firing.raw.json");

struct Fixture {
    runtime: tokio::runtime::Runtime,
    state: AppState,
}

/// One service for all tests of this module (its pipelines run for the life of the test binary).
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let mut config = Config::parse(
            "[[pipeline]]\nid = \"r\"\n[[pipeline]]\nid = \"live\"\n[pipeline.input]\nsource = \"push\"\n",
            "test.toml",
        )
        .unwrap();
        config.data_dir = test_data_dir();
        let options = ServiceOptions {
            demo_rom: Arc::new(anes_lockstep::testing::tiny_rom()),
            demo_input: vec![FrameInput::default(); 10].into(),
            worker_program: None,
            token: Some(TOKEN.into()),
        };
        let metrics = Arc::new(Metrics::new());
        let pipelines = start_pipelines(&config, &options, &metrics).unwrap();
        let state = AppState {
            pipelines: Arc::new(pipelines.handles.clone()),
            metrics,
            token: Some(Arc::from(TOKEN)),
            drill: true,
            evidence_dir: std::env::temp_dir().join(format!("anes-http-test-{}", std::process::id())),
            dedup: Arc::new(Mutex::new(Deduplicator::new())),
            stopping: Arc::new(AtomicBool::new(false)),
        };
        // The pipelines' threads live as long as the test binary.
        std::mem::forget(pipelines);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        Fixture { runtime, state }
    })
}

/// A fresh data directory for this test binary's pipelines (never the source tree's `anes-data`). They
/// run until the process exits, so the directory cannot be removed at the end; directories of earlier
/// runs whose process is gone are removed here instead.
fn test_data_dir() -> std::path::PathBuf {
    const PREFIX: &str = "anes-http-test-data-";
    let temp = std::env::temp_dir();
    if let Ok(entries) = std::fs::read_dir(&temp) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if let Some(pid) = name.strip_prefix(PREFIX)
                && pid.parse::<u32>().is_ok()
                && !std::path::Path::new("/proc").join(pid).exists()
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let dir = temp.join(format!("{PREFIX}{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn call(state: &AppState, request: Request<Body>) -> (StatusCode, String, String) {
    let f = fixture();
    let response = f.runtime.block_on(router(state.clone()).oneshot(request)).unwrap();
    let status = response.status();
    let content_type =
        response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let bytes = f.runtime.block_on(axum::body::to_bytes(response.into_body(), usize::MAX)).unwrap();
    (status, content_type, String::from_utf8_lossy(&bytes).to_string())
}

fn get(path: &str) -> (StatusCode, String, String) {
    call(&fixture().state, Request::get(path).body(Body::empty()).unwrap())
}

fn post(
    path: &str,
    content_type: &str,
    token: Option<&str>,
    body: impl Into<Body>,
) -> (StatusCode, String, String) {
    post_to(&fixture().state, path, content_type, token, body)
}

fn post_to(
    state: &AppState,
    path: &str,
    content_type: &str,
    token: Option<&str>,
    body: impl Into<Body>,
) -> (StatusCode, String, String) {
    let mut request = Request::post(path).header(header::CONTENT_TYPE, content_type);
    if let Some(t) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    call(state, request.body(body.into()).unwrap())
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn read_endpoints() {
    assert_eq!(get("/healthz").0, StatusCode::OK);
    wait_for("readiness", || get("/readyz").0 == StatusCode::OK);
    let (status, content_type, text) = get("/metrics");
    assert_eq!(status, StatusCode::OK);
    assert!(content_type.starts_with("application/openmetrics-text"), "{content_type}");
    assert!(text.contains("worker_state_divergence_flag{pipeline_id=\"live\"} 0"), "{text}");
    let (status, _, text) = get("/v1/pipelines");
    assert_eq!(status, StatusCode::OK);
    let all: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 2);
    assert_eq!(get("/v1/pipelines/r").0, StatusCode::OK);
    assert_eq!(get("/v1/pipelines/nope").0, StatusCode::NOT_FOUND);
    let (status, content_type, page) = get("/");
    assert_eq!(status, StatusCode::OK);
    assert!(content_type.starts_with("text/html"));
    assert!(
        page.contains("<b>r</b>") && page.contains("<b>live</b>") && page.contains("http-equiv=\"refresh\"")
    );
    assert_eq!(get("/evidence/..%2F/x/y").0, StatusCode::BAD_REQUEST);
    assert_eq!(get("/evidence/r/incident-1/report.html").0, StatusCode::NOT_FOUND);
}

#[test]
fn mutating_endpoints_need_the_token() {
    let (status, _, body) = post("/v1/alertmanager", "application/json", None, FIRING);
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(body.contains("Authorization"));
    assert_eq!(
        post("/v1/alertmanager", "application/json", Some("wrong"), FIRING).0,
        StatusCode::UNAUTHORIZED
    );
    let mut no_token = fixture().state.clone();
    no_token.token = None;
    let (status, _, body) = post_to(&no_token, "/v1/alertmanager", "application/json", Some(TOKEN), FIRING);
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body.contains("no token configured"));
    let mut no_drill = fixture().state.clone();
    no_drill.drill = false;
    let (status, _, body) = post_to(
        &no_drill,
        "/v1/pipelines/r/drill",
        "application/json",
        Some(TOKEN),
        r#"{"worker":"b","crash":true}"#,
    );
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body.contains("--drill"));
}

#[test]
fn the_webhook_answers_at_once_and_decides_per_alert() {
    // The fixture names pipeline p1, which this service does not run: logged and ignored.
    let (status, _, body) = post("/v1/alertmanager", "application/json", Some(TOKEN), FIRING);
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("\"ignored\":1"), "{body}");
    let for_r = FIRING
        .replace("\"pipeline_id\":\"p1\"", "\"pipeline_id\":\"r\"")
        .replace("72d33b258b0722f7", "0000000000000abc");
    let started = Instant::now();
    let (status, _, body) = post("/v1/alertmanager", "application/json", Some(TOKEN), for_r.clone());
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!((status, body.contains("\"acted_on\":1")), (StatusCode::OK, true), "{body}");
    let (status, _, body) = post("/v1/alertmanager", "application/json", Some(TOKEN), for_r);
    assert_eq!(
        (status, body.contains("\"ignored\":1")),
        (StatusCode::OK, true),
        "a retried delivery: {body}"
    );
    let r = fixture().state.pipeline("r").unwrap().clone();
    wait_for("the rollback of r", || r.status().rollbacks_succeeded >= 1);
    assert_eq!(r.status().mode, crate::pipeline::Mode::Normal);
}

#[test]
fn bad_bodies_get_a_4xx_with_a_reason() {
    for (path, content_type) in [
        ("/v1/alertmanager", "application/json"),
        ("/v1/pipelines/live/input", "application/json"),
        ("/v1/pipelines/live/input", "application/octet-stream"),
        ("/v1/pipelines/live/drill", "application/json"),
    ] {
        for body in [&b""[..], b"junk", b"{\"version\":", &FIRING.as_bytes()[..200]] {
            let (status, _, text) = post(path, content_type, Some(TOKEN), body.to_vec());
            assert!(status.is_client_error(), "{path} {body:?}: {status} {text}");
            assert!(text.contains("\"error\""), "{text}");
        }
        let huge = vec![b' '; 2 << 20];
        let (status, _, _) = post(path, content_type, Some(TOKEN), huge);
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{path}");
    }
    let v3 = FIRING.replace("\"version\":\"4\"", "\"version\":\"3\"");
    let (status, _, text) = post("/v1/alertmanager", "application/json", Some(TOKEN), v3);
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(text.contains("version"), "{text}");
    let (status, _, text) = post(
        "/v1/pipelines/live/drill",
        "application/json",
        Some(TOKEN),
        r#"{"worker":"b","fault":"zap:1"}"#,
    );
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(text.contains("unknown kind"), "{text}");
    let (status, _, text) = post(
        "/v1/pipelines/live/drill",
        "application/json",
        Some(TOKEN),
        r#"{"worker":"b","crash":true,"stall_seconds":1}"#,
    );
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
}

#[test]
fn pushed_input_is_sequenced_and_verified() {
    let live = fixture().state.pipeline("live").unwrap().clone();
    wait_for("live's workers", || live.status().workers.iter().all(|w| w.phase == "running"));
    let base = live.status().accounting.received;
    let body = format!(r#"{{"first_seq": {base}, "frames": [[1, 0], [0, 0, 0], [128, 2]]}}"#);
    let (status, _, text) = post("/v1/pipelines/live/input", "application/json", Some(TOKEN), body.clone());
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(text.contains("\"accepted\":3"), "{text}");
    let (status, _, text) = post("/v1/pipelines/live/input", "application/json", Some(TOKEN), body);
    assert!(status == StatusCode::OK && text.contains("\"duplicates\":3"), "{text}");
    let gap = format!(r#"{{"first_seq": {}, "frames": [[1, 0]]}}"#, base + 10);
    let (status, _, text) = post("/v1/pipelines/live/input", "application/json", Some(TOKEN), gap);
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(text.contains("sequence gap"), "{text}");
    let stream = InputStream::from_frames(vec![FrameInput::buttons(4, 0); 5]).to_bytes();
    let (status, _, text) =
        post("/v1/pipelines/live/input", "application/octet-stream", Some(TOKEN), stream.clone());
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    let path = format!("/v1/pipelines/live/input?first_seq={}", base + 3);
    let (status, _, text) = post(&path, "application/octet-stream", Some(TOKEN), stream);
    assert_eq!(status, StatusCode::OK, "{text}");
    let (status, _, _) =
        post("/v1/pipelines/r/input", "application/json", Some(TOKEN), r#"{"first_seq":0,"frames":[]}"#);
    assert_eq!(status, StatusCode::CONFLICT, "a replay pipeline takes no pushed input");
    wait_for("verification", || live.status().frames_verified >= base + 8);
    let a = live.status().accounting;
    assert!(a.balanced(), "{a:?}");
}

/// A stream body is counted from its runs before it is expanded: 2^32 - 1 frames in 320 KiB used to
/// take 12 GiB before the batch limit refused them.
#[test]
fn a_stream_body_declaring_billions_of_frames_is_refused_before_it_is_expanded() {
    let mut stream = InputStream::new();
    for run in 0..65_537u32 {
        stream.push_repeated(FrameInput::buttons(run as u8 & 1, 0), 65_535);
    }
    let err = parse_batch("application/octet-stream", Some(0), &stream.to_bytes()).unwrap_err();
    assert_eq!(err, format!("4294967295 frames in one batch; at most {MAX_PUSH_FRAMES}"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bodies_never_cause_a_5xx(body in proptest::collection::vec(any::<u8>(), 0..300), which in 0usize..4) {
        let (path, content_type) = [
            ("/v1/alertmanager", "application/json"),
            ("/v1/pipelines/live/input", "application/json"),
            ("/v1/pipelines/live/input?first_seq=0", "application/octet-stream"),
            ("/v1/pipelines/live/drill", "application/json"),
        ][which];
        let (status, _, text) = post(path, content_type, Some(TOKEN), body);
        prop_assert!(!status.is_server_error(), "{} {}", status, text);
    }

    #[test]
    fn the_batch_and_drill_parsers_never_panic(body in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = parse_batch("application/json", None, &body);
        let _ = parse_batch("application/octet-stream", Some(0), &body);
        let _ = parse_drill(&body);
    }
}
