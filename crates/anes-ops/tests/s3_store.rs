//! The S3 checkpoint store against moto's standalone S3 server (started by the test, stopped by PID):
//! the shared store suite (`support/store_suite.rs`: round trip, retention, damaged objects, a stale
//! writer refused without its payload read, the fencing model), a takeover in the middle of a write
//! (between its check and its conditional PUT) refusing it, and the hot copy in Redis: used when it is
//! the newest checkpoint listed in S3, ignored otherwise (older, newer, damaged, Redis down).
//!
//! Run: `cargo test -p anes-ops --test s3_store -- --nocapture`.

mod support;

use std::io::Read;
use std::time::Instant;

use anes_ops::store::{
    CheckpointHeader, CheckpointStore, JournalStore, S3Credentials, S3Location, S3Store, StoreError,
};
use support::redis_server::RedisServer;
use support::s3_server::{S3Server, require};
use support::{journal_suite, store_suite};

const BUCKET: &str = "anes-checkpoints";

fn credentials() -> S3Credentials {
    S3Credentials::parse_file("[default]\naws_access_key_id = test\naws_secret_access_key = test\n").unwrap()
}

fn location(server: &S3Server, hot: Option<String>) -> S3Location {
    S3Location {
        endpoint: Some(server.endpoint()),
        bucket: BUCKET.into(),
        prefix: "ckpt/v1".into(),
        region: "us-east-1".into(),
        hot,
    }
}

fn start(name: &str) -> S3Server {
    let server = S3Server::start(name);
    server.create_bucket(BUCKET);
    server
}

fn open(server: &S3Server) -> impl Fn(&str, usize) -> Box<dyn CheckpointStore> + '_ {
    |pipeline, kept| Box::new(S3Store::new(location(server, None), credentials(), pipeline, kept).unwrap())
}

#[test]
#[ignore = "needs moto[server] (scripts/install-ops-servers.sh --moto)"]
fn suite_round_trip_and_retention() {
    require("suite_round_trip_and_retention");
    let server = start("rt");
    store_suite::round_trip_and_retention(&open(&server), "s3");
    store_suite::checkpoints_above_the_written_one_are_not_counted(&open(&server), "s3");
}

#[test]
#[ignore = "needs moto[server] (scripts/install-ops-servers.sh --moto)"]
fn suite_damaged_checkpoints_are_skipped() {
    require("suite_damaged_checkpoints_are_skipped");
    let server = start("dmg");
    let damage = |_: &str, key: &str| {
        let mut bytes = server.get(BUCKET, key).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        server.put(BUCKET, key, bytes);
    };
    store_suite::damaged_checkpoints_are_skipped(&open(&server), &damage, "s3");
}

#[test]
#[ignore = "needs moto[server] (scripts/install-ops-servers.sh --moto)"]
fn suite_a_stale_writer_is_refused_without_reading_its_payload() {
    require("suite_a_stale_writer_is_refused_without_reading_its_payload");
    let server = start("stale");
    store_suite::a_stale_writer_is_refused_without_reading_its_payload(&open(&server), "s3");
}

#[test]
#[ignore = "needs moto[server] (scripts/install-ops-servers.sh --moto)"]
fn suite_fencing_model() {
    require("suite_fencing_model");
    let server = start("model");
    let started = Instant::now();
    let (schedules, ..) = store_suite::fencing_model(&open(&server), "s3", "s3", 100);
    println!("s3 fencing model: {schedules} schedules in {:.1} s", started.elapsed().as_secs_f64());
}

/// A payload reader that runs `takeover` when the store first reads from it: after the store's check of
/// the epoch, before its conditional PUT of the epoch object.
struct TakeoverMidWrite<'a, F: FnMut()> {
    inner: &'a [u8],
    takeover: Option<F>,
}

impl<F: FnMut()> Read for TakeoverMidWrite<'_, F> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(mut takeover) = self.takeover.take() {
            takeover();
        }
        self.inner.read(buf)
    }
}

#[test]
#[ignore = "needs moto[server] (scripts/install-ops-servers.sh --moto)"]
fn a_takeover_between_the_check_and_the_conditional_put_refuses_the_write() {
    require("a_takeover_between_the_check_and_the_conditional_put_refuses_the_write");
    let server = start("race");
    let open = open(&server);
    let mut old = open("p", 4);
    let e1 = old.bump_epoch().unwrap();
    let payload = vec![5u8; 20_000];
    let header = CheckpointHeader::for_payload("p", e1, 60, 0, [0; 32], &payload);
    let mut e2 = 0;
    let mut reader =
        TakeoverMidWrite { inner: &payload, takeover: Some(|| e2 = open("p", 4).bump_epoch().unwrap()) };
    let err = old.put(&header, &mut reader).unwrap_err();
    assert!(
        matches!(err, StoreError::Fenced { writer, current, .. } if writer == e1 && current == e1 + 1),
        "{err}"
    );
    assert_eq!(e2, e1 + 1, "the takeover ran inside the write");
    let mut new = open("p", 4);
    assert!(new.load().unwrap().verified.is_empty(), "the refused write is not listed");
    let orphan = server.get(BUCKET, "ckpt/v1/p/ckpt-00000000000000000060-00000000000000000001.anck");
    assert_eq!(orphan, None, "the refused write's object was removed");
}

/// Fencing rests on each conditional PUT of the epoch object being one step with its write: of two
/// writers holding the same version, one wins. Writers bumping the epoch at once, each on its own
/// store and connection, must then each get an epoch of their own, and the store must end at the
/// number of bumps. (Stock moto checks and writes in two steps and loses an update this way now and
/// then, too rarely for this test to see it each run: the test server runs it one request at a time,
/// `support/moto_serialized.py`.)
#[test]
#[ignore = "needs moto[server] (scripts/install-ops-servers.sh --moto)"]
fn concurrent_epoch_bumps_each_get_an_epoch_of_their_own() {
    require("concurrent_epoch_bumps_each_get_an_epoch_of_their_own");
    let server = start("bumps");
    const WRITERS: usize = 12;
    const BUMPS: usize = 25;
    let epochs: Vec<u64> = std::thread::scope(|scope| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|_| {
                scope.spawn(|| {
                    let mut store = open(&server)("p", 4);
                    // A bump that lost 64 conditional PUTs in a row gives up (an error, no epoch).
                    (0..BUMPS).filter_map(|_| store.bump_epoch().ok()).collect::<Vec<u64>>()
                })
            })
            .collect();
        writers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    let distinct: std::collections::BTreeSet<u64> = epochs.iter().copied().collect();
    assert_eq!(distinct.len(), epochs.len(), "two writers were given the same epoch: an update was lost");
    assert!(
        epochs.len() > WRITERS * BUMPS / 2,
        "only {} of {} bumps got through",
        epochs.len(),
        WRITERS * BUMPS
    );
    let current = open(&server)("p", 4).current_epoch().unwrap();
    assert_eq!(current, epochs.len() as u64, "the store's epoch is the number of bumps");
}

fn hot_store(server: &S3Server, redis: &RedisServer) -> S3Store {
    S3Store::new(location(server, Some(redis.url())), credentials(), "p", 4).unwrap()
}

fn write(store: &mut S3Store, epoch: u64, frame: u64) -> Vec<u8> {
    let payload = vec![frame as u8; 10_000];
    let header = CheckpointHeader::for_payload("p", epoch, frame, 0, [frame as u8; 32], &payload);
    store.put(&header, &mut payload.as_slice()).unwrap();
    let mut blob = header.encode();
    blob.extend_from_slice(&payload);
    blob
}

fn set_hot(redis: &RedisServer, blob: &[u8]) {
    let _: () = redis::cmd("SET").arg("pipeline:p:state").arg(blob).query(&mut redis.connection()).unwrap();
}

#[test]
#[ignore = "needs moto[server] and redis-server (scripts/install-ops-servers.sh --moto --redis)"]
fn the_hot_copy_is_loaded_when_it_is_the_newest_in_s3() {
    require("the_hot_copy_is_loaded_when_it_is_the_newest_in_s3");
    support::redis_server::require("hot");
    let (server, redis) = (start("hot"), RedisServer::start("s3-hot"));
    let mut store = hot_store(&server, &redis);
    let e = store.bump_epoch().unwrap();
    write(&mut store, e, 60);
    let newest = write(&mut store, e, 120);
    let state: Vec<u8> = redis::cmd("GET").arg("pipeline:p:state").query(&mut redis.connection()).unwrap();
    assert_eq!(state, newest, "pipeline:p:state holds the newest checkpoint, header then snapshot");
    // Taken from Redis: it loads even with its S3 object gone.
    let key = store.checkpoint_key(120, e);
    server.delete(BUCKET, &key);
    let loaded = hot_store(&server, &redis).load().unwrap();
    let names: Vec<&str> = loaded.verified.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["redis pipeline:p:state", store.checkpoint_key(60, e).as_str()]);
    assert_eq!((loaded.verified[0].header.frame, loaded.verified[0].payload.len()), (120, 10_000));
    assert!(loaded.damaged.is_empty());
}

#[test]
#[ignore = "needs moto[server] and redis-server (scripts/install-ops-servers.sh --moto --redis)"]
fn a_hot_copy_that_is_not_the_newest_in_s3_is_ignored() {
    require("a_hot_copy_that_is_not_the_newest_in_s3_is_ignored");
    support::redis_server::require("hot");
    let (server, mut redis) = (start("cold"), RedisServer::start("s3-cold"));
    let mut store = hot_store(&server, &redis);
    let e = store.bump_epoch().unwrap();
    let older = write(&mut store, e, 60);
    let newest = write(&mut store, e, 120);
    let from_s3 = store.checkpoint_key(120, e);
    // A newer checkpoint than S3 lists (a write that never reached S3), its same frame with another
    // epoch, an older one, a damaged copy: each time S3's newest is loaded.
    let unlisted = {
        let payload = vec![1u8; 100];
        let header = CheckpointHeader::for_payload("p", e, 180, 0, [0; 32], &payload);
        let mut blob = header.encode();
        blob.extend_from_slice(&payload);
        blob
    };
    let other_epoch = {
        let payload = vec![120u8; 10_000];
        let header = CheckpointHeader::for_payload("p", e + 1, 120, 0, [120; 32], &payload);
        let mut blob = header.encode();
        blob.extend_from_slice(&payload);
        blob
    };
    let mut damaged = newest.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 1;
    for (what, hot) in
        [("unlisted", unlisted), ("other epoch", other_epoch), ("older", older), ("damaged", damaged)]
    {
        set_hot(&redis, &hot);
        let loaded = hot_store(&server, &redis).load().unwrap();
        assert_eq!(loaded.verified[0].name, from_s3, "{what}");
        assert_eq!(loaded.verified[0].header.frame, 120, "{what}");
        assert!(loaded.damaged.is_empty(), "{what}: a bad hot copy is not a damaged checkpoint");
    }
    // Redis down: S3 alone, and writes go on.
    redis.kill();
    let mut store = hot_store(&server, &redis);
    assert_eq!(store.load().unwrap().verified[0].name, from_s3);
    write(&mut store, e, 180);
    assert_eq!(store.load().unwrap().verified[0].header.frame, 180);
}

/// `[pipeline.store] backend = "s3"` with a credentials file opens this store (`recovery::open_store`,
/// as `anes serve`), with its hot copy.
#[test]
#[ignore = "needs moto[server] and redis-server (scripts/install-ops-servers.sh --moto --redis)"]
fn a_configuration_naming_s3_opens_it() {
    require("a_configuration_naming_s3_opens_it");
    support::redis_server::require("s3 config");
    let (server, redis) = (start("config"), RedisServer::start("s3-config"));
    let dir = std::env::temp_dir().join(format!("anes-s3-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let credentials = dir.join("aws-credentials");
    std::fs::write(
        &credentials,
        "[other]\naws_access_key_id = x\n[default]\naws_access_key_id = test\naws_secret_access_key = test\n",
    )
    .unwrap();
    let text = format!(
        "[[pipeline]]\nid = \"cfg\"\n[pipeline.store]\nbackend = \"s3\"\nendpoint = \"{}\"\nbucket = \"{BUCKET}\"\nprefix = \"conf\"\nregion = \"us-east-1\"\ncredentials_file = \"{}\"\nhot = \"{}\"\n",
        server.endpoint(),
        credentials.display(),
        redis.url()
    );
    let config = anes_ops::config::Config::parse(&text, "anes.toml").unwrap();
    let mut store = anes_ops::recovery::open_store(&config.pipelines[0], &dir).unwrap();
    assert_eq!(store.backend(), "s3");
    let epoch = store.bump_epoch().unwrap();
    let payload = vec![9u8; 1000];
    let header = CheckpointHeader::for_payload("cfg", epoch, 60, 0, [0; 32], &payload);
    store.put(&header, &mut payload.as_slice()).unwrap();
    assert!(server.get(BUCKET, "conf/cfg/epoch.json").is_some(), "under the configured prefix");
    let hot: Option<Vec<u8>> =
        redis::cmd("GET").arg("pipeline:cfg:state").query(&mut redis.connection()).unwrap();
    assert!(hot.is_some(), "the hot copy is in the configured Redis");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn credentials_that_cannot_be_read_are_a_settings_error_naming_the_file() {
    let missing = std::env::temp_dir().join(format!("anes-no-such-credentials-{}", std::process::id()));
    let err = S3Credentials::resolve(Some(&missing)).unwrap_err();
    assert!(matches!(&err, StoreError::Settings(m) if m.contains(&missing.display().to_string())), "{err}");
    assert!(err.to_string().starts_with("store settings: "), "{err}");
    for (text, problem) in [
        ("[prod]\naws_access_key_id = a\naws_secret_access_key = b\n", "no [default] profile"),
        ("[default]\naws_access_key_id = a\n", "no [default] profile"),
        ("[default]\njust words\n", "line 2: not `key = value`"),
    ] {
        let problem_found = S3Credentials::parse_file(text).unwrap_err();
        assert!(problem_found.contains(problem), "{text:?}: {problem_found}");
    }
    let parsed = S3Credentials::parse_file(
        "# c\n[default]\naws_access_key_id = a\naws_secret_access_key = b\naws_session_token = t\n",
    )
    .unwrap();
    assert_eq!(
        (parsed.access_key_id.as_str(), parsed.secret_access_key.as_str(), parsed.session_token.as_deref()),
        ("a", "b", Some("t"))
    );
}

fn open_both(server: &S3Server) -> impl Fn(&str) -> (Box<dyn CheckpointStore>, Box<dyn JournalStore>) + '_ {
    |pipeline| {
        (
            Box::new(S3Store::new(location(server, None), credentials(), pipeline, 4).unwrap()),
            Box::new(S3Store::new(location(server, None), credentials(), pipeline, 4).unwrap()),
        )
    }
}

#[test]
#[ignore = "needs moto[server] (scripts/install-ops-servers.sh --moto)"]
fn journal_suite_in_s3() {
    require("journal_suite_in_s3");
    let server = start("journal");
    let open = open_both(&server);
    journal_suite::appends_read_back_and_a_takeover_fences_the_old_owner(&open, "s3");
    journal_suite::an_unacknowledged_tail_is_replaced(&open, "s3");
    journal_suite::retention_and_the_end_moved(&open, "s3");
    journal_suite::records_the_store_lost_are_its_damage(&open, "s3");
    let damage = |pipeline: &str, first: u64| {
        // The batch's object of the pipeline's (only) epoch.
        let key = format!("ckpt/v1/{pipeline}/journal/{first:020}-{:020}.ajb", 1);
        let mut bytes = server.get(BUCKET, &key).expect("the batch's object");
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        server.put(BUCKET, &key, bytes);
    };
    journal_suite::a_damaged_batch_is_missing_records_named(&open, &damage, "s3");
}

/// A batch object an old owner uploaded after the takeover (its conditional PUT of the epoch object
/// then failed) is of an older epoch: never read as part of the journal.
#[test]
#[ignore = "needs moto[server] (scripts/install-ops-servers.sh --moto)"]
fn an_old_owner_s_batch_object_is_never_read() {
    require("an_old_owner_s_batch_object_is_never_read");
    let server = start("orphan");
    let open = open_both(&server);
    let (mut a, mut journal_a) = open("o");
    let e1 = a.bump_epoch().unwrap();
    journal_suite::append(journal_a.as_mut(), e1, 0, 10).unwrap();
    let (mut b, mut journal_b) = open("o");
    let e2 = b.bump_epoch().unwrap();
    // What the old owner's append leaves when it loses the race: its object, not the end.
    let orphan: anes_core::movie::InputStream =
        (10..20).map(|_| anes_core::movie::FrameInput::buttons(9, 9)).collect();
    server.put(
        BUCKET,
        &format!("ckpt/v1/o/journal/{:020}-{e1:020}.ajb", 10),
        anes_ops::journal::encode_batch(10, &orphan),
    );
    assert!(journal_suite::append(journal_a.as_mut(), e1, 10, 20).unwrap_err().is_fenced());
    journal_suite::append(journal_b.as_mut(), e2, 10, 15).unwrap();
    let contents = anes_ops::journal::read_shared(journal_b.as_mut(), 0).unwrap();
    contents.require_acknowledged_from(0).unwrap();
    assert_eq!(contents.records_from(0).unwrap(), (0..15).map(journal_suite::input).collect());
}
