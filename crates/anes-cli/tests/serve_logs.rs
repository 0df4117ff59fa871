//! `anes serve --log-format json` through a divergence, a rollback and a shutdown: every line is one
//! JSON object whose keys appear once and whose values are plain (no Rust debug formatting).
//! The service is stopped by PID on every exit path.

mod support;

use std::collections::BTreeSet;
use std::fmt;
use std::io::Read;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use support::{Guard, TempDir, agent, get_json};

/// A JSON object read key by key, refusing a key seen before (`serde_json::Value` keeps the last).
struct UniqueKeys(Vec<(String, Value)>);

impl<'de> de::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<UniqueKeys, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = UniqueKeys;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<UniqueKeys, M::Error> {
                let mut seen = BTreeSet::new();
                let mut fields = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Value>()? {
                    if !seen.insert(key.clone()) {
                        return Err(de::Error::custom(format!("key {key:?} appears twice")));
                    }
                    fields.push((key, value));
                }
                Ok(UniqueKeys(fields))
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

/// Rust's `Debug` output where a plain value belongs: `Some(..)`, `None`, `Fault("..")`, `[A, B]`,
/// `Name { .. }`.
fn debug_formatted(text: &str) -> bool {
    let variant = |t: &str| {
        t.split_once('(').is_some_and(|(name, rest)| {
            !name.is_empty()
                && name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                && name.chars().all(|c| c.is_ascii_alphanumeric())
                && rest.ends_with(')')
        })
    };
    let structure = |t: &str| {
        t.split_once(" { ").is_some_and(|(name, _)| {
            name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                && name.chars().all(|c| c.is_ascii_alphanumeric())
        })
    };
    text == "None" || variant(text) || structure(text) || (text.starts_with('[') && text.ends_with(']'))
}

#[test]
fn json_log_lines_have_each_key_once_and_plain_values() {
    let dir = TempDir(std::env::temp_dir().join(format!("anes-serve-logs-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    std::fs::write(dir.0.join("token"), "t0ken\n").unwrap();
    std::fs::write(
        dir.0.join("anes.toml"),
        format!(
            "[server]\nlisten = \"127.0.0.1:{port}\"\ntoken_file = \"token\"\ndrill = true\n\
             evidence_dir = \"evidence\"\ndata_dir = \"data\"\n\
             [[pipeline]]\nid = \"p\"\nrollback = \"immediate\"\n"
        ),
    )
    .unwrap();
    let mut serve = Guard(
        Command::new(env!("CARGO_BIN_EXE_anes"))
            .args(["serve", "--log-format", "json", "--config"])
            .arg(dir.0.join("anes.toml"))
            .env("ANES_LOG", "info")
            .env_remove("ANES_TOKEN")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let agent = agent();
    let url = format!("http://127.0.0.1:{port}/v1/pipelines/p");
    let wait = |what: &str, done: &dyn Fn(&Value) -> bool| {
        let start = Instant::now();
        loop {
            if get_json(&agent, &url).is_some_and(|s| done(&s)) {
                return;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    wait("frames verified", &|s| s["frames_verified"].as_u64() > Some(30));
    let response = agent
        .post(&format!("{url}/drill"))
        .header("Authorization", "Bearer t0ken")
        .header("Content-Type", "application/json")
        .send(r#"{"worker": "b", "fault": "flip:ram:0x07f0:3"}"#)
        .unwrap();
    assert_eq!(response.status().as_u16(), 202);
    wait("the rollback", &|s| s["rollbacks_succeeded"].as_u64() >= Some(1) && s["mode"] == "normal");
    Command::new("kill").args(["-TERM", &serve.0.id().to_string()]).status().unwrap();
    let mut stderr = String::new();
    serve.0.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(serve.0.wait().unwrap().success(), "{stderr}");

    let mut messages = Vec::new();
    for line in stderr.lines() {
        let UniqueKeys(fields) =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: not one JSON object per key: {line}"));
        for (key, value) in &fields {
            if let Some(text) = value.as_str() {
                assert!(!debug_formatted(text), "{key} is Rust debug formatting: {line}");
            }
            assert!(!value.is_object() && !value.is_array(), "{key} is not a plain value: {line}");
        }
        let message = fields.iter().find(|(k, _)| k == "message").and_then(|(_, v)| v.as_str());
        messages.push((message.unwrap_or_else(|| panic!("no message: {line}")).to_string(), line));
    }
    // The lines the issue found faulty are among those checked.
    for expected in [
        "worker started",
        "drill",
        "injected fault fired",
        "divergence: the pipeline is read-only",
        "rollback started",
        "pipeline stopped",
    ] {
        assert!(messages.iter().any(|(m, _)| m == expected), "no {expected:?} line in\n{stderr}");
    }
    let divergence = messages.iter().find(|(m, _)| m == "divergence: the pipeline is read-only").unwrap().1;
    let divergence: Value = serde_json::from_str(divergence).unwrap();
    assert!(divergence["detail"].as_str().is_some_and(|d| d.contains("worker")), "{divergence}");
}

#[test]
fn the_debug_format_detector_knows_the_faulty_values() {
    for faulty in ["Some(\"0123abc\")", "None", "Fault(\"flip:ram:0x07f0:3\")", "[A, B]", "Stall { secs: 1 }"]
    {
        assert!(debug_formatted(faulty), "{faulty}");
    }
    for plain in ["0123abc", "fault flip:ram:0x07f0:3", "a,b", "divergence (state) at frame 7", "worker b"] {
        assert!(!debug_formatted(plain), "{plain}");
    }
}
