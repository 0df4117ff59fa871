//! An S3-compatible server for tests: moto's standalone server (PyPI `moto[server]`), on 127.0.0.1
//! and a free port, in memory, stopped by PID on drop (every exit path, panics included). It accepts
//! any credentials and honours S3's conditional writes (`If-None-Match: *`, `If-Match`); moto checks
//! and writes in two steps, so `moto_serialized.py` runs its app one request at a time, which makes
//! each conditional write atomic as S3's are (stock moto lost an update to two writers both told 200
//! in the history checker's S3 rounds and in a stress of concurrent read-and-conditional-PUTs). The tests that need it are `#[ignore]`d;
//! `.ci/run` installs it (`scripts/install-ops-servers.sh --moto`) and runs them.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running moto server this test started.
pub struct S3Server {
    pub port: u16,
    child: Option<Child>,
    log: PathBuf,
}

fn moto_importable() -> bool {
    Command::new("python3")
        .args(["-c", "import moto.server"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether moto's server can be imported. Tests never install it: `.ci/run` does, as does
/// `bash scripts/install-ops-servers.sh --moto`.
pub fn installed() -> bool {
    moto_importable()
}

/// For a bench, which measures what is there: whether it is installed, saying so when it is not.
pub fn installed_for(what: &str) -> bool {
    let installed = installed();
    if !installed {
        println!(
            "{what} skipped: moto's S3 server is not installed (bash scripts/install-ops-servers.sh --moto)"
        );
    }
    installed
}

/// For a test marked `#[ignore = "needs moto[server]"]`, run by `--include-ignored`: fails with the
/// command that installs the server when it is missing.
pub fn require(test: &str) {
    assert!(
        installed(),
        "{test} needs moto's S3 server: bash scripts/install-ops-servers.sh --moto installs it"
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl S3Server {
    /// Starts one and waits until it answers (at most 30 s: moto imports a lot).
    pub fn start(name: &str) -> S3Server {
        let port = free_port();
        let log = std::env::temp_dir().join(format!("anes-moto-{name}-{}-{port}.log", std::process::id()));
        let file = std::fs::File::create(&log).unwrap();
        let child = Command::new("python3")
            .args(["-c", include_str!("moto_serialized.py"), "127.0.0.1", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::from(file.try_clone().unwrap()))
            .stderr(Stdio::from(file))
            .spawn()
            .expect("starting moto's server");
        let server = S3Server { port, child: Some(child), log };
        let start = Instant::now();
        let agent = ureq::Agent::new_with_config(
            ureq::Agent::config_builder()
                .timeout_global(Some(Duration::from_secs(2)))
                .http_status_as_error(false)
                .build(),
        );
        while agent.get(&server.endpoint()).call().is_err() {
            let log = std::fs::read_to_string(&server.log).unwrap_or_default();
            assert!(start.elapsed() < Duration::from_secs(30), "moto did not answer in 30 s:\n{log}");
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Creates a bucket (a plain `PUT /<bucket>`; moto does not ask for a signature there).
    pub fn create_bucket(&self, bucket: &str) {
        let response = ureq::put(&format!("{}/{bucket}", self.endpoint())).send_empty().unwrap();
        assert!(response.status().is_success(), "creating bucket {bucket}: {}", response.status());
    }

    /// Runs `op` on a signed client of `bucket` (moto refuses anonymous reads).
    fn with_client<T>(&self, bucket: &str, op: impl AsyncFnOnce(&object_store::aws::AmazonS3) -> T) -> T {
        let client = object_store::aws::AmazonS3Builder::new()
            .with_endpoint(self.endpoint())
            .with_allow_http(true)
            .with_bucket_name(bucket)
            .with_region("us-east-1")
            .with_access_key_id("test")
            .with_secret_access_key("test")
            .build()
            .unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(op(&client))
    }

    /// An object's bytes; `None` when it does not exist.
    pub fn get(&self, bucket: &str, key: &str) -> Option<Vec<u8>> {
        use object_store::ObjectStoreExt;
        self.with_client(bucket, async |c| match c.get(&key.into()).await {
            Ok(r) => Some(r.bytes().await.unwrap().to_vec()),
            Err(object_store::Error::NotFound { .. }) => None,
            Err(e) => panic!("GET {key}: {e}"),
        })
    }

    /// Replaces an object.
    pub fn put(&self, bucket: &str, key: &str, bytes: Vec<u8>) {
        use object_store::ObjectStoreExt;
        self.with_client(bucket, async |c| c.put(&key.into(), bytes.into()).await.unwrap());
    }

    /// Removes an object.
    pub fn delete(&self, bucket: &str, key: &str) {
        use object_store::ObjectStoreExt;
        self.with_client(bucket, async |c| c.delete(&key.into()).await.unwrap());
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_file(&self.log);
    }
}
