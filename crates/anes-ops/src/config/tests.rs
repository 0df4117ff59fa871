use super::*;
use anes_core::Region;
use proptest::prelude::*;

#[test]
fn the_deploy_example_is_valid() {
    let text = include_str!("../../../../deploy/anes.toml");
    let config = Config::parse(text, "deploy/anes.toml").unwrap();
    assert!(config.pipelines.len() >= 2);
    assert!(config.listen.ip().is_loopback());
    // Run as `anes serve --config deploy/anes.toml`, the example must not write its durable state
    // and evidence into the repository's deploy/ folder.
    for dir in [&config.data_dir, &config.evidence_dir] {
        assert!(dir.is_absolute() && !dir.starts_with("deploy"), "{}", dir.display());
    }
}

#[test]
fn a_configuration_or_token_file_that_is_a_fifo_or_too_large_is_refused() {
    let dir = std::env::temp_dir().join(format!("anes-config-capped-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = |name: &str| {
        let path = dir.join(name);
        rustix::fs::mkfifoat(rustix::fs::CWD, &path, rustix::fs::Mode::from_raw_mode(0o600)).unwrap();
        path
    };
    let large = |name: &str, len: u64| {
        let path = dir.join(name);
        std::fs::write(&path, vec![b'#'; len as usize + 1]).unwrap();
        path
    };
    for (path, problem) in [
        (fifo("anes.toml"), "is a FIFO (named pipe), not a regular file"),
        (large("large.toml", MAX_CONFIG_FILE_LEN), "larger than 1 MiB, the limit for configuration files"),
    ] {
        let e = Config::load(&path).unwrap_err();
        assert_eq!((e.file.as_str(), e.key.as_str()), (path.to_str().unwrap(), "(file)"));
        assert!(e.problem.contains(problem), "{e}");
    }
    for (path, problem) in [
        (fifo("token"), "is a FIFO (named pipe), not a regular file"),
        (large("large-token", MAX_TOKEN_FILE_LEN), "larger than 4096 bytes, the limit for token files"),
    ] {
        match crate::service::read_token(Some(&path)) {
            Err(crate::service::StartError::File { path: named, problem: found }) => {
                assert_eq!(named, path.display().to_string());
                assert!(found.contains(problem), "{found}");
            }
            other => panic!("{other:?}"),
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_default_is_one_demo_pipeline_on_loopback() {
    let config = Config::demo();
    assert_eq!(config.listen.to_string(), DEFAULT_LISTEN);
    assert_eq!(config.pipelines.len(), 1);
    let p = &config.pipelines[0];
    assert_eq!(p.settings.id, "demo");
    assert_eq!(p.workers, WorkerMode::Thread);
    assert_eq!(
        p.input,
        InputSpec::Replay { file: None, looping: true, pace: crate::pipeline::Pace::RealTime { speed: 1.0 } }
    );
}

#[test]
fn mistakes_are_one_line_naming_file_key_and_problem() {
    let cases = [
        ("[[pipeline]]\nid = \"p\"\ndrift = 3\n", "line 3, key drift", "unknown field `drift`"),
        ("[[pipeline]]\nid = \"p\"\ndrift_window = 40\n", "pipeline[0].drift_window", "stalled worker"),
        ("[[pipeline]]\nid = \"p\"\ndrift_window = \"x\"\n", "line 3, key drift_window", "invalid type"),
        ("[[pipeline]]\nid = \"p\"\nrollback = \"later\"\n", "line 3, key rollback", "unknown variant"),
        ("[[pipeline]]\nid = \"p q\"\n", "pipeline[0].id", "letters"),
        ("[[pipeline]]\nid = \"p\"\n[[pipeline]]\nid = \"p\"\n", "pipeline[1].id", "twice"),
        ("[server]\nlisten = \"localhost\"\n[[pipeline]]\nid = \"p\"\n", "server.listen", "not an address"),
        ("[[pipeline]]\nid = \"p\"\n[pipeline.input]\nspeed = \"fast\"\n", "pipeline[0].input.speed", "2x"),
        ("[[pipeline]]\nid = \"p\"\nrom = \"x.nes\"\n", "pipeline[0].input.file", "own input"),
        (
            "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"gcs\"\n",
            "pipeline[0].store.backend",
            "\"gcs\": use \"filesystem\", \"redis\", \"postgres\" or \"s3\"",
        ),
        (
            "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"s3\"\nregion = \"us-east-1\"\n",
            "pipeline[0].store.bucket",
            "missing",
        ),
        (
            "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"s3\"\nbucket = \"b\"\nregion = \"us-east-1\"\n",
            "pipeline[0].store.bucket",
            "3-63 lowercase",
        ),
        (
            "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"s3\"\nbucket = \"ckpt\"\n",
            "pipeline[0].store.region",
            "missing",
        ),
        (
            "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"s3\"\nbucket = \"ckpt\"\nregion = \"us-east-1\"\nendpoint = \"127.0.0.1:9000\"\n",
            "pipeline[0].store.endpoint",
            "http(s)://HOST:PORT",
        ),
        (
            "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"s3\"\nbucket = \"ckpt\"\nregion = \"us-east-1\"\nprefix = \"/a//b\"\n",
            "pipeline[0].store.prefix",
            "no leading",
        ),
        (
            "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"s3\"\nbucket = \"ckpt\"\nregion = \"us-east-1\"\nhot = \"http://x\"\n",
            "pipeline[0].store.hot",
            "not a redis URL",
        ),
        (
            "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"s3\"\nbucket = \"ckpt\"\nregion = \"us-east-1\"\ndir = \"x\"\n",
            "pipeline[0].store.dir",
            "the s3 backend has no dir",
        ),
        (
            "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"postgres\"\n",
            "pipeline[0].store.url",
            "missing: the postgres backend needs url",
        ),
        (
            "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"postgres\"\nurl = \"redis://u:secret@h/0\"\n",
            "pipeline[0].store.url",
            "not a postgres URL",
        ),
        (
            "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"postgres\"\nurl = \"postgres://a@h/d\"\nbucket = \"ckpt\"\n",
            "pipeline[0].store.bucket",
            "the postgres backend has no bucket",
        ),
        (
            "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nurl = \"postgres://a@h/d\"\n",
            "pipeline[0].store.url",
            "the filesystem backend has no url",
        ),
        (
            "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"redis\"\n",
            "pipeline[0].store.url",
            "missing",
        ),
        ("[[pipeline]]\nid = \"p\"\n[pipeline.store]\nkept = 0\n", "pipeline[0].store.kept", "1 to 256"),
        (
            "[[pipeline]]\nid = \"p\"\n[pipeline.journal]\nfsync = \"sometimes\"\n",
            "line 4, key fsync",
            "unknown variant",
        ),
        (
            "[[pipeline]]\nid = \"p\"\n[pipeline.journal]\nsegment_bytes = 10\n",
            "pipeline[0].journal.segment_bytes",
            "4096",
        ),
        ("[[pipeline]]\nid = \"..\"\n", "pipeline[0].id", "starting with a letter or digit"),
        ("[[pipeline]]\nid = \".\"\n", "pipeline[0].id", "\".\" or \"..\" would name another folder"),
        ("[[pipeline]]\nid = \"a/b\"\n", "pipeline[0].id", "letters, digits"),
        ("[[pipeline]]\nid = \"p\"\ndlq_fsync = \"batch\"\n", "pipeline[0].dlq_fsync", "no longer used"),
        ("", "pipeline", "at least one"),
        ("[[pipeline]\n", "line 1", ""),
    ];
    for (text, key, problem) in cases {
        let e = Config::parse(text, "anes.toml").unwrap_err();
        let line = e.to_string();
        assert_eq!(e.file, "anes.toml");
        assert!(e.key.starts_with(key), "{text:?}: key {:?}, wanted {key:?} ({line})", e.key);
        assert!(line.contains(problem), "{text:?}: {line}");
        assert!(!line.contains('\n'), "{line}");
    }
}

/// A failed journal append backs off with the store's retry policy, like the checkpoint writer.
#[test]
fn the_journal_backs_off_with_the_store_retry_policy() {
    let text =
        "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nretry_base_seconds = 0.25\nretry_cap_seconds = 8\n";
    let config = Config::parse(text, "anes.toml").unwrap();
    let p = &config.pipelines[0];
    assert_eq!(p.settings.journal_retry, (p.store.retry.base, p.store.retry.cap, p.store.retry.seed));
    assert_eq!(
        (p.settings.journal_retry.0, p.settings.journal_retry.1),
        (Duration::from_millis(250), Duration::from_secs(8))
    );
    let default = &Config::parse("[[pipeline]]\nid = \"p\"\n", "anes.toml").unwrap().pipelines[0];
    assert_eq!(
        (default.settings.journal_retry.0, default.settings.journal_retry.1),
        (default.store.retry.base, default.store.retry.cap)
    );
}

#[test]
fn the_postgres_and_s3_backends_parse_with_their_keys() {
    let text = "[[pipeline]]\nid = \"a\"\n[pipeline.store]\nbackend = \"postgres\"\nurl = \"postgres://anes@127.0.0.1:5432/anes\"\n\
        [[pipeline]]\nid = \"b\"\n[pipeline.store]\nbackend = \"s3\"\nendpoint = \"http://127.0.0.1:9000\"\nbucket = \"worker-checkpoints\"\n\
        prefix = \"anes/prod\"\nregion = \"us-east-1\"\ncredentials_file = \"aws-credentials\"\nhot = \"redis://127.0.0.1:6379/0\"\n";
    let config = Config::parse(text, "anes.toml").unwrap();
    assert_eq!(
        config.pipelines[0].store.backend,
        StoreBackend::Postgres("postgres://anes@127.0.0.1:5432/anes".into())
    );
    let StoreBackend::S3 { location, credentials_file } = &config.pipelines[1].store.backend else {
        panic!("{:?}", config.pipelines[1].store.backend);
    };
    assert_eq!(
        (
            location.endpoint.as_deref(),
            location.bucket.as_str(),
            location.prefix.as_str(),
            location.region.as_str()
        ),
        (Some("http://127.0.0.1:9000"), "worker-checkpoints", "anes/prod", "us-east-1")
    );
    assert_eq!(location.hot.as_deref(), Some("redis://127.0.0.1:6379/0"));
    assert_eq!(credentials_file.as_deref(), Some(std::path::Path::new("aws-credentials")));
    assert_eq!(config.pipelines[1].store.backend.name(), "s3");
}

#[test]
fn a_relative_credentials_file_is_read_beside_the_configuration() {
    let dir = std::env::temp_dir().join(format!("anes-config-s3-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("anes.toml");
    let text = "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"s3\"\nbucket = \"ckpt\"\nregion = \"us-east-1\"\ncredentials_file = \"aws-credentials\"\n";
    std::fs::write(&path, text).unwrap();
    let config = Config::load(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    match &config.pipelines[0].store.backend {
        StoreBackend::S3 { credentials_file, .. } => {
            assert_eq!(credentials_file.as_deref(), Some(dir.join("aws-credentials").as_path()))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_postgres_url_is_never_repeated_in_an_error() {
    let text = "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"postgres\"\nurl = \"mysql://anes:hunter2@h/d\"\n";
    let e = Config::parse(text, "anes.toml").unwrap_err();
    assert!(!e.to_string().contains("hunter2"), "{e}");
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = Config::parse(&text, "fuzz.toml");
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = Config::parse(&String::from_utf8_lossy(&bytes), "fuzz.toml");
    }
}

#[test]
fn a_pipeline_region_is_parsed_and_a_wrong_one_is_one_line_naming_the_key() {
    let config = |region: &str| Config::parse(&format!("[[pipeline]]\nid = \"p1\"\n{region}"), "anes.toml");
    assert_eq!(config("").unwrap().pipelines[0].settings.region, None, "default: the ROM header's");
    for (name, region) in
        [("ntsc", Region::Ntsc), ("pal", Region::Pal), ("dendy", Region::Dendy), ("PAL", Region::Pal)]
    {
        let parsed = config(&format!("region = \"{name}\"\n")).unwrap();
        assert_eq!(parsed.pipelines[0].settings.region, Some(region), "{name}");
    }
    let e = config("region = \"secam\"\n").unwrap_err();
    assert_eq!(e.to_string(), "anes.toml: pipeline[0].region: \"secam\": use ntsc, pal or dendy");
    let e = config("region = 1\n").unwrap_err();
    assert_eq!((e.key.as_str(), e.file.as_str()), ("line 3, key region", "anes.toml"));
}

#[test]
fn max_attempts_is_read_into_the_rollback_settings_and_bounded() {
    let parse = |extra: &str| Config::parse(&format!("[[pipeline]]\nid = \"p\"\n{extra}"), "anes.toml");
    assert_eq!(parse("").unwrap().pipelines[0].settings.max_attempts, 3, "the default");
    assert_eq!(parse("max_attempts = 7\n").unwrap().pipelines[0].settings.max_attempts, 7);
    assert_eq!(parse("max_attempts = 1\n").unwrap().pipelines[0].settings.max_attempts, 1);
    for (value, problem) in [("0", "0: use 1 to 100 attempts"), ("101", "101: use 1 to 100 attempts")] {
        let e = parse(&format!("max_attempts = {value}\n")).unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.key.as_str(), e.problem.as_str()),
            ("anes.toml", "pipeline[0].max_attempts", problem)
        );
    }
    let e = parse("max_attempts = -2\n").unwrap_err();
    assert_eq!(e.key, "line 3, key max_attempts", "{e}");
}

#[test]
fn a_pipeline_names_its_power_on_profile() {
    let config = Config::parse("[[pipeline]]\nid = \"p\"\n", "anes.toml").unwrap();
    assert_eq!(config.pipelines[0].power_on, anes_core::PowerOnProfile::Default);
    let config = Config::parse("[[pipeline]]\nid = \"p\"\npower_on = \"random:12\"\n", "anes.toml").unwrap();
    assert_eq!(config.pipelines[0].power_on, anes_core::PowerOnProfile::Random(12));
    let e = Config::parse("[[pipeline]]\nid = \"p\"\npower_on = \"tepid\"\n", "anes.toml").unwrap_err();
    assert_eq!((e.file.as_str(), e.key.as_str()), ("anes.toml", "pipeline[0].power_on"));
    assert!(e.problem.contains("\"tepid\" is not one of") && e.problem.contains("random:SEED"), "{e}");
}
