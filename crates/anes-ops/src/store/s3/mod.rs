//! The S3 checkpoint store (`object_store`'s S3 client, driven by a current-thread tokio runtime the
//! store owns: the store trait is synchronous). Objects of pipeline `<id>` under `<prefix>/<id>/`:
//!
//! | object | holds |
//! |---|---|
//! | `epoch.json` | the epoch object: the store epoch and the list of kept checkpoints (frame, epoch, payload checksum), newest first |
//! | `ckpt-<frame, 20 digits>-<epoch, 20 digits>.anck` | one checkpoint: header then snapshot |
//! | `journal/<first sequence number, 20 digits>-<epoch, 20 digits>.ajb` | one journal batch ([`crate::journal::encode_batch`]) |
//!
//! The epoch object also holds the shared journal's end (`journal_end`, its acknowledged mark); the
//! journal's side is in `s3/journal.rs`.
//!
//! Fencing is S3's conditional writes on the epoch object: every change of it (a takeover, a rollback's
//! epoch, a write adding a checkpoint to the list) is a PUT with `If-Match: <the ETag it read>` (or
//! `If-None-Match: *` when there is none yet), so of two writers that read the same version only one
//! succeeds (the other gets 412 and reads again). A write checks the header against the epoch it read
//! ([`fence::check`]) before reading its payload, uploads the checkpoint object, then publishes it by the
//! conditional PUT of the epoch object: a takeover that came in between makes that PUT fail, the
//! writer reads the new epoch and is refused ([`StoreError::Fenced`]). A checkpoint exists only once
//! the epoch object lists it: what a crash leaves at each step:
//!
//! | crash during | in the bucket | at the next load |
//! |---|---|---|
//! | the checkpoint upload | nothing, or a complete object (a PUT is atomic) not yet listed | the listed ones; an unlisted object is ignored |
//! | the epoch object's PUT | the old version or the new one (atomic) | the newest listed |
//! | removing checkpoints beyond the retention | unlisted objects left over | ignored |
//!
//! With a hot copy ([`super::hot`]) the newest checkpoint is also written to Redis after it is listed,
//! and a load takes it from Redis when its epoch, frame and payload checksum are those of the newest
//! listed in S3, else from S3.

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjectPath;
use object_store::{
    ClientOptions, GetOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, RetryConfig,
    UpdateVersion,
};
use serde::{Deserialize, Serialize};

mod journal;

use super::hot::{self, HotCopy};
use super::{
    CheckpointHeader, CheckpointStore, Damaged, Loaded, MAX_PAYLOAD_LEN, Persisted, StoreError,
    StoredCheckpoint, fence,
};

const BACKEND: &str = "s3";
/// How long a connection attempt may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one request may take.
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest epoch object read (the list of at most 256 kept checkpoints is about 40 KiB).
const MAX_EPOCH_OBJECT_LEN: u64 = 256 << 10;
/// Largest checkpoint object read: the longest header and the largest payload.
const MAX_BLOB_LEN: u64 = 108 + 64 + 32 + MAX_PAYLOAD_LEN;
/// Conditional PUTs of the epoch object lost to other writers before an operation gives up (as
/// unavailable: the writer retries it later).
const MAX_CONFLICTS: u32 = 64;
/// Largest AWS credentials file read.
const MAX_CREDENTIALS_FILE_LEN: u64 = 64 << 10;

/// Access keys for S3.
#[derive(Clone, PartialEq, Eq)]
pub struct S3Credentials {
    /// `AWS_ACCESS_KEY_ID` / `aws_access_key_id`.
    pub access_key_id: String,
    /// `AWS_SECRET_ACCESS_KEY` / `aws_secret_access_key`.
    pub secret_access_key: String,
    /// `AWS_SESSION_TOKEN` / `aws_session_token`, for temporary credentials.
    pub session_token: Option<String>,
}

impl std::fmt::Debug for S3Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Credentials").field("access_key_id", &self.access_key_id).finish_non_exhaustive()
    }
}

impl S3Credentials {
    /// From `file` (the AWS shared credentials format, its `[default]` profile) when given, else from
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`.
    pub fn resolve(file: Option<&std::path::Path>) -> Result<S3Credentials, StoreError> {
        match file {
            Some(path) => {
                let bytes = anes_fs::read_capped(path, MAX_CREDENTIALS_FILE_LEN, "credentials file")
                    .map_err(|e| StoreError::Settings(format!("{}: {}", path.display(), e.problem())))?;
                let text = String::from_utf8_lossy(&bytes);
                S3Credentials::parse_file(&text)
                    .map_err(|problem| StoreError::Settings(format!("{}: {problem}", path.display())))
            }
            None => {
                let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
                match (var("AWS_ACCESS_KEY_ID"), var("AWS_SECRET_ACCESS_KEY")) {
                    (Some(access_key_id), Some(secret_access_key)) => Ok(S3Credentials {
                        access_key_id,
                        secret_access_key,
                        session_token: var("AWS_SESSION_TOKEN"),
                    }),
                    _ => Err(StoreError::Settings(
                        "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or credentials_file".into(),
                    )),
                }
            }
        }
    }

    /// The `[default]` profile of an AWS shared credentials file.
    pub fn parse_file(text: &str) -> Result<S3Credentials, String> {
        let mut in_default = false;
        let (mut id, mut secret, mut token) = (None, None, None);
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                in_default = section.trim() == "default";
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                return Err(format!("line {}: not `key = value`", n + 1));
            };
            if in_default {
                let value = Some(value.trim().to_string());
                match key.trim() {
                    "aws_access_key_id" => id = value,
                    "aws_secret_access_key" => secret = value,
                    "aws_session_token" => token = value,
                    _ => {}
                }
            }
        }
        match (id, secret) {
            (Some(access_key_id), Some(secret_access_key)) => {
                Ok(S3Credentials { access_key_id, secret_access_key, session_token: token })
            }
            _ => Err("no [default] profile with aws_access_key_id and aws_secret_access_key".into()),
        }
    }
}

/// Where a pipeline's checkpoints live in S3.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Location {
    /// `http(s)://HOST:PORT` of an S3-compatible server; `None`: AWS's endpoint of the region.
    pub endpoint: Option<String>,
    /// The bucket (it must exist).
    pub bucket: String,
    /// Key prefix (without leading or trailing `/`; may be empty).
    pub prefix: String,
    /// The region (`us-east-1`).
    pub region: String,
    /// The hot copy's Redis URL, if any.
    pub hot: Option<String>,
}

/// One kept checkpoint, as the epoch object lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Listed {
    frame: u64,
    epoch: u64,
    /// Hex of the header's payload checksum.
    payload_checksum: String,
}

/// The epoch object.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EpochObject {
    epoch: u64,
    /// Newest first.
    checkpoints: Vec<Listed>,
    /// The shared journal's end: its acknowledged mark (absent in objects of earlier versions).
    #[serde(default)]
    journal_end: u64,
}

/// The epoch object as read, with the version a conditional PUT must match (`None`: absent).
struct EpochRead {
    object: EpochObject,
    version: Option<UpdateVersion>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A pipeline's checkpoints in an S3 bucket.
pub struct S3Store {
    runtime: tokio::runtime::Runtime,
    client: Arc<dyn ObjectStore>,
    location: S3Location,
    credentials: S3Credentials,
    pipeline: String,
    kept: usize,
    hot: Option<HotCopy>,
    /// The epoch object as the journal last read or wrote it: an append needs no GET while no other
    /// writer changed it (a changed one fails the conditional PUT, and is read again).
    journal_head: Option<EpochRead>,
}

impl std::fmt::Debug for S3Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Store")
            .field("location", &self.location)
            .field("pipeline", &self.pipeline)
            .field("kept", &self.kept)
            .finish_non_exhaustive()
    }
}

fn unavailable(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable { backend: BACKEND, reason: format!("{what}: {e}") }
}

fn client(location: &S3Location, credentials: &S3Credentials) -> Result<Arc<dyn ObjectStore>, StoreError> {
    let options = ClientOptions::new()
        .with_timeout(IO_TIMEOUT)
        .with_connect_timeout(CONNECT_TIMEOUT)
        .with_allow_http(location.endpoint.as_deref().is_some_and(|e| e.starts_with("http://")));
    // No retries inside the client: the writer's retries (backoff with full jitter) are the only ones.
    let retry = RetryConfig { max_retries: 0, retry_timeout: IO_TIMEOUT, ..RetryConfig::default() };
    let mut builder = AmazonS3Builder::new()
        .with_bucket_name(&location.bucket)
        .with_region(&location.region)
        .with_access_key_id(&credentials.access_key_id)
        .with_secret_access_key(&credentials.secret_access_key)
        .with_client_options(options)
        .with_retry(retry);
    if let Some(token) = &credentials.session_token {
        builder = builder.with_token(token);
    }
    if let Some(endpoint) = &location.endpoint {
        builder = builder.with_endpoint(endpoint);
    }
    let client = builder.build().map_err(|e| StoreError::Settings(format!("S3: {e}")))?;
    Ok(Arc::new(client))
}

impl S3Store {
    /// A store for `pipeline` at `location` keeping `kept` checkpoints. Nothing is requested yet.
    pub fn new(
        location: S3Location,
        credentials: S3Credentials,
        pipeline: &str,
        kept: usize,
    ) -> Result<S3Store, StoreError> {
        if !super::valid_pipeline_id(pipeline) {
            return Err(StoreError::Settings(format!("pipeline id {pipeline:?} is not valid")));
        }
        let hot = location.hot.as_deref().map(HotCopy::new).transpose().map_err(StoreError::Settings)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| unavailable("starting the S3 client's runtime", e))?;
        Ok(S3Store {
            runtime,
            client: client(&location, &credentials)?,
            location,
            credentials,
            pipeline: pipeline.to_string(),
            kept: kept.max(1),
            hot,
            journal_head: None,
        })
    }

    fn path(&self, name: &str) -> ObjectPath {
        let prefix = self.location.prefix.trim_matches('/');
        if prefix.is_empty() {
            ObjectPath::from(format!("{}/{name}", self.pipeline))
        } else {
            ObjectPath::from(format!("{prefix}/{}/{name}", self.pipeline))
        }
    }

    /// The key of a checkpoint object.
    pub fn checkpoint_key(&self, frame: u64, epoch: u64) -> String {
        self.path(&super::fs::checkpoint_file_name(frame, epoch)).to_string()
    }

    fn epoch_path(&self) -> ObjectPath {
        self.path("epoch.json")
    }

    /// Reads an object of at most `cap` bytes; `None` when it does not exist.
    fn get(&self, path: &ObjectPath, cap: u64) -> Result<Option<(Vec<u8>, UpdateVersion)>, StoreError> {
        let client = Arc::clone(&self.client);
        let path = path.clone();
        self.runtime.block_on(async move {
            let result = match client.get_opts(&path, GetOptions::default()).await {
                Ok(r) => r,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(unavailable("GET", e)),
            };
            if result.meta.size > cap {
                return Err(StoreError::Damaged(format!(
                    "{path}: {} bytes, more than the {cap}-byte limit",
                    result.meta.size
                )));
            }
            let version =
                UpdateVersion { e_tag: result.meta.e_tag.clone(), version: result.meta.version.clone() };
            let bytes = result.bytes().await.map_err(|e| unavailable("GET", e))?;
            Ok(Some((bytes.to_vec(), version)))
        })
    }

    fn read_epoch_object(&self) -> Result<EpochRead, StoreError> {
        let path = self.epoch_path();
        match self.get(&path, MAX_EPOCH_OBJECT_LEN)? {
            None => Ok(EpochRead { object: EpochObject::default(), version: None }),
            Some((bytes, version)) => {
                let object = serde_json::from_slice(&bytes).map_err(|e| {
                    StoreError::Damaged(format!(
                        "s3 {path}: the pipeline's epoch object is damaged ({e}); restore it from the bucket's versions or remove the pipeline's prefix"
                    ))
                })?;
                Ok(EpochRead { object, version: Some(version) })
            }
        }
    }

    /// Replaces the epoch object if it is still the version read, and returns the new version; `None`
    /// when another writer changed it first (412).
    fn write_epoch_object(
        &self,
        read: &EpochRead,
        object: &EpochObject,
    ) -> Result<Option<UpdateVersion>, StoreError> {
        let body = serde_json::to_vec(object).expect("serializes");
        let mode = match &read.version {
            None => PutMode::Create,
            Some(v) => PutMode::Update(v.clone()),
        };
        let (client, path) = (Arc::clone(&self.client), self.epoch_path());
        self.runtime.block_on(async move {
            let options = PutOptions { mode, ..PutOptions::default() };
            match client.put_opts(&path, PutPayload::from(body), options).await {
                Ok(put) => Ok(Some(UpdateVersion { e_tag: put.e_tag, version: put.version })),
                Err(object_store::Error::Precondition { .. } | object_store::Error::AlreadyExists { .. }) => {
                    Ok(None)
                }
                Err(e) => Err(unavailable("PUT of the epoch object", e)),
            }
        })
    }

    /// Applies `change` to the epoch object by conditional PUTs, starting from the version `read`,
    /// until one wins; after a lost PUT `change` sees the newer version and may refuse (fencing).
    fn update_epoch_object<T>(
        &self,
        mut read: EpochRead,
        mut change: impl FnMut(&mut EpochObject) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        for _ in 0..MAX_CONFLICTS {
            let mut object = read.object.clone();
            let value = change(&mut object)?;
            if self.write_epoch_object(&read, &object)?.is_some() {
                return Ok(value);
            }
            read = self.read_epoch_object()?;
        }
        Err(unavailable(
            "the epoch object",
            format!("{MAX_CONFLICTS} conditional PUTs lost to other writers"),
        ))
    }

    fn delete(&self, key: ObjectPath) {
        let client = Arc::clone(&self.client);
        if let Err(e) = self.runtime.block_on(async move { client.delete(&key).await }) {
            tracing::warn!(pipeline = %self.pipeline, error = %e, "removing an object no longer needed failed; nothing refers to it");
        }
    }

    /// Fetches and verifies the listed checkpoint `entry` from S3: the checkpoint, or why it is
    /// damaged; `Err` when S3 did not answer (a checkpoint not fetched is not a damaged one: taken as
    /// damage, a passing outage made recovery skip every checkpoint and start from an older one).
    fn fetch(&self, entry: &Listed) -> Result<Result<StoredCheckpoint, String>, StoreError> {
        let path = self.path(&super::fs::checkpoint_file_name(entry.frame, entry.epoch));
        let bytes = match self.get(&path, MAX_BLOB_LEN) {
            Ok(Some((bytes, _))) => bytes,
            Ok(None) => return Ok(Err("listed in the epoch object but missing".into())),
            Err(e @ StoreError::Unavailable { .. }) => return Err(e),
            Err(e) => return Ok(Err(e.to_string())),
        };
        Ok(CheckpointHeader::decode_blob(&bytes).map_err(|e| e.to_string()).and_then(|(header, payload)| {
            self.matches(&header, entry)?;
            Ok(StoredCheckpoint { payload: payload.to_vec(), header, name: path.to_string() })
        }))
    }

    fn matches(&self, header: &CheckpointHeader, entry: &Listed) -> Result<(), String> {
        if header.pipeline_id != self.pipeline {
            return Err(format!("holds pipeline {:?}'s checkpoint", header.pipeline_id));
        }
        if (header.frame, header.epoch, hex(&header.payload_checksum))
            != (entry.frame, entry.epoch, entry.payload_checksum.clone())
        {
            return Err(format!(
                "its header says frame {} epoch {}, the epoch object lists frame {} epoch {} with another checksum",
                header.frame, header.epoch, entry.frame, entry.epoch
            ));
        }
        Ok(())
    }

    /// The hot copy, when it is the checkpoint `entry` (the newest listed in S3).
    fn hot_copy_of(&mut self, entry: &Listed) -> Option<StoredCheckpoint> {
        let pipeline = self.pipeline.clone();
        let blob = match self.hot.as_mut()?.get(&pipeline) {
            Ok(Some(blob)) => blob,
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!(pipeline = %pipeline, error = %e, "the hot copy cannot be read; loading from S3");
                return None;
            }
        };
        let checked =
            CheckpointHeader::decode_blob(&blob).map_err(|e| e.to_string()).and_then(|(header, payload)| {
                self.matches(&header, entry)?;
                Ok(StoredCheckpoint {
                    payload: payload.to_vec(),
                    header,
                    name: format!("redis {}", hot::state_key(&pipeline)),
                })
            });
        match checked {
            Ok(c) => Some(c),
            Err(reason) => {
                tracing::info!(pipeline = %pipeline, %reason, "the hot copy is not the newest checkpoint in S3; loading from S3");
                None
            }
        }
    }
}

impl CheckpointStore for S3Store {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn bump_epoch(&mut self) -> Result<u64, StoreError> {
        let pipeline = self.pipeline.clone();
        self.update_epoch_object(self.read_epoch_object()?, |object| {
            object.epoch = object
                .epoch
                .checked_add(1)
                .ok_or_else(|| super::epoch_at_maximum(BACKEND, &pipeline, object.epoch))?;
            Ok(object.epoch)
        })
    }

    fn advance_epoch(&mut self, held: u64) -> Result<u64, StoreError> {
        let pipeline = self.pipeline.clone();
        self.update_epoch_object(self.read_epoch_object()?, |object| {
            fence::check(&pipeline, held, object.epoch)?;
            object.epoch =
                held.checked_add(1).ok_or_else(|| super::epoch_at_maximum(BACKEND, &pipeline, held))?;
            Ok(object.epoch)
        })
    }

    fn current_epoch(&mut self) -> Result<u64, StoreError> {
        Ok(self.read_epoch_object()?.object.epoch)
    }

    fn put(&mut self, header: &CheckpointHeader, payload: &mut dyn Read) -> Result<Persisted, StoreError> {
        super::check_put_header(&self.pipeline, header)?;
        // The fencing check against the epoch as read: the header only, before the payload is touched.
        // The conditional PUT below, on the version read here, makes it final: a takeover while the
        // payload is read or uploaded changes the version, and the PUT is refused.
        let read = self.read_epoch_object()?;
        fence::check(&self.pipeline, header.epoch, read.object.epoch)?;
        let blob = super::read_blob(header, payload)?;
        let key = self.path(&super::fs::checkpoint_file_name(header.frame, header.epoch));
        let (client, path, body) = (Arc::clone(&self.client), key.clone(), blob.clone());
        // Invariant: the checkpoint object is complete before the epoch object lists it. Created, never
        // overwritten: an object of the same frame and epoch is this epoch's same checkpoint, written by
        // an earlier attempt.
        let created = self.runtime.block_on(async move {
            let options = PutOptions { mode: PutMode::Create, ..PutOptions::default() };
            match client.put_opts(&path, PutPayload::from(body), options).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. }) => {
                    Ok(false)
                }
                Err(e) => Err(unavailable("PUT of the checkpoint", e)),
            }
        })?;
        let entry = Listed {
            frame: header.frame,
            epoch: header.epoch,
            payload_checksum: hex(&header.payload_checksum),
        };
        let (pipeline, kept) = (self.pipeline.clone(), self.kept);
        let mut dropped = Vec::new();
        let listed = self.update_epoch_object(read, |object| {
            fence::check(&pipeline, header.epoch, object.epoch)?;
            object.checkpoints.retain(|c| (c.frame, c.epoch) != (entry.frame, entry.epoch));
            object.checkpoints.push(entry.clone());
            object.checkpoints.sort_by_key(|c| std::cmp::Reverse((c.frame, c.epoch)));
            // Retention counts the checkpoints at or below this one: those above it are the ones
            // recovery skipped (damaged, or not of this ROM), evidence left as they are.
            let above = object.checkpoints.iter().take_while(|c| **c != entry).count();
            dropped = object.checkpoints.split_off((above + kept).min(object.checkpoints.len()));
            Ok((above, object.checkpoints[above..].to_vec()))
        });
        let (above, kept_listed) = match listed {
            Ok(listed) => listed,
            Err(e) => {
                if e.is_fenced() && created {
                    // Never listed: nobody will read it. Removed so the bucket holds no stale write.
                    self.delete(key);
                }
                return Err(e);
            }
        };
        for old in &dropped {
            self.delete(self.path(&super::fs::checkpoint_file_name(old.frame, old.epoch)));
        }
        // The hot copy is the newest listed checkpoint's: this one's unless some were left above it.
        if above == 0
            && let Some(hot) = self.hot.as_mut()
            && let Err(e) = hot.set(&self.pipeline, &blob)
        {
            tracing::warn!(pipeline = %self.pipeline, error = %e, "the hot copy in redis was not updated; a recovery loads from S3");
        }
        let oldest_kept_frame = kept_listed.iter().map(|c| c.frame).min().unwrap_or(header.frame);
        Ok(Persisted { frame: header.frame, epoch: header.epoch, oldest_kept_frame })
    }

    fn load(&mut self) -> Result<Loaded, StoreError> {
        let object = self.read_epoch_object()?.object;
        let mut loaded = Loaded::default();
        for (i, entry) in object.checkpoints.iter().enumerate() {
            let hot = if i == 0 { self.hot_copy_of(entry) } else { None };
            let fetched = match hot {
                Some(c) => Ok(c),
                None => self.fetch(entry)?,
            };
            match fetched {
                Ok(c) => loaded.verified.push(c),
                Err(reason) => {
                    let name = self.checkpoint_key(entry.frame, entry.epoch);
                    tracing::error!(pipeline = %self.pipeline, object = %name, %reason, "damaged checkpoint in S3 skipped");
                    loaded.damaged.push(Damaged { name, reason });
                }
            }
        }
        super::newest_first(&mut loaded.verified);
        Ok(loaded)
    }

    fn reconnect(&mut self) -> Result<(), StoreError> {
        // A new client: a new connection pool (the old one may hold connections to a server that is gone).
        self.journal_head = None;
        self.client = client(&self.location, &self.credentials)?;
        Ok(())
    }
}
