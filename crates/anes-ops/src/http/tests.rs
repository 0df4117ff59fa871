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
use crate::service::{ServiceOptions, start_pipelines};

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
            demo_rom: Arc::new(anes_fixtures::tiny_rom()),
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
            evidence_dir: test_temp_root().join(format!("anes-http-test-{}", std::process::id())),
            dedup: Arc::new(Mutex::new(Deduplicator::new())),
            stopping: Arc::new(AtomicBool::new(false)),
        };
        // The pipelines' threads live as long as the test binary.
        std::mem::forget(pipelines);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        Fixture { runtime, state }
    })
}

/// A fresh data directory for this test binary's pipelines, under the workspace's `target/tmp` (never
/// `/tmp`, nor the source tree's `anes-data`). They run until the process exits, so the directory
/// cannot be removed at the end; directories of earlier runs whose process is gone are removed here.
fn test_data_dir() -> std::path::PathBuf {
    const PREFIX: &str = "anes-http-test-data-";
    let temp = test_temp_root();
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

/// Cargo gives integration tests `CARGO_TARGET_TMPDIR`, not unit tests: the workspace's `target/tmp`
/// (removed by `cargo clean`) is found from this crate's manifest.
fn test_temp_root() -> std::path::PathBuf {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tmp");
    std::fs::create_dir_all(&root).expect("the workspace's target/tmp can be created");
    root
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
        let _ = parse_drill(&body, &[("ram", 2048)]);
    }
}

fn post_with_authorization(authorization: &str) -> (StatusCode, String) {
    let request = Request::post("/v1/alertmanager")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::AUTHORIZATION, authorization)
        .body(Body::from(FIRING))
        .unwrap();
    let (status, _, body) = call(&fixture().state, request);
    (status, body)
}

#[test]
fn the_bearer_scheme_is_case_insensitive_and_the_token_exact() {
    // The fixture's alert names a pipeline this service does not run: 200 and ignored once authorized.
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let (status, body) = post_with_authorization(&format!("{scheme} {TOKEN}"));
        assert_eq!(status, StatusCode::OK, "{scheme}: {body}");
    }
    for spaced in [
        format!("Bearer  {TOKEN}"),
        format!("Bearer {TOKEN} "),
        format!("Bearer\t{TOKEN}"),
        "Bearer s3cret token".into(),
    ] {
        let (status, body) = post_with_authorization(&spaced);
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{spaced:?}: {body}");
        assert!(body.contains("malformed Authorization header"), "{spaced:?}: {body}");
    }
    let (status, body) = post_with_authorization(&format!("Basic {TOKEN}"));
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body.contains("scheme is \\\"Basic\\\""), "{body}");
    for wrong in [&TOKEN[..TOKEN.len() - 1], "s3cret-tokeN", "s3cret-token=", "s3cret-token-and-more"] {
        let (status, body) = post_with_authorization(&format!("Bearer {wrong}"));
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{wrong}");
        assert!(body.contains("wrong bearer token"), "{wrong}: {body}");
    }
}

/// An evidence directory of its own, removed when dropped.
struct EvidenceDir(std::path::PathBuf);

impl Drop for EvidenceDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn get_evidence(state: &AppState, path: &str) -> (StatusCode, String) {
    // A request that blocks (a FIFO opened for reading) fails the test instead of hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    let (state, path) = (state.clone(), path.to_string());
    std::thread::spawn(move || {
        let (status, _, body) = call(&state, Request::get(path.as_str()).body(Body::empty()).unwrap());
        let _ = tx.send((status, body));
    });
    rx.recv_timeout(Duration::from_secs(10)).expect("the evidence request did not answer within 10 s")
}

#[test]
fn evidence_is_served_only_from_regular_files_inside_the_directory() {
    use std::os::unix::fs::symlink;

    let root = std::env::temp_dir().join(format!("anes-http-evidence-{}", std::process::id()));
    let outside = std::env::temp_dir().join(format!("anes-http-outside-{}", std::process::id()));
    let _dirs = (EvidenceDir(root.clone()), EvidenceDir(outside.clone()));
    let incident = root.join("r").join("incident-1");
    std::fs::create_dir_all(&incident).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(incident.join("report.html"), "<p>evidence</p>").unwrap();
    std::fs::write(outside.join("secret.txt"), "root:secret").unwrap();
    symlink(outside.join("secret.txt"), incident.join("outside.html")).unwrap();
    symlink(incident.join("report.html"), incident.join("inside.html")).unwrap();
    symlink(&outside, root.join("r").join("incident-2")).unwrap();
    std::fs::write(outside.join("report.html"), "outside").unwrap();
    // A hard link is a name for the outside file itself: no path to it says it is outside.
    std::fs::hard_link(outside.join("secret.txt"), incident.join("linked.html")).unwrap();
    let status = std::process::Command::new("mkfifo").arg(incident.join("fifo.json")).status().unwrap();
    assert!(status.success());
    std::fs::File::create(incident.join("big.png"))
        .unwrap()
        .set_len(crate::evidence::SERVED_FILE_LIMIT + 1)
        .unwrap();
    std::fs::File::create(incident.join("limit.png"))
        .unwrap()
        .set_len(crate::evidence::SERVED_FILE_LIMIT)
        .unwrap();
    std::fs::create_dir(incident.join("sub.html")).unwrap();
    let mut state = fixture().state.clone();
    state.evidence_dir = root.clone();

    let (status, body) = get_evidence(&state, "/evidence/r/incident-1/report.html");
    assert_eq!((status, body.as_str()), (StatusCode::OK, "<p>evidence</p>"));
    let (status, body) = get_evidence(&state, "/evidence/r/incident-1/limit.png");
    assert_eq!((status, body.len() as u64), (StatusCode::OK, crate::evidence::SERVED_FILE_LIMIT));
    for (path, reason) in [
        ("/evidence/r/incident-1/outside.html", "symbolic link"),
        ("/evidence/r/incident-1/inside.html", "symbolic link"),
        ("/evidence/r/incident-2/report.html", "symbolic link"),
        ("/evidence/r/incident-1/linked.html", "2 links"),
        ("/evidence/r/incident-1/fifo.json", "a FIFO, not a regular file"),
        ("/evidence/r/incident-1/sub.html", "a directory, not a regular file"),
        ("/evidence/r/incident-1/big.png", "16777217 bytes; evidence files are served up to 16777216 bytes"),
    ] {
        let (status, body) = get_evidence(&state, path);
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {body}");
        assert!(body.contains(reason), "{path}: {body}");
        assert!(!body.contains("root:secret"), "{path}: {body}");
    }
    assert_eq!(get_evidence(&state, "/evidence/r/incident-1/none.html").0, StatusCode::NOT_FOUND);
    assert_eq!(get_evidence(&state, "/evidence/r/incident-3/report.html").0, StatusCode::NOT_FOUND);
}

/// A server on a real socket with short limits, on a runtime of its own, stopped when dropped.
struct LimitedServer {
    runtime: tokio::runtime::Runtime,
    addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// The server's own registry: its connection counters only.
    metrics: Arc<Metrics>,
}

impl LimitedServer {
    fn start(limits: HttpLimits) -> LimitedServer {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let metrics = Arc::new(Metrics::new());
        runtime.spawn(serve(
            listener,
            router(fixture().state.clone()),
            limits,
            Some(Arc::clone(&metrics)),
            async {
                let _ = stopped.await;
            },
        ));
        LimitedServer { runtime, addr, stop: Some(stop), metrics }
    }

    fn connect(&self) -> std::net::TcpStream {
        let stream = std::net::TcpStream::connect(self.addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
        stream
    }
}

impl LimitedServer {
    /// The value of one counter series of the server's registry (`name{labels}` as encoded).
    fn counter(&self, series: &str) -> u64 {
        let mut text = String::new();
        self.metrics.encode(&mut text).unwrap();
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{series} ")))
            .unwrap_or_else(|| panic!("no {series}"));
        line[series.len() + 1..].parse().unwrap()
    }
}

impl Drop for LimitedServer {
    fn drop(&mut self) {
        let _ = self.stop.take().map(|s| s.send(()));
        std::mem::replace(&mut self.runtime, tokio::runtime::Builder::new_current_thread().build().unwrap())
            .shutdown_timeout(Duration::from_secs(1));
    }
}

/// What the peer sent until it closed the connection, and when it closed, or `None` if it was still open
/// after `within`. `drip`, if given, is written every 100 ms while waiting (a slow client).
fn read_until_closed(
    stream: &mut std::net::TcpStream,
    within: Duration,
    drip: Option<&[u8]>,
) -> Option<(String, Duration)> {
    use std::io::{Read, Write};
    let start = Instant::now();
    let mut received = Vec::new();
    let mut buffer = [0; 4096];
    while start.elapsed() < within {
        match stream.read(&mut buffer) {
            Ok(0) => return Some((String::from_utf8_lossy(&received).into_owned(), start.elapsed())),
            Ok(n) => received.extend_from_slice(&buffer[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                if let Some(drip) = drip {
                    // The server may close between two drips: a failed write is the close, seen next read.
                    let _ = stream.write_all(drip);
                }
            }
            Err(_) => return Some((String::from_utf8_lossy(&received).into_owned(), start.elapsed())),
        }
    }
    None
}

const SHORT_LIMITS: HttpLimits = HttpLimits {
    header_timeout: Duration::from_secs(1),
    body_timeout: Duration::from_secs(2),
    write_timeout: Duration::from_secs(2),
    connections_per_client: 4,
    max_connections: 64,
    max_head_bytes: 16 << 10,
};

#[test]
fn a_head_over_the_limit_is_refused_with_431() {
    use std::io::Write;
    let server = LimitedServer::start(SHORT_LIMITS);
    let mut stream = server.connect();
    // Exactly the limit and no end of head: the server reads all of it, so its close is not a reset
    // (which could discard the answer before it is read).
    let mut head = b"GET /healthz HTTP/1.1\r\nHost: anes\r\nX-Padding: ".to_vec();
    head.resize(SHORT_LIMITS.max_head_bytes, b'a');
    stream.write_all(&head).unwrap();
    let (answer, _) =
        read_until_closed(&mut stream, Duration::from_secs(4), None).expect("closed after the 431");
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    // A head under the limit is served.
    let mut stream = server.connect();
    let head = format!(
        "GET /healthz HTTP/1.1\r\nHost: anes\r\nConnection: close\r\nX-Padding: {}\r\n\r\n",
        "a".repeat(8 << 10)
    );
    stream.write_all(head.as_bytes()).unwrap();
    let (answer, _) =
        read_until_closed(&mut stream, Duration::from_secs(4), None).expect("closed after the answer");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[test]
fn slow_headers_are_cut_and_connections_per_client_limited() {
    use std::io::Write;
    let server = LimitedServer::start(SHORT_LIMITS);
    let mut slow: Vec<_> = (0..10)
        .map(|i| {
            let mut stream = server.connect();
            // Accepted in order, so the first four are the ones kept. The others send nothing: a
            // request left unread when the server closes turns its close into a reset, which may
            // discard the 503 before the client reads it.
            if i < 4 {
                stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: anes\r\n").unwrap();
            }
            std::thread::sleep(Duration::from_millis(20));
            stream
        })
        .collect();
    for (i, stream) in slow.iter_mut().enumerate().skip(4) {
        let (answer, after) = read_until_closed(stream, Duration::from_secs(1), None)
            .unwrap_or_else(|| panic!("connection {i} over the limit was kept open"));
        assert!(answer.starts_with("HTTP/1.1 503") && answer.contains("too many connections"), "{answer}");
        assert!(after < Duration::from_millis(500), "{after:?}");
    }
    let started = Instant::now();
    for (i, stream) in slow.iter_mut().enumerate().take(4) {
        // One more header line every 100 ms does not extend the deadline.
        let (answer, _) = read_until_closed(stream, Duration::from_secs(4), Some(b"X-Slow: 1\r\n"))
            .unwrap_or_else(|| panic!("slow-header connection {i} still open after 4 s"));
        assert!(!answer.contains("200 OK"), "{answer}");
    }
    let cut_after = started.elapsed();
    assert!(cut_after < Duration::from_millis(2500), "slow headers cut after {cut_after:?}");
    // The slots are free again, and an idle kept-alive connection is closed like a slow one.
    let mut stream = server.connect();
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: anes\r\n\r\n").unwrap();
    let (answer, idle_for) =
        read_until_closed(&mut stream, Duration::from_secs(4), None).expect("an idle connection kept open");
    assert!(answer.starts_with("HTTP/1.1 200") && answer.ends_with("ok\n"), "{answer}");
    assert!(idle_for > Duration::from_millis(800) && idle_for < Duration::from_millis(2500), "{idle_for:?}");
}

#[test]
fn a_body_that_never_ends_is_cut() {
    use std::io::Write;
    let server = LimitedServer::start(SHORT_LIMITS);
    let head = format!(
        "POST /v1/alertmanager HTTP/1.1\r\nHost: anes\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    let mut stream = server.connect();
    stream.write_all(head.as_bytes()).unwrap();
    let (answer, after) = read_until_closed(&mut stream, Duration::from_secs(6), Some(b"1\r\n \r\n"))
        .expect("a never-ending chunked body held its connection for 6 s");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive within 2s"), "{answer}");
    assert!(after > Duration::from_millis(1800) && after < Duration::from_secs(4), "{after:?}");
    // An endpoint that reads no body answers and closes instead of draining it forever.
    let mut stream = server.connect();
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: anes\r\nTransfer-Encoding: chunked\r\n\r\n").unwrap();
    let (answer, _) = read_until_closed(&mut stream, Duration::from_secs(6), Some(b"1\r\n \r\n"))
        .expect("a never-ending body to /healthz held its connection for 6 s");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[test]
fn the_limits_are_configurable() {
    let config = Config::parse(
        "[server]\nheader_timeout_seconds = 5\nbody_timeout_seconds = 7\nwrite_timeout_seconds = 6\n\
         connections_per_client = 3\nmax_connections = 9\n[[pipeline]]\nid = \"p\"\n",
        "anes.toml",
    )
    .unwrap();
    assert_eq!(
        config.http_limits,
        HttpLimits {
            header_timeout: Duration::from_secs(5),
            body_timeout: Duration::from_secs(7),
            write_timeout: Duration::from_secs(6),
            connections_per_client: 3,
            max_connections: 9,
            max_head_bytes: HttpLimits::default().max_head_bytes,
        }
    );
    let defaults = Config::parse("[[pipeline]]\nid = \"p\"\n", "anes.toml").unwrap().http_limits;
    assert_eq!(defaults.header_timeout, Duration::from_secs(10));
    assert_eq!(defaults.body_timeout, Duration::from_secs(30));
    assert_eq!(defaults.write_timeout, Duration::from_secs(10));
    assert_eq!((defaults.connections_per_client, defaults.max_connections), (32, 512));
    let mistake =
        Config::parse("[server]\nheader_timeout_seconds = 0\n[[pipeline]]\nid = \"p\"\n", "anes.toml")
            .unwrap_err();
    assert_eq!(mistake.to_string(), "anes.toml: server.header_timeout_seconds: 0: use 1 to 3600 seconds");
}

/// A service of one pipeline `f` that shows `fence` in its published status, as `r` would with its
/// state sections, and whose control channel the test reads: what the endpoints send it.
fn pipeline_as_published(
    fence: Option<crate::pipeline::Fence>,
) -> (AppState, crossbeam_channel::Receiver<Control>) {
    let r = fixture().state.pipeline("r").unwrap().clone();
    let mut status = r.status().as_ref().clone();
    status.id = "f".into();
    status.fence = fence;
    if fence.is_some() {
        status.mode = crate::pipeline::Mode::Fenced;
    }
    let (control, received) = crossbeam_channel::unbounded();
    let handle =
        PipelineHandle { id: "f".into(), control, status: Arc::new(Mutex::new(Arc::new(status))), ..r };
    let mut state = fixture().state.clone();
    state.pipelines = Arc::new(vec![handle]);
    (state, received)
}

fn drill_on(state: &AppState, body: &str) -> (StatusCode, serde_json::Value) {
    let (status, _, text) =
        post_to(state, "/v1/pipelines/f/drill", "application/json", Some(TOKEN), body.to_string());
    (status, serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")))
}

#[test]
fn a_drill_whose_fault_cannot_fire_is_400_with_the_reason() {
    let (state, received) = pipeline_as_published(None);
    for (fault, reason) in [
        ("flip:nosuch:0:0", "no state section \"nosuch\" (sections: machine, cpu, bus, ram,"),
        ("flip:ram:0x800:3", "offset 0x800 is outside section ram (2048 bytes)"),
        ("flip:ram:18446744073709551615:0", "offset 0xffffffffffffffff is outside section ram (2048 bytes)"),
        ("flip:oam:256:0@100", "offset 0x100 is outside section oam (256 bytes)"),
        ("flip:ram:0x10:3@18446744073709551615", "CPU cycle 18446744073709551615 is never reached"),
        ("stall:7@18446744073709551615", "CPU cycle 18446744073709551615 is never reached"),
        ("input:0:1@18446744073709551615", "frame 18446744073709551615 is never reached"),
    ] {
        let (status, body) = drill_on(&state, &format!(r#"{{"worker":"b","fault":"{fault}"}}"#));
        assert_eq!(status, StatusCode::BAD_REQUEST, "{fault}: {body}");
        let error = body["error"].as_str().unwrap_or_default();
        assert!(error.contains(reason), "{fault}: {error}");
        assert!(received.try_recv().is_err(), "{fault}: a drill that cannot fire reached the pipeline");
    }
    // Faults that can fire still reach the pipeline: the last byte of a section, now or later.
    for fault in ["flip:ram:0x7ff:7", "flip:oam:255:0@100", "stall:7", "input:1:7@5"] {
        let (status, body) = drill_on(&state, &format!(r#"{{"worker":"a","fault":"{fault}"}}"#));
        assert_eq!(status, StatusCode::ACCEPTED, "{fault}: {body}");
        assert!(
            matches!(received.try_recv(), Ok(Control::Event(Event::Drill { drill: Drill::Fault(ref f), .. })) if f == fault),
            "{fault}"
        );
    }
}

#[test]
fn a_fenced_pipeline_answers_drills_and_the_webhooks_rollback_409() {
    use crate::pipeline::Fence;
    let fence = Fence::TakenOver { ours: 1, current: 2 };
    let (state, received) = pipeline_as_published(Some(fence));
    for drill in [r#"{"worker":"b","fault":"flip:ram:0x10:3"}"#, r#"{"worker":"a","crash":true}"#] {
        let (status, body) = drill_on(&state, drill);
        assert_eq!(status, StatusCode::CONFLICT, "{drill}: {body}");
        assert_eq!(body["error"], "fenced", "{body}");
        assert_eq!(body["fence"]["cause"], "taken_over", "{body}");
        assert!(
            body["reason"].as_str().unwrap_or_default().contains("another service took the pipeline over"),
            "{body}"
        );
        assert!(received.try_recv().is_err(), "{drill}: reached a fenced pipeline");
    }
    let firing = FIRING
        .replace("\"pipeline_id\":\"p1\"", "\"pipeline_id\":\"f\"")
        .replace("72d33b258b0722f7", "00000000000f0f01");
    let (status, _, text) =
        post_to(&state, "/v1/alertmanager", "application/json", Some(TOKEN), firing.clone());
    assert_eq!(status, StatusCode::CONFLICT, "{text}");
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["error"], "fenced", "{body}");
    assert_eq!(body["pipelines"][0]["id"], "f", "{body}");
    assert_eq!(body["acted_on"], 0, "{body}");
    assert!(received.try_recv().is_err(), "a rollback reached a fenced pipeline");
    // The resolution still reaches it (the alert's state on its page); it starts nothing.
    let resolved = firing.replace("\"status\":\"firing\"", "\"status\":\"resolved\"");
    let (status, _, text) = post_to(&state, "/v1/alertmanager", "application/json", Some(TOKEN), resolved);
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(matches!(received.try_recv(), Ok(Control::Event(Event::AlertResolved))));
    // The same pipeline unfenced takes both.
    let (state, received) = pipeline_as_published(None);
    let firing = firing.replace("00000000000f0f01", "00000000000f0f02");
    let (status, _, text) = post_to(&state, "/v1/alertmanager", "application/json", Some(TOKEN), firing);
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(matches!(received.try_recv(), Ok(Control::Event(Event::AlertFiring))));
    let (status, body) = drill_on(&state, r#"{"worker":"a","crash":true}"#);
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
}

/// Whether the server's end of the connection from `client_port` to `server_port` on 127.0.0.1 is
/// still open: an established socket in /proc/net/tcp. The server's close shows there at once (as
/// gone, or a FIN waiting behind unsent data), where the client, which reads nothing, may see
/// nothing yet.
fn server_end_open(server_port: u16, client_port: u16) -> bool {
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    let port = |address: &str| address.rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok());
    table.lines().skip(1).any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        fields.len() > 3
            && port(fields[1]) == Some(server_port)
            && port(fields[2]) == Some(client_port)
            && fields[3] == "01"
    })
}

#[test]
fn a_client_that_never_reads_is_cut() {
    use std::io::{Read, Write};
    let server = LimitedServer::start(SHORT_LIMITS);
    let mut stream = server.connect();
    let client_port = stream.local_addr().unwrap().port();
    // The issue's client: 600 pipelined scrapes, no answer read. Their answers fill the socket
    // buffers both ways long before the last is written.
    let requests = "GET /metrics HTTP/1.1\r\nHost: anes\r\n\r\n".repeat(600);
    stream.write_all(requests.as_bytes()).unwrap();
    let started = Instant::now();
    while server_end_open(server.addr.port(), client_port) {
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "a client that never reads held its connection 8 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let cut_after = started.elapsed();
    // It was cut while answers waited, not closed idle after the last answer.
    let mut received = Vec::new();
    stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let _ = stream.read_to_end(&mut received);
    let answers = received.windows(15).filter(|w| w == b"HTTP/1.1 200 OK").count();
    assert!(answers < 600, "all {answers} answers were delivered: the buffers never filled");
    assert!(cut_after < Duration::from_secs(4), "cut after {cut_after:?}");
    eprintln!("a client that never reads: cut {cut_after:?} after its requests, {answers} answers delivered");
    assert_eq!(server.counter("anes_http_connections_dropped_total{reason=\"write_timeout\"}"), 1);
    // The server serves on.
    let mut stream = server.connect();
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: anes\r\nConnection: close\r\n\r\n").unwrap();
    let (answer, _) =
        read_until_closed(&mut stream, Duration::from_secs(4), None).expect("closed after its answer");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

/// A connection to `server` from `source` (any 127.x.y.z is this host), with the 100 ms read timeout
/// of [`LimitedServer::connect`].
fn connect_from(server: &LimitedServer, source: [u8; 4]) -> std::net::TcpStream {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    socket.bind(&std::net::SocketAddr::from((source, 0)).into()).unwrap();
    socket.connect(&server.addr.into()).unwrap();
    let stream: std::net::TcpStream = socket.into();
    stream.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    stream
}

/// Sends one request on `stream` and reads its answer's status line, leaving the connection open.
fn status_of(stream: &mut std::net::TcpStream, path: &str) -> String {
    use std::io::{Read, Write};
    if let Err(e) = stream.write_all(format!("GET {path} HTTP/1.1\r\nHost: anes\r\n\r\n").as_bytes()) {
        return format!("closed: {e}");
    }
    let started = Instant::now();
    let mut received = Vec::new();
    let mut buffer = [0; 4096];
    while !received.windows(4).any(|w| w == b"\r\n\r\n") && started.elapsed() < Duration::from_secs(4) {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) if !received.is_empty() => break,
            Ok(0) => break,
            Ok(n) => received.extend_from_slice(&buffer[..n]),
            Err(_) => {}
        }
    }
    String::from_utf8_lossy(&received).lines().next().unwrap_or("nothing").to_string()
}

#[test]
fn addresses_that_hold_every_slot_cannot_keep_a_fresh_one_out() {
    let limits = HttpLimits {
        header_timeout: Duration::from_secs(10),
        connections_per_client: 4,
        max_connections: 8,
        ..SHORT_LIMITS
    };
    let server = LimitedServer::start(limits);
    // Two addresses take every slot with kept-alive connections, idle after one answer each.
    let mut hogs = Vec::new();
    for source in [[127, 0, 0, 2], [127, 0, 0, 3]] {
        for _ in 0..4 {
            let mut stream = connect_from(&server, source);
            assert_eq!(status_of(&mut stream, "/healthz"), "HTTP/1.1 200 OK");
            hogs.push(stream);
        }
    }
    // A fifth from a hogging address is over its own limit.
    let mut fifth = connect_from(&server, [127, 0, 0, 2]);
    assert!(status_of(&mut fifth, "/healthz").starts_with("HTTP/1.1 503"));
    // Fresh addresses are served: each takes the slot of an idle connection of the address holding
    // the most.
    for source in [[127, 0, 0, 4], [127, 0, 0, 5]] {
        let mut fresh = connect_from(&server, source);
        assert_eq!(status_of(&mut fresh, "/healthz"), "HTTP/1.1 200 OK", "from {source:?}");
        hogs.push(fresh);
    }
    // Now 3 + 3 + 1 + 1: an address holding as many as any other takes no slot from another.
    let mut more = connect_from(&server, [127, 0, 0, 2]);
    assert!(status_of(&mut more, "/healthz").starts_with("HTTP/1.1 503"));
    // The connections given up were each address's oldest; the others still answer.
    for (i, stream) in hogs.iter_mut().enumerate() {
        let status = status_of(stream, "/healthz");
        let given_up = i == 0 || i == 4;
        assert_eq!(status != "HTTP/1.1 200 OK", given_up, "connection {i}: {status}");
    }
    assert_eq!(server.counter("anes_http_connections_refused_total{reason=\"per_client\"}"), 1);
    assert_eq!(server.counter("anes_http_connections_refused_total{reason=\"max_connections\"}"), 1);
    assert_eq!(server.counter("anes_http_connections_dropped_total{reason=\"evicted\"}"), 2);
}

#[test]
fn whitespace_after_the_token_is_refused_on_the_wire_too() {
    use std::io::{Read, Write};
    // hyper trims the whitespace around a header value before the handlers see it; the credential
    // must still be what was sent. Pipelined on one connection, with bodies of both framings, so each
    // request gets its own head's verdict.
    let server = LimitedServer::start(HttpLimits { header_timeout: Duration::from_secs(10), ..SHORT_LIMITS });
    let request = |authorization: &str, chunked: bool| {
        let framing = if chunked {
            let mut chunks = String::new();
            for piece in FIRING.as_bytes().chunks(100) {
                chunks.push_str(&format!("{:x}\r\n{}\r\n", piece.len(), String::from_utf8_lossy(piece)));
            }
            format!("Transfer-Encoding: chunked\r\n\r\n{chunks}0\r\n\r\n")
        } else {
            format!("Content-Length: {}\r\n\r\n{FIRING}", FIRING.len())
        };
        format!(
            "POST /v1/alertmanager HTTP/1.1\r\nHost: anes\r\nAuthorization: {authorization}\r\n\
             Content-Type: application/json\r\n{framing}"
        )
    };
    let cases = [
        (format!("Bearer {TOKEN} "), false, "401"),
        (format!("Bearer {TOKEN}"), false, "200"),
        (format!("Bearer {TOKEN}\t"), true, "401"),
        (format!("Bearer {TOKEN}"), true, "200"),
        (format!("Bearer {TOKEN}  "), true, "401"),
        (format!("Bearer {TOKEN}"), false, "200"),
    ];
    let mut stream = server.connect();
    let all: String = cases.iter().map(|(a, chunked, _)| request(a, *chunked)).collect();
    stream.write_all(all.as_bytes()).unwrap();
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: anes\r\nConnection: close\r\n\r\n").unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut answers = String::new();
    stream.read_to_string(&mut answers).unwrap();
    let statuses: Vec<&str> =
        answers.match_indices("HTTP/1.1 ").map(|(i, _)| &answers[i + 9..i + 12]).collect();
    let expected: Vec<&str> = cases.iter().map(|(_, _, s)| *s).chain(["200"]).collect();
    assert_eq!(statuses, expected, "{answers}");
    assert_eq!(answers.matches("malformed Authorization header").count(), 3, "{answers}");
}
