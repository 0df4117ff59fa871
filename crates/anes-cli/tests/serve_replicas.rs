//! `anes serve --replica ORDINAL/COUNT` and `--replica-from-hostname COUNT`: a replica of a coordinator
//! StatefulSet runs exactly the pipelines the rule of `anes_ops::assign` gives it (the rule itself is
//! tested against its documented definition in that module), read back from `/v1/pipelines` and
//! `/metrics`. Every service is started on 127.0.0.1 with its own folders and killed by PID on every
//! exit path.

mod support;

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anes_ops::assign::replica_of;
use support::{Guard, TempDir, agent, get_json};

/// Four pushed pipelines; the rule gives replica 0 of 2 three of them and replica 1 one (the test
/// checks that both shares are proper subsets).
const IDS: [&str; 4] = ["alpha", "bravo", "charlie", "delta"];

fn anes() -> Command {
    Command::new(env!("CARGO_BIN_EXE_anes"))
}

fn temp_dir(name: &str) -> TempDir {
    TempDir::create(&format!("serve-replicas-{name}"))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Writes a configuration with the four pipelines on `port` into `dir`.
fn write_config(dir: &Path, port: u16) -> std::path::PathBuf {
    let mut text = format!("[server]\nlisten = \"127.0.0.1:{port}\"\n");
    for id in IDS {
        text += &format!("[[pipeline]]\nid = \"{id}\"\n[pipeline.input]\nsource = \"push\"\n");
    }
    let path = dir.join("anes.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `serve` with `args` on the configuration in `dir`; stderr to `dir/stderr`.
fn start(dir: &Path, port: u16, args: &[&str]) -> Guard {
    let config = write_config(dir, port);
    Guard(
        anes()
            .args(["serve", "--config"])
            .arg(&config)
            .arg("--data-dir")
            .arg(dir.join("data"))
            .args(args)
            .env_remove("ANES_TOKEN")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
            .spawn()
            .unwrap(),
    )
}

/// The pipeline ids `/v1/pipelines` lists, once the service answers (within 60 s).
fn served_pipelines(serve: &mut Guard, port: u16, dir: &Path) -> BTreeSet<String> {
    let agent = agent();
    let start = Instant::now();
    loop {
        if let Some(list) = get_json(&agent, &format!("http://127.0.0.1:{port}/v1/pipelines")) {
            return list.as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap().to_string()).collect();
        }
        if let Some(status) = serve.0.try_wait().unwrap() {
            panic!(
                "serve exited with {status}: {}",
                std::fs::read_to_string(dir.join("stderr")).unwrap_or_default()
            );
        }
        assert!(start.elapsed() < Duration::from_secs(60), "serve did not answer within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The pipeline ids whose design gauge `/metrics` exports.
fn exported_pipelines(port: u16) -> BTreeSet<String> {
    let mut response = agent().get(&format!("http://127.0.0.1:{port}/metrics")).call().unwrap();
    let text = response.body_mut().read_to_string().unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("worker_state_divergence_flag{pipeline_id=\""))
        .map(|rest| rest.split('"').next().unwrap().to_string())
        .collect()
}

fn share(ordinal: u32, count: u32) -> BTreeSet<String> {
    IDS.iter().filter(|id| replica_of(id, count) == ordinal).map(|id| id.to_string()).collect()
}

#[test]
fn each_of_two_replicas_runs_exactly_its_share() {
    // Without the filter every replica would run all four: the shares must be proper subsets.
    for ordinal in 0..2 {
        assert!(
            !share(ordinal, 2).is_empty() && share(ordinal, 2).len() < IDS.len(),
            "pick other ids: replica {ordinal}/2 gets {:?}",
            share(ordinal, 2)
        );
    }
    let mut seen = BTreeSet::new();
    for ordinal in 0..2 {
        let dir = temp_dir(&format!("share-{ordinal}"));
        let port = free_port();
        let mut serve = start(&dir.0, port, &["--replica", &format!("{ordinal}/2")]);
        let served = served_pipelines(&mut serve, port, &dir.0);
        assert_eq!(served, share(ordinal, 2), "replica {ordinal}/2 via /v1/pipelines");
        assert_eq!(exported_pipelines(port), share(ordinal, 2), "replica {ordinal}/2 via /metrics");
        let log = std::fs::read_to_string(dir.0.join("stderr")).unwrap();
        let expected = format!("replica {ordinal}/2 runs {} of the 4 configured pipelines", served.len());
        assert!(log.contains(&expected), "{log}");
        assert!(seen.is_disjoint(&served), "two replicas run {:?}", seen.intersection(&served));
        seen.extend(served);
    }
    assert_eq!(seen.len(), IDS.len(), "every pipeline runs somewhere");
}

#[test]
fn a_replica_without_pipelines_serves_http_and_says_so() {
    // Eight replicas for four pipelines: at least four have none.
    let ordinal = (0..8).find(|&r| share(r, 8).is_empty()).unwrap();
    let dir = temp_dir("empty");
    let port = free_port();
    let mut serve = start(&dir.0, port, &["--replica", &format!("{ordinal}/8")]);
    assert!(served_pipelines(&mut serve, port, &dir.0).is_empty());
    let agent = agent();
    for path in ["/healthz", "/readyz", "/metrics", "/"] {
        let response = agent.get(&format!("http://127.0.0.1:{port}{path}")).call().unwrap();
        assert_eq!(response.status(), 200, "{path}");
    }
    let log = std::fs::read_to_string(dir.0.join("stderr")).unwrap();
    assert!(
        log.contains(&format!(
            "replica {ordinal}/8 runs none of the 4 configured pipelines: serving the HTTP endpoints only"
        )),
        "{log}"
    );
}

/// Runs `serve ARGS` with the host name `hostname` in a UTS namespace of its own (needs root and
/// util-linux's unshare; `None` where that is not possible here).
fn start_with_hostname(dir: &Path, port: u16, hostname: &str, args: &[&str]) -> Option<Guard> {
    let probe = Command::new("unshare").args(["--uts", "hostname", "probe-0"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("note: unshare --uts is not available (not root?): host name test skipped");
        return None;
    }
    let config = write_config(dir, port);
    // `exec` twice (unshare execs sh, sh execs anes): the PID the guard holds is anes serve's.
    let script = format!(
        "hostname {hostname} && exec \"$0\" serve --config \"$1\" --data-dir \"$2\" {}",
        args.join(" ")
    );
    Some(Guard(
        Command::new("unshare")
            .args(["--uts", "sh", "-c", &script, env!("CARGO_BIN_EXE_anes")])
            .arg(&config)
            .arg(dir.join("data"))
            .env_remove("ANES_TOKEN")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
            .spawn()
            .unwrap(),
    ))
}

#[test]
fn the_ordinal_comes_from_the_pod_host_name() {
    let dir = temp_dir("hostname");
    let port = free_port();
    let Some(mut serve) =
        start_with_hostname(&dir.0, port, "anes-coordinator-1", &["--replica-from-hostname", "2"])
    else {
        return;
    };
    assert_eq!(served_pipelines(&mut serve, port, &dir.0), share(1, 2));
}

#[test]
fn a_host_name_without_an_ordinal_is_refused_naming_it() {
    for (hostname, problem) in [
        ("coordinator", "no StatefulSet ordinal"),
        ("anes-coordinator-x", "the suffix \"x\" is not a StatefulSet ordinal"),
        ("anes-coordinator-2", "ordinal 2 is not below the replica count 2"),
    ] {
        let dir = temp_dir(&format!("badhost-{hostname}"));
        let Some(mut serve) =
            start_with_hostname(&dir.0, free_port(), hostname, &["--replica-from-hostname", "2"])
        else {
            return;
        };
        let status = serve.0.wait().unwrap();
        let stderr = std::fs::read_to_string(dir.0.join("stderr")).unwrap();
        assert_eq!(status.code(), Some(2), "{hostname}: {stderr}");
        assert!(
            stderr.starts_with(&format!("error: host name \"{hostname}\": ")) && stderr.contains(problem),
            "{hostname}: {stderr}"
        );
    }
}

#[test]
fn a_bad_replica_option_is_refused() {
    for (given, problem) in [
        ("2/2", "ordinal 2 is not below the replica count 2"),
        ("1", "write ORDINAL/COUNT"),
        ("0/0", "0 replicas"),
    ] {
        let out = anes().args(["serve", "--replica", given]).env_remove("ANES_TOKEN").output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{given}: {stderr}");
        assert!(stderr.starts_with(&format!("error: --replica \"{given}\": {problem}")), "{given}: {stderr}");
    }
    let out = anes().args(["serve", "--replica", "0/2", "--replica-from-hostname", "2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "both options at once are refused by the argument parser");
}
