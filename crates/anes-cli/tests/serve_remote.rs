//! Remote workers (issue 25, first slice): `anes serve` with `workers = "remote"` runs a pipeline
//! against two `anes worker --listen 127.0.0.1:0` processes, verifies frames, notices a worker killed
//! with `kill -9`, and returns to normal once a new worker listens on the same port, with nothing
//! acknowledged lost (received = verified directly + replayed from the dead-letter queue).
//!
//! Every process started here listens on 127.0.0.1 and is stopped by PID on every exit path.

mod support;

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
