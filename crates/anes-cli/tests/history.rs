//! Issue 44's history checker, in the manner of Jepsen: producers record every acknowledgement while
//! a nemesis applies random faults to real coordinators (`anes serve` processes, each with its own
//! data directory) on a real shared store (PostgreSQL, Redis, moto's S3, started here), then the
//! history is checked: the final owner verified every acknowledged record exactly once and in order
//! (its final checkpoint's state hash is that of one console that ran exactly the records
//! `0..received`, `received` is at least what was acknowledged, and the store's journal holds each
//! record as it was sent), or, after damage, refused to start naming exactly the damaged range.
//!
//! Faults: kill -9 of a worker (a crash drill) or of the coordinator (restarted on its data
//! directory), a second coordinator taking the pipeline over, the pipeline moved back to an earlier
//! coordinator, partitions between the coordinators and the store (a proxy that cuts every connection
//! and black-holes new ones), the store server restarted (Redis with `appendfsync always`, PostgreSQL;
//! not moto, which keeps nothing across a restart), and a journal batch damaged while every
//! coordinator is stopped.
//!
//! Rounds per backend: `ANES_HISTORY_ROUNDS` (default 2; `ANES_LONG=1`: 334, about 1,000 in all).
//! `ANES_HISTORY_SEED` replays a run; every failure names its round and seed.

#[path = "../../anes-ops/tests/support/postgres_server.rs"]
mod postgres_server;
#[path = "../../anes-ops/tests/support/redis_server.rs"]
mod redis_server;
#[path = "../../anes-ops/tests/support/s3_server.rs"]
mod s3_server;
mod support;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anes_ops::store::{CheckpointStore, JournalStore};
use support::coordinator::{Coordinator, Endpoint, Ledger, PIPELINE, input, pipeline_toml, reference_hash};
use support::{TempDir, TempFile};

/// A TCP proxy between the coordinators and the store: a partition cuts every connection through it
/// and refuses new ones (accepted and closed at once, as a link taken down answers) until it heals.
struct StoreProxy {
    port: u16,
    partitioned: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
    stop: Arc<AtomicBool>,
}

impl StoreProxy {
    fn start(target: u16) -> StoreProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let partitioned = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (p, o, s) = (Arc::clone(&partitioned), Arc::clone(&open), Arc::clone(&stop));
        std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                let Ok((client, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                };
                let _ = client.set_nonblocking(false);
                if p.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                // A store that is down refuses the connection: so does the proxy.
                let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                o.lock().unwrap().push(client.try_clone().unwrap());
                o.lock().unwrap().push(server.try_clone().unwrap());
                for (mut from, mut to) in
                    [(client.try_clone().unwrap(), server.try_clone().unwrap()), (server, client)]
                {
                    std::thread::spawn(move || {
                        let mut buffer = [0u8; 16 << 10];
                        while let Ok(n) = from.read(&mut buffer) {
                            if n == 0 || to.write_all(&buffer[..n]).is_err() {
                                break;
                            }
                        }
                        let _ = to.shutdown(Shutdown::Both);
                        let _ = from.shutdown(Shutdown::Both);
                    });
                }
            }
        });
        StoreProxy { port, partitioned, open, stop }
    }

    /// Starts (cutting every connection through the proxy) or ends a partition.
    fn partition(&self, on: bool) {
        self.partitioned.store(on, Ordering::SeqCst);
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for StoreProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.partition(false);
    }
}

enum Server {
    Redis(redis_server::RedisServer),
    Postgres(postgres_server::PostgresServer),
    /// With an AWS credentials file moto accepts.
    S3(s3_server::S3Server, TempFile),
}

const BUCKET: &str = "anes-history";

impl Server {
    fn name(&self) -> &'static str {
        match self {
            Server::Redis(_) => "redis",
            Server::Postgres(_) => "postgres",
            Server::S3(..) => "s3",
        }
    }

    fn port(&self) -> u16 {
        match self {
            Server::Redis(s) => s.port,
            Server::Postgres(s) => s.port,
            Server::S3(s, _) => s.endpoint().rsplit(':').next().unwrap().parse().unwrap(),
        }
    }

    /// `[pipeline.store]` keys reaching the store through the proxy on `port`, round `round`.
    fn store_toml(&self, port: u16, round: usize) -> String {
        match self {
            Server::Redis(_) => format!(
                "backend = \"redis\"\nurl = \"redis://127.0.0.1:{port}/0\"\nkept = 256\nretry_base_seconds = 0.2\nretry_cap_seconds = 1"
            ),
            Server::Postgres(_) => format!(
                "backend = \"postgres\"\nurl = \"postgres://anes@127.0.0.1:{port}/postgres\"\nkept = 256\nretry_base_seconds = 0.2\nretry_cap_seconds = 1"
            ),
            Server::S3(_, credentials) => format!(
                "backend = \"s3\"\nendpoint = \"http://127.0.0.1:{port}\"\nbucket = \"{BUCKET}\"\nprefix = \"r{round}\"\nregion = \"us-east-1\"\ncredentials_file = \"{}\"\nkept = 256\nretry_base_seconds = 0.2\nretry_cap_seconds = 1",
                credentials.display()
            ),
        }
    }

    /// The store of round `round` opened directly (not through the proxy).
    fn stores(&self, round: usize) -> (Box<dyn CheckpointStore>, Box<dyn JournalStore>) {
        let config = anes_ops::config::Config::parse(
            &format!(
                "[[pipeline]]\nid = \"{PIPELINE}\"\n[pipeline.store]\n{}\n",
                self.store_toml(self.port(), round)
            ),
            "history.toml",
        )
        .unwrap();
        let p = &config.pipelines[0];
        (
            anes_ops::recovery::open_store(p, Path::new("/nonexistent")).unwrap(),
            anes_ops::recovery::open_journal_store(p).unwrap().unwrap(),
        )
    }

    /// A clean slate for the next round (S3 rounds use a prefix of their own).
    fn reset(&mut self) {
        match self {
            Server::Redis(s) => {
                let mut c = s.connection();
                redis::cmd("FLUSHALL").query::<()>(&mut c).unwrap();
                redis::cmd("CONFIG").arg("SET").arg("appendfsync").arg("always").query::<()>(&mut c).unwrap();
            }
            Server::Postgres(s) => {
                let mut c = s.client();
                for table in ["anes_journal", "anes_store_checkpoints", "anes_store_epochs"] {
                    let _ = c.execute(&format!("DELETE FROM {table}"), &[]);
                }
            }
            Server::S3(..) => {}
        }
    }

    fn can_restart(&self) -> bool {
        !matches!(self, Server::S3(..))
    }

    fn restart(&mut self) {
        match self {
            Server::Redis(s) => {
                s.restart();
                let mut c = s.connection();
                redis::cmd("CONFIG").arg("SET").arg("appendfsync").arg("always").query::<()>(&mut c).unwrap();
            }
            Server::Postgres(s) => s.restart(),
            Server::S3(..) => unreachable!("moto keeps nothing across a restart"),
        }
    }

    /// Flips the last byte of the stored batch that starts at `first`.
    fn damage(&self, round: usize, first: u64, epoch: u64) {
        match self {
            Server::Redis(s) => {
                let mut c = s.connection();
                let key = format!("pipeline:{PIPELINE}:journal");
                let members: Vec<Vec<u8>> =
                    redis::cmd("ZRANGEBYSCORE").arg(&key).arg(first).arg(first).query(&mut c).unwrap();
                let mut batch = members[0].clone();
                let last = batch.len() - 1;
                batch[last] ^= 1;
                redis::cmd("ZREM").arg(&key).arg(&members[0]).query::<()>(&mut c).unwrap();
                redis::cmd("ZADD").arg(&key).arg(first).arg(batch).query::<()>(&mut c).unwrap();
            }
            Server::Postgres(s) => {
                let mut c = s.client();
                let first = first as i64;
                let row = c
                    .query_one(
                        "SELECT batch FROM anes_journal WHERE pipeline = $1 AND first_seq = $2",
                        &[&PIPELINE, &first],
                    )
                    .unwrap();
                let mut batch: Vec<u8> = row.get(0);
                let last = batch.len() - 1;
                batch[last] ^= 1;
                c.execute(
                    "UPDATE anes_journal SET batch = $3 WHERE pipeline = $1 AND first_seq = $2",
                    &[&PIPELINE, &first, &batch],
                )
                .unwrap();
            }
            Server::S3(s, _) => {
                let key = format!("r{round}/{PIPELINE}/journal/{first:020}-{epoch:020}.ajb");
                let mut bytes = s.get(BUCKET, &key).unwrap_or_else(|| panic!("no object {key}"));
                let last = bytes.len() - 1;
                bytes[last] ^= 1;
                s.put(BUCKET, &key, bytes);
            }
        }
    }
}

/// A small seeded generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    KillWorker,
    KillCoordinator,
    Takeover,
    MoveBack,
    Partition,
    StoreRestart,
    Damage,
}

/// The coordinators of one round: each with its own data directory; `owner` is the newest to have
/// taken the pipeline over.
struct Fleet<'a> {
    dir: &'a Path,
    pipelines: String,
    running: Vec<(String, Coordinator)>,
    stopped: Vec<String>,
    owner: String,
    endpoint: Arc<Mutex<Endpoint>>,
    next_name: usize,
}

impl Fleet<'_> {
    fn start(&mut self, name: &str) {
        let c = Coordinator::start(self.dir, name, &self.pipelines, &self.dir.join(format!("data-{name}")));
        *self.endpoint.lock().unwrap() = c.endpoint();
        self.owner = name.to_string();
        self.running.push((name.to_string(), c));
    }

    fn owner_mut(&mut self) -> &mut Coordinator {
        let owner = self.owner.clone();
        &mut self.running.iter_mut().find(|(n, _)| *n == owner).expect("the owner runs").1
    }

    fn fresh_name(&mut self) -> String {
        self.next_name += 1;
        format!("c{}", self.next_name)
    }

    fn kill(&mut self, name: &str) {
        if let Some(i) = self.running.iter().position(|(n, _)| n == name) {
            let (n, mut c) = self.running.remove(i);
            c.kill_9();
            self.stopped.push(n);
        }
    }
}

/// What all rounds of one backend saw.
#[derive(Debug, Default)]
struct Totals {
    rounds: usize,
    faults: BTreeMap<String, usize>,
    acknowledged: u64,
    damage_refusals: usize,
    damage_unneeded: usize,
}

fn round(
    server: &mut Server,
    proxy: &StoreProxy,
    dir: &Path,
    round: usize,
    rng: &mut Rng,
    totals: &mut Totals,
) {
    let backend = server.name();
    server.reset();
    let pipelines = pipeline_toml(&server.store_toml(proxy.port, round), 10, 10, "");
    let endpoint = Arc::new(Mutex::new(Endpoint { name: String::new(), port: 0 }));
    let mut fleet = Fleet {
        dir,
        pipelines,
        running: Vec::new(),
        stopped: Vec::new(),
        owner: String::new(),
        endpoint: Arc::clone(&endpoint),
        next_name: 0,
    };
    let first = fleet.fresh_name();
    fleet.start(&first);
    // The producer: pushes to whoever owns the pipeline as it learns it; trusts only acknowledgements.
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let producer = {
        let (ledger, stop, endpoint) = (Arc::clone(&ledger), Arc::clone(&stop), Arc::clone(&endpoint));
        let mut local = Rng(rng.below(u64::MAX) | 1);
        std::thread::spawn(move || {
            let mut next = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let target = endpoint.lock().unwrap().clone();
                let n = 1 + local.below(20);
                if !ledger.lock().unwrap().push(&target, &mut next, n) {
                    std::thread::sleep(Duration::from_millis(30));
                    next = next.min(ledger.lock().unwrap().acked);
                }
                std::thread::sleep(Duration::from_millis(5 + local.below(30)));
            }
        })
    };
    let mut faults = Vec::new();
    let count = 1 + rng.below(3);
    for _ in 0..count {
        std::thread::sleep(Duration::from_millis(300 + rng.below(1200)));
        let mut choices = vec![Fault::KillWorker, Fault::KillCoordinator, Fault::Takeover, Fault::Partition];
        if !fleet.stopped.is_empty() || fleet.running.len() > 1 {
            choices.push(Fault::MoveBack);
        }
        if server.can_restart() {
            choices.push(Fault::StoreRestart);
        }
        let fault = choices[rng.below(choices.len() as u64) as usize];
        faults.push(fault);
        match fault {
            Fault::KillWorker => {
                let worker = if rng.below(2) == 0 { "a" } else { "b" };
                let port = fleet.owner_mut().port;
                let _ = support::agent()
                    .post(&format!("http://127.0.0.1:{port}/v1/pipelines/{PIPELINE}/drill"))
                    .header("Authorization", &format!("Bearer {}", support::coordinator::TOKEN))
                    .header("Content-Type", "application/json")
                    .send(&format!("{{\"worker\": \"{worker}\", \"crash\": true}}"));
            }
            Fault::KillCoordinator => {
                let owner = fleet.owner.clone();
                fleet.kill(&owner);
                fleet.stopped.retain(|n| *n != owner);
                std::thread::sleep(Duration::from_millis(rng.below(800)));
                fleet.start(&owner);
            }
            Fault::Takeover => {
                let name = fleet.fresh_name();
                fleet.start(&name);
            }
            Fault::MoveBack => {
                // Back to an earlier coordinator's data directory: stopped first if it still runs.
                let earlier: Vec<String> = fleet
                    .stopped
                    .iter()
                    .cloned()
                    .chain(fleet.running.iter().map(|(n, _)| n.clone()).filter(|n| *n != fleet.owner))
                    .collect();
                let name = earlier[rng.below(earlier.len() as u64) as usize].clone();
                fleet.kill(&name);
                fleet.stopped.retain(|n| *n != name);
                fleet.start(&name);
            }
            Fault::Partition => {
                proxy.partition(true);
                std::thread::sleep(Duration::from_millis(1000 + rng.below(3000)));
                proxy.partition(false);
            }
            Fault::StoreRestart => server.restart(),
            Fault::Damage => unreachable!(),
        }
    }
    std::thread::sleep(Duration::from_millis(500 + rng.below(1000)));
    stop.store(true, Ordering::SeqCst);
    producer.join().unwrap();
    let ledger = ledger.lock().unwrap().clone();
    assert!(
        ledger.lost.is_empty(),
        "{backend} round {round} ({faults:?}): lost acknowledged records: {:?}",
        ledger.lost
    );
    // One round in five ends in damage: every coordinator stopped, a needed batch flipped, and the next
    // start must refuse naming exactly its range (or start with everything, when no record of it is
    // needed after the newest checkpoint).
    let damage = rng.below(5) == 0;
    if damage {
        faults.push(Fault::Damage);
        for (name, _) in fleet.running.iter().map(|(n, _)| (n.clone(), ())).collect::<Vec<_>>() {
            fleet.kill(&name);
        }
        let (mut checkpoints, mut journal) = server.stores(round);
        let newest = checkpoints.load().unwrap().verified.first().map_or(0, |c| c.header.frame);
        let epoch = checkpoints.current_epoch().unwrap();
        let contents = anes_ops::journal::read_shared(journal.as_mut(), 0).unwrap();
        let acknowledged = contents.acknowledged_end.unwrap();
        assert!(
            acknowledged >= ledger.acked,
            "{backend} round {round}: the store's end {acknowledged} is below {}",
            ledger.acked
        );
        let last = contents.batches.last().cloned();
        match last {
            Some(batch) if acknowledged > newest => {
                // The batch's own epoch names its object in S3: the newest epoch not above the store's
                // that wrote at its sequence number (any will do for the other stores).
                let written_by = (1..=epoch).rev().find(|e| match server {
                    Server::S3(s, _) => s
                        .get(
                            BUCKET,
                            &format!("r{round}/{PIPELINE}/journal/{:020}-{e:020}.ajb", batch.first_seq),
                        )
                        .is_some(),
                    _ => true,
                });
                server.damage(round, batch.first_seq, written_by.unwrap_or(epoch));
                let expected =
                    format!("records {}..{}", batch.first_seq.max(newest), batch.end().min(acknowledged));
                let name = fleet.fresh_name();
                let c = Coordinator::spawn(dir, &name, &fleet.pipelines, &dir.join(format!("data-{name}")));
                let (exit, log) = c.refused(Duration::from_secs(120));
                assert_eq!(exit.code(), Some(2), "{backend} round {round} ({faults:?}): {log}");
                let line = log.lines().find(|l| l.starts_with("error: ")).unwrap_or_default();
                assert!(
                    line.contains(&expected) && line.matches("records ").count() == 1,
                    "{backend} round {round} ({faults:?}): expected {expected}: {line}"
                );
                totals.damage_refusals += 1;
            }
            _ => totals.damage_unneeded += 1,
        }
    } else {
        let owner = fleet.owner.clone();
        let mut c =
            fleet.running.iter().position(|(n, _)| *n == owner).map(|i| fleet.running.remove(i).1).unwrap();
        let settled = c.wait_settled(Duration::from_secs(180));
        let received = settled["accounting"]["received"].as_u64().unwrap();
        assert!(
            received >= ledger.acked,
            "{backend} round {round} ({faults:?}): the owner holds {received}, {} were acknowledged",
            ledger.acked
        );
        let (report, log) = c.stop();
        assert_eq!(report["final_checkpoint_seq"], received, "{backend} round {round}: {report}\n{log}");
        assert_eq!(report["final_checkpoint_stored"], true, "{backend} round {round}: {report}");
        assert_eq!(
            report["final_state_hash"].as_str(),
            Some(reference_hash(received).as_str()),
            "{backend} round {round} ({faults:?}): the verified stream is not records 0..{received} once each, in order"
        );
        let (_, mut journal) = server.stores(round);
        let contents = anes_ops::journal::read_shared(journal.as_mut(), 0).unwrap();
        let held = contents.records_from(0).unwrap();
        assert!(
            held.len() as u64 >= received,
            "{backend} round {round} ({faults:?}): the journal holds {} records, the owner verified {received}",
            held.len()
        );
        for (seq, record) in held.frames().enumerate().take(received as usize) {
            let [a, b] = input(seq as u64);
            assert_eq!(
                record,
                anes_core::movie::FrameInput::buttons(a, b),
                "{backend} round {round}: record {seq}"
            );
        }
        for (name, _) in fleet.running.iter().map(|(n, _)| (n.clone(), ())).collect::<Vec<_>>() {
            fleet.kill(&name);
        }
    }
    totals.rounds += 1;
    totals.acknowledged += ledger.acked;
    for f in faults {
        *totals.faults.entry(format!("{f:?}")).or_default() += 1;
    }
}

fn rounds() -> usize {
    std::env::var("ANES_HISTORY_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if anes_fs::env_flag("ANES_LONG") { 334 } else { 2 })
}

fn check(mut server: Server) {
    let backend = server.name();
    let seed: u64 =
        std::env::var("ANES_HISTORY_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
        });
    let mut rng = Rng(seed | 1);
    let proxy = StoreProxy::start(server.port());
    let root = std::env::temp_dir().join(format!("anes-history-{backend}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let _temp = TempDir(root.clone());
    let mut totals = Totals::default();
    let started = Instant::now();
    let n = rounds();
    for r in 0..n {
        let dir: PathBuf = root.join(format!("round-{r}"));
        std::fs::create_dir_all(&dir).unwrap();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            round(&mut server, &proxy, &dir, r, &mut rng, &mut totals)
        }));
        if let Err(e) = result {
            // The coordinators' configurations and logs, kept for whoever reads the failure.
            let kept = std::env::temp_dir()
                .join(format!("anes-history-failed-{backend}-{}-round-{r}", std::process::id()));
            let _ = std::fs::rename(&dir, &kept);
            eprintln!(
                "history checker failed: backend {backend}, round {r}, ANES_HISTORY_SEED={seed}; logs kept in {}",
                kept.display()
            );
            std::panic::resume_unwind(e);
        }
        let _ = std::fs::remove_dir_all(&dir);
        // A long run's progress, so one stopped early still says what it checked.
        println!(
            "history checker, {backend}: round {r} passed ({} rounds, {} records acknowledged, {:.0} s so far)",
            totals.rounds,
            totals.acknowledged,
            started.elapsed().as_secs_f64()
        );
    }
    println!(
        "history checker, {backend}: {} rounds in {:.0} s (seed {seed}), faults {:?}; {} records acknowledged, 0 lost, 0 duplicated, 0 out of order; damage: {} refusals naming exactly the damaged range, {} rounds whose damaged batch no recovery needed",
        totals.rounds,
        started.elapsed().as_secs_f64(),
        totals.faults,
        totals.acknowledged,
        totals.damage_refusals,
        totals.damage_unneeded
    );
}

#[test]
#[ignore = "needs PostgreSQL (scripts/install-ops-servers.sh --postgres)"]
fn history_on_postgres() {
    postgres_server::require("history on postgres");
    check(Server::Postgres(postgres_server::PostgresServer::start("history")));
}

#[test]
#[ignore = "needs redis-server (scripts/install-ops-servers.sh --redis)"]
fn history_on_redis() {
    redis_server::require("history on redis");
    check(Server::Redis(redis_server::RedisServer::start("history")));
}

#[test]
#[ignore = "needs moto[server] (scripts/install-ops-servers.sh --moto)"]
fn history_on_s3() {
    s3_server::require("history on s3");
    let server = s3_server::S3Server::start("history");
    server.create_bucket(BUCKET);
    let credentials = TempFile::write(
        "history-aws",
        "credentials",
        b"[default]\naws_access_key_id = test\naws_secret_access_key = test\n",
    );
    check(Server::S3(server, credentials));
}
