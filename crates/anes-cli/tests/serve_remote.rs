//! Remote workers (issue 25, first slice): `anes serve` with `workers = "remote"` runs a pipeline
//! against two `anes worker --listen 127.0.0.1:0` processes, verifies frames, notices a worker killed
//! with `kill -9`, and returns to normal once a new worker listens on the same port, with nothing
//! acknowledged lost (received = verified directly + replayed from the dead-letter queue).
//!
//! Every process started here listens on 127.0.0.1 and is stopped by PID on every exit path.

mod support;

use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use support::remote::{Serve, Worker, frames_verified, remote_pipeline, temp_dir};

#[test]
fn a_killed_remote_worker_is_replaced_and_the_pipeline_heals() {
    let dir = temp_dir("serve-remote");
    let token_file = dir.0.join("worker-token");
    std::fs::write(&token_file, "remote-test-token\n").unwrap();
    let a = Worker::start("127.0.0.1:0", &token_file);
    let b = Worker::start("127.0.0.1:0", &token_file);
    let pipeline = remote_pipeline(&a.address, &b.address, &token_file, "rollback = \"immediate\"");
    let mut serve = Serve::start(&dir.0, "serve", &pipeline, &dir.0.join("data"));
    serve.wait_for("2 s of frames verified by the remote workers", Duration::from_secs(60), |s| {
        s.status().filter(|st| frames_verified(st) >= 120 && st["mode"] == "normal")
    });
    assert_eq!((serve.worker_up("a"), serve.worker_up("b")), (Some(1.0), Some(1.0)));

    // kill -9 worker A, and a new one on the same port.
    let mut a = a;
    let before = frames_verified(&serve.status().unwrap());
    let killed = Instant::now();
    a.kill_9();
    let noticed = serve.wait_for("worker A's loss noticed", Duration::from_secs(20), |s| {
        (s.worker_up("a") == Some(0.0) || s.status()?["workers"][0]["restarts"].as_u64()? >= 1)
            .then(Instant::now)
    });
    let a2 = Worker::start(&a.address, &token_file);
    assert_eq!(a2.address, a.address);
    let returned = Instant::now();
    let healed =
        serve.wait_for("the pipeline back to normal, verifying again", Duration::from_secs(40), |s| {
            let st = s.status()?;
            (st["mode"] == "normal"
                && st["workers"][0]["restarts"].as_u64()? >= 1
                && frames_verified(&st) > before + 60
                && s.worker_up("a") == Some(1.0))
            .then_some(st)
        });
    println!(
        "worker A killed: noticed after {:.3} s; back to normal and verifying {:.3} s after the new worker listened; \
         {} records replayed from the DLQ; A's last exit: {}",
        noticed.duration_since(killed).as_secs_f64(),
        returned.elapsed().as_secs_f64(),
        healed["accounting"]["replayed_from_dlq"],
        healed["workers"][0]["last_exit"]
    );
    assert!(
        healed["workers"][0]["last_exit"].as_str().is_some_and(|e| e.contains(&a.address)),
        "A's end names its connection: {healed}"
    );

    let summary = serve.stop();
    let p = &summary["pipelines"][0];
    let n = |k: &str| p["accounting"][k].as_u64().unwrap_or_else(|| panic!("{k}: {p}"));
    println!(
        "received {} = verified directly {} + replayed from the DLQ {}",
        n("received"),
        n("verified_direct"),
        n("replayed_from_dlq")
    );
    assert_eq!(n("received"), n("verified_direct") + n("replayed_from_dlq"), "nothing lost: {p}");
    assert_eq!((n("in_dlq"), n("unverified")), (0, 0), "{p}");
    drop((a2, b));
}

/// A worker of another build on 127.0.0.1, in this test process: it speaks the worker protocol's
/// handshake (reads the token frame, says hello) as a build that is not this one, to every
/// coordinator that connects.
fn worker_of_another_build() -> String {
    use anes_workers::protocol::{BuildInfo, PROTOCOL_VERSION, Reply, encode_reply};
    use std::io::{Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let build = BuildInfo {
        version: "0.0.9-other".into(),
        git_commit: Some("0badc0de".into()),
        ..BuildInfo::current()
    };
    let mut hello = Vec::new();
    encode_reply(&Reply::Hello { protocol_version: PROTOCOL_VERSION, build }, &mut hello);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().map_while(Result::ok) {
            let hello = hello.clone();
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
                let _ = stream.write_all(&hello);
                let _ = stream.read_to_end(&mut Vec::new());
            });
        }
    });
    address
}

#[test]
fn a_worker_of_another_build_is_refused_with_the_reason_on_the_status_page() {
    let dir = temp_dir("serve-remote");
    let token_file = dir.0.join("worker-token");
    std::fs::write(&token_file, "remote-test-token\n").unwrap();
    let a = Worker::start("127.0.0.1:0", &token_file);
    let other = worker_of_another_build();
    let pipeline = format!(
        "[[pipeline]]\nid = \"p\"\nworkers = \"remote\"\n\n\
         [pipeline.remote]\na = \"{}\"\nb = \"{other}\"\ntoken_file = \"{}\"\n",
        a.address,
        token_file.display()
    );
    let mut serve = Serve::start(&dir.0, "serve", &pipeline, &dir.0.join("data"));
    let status = serve.wait_for("worker B refused", Duration::from_secs(30), |s| {
        let st = s.status()?;
        st["workers"][1]["last_exit"].as_str()?.contains("another build").then_some(st)
    });
    let reason = status["workers"][1]["last_exit"].as_str().unwrap().to_string();
    assert!(
        reason.contains("0.0.9-other (commit 0badc0de") && reason.contains("this coordinator runs 0.1.0"),
        "{reason}"
    );
    assert!(status["workers"][1]["build"].is_null(), "its hello never reached the pipeline: {status}");
    // Refused on every attempt: never up, never verifying.
    for _ in 0..5 {
        assert_eq!(serve.worker_up("b"), Some(0.0));
        assert_eq!(frames_verified(&serve.status().unwrap()), 0);
        std::thread::sleep(Duration::from_millis(100));
    }
    let page = serve.get("/").unwrap();
    assert!(page.contains("worker b exited: refused: the worker runs another build"), "{page}");
    let log = serve.log();
    assert!(log.lines().any(|l| l.contains("another build") && l.contains("0badc0de")), "logged:\n{log}");
    drop(serve);
    drop(a);
}

#[test]
fn a_pipeline_runs_against_workers_over_tls() {
    let dir = temp_dir("serve-remote");
    let token_file = dir.0.join("worker-token");
    std::fs::write(&token_file, "remote-test-token\n").unwrap();
    // A self-signed pair made now, for the name the coordinator is told to expect.
    let pair = rcgen::generate_simple_self_signed(vec!["dual-worker.anes".to_string()]).unwrap();
    let (cert, key) = (dir.0.join("worker.crt"), dir.0.join("worker.key"));
    std::fs::write(&cert, pair.cert.pem()).unwrap();
    std::fs::write(&key, pair.signing_key.serialize_pem()).unwrap();
    let tls: [&Path; 4] = [Path::new("--tls-cert"), &cert, Path::new("--tls-key"), &key];
    let a = Worker::start_with("127.0.0.1:0", &token_file, &tls);
    let b = Worker::start_with("127.0.0.1:0", &token_file, &tls);
    let pipeline = format!(
        "[[pipeline]]\nid = \"p\"\nworkers = \"remote\"\n\n\
         [pipeline.remote]\na = \"{}\"\nb = \"{}\"\ntoken_file = \"{}\"\ntls_ca = \"{}\"\n\
         tls_server_name = \"dual-worker.anes\"\n",
        a.address,
        b.address,
        token_file.display(),
        cert.display()
    );
    let mut serve = Serve::start(&dir.0, "serve", &pipeline, &dir.0.join("data"));
    serve.wait_for("1 s of frames verified by the TLS workers", Duration::from_secs(60), |s| {
        s.status().filter(|st| frames_verified(st) >= 60 && st["mode"] == "normal")
    });
    assert_eq!((serve.worker_up("a"), serve.worker_up("b")), (Some(1.0), Some(1.0)));
    drop(serve);
    drop((a, b));
}
