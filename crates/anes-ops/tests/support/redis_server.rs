//! A real `redis-server` (Debian's package) for tests: on 127.0.0.1, a free port, a `mktemp -d`-style
//! data directory, stopped by PID on drop (every exit path, panics included). The tests that need it are
//! `#[ignore]`d; `.ci/run` installs it (`scripts/install-ops-servers.sh --redis`) and runs them.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running redis-server this test started.
pub struct RedisServer {
    pub port: u16,
    pub dir: PathBuf,
    child: Option<Child>,
}

/// Whether `redis-server` is on the PATH. Tests never install it: `.ci/run` does, as does
/// `bash scripts/install-ops-servers.sh --redis`.
pub fn installed() -> bool {
    Command::new("redis-server").arg("--version").stdout(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// For a bench, which measures what is there: whether it is installed, saying so when it is not.
pub fn installed_for(what: &str) -> bool {
    let installed = installed();
    if !installed {
        println!(
            "{what} skipped: redis-server is not installed (bash scripts/install-ops-servers.sh --redis)"
        );
    }
    installed
}

/// For a test marked `#[ignore = "needs redis-server"]`, run by `--include-ignored`: fails with the
/// command that installs the server when it is missing.
pub fn require(test: &str) {
    assert!(
        installed(),
        "{test} needs redis-server: bash scripts/install-ops-servers.sh --redis installs it"
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl RedisServer {
    /// Starts one and waits until it answers (at most 10 s).
    pub fn start(name: &str) -> RedisServer {
        let dir = std::env::temp_dir().join(format!(
            "anes-redis-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let mut server = RedisServer { port: free_port(), dir, child: None };
        server.spawn();
        server
    }

    /// `redis://127.0.0.1:PORT/0`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    fn spawn(&mut self) {
        let log = std::fs::File::create(self.dir.join("redis.log")).unwrap();
        let child = Command::new("redis-server")
            .args([
                "--bind",
                "127.0.0.1",
                "--port",
                &self.port.to_string(),
                "--save",
                "",
                "--appendonly",
                "yes",
            ])
            .args(["--appendfsync", "everysec", "--protected-mode", "yes", "--daemonize", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .expect("starting redis-server");
        self.child = Some(child);
        let start = Instant::now();
        loop {
            if let Ok(client) = redis::Client::open(self.url())
                && let Ok(mut c) = client.get_connection_with_timeout(Duration::from_millis(200))
                && redis::cmd("PING").query::<String>(&mut c).is_ok()
            {
                return;
            }
            assert!(start.elapsed() < Duration::from_secs(10), "redis-server did not answer in 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the server (SIGKILL, by PID): every client loses it at once.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port and directory.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// A plain connection.
    pub fn connection(&self) -> redis::Connection {
        redis::Client::open(self.url()).unwrap().get_connection_with_timeout(Duration::from_secs(2)).unwrap()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
