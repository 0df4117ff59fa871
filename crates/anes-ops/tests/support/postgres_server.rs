//! A real PostgreSQL server (Debian's `postgresql` package) for tests: a new cluster made by `initdb`
//! in a temporary directory, on 127.0.0.1 and a free port, its socket in that directory, user `anes`
//! with `trust` authentication, `fsync=off` (these tests are about the store's rules, not the disk's;
//! a benchmark starts it with fsync on).
//! PostgreSQL refuses to run as root: as root, `initdb` and `pg_ctl` run as user `postgres` through
//! `runuser`, on a directory it owns. Stopped on drop (every exit path, panics included) by `pg_ctl
//! stop`, then by the postmaster's PID if it is still there. The tests that need it are
//! `#[ignore]`d; `.ci/run` installs it (`scripts/install-ops-servers.sh --postgres`) and runs them.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A running PostgreSQL cluster this test made.
pub struct PostgresServer {
    pub port: u16,
    pub dir: PathBuf,
    bin: PathBuf,
    as_root: bool,
    running: bool,
    /// fsync on (a benchmark of what a commit costs), instead of off (tests of the store's rules).
    durable: bool,
}

/// The newest `/usr/lib/postgresql/<version>/bin` holding `initdb` and `pg_ctl`.
fn bin_dir() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin): &(u32, PathBuf)| bin.join("initdb").exists() && bin.join("pg_ctl").exists())
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// Whether PostgreSQL's server programs are installed. Tests never install them: `.ci/run` does, as
/// does `bash scripts/install-ops-servers.sh --postgres`.
pub fn installed() -> bool {
    bin_dir().is_some()
}

/// For a bench, which measures what is there: whether it is installed, saying so when it is not.
pub fn installed_for(what: &str) -> bool {
    let installed = installed();
    if !installed {
        println!(
            "{what} skipped: PostgreSQL is not installed (bash scripts/install-ops-servers.sh --postgres)"
        );
    }
    installed
}

/// For a test marked `#[ignore = "needs PostgreSQL"]`, run by `--include-ignored`: fails with the
/// command that installs the server when it is missing.
pub fn require(test: &str) {
    assert!(
        installed(),
        "{test} needs PostgreSQL: bash scripts/install-ops-servers.sh --postgres installs it"
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| o.stdout.trim_ascii() == b"0").unwrap_or(false)
}

impl PostgresServer {
    /// Makes a cluster and starts it (`pg_ctl start` waits until it accepts connections, at most 30 s).
    pub fn start(name: &str) -> PostgresServer {
        PostgresServer::start_with(name, false)
    }

    /// [`PostgresServer::start`], with fsync on when `durable` (every commit on disk before it
    /// returns, as a production server runs).
    pub fn start_with(name: &str, durable: bool) -> PostgresServer {
        let dir = std::env::temp_dir().join(format!(
            "anes-postgres-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let as_root = is_root();
        let mut server = PostgresServer {
            port: free_port(),
            dir,
            bin: bin_dir().expect("PostgreSQL is installed (require checked)"),
            as_root,
            running: false,
            durable,
        };
        if as_root {
            let status = Command::new("chown").arg("postgres:postgres").arg(&server.dir).status().unwrap();
            assert!(status.success(), "chown postgres {}", server.dir.display());
        }
        let data = server.data();
        let output = server
            .command("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-A", "trust", "-U", "anes", "--no-sync", "-E", "UTF8"])
            .output()
            .unwrap();
        assert!(output.status.success(), "initdb: {}", String::from_utf8_lossy(&output.stderr));
        server.restart();
        server
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// A PostgreSQL program, run as `postgres` when this test runs as root.
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        let mut command = if self.as_root {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        };
        command.stdin(Stdio::null());
        command
    }

    /// `postgres://anes@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        format!("postgres://anes@127.0.0.1:{}/postgres", self.port)
    }

    /// Starts it (again) on the same port and directory.
    pub fn restart(&mut self) {
        self.stop();
        let fsync = if self.durable { "on" } else { "off" };
        let options = format!("-k {} -p {} -h 127.0.0.1 -c fsync={fsync}", self.dir.display(), self.port);
        let started = Instant::now();
        let output = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-o", &options, "-l"])
            .arg(self.dir.join("log"))
            .args(["-w", "-t", "30", "start"])
            .output()
            .unwrap();
        self.running = true;
        let log = std::fs::read_to_string(self.dir.join("log")).unwrap_or_default();
        assert!(output.status.success(), "pg_ctl start: {}\n{log}", String::from_utf8_lossy(&output.stderr));
        assert!(started.elapsed() < Duration::from_secs(30));
    }

    fn postmaster_pid(&self) -> Option<i32> {
        let text = std::fs::read_to_string(self.data().join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// Stops it (`pg_ctl stop -m fast`: sessions are cut, as by a crash from the clients' side); kills
    /// the postmaster by PID when that fails.
    pub fn stop(&mut self) {
        self.stop_with("fast");
    }

    /// Stops it as a crash would (`-m immediate`: every backend quits at once). A fast stop ends the
    /// sessions one by one, so a transaction waiting on a lock the first one held may still commit.
    pub fn stop_immediately(&mut self) {
        self.stop_with("immediate");
    }

    fn stop_with(&mut self, mode: &str) {
        if !self.running {
            return;
        }
        self.running = false;
        let pid = self.postmaster_pid();
        let stopped = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-m", mode, "-w", "-t", "20", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !stopped && let Some(pid) = pid {
            // The PID the postmaster wrote: exactly the server this test started.
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    }

    /// A plain client.
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url(), postgres::NoTls).unwrap()
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
