//! The filesystem checkpoint store: one directory per pipeline (`<data_dir>/<id>/checkpoints/` by
//! default) holding
//!
//! - `EPOCH`: the pipeline's store epoch, one decimal line;
//! - `ckpt-<frame, 20 digits>-<epoch, 20 digits>.anck`: one file per checkpoint, a
//!   [`CheckpointHeader`] then the snapshot;
//! - `LOCK`: taken (`flock`, exclusive) around every bump, write and load, so two processes sharing the
//!   directory serialize, and the fencing check and the rename that publishes a write are one step.
//!
//! Every write is atomic: a temporary file (`.tmp-*`), fsync, rename, fsync of the directory. What a
//! crash leaves at each step, and why a restart reads the newest complete checkpoint:
//!
//! | crash during | on disk | at the next load |
//! |---|---|---|
//! | writing or syncing the temporary file | a partial `.tmp-*` | not a checkpoint name: ignored, removed at the next takeover |
//! | the rename | the old name set, or the new file complete (rename is atomic) | the newest complete file |
//! | the directory fsync | the rename may be lost on power failure (never on a process crash) | the previous checkpoint |
//! | removing old ones (retention) | one more old file than kept | removed at the next write |
//!
//! A file damaged afterwards (bit rot, a tool, a torn copy) fails its header or payload checksum: it is
//! reported in [`Loaded::damaged`] and the next older one is used; it is never deleted by the store,
//! nor counted among the `kept` (retention counts intact checkpoints at or below the one just written:
//! `FsStore::retain`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{
    CheckpointHeader, CheckpointStore, Damaged, Loaded, MAX_PAYLOAD_LEN, Persisted, StoreError,
    StoredCheckpoint, fence, newest_first,
};

const BACKEND: &str = "filesystem";
/// How long a write waits for another process's lock before reporting the store unavailable.
const LOCK_WAIT: Duration = Duration::from_secs(10);
/// Longest header read back (magic to header checksum with a 64-byte id).
const MAX_HEADER_LEN: u64 = 108 + 64 + 32;

/// The largest `EPOCH` file read: one decimal number.
const MAX_EPOCH_FILE_LEN: u64 = 64;

/// A pipeline's checkpoints in a directory.
///
/// ```
/// use anes_ops::store::{CheckpointHeader, CheckpointStore, FsStore};
/// let dir = std::env::temp_dir().join(format!("anes-doc-fs-store-{}", std::process::id()));
/// let mut store = FsStore::open(&dir, "p1", 2).unwrap();
/// let epoch = store.bump_epoch().unwrap();
/// for frame in [60, 120, 180] {
///     let payload = vec![frame as u8; 100];
///     let header = CheckpointHeader::for_payload("p1", epoch, frame, 0, [0; 32], &payload);
///     store.put(&header, &mut payload.as_slice()).unwrap();
/// }
/// let loaded = store.load().unwrap();
/// assert_eq!(loaded.verified.iter().map(|c| c.header.frame).collect::<Vec<_>>(), [180, 120], "two kept");
/// // A writer with an older epoch is fenced.
/// let mut stale = CheckpointHeader::for_payload("p1", epoch, 240, 0, [0; 32], b"x");
/// store.bump_epoch().unwrap();
/// assert!(store.put(&stale, &mut &b"x"[..]).unwrap_err().is_fenced());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct FsStore {
    dir: PathBuf,
    pipeline: String,
    kept: usize,
    temp_counter: u64,
    fsync: bool,
    /// Whether each checkpoint file this handle wrote or read is intact, so retention reads a file
    /// at most once.
    verdicts: BTreeMap<String, bool>,
}

fn unavailable(what: &str, path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Unavailable { backend: BACKEND, reason: format!("{what} {}: {e}", path.display()) }
}

/// The file name of a checkpoint.
pub fn checkpoint_file_name(frame: u64, epoch: u64) -> String {
    format!("ckpt-{frame:020}-{epoch:020}.anck")
}

fn parse_file_name(name: &str) -> Option<(u64, u64)> {
    let rest = name.strip_prefix("ckpt-")?.strip_suffix(".anck")?;
    let (frame, epoch) = rest.split_once('-')?;
    Some((frame.parse().ok()?, epoch.parse().ok()?))
}

/// Fsyncs a directory, so the renames and removals in it survive a power failure.
pub(crate) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// An exclusive `flock` on a file, released when dropped (or when the process dies).
#[derive(Debug)]
pub(crate) struct DirLock {
    _file: File,
}

impl DirLock {
    /// Takes the lock on `path`, waiting up to `wait` for another holder.
    pub(crate) fn acquire(path: &Path, wait: Duration) -> std::io::Result<Option<DirLock>> {
        let file = OpenOptions::new().create(true).truncate(false).write(true).open(path)?;
        let start = Instant::now();
        loop {
            use rustix::fs::{FlockOperation, flock};
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(Some(DirLock { _file: file })),
                Err(rustix::io::Errno::WOULDBLOCK) | Err(rustix::io::Errno::INTR) => {
                    if start.elapsed() >= wait {
                        return Ok(None);
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl FsStore {
    /// Opens (creating it) `dir` for `pipeline`, keeping the newest `kept` checkpoints (at least 1).
    pub fn open(dir: &Path, pipeline: &str, kept: usize) -> Result<FsStore, StoreError> {
        if !super::valid_pipeline_id(pipeline) {
            return Err(StoreError::Settings(format!("pipeline id {pipeline:?} is not valid")));
        }
        fs::create_dir_all(dir).map_err(|e| unavailable("creating", dir, e))?;
        Ok(FsStore {
            dir: dir.to_path_buf(),
            pipeline: pipeline.to_string(),
            kept: kept.max(1),
            temp_counter: 0,
            fsync: true,
            verdicts: BTreeMap::new(),
        })
    }

    /// The same store without its fsyncs: writes stay atomic against a process crash (rename) but not
    /// against a power failure. For tests that drive the fencing logic through thousands of schedules;
    /// the service never uses it.
    pub fn without_fsync(mut self) -> FsStore {
        self.fsync = false;
        self
    }

    fn sync_file(&self, file: &File) -> std::io::Result<()> {
        if self.fsync { file.sync_all() } else { Ok(()) }
    }

    fn sync_dir(&self) -> std::io::Result<()> {
        if self.fsync { sync_dir(&self.dir) } else { Ok(()) }
    }

    /// The pipeline's directory: its checkpoint files, `EPOCH` and `LOCK`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn lock(&self) -> Result<DirLock, StoreError> {
        let path = self.dir.join("LOCK");
        DirLock::acquire(&path, LOCK_WAIT).map_err(|e| unavailable("locking", &path, e))?.ok_or_else(|| {
            StoreError::Unavailable {
                backend: BACKEND,
                reason: format!("{} is locked by another writer for more than {LOCK_WAIT:?}", path.display()),
            }
        })
    }

    fn read_epoch(&self) -> Result<u64, StoreError> {
        let path = self.dir.join("EPOCH");
        match anes_fs::read_capped(&path, MAX_EPOCH_FILE_LEN, "epoch record") {
            Ok(bytes) => std::str::from_utf8(&bytes).ok().and_then(|t| t.trim().parse().ok()).ok_or_else(|| {
                StoreError::Damaged(format!(
                    "{}: not an epoch (one decimal number): the pipeline's epoch record is damaged; restore it (one more than the highest epoch in the checkpoint file names) or remove the directory",
                    path.display()
                ))
            }),
            Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => Ok(0),
            Err(anes_fs::ReadError::Open { error, .. } | anes_fs::ReadError::Read { error, .. }) => {
                Err(unavailable("reading", &path, error))
            }
            // Not a regular file, or too large: no writer of ours left that.
            Err(e) => Err(StoreError::Damaged(format!(
                "{}: the pipeline's epoch record cannot be read: {}",
                path.display(),
                e.problem()
            ))),
        }
    }

    fn temp_path(&mut self) -> PathBuf {
        self.temp_counter += 1;
        self.dir.join(format!(".tmp-{}-{}", std::process::id(), self.temp_counter))
    }

    /// Writes `bytes` to `name` atomically: temporary file, fsync, rename, fsync of the directory.
    fn write_atomically(&mut self, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let tmp = self.temp_path();
        let result = (|| {
            let mut file = File::create(&tmp)?;
            file.write_all(bytes)?;
            self.sync_file(&file)?;
            fs::rename(&tmp, self.dir.join(name))?;
            self.sync_dir()
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result.map_err(|e| unavailable("writing", &self.dir.join(name), e))
    }

    fn checkpoint_names(&self) -> Result<Vec<(u64, u64, String)>, StoreError> {
        let mut names = Vec::new();
        for entry in fs::read_dir(&self.dir).map_err(|e| unavailable("listing", &self.dir, e))? {
            let entry = entry.map_err(|e| unavailable("listing", &self.dir, e))?;
            let name = entry.file_name().to_string_lossy().to_string();
            if let Some((frame, epoch)) = parse_file_name(&name) {
                names.push((frame, epoch, name));
            }
        }
        names.sort_by_key(|n| std::cmp::Reverse((n.0, n.1)));
        Ok(names)
    }

    /// Retention after the write of (`frame`, `epoch`): the newest `kept` intact checkpoints at or
    /// below it stay, older intact ones are removed. Neither counted nor removed: damaged files (the
    /// evidence [`Loaded::damaged`] reports) and checkpoints above the one just written, which are
    /// the ones recovery skipped (damaged, or not of this ROM): counting those once removed the
    /// checkpoint just written and set the journal's release point above every usable checkpoint.
    /// Returns the oldest kept frame. The removals are not fsynced: a crash may bring an old file
    /// back, which is older than the kept ones and goes at the next write.
    fn retain(&mut self, frame: u64, epoch: u64) -> Result<u64, StoreError> {
        let names = self.checkpoint_names()?;
        let (mut kept, mut oldest_kept_frame) = (0, frame);
        for (f, e, name) in &names {
            if (*f, *e) > (frame, epoch) || !self.intact(name, *f, *e) {
                continue;
            }
            if kept < self.kept {
                kept += 1;
                oldest_kept_frame = oldest_kept_frame.min(*f);
            } else if fs::remove_file(self.dir.join(name)).is_ok() {
                self.verdicts.remove(name);
            }
        }
        let present: BTreeSet<&str> = names.iter().map(|n| n.2.as_str()).collect();
        self.verdicts.retain(|name, _| present.contains(name.as_str()));
        Ok(oldest_kept_frame)
    }

    /// Whether a checkpoint file reads back whole (header and payload checksums, its name's frame
    /// and epoch), read once per handle: this handle wrote it, loaded it, or reads it now.
    fn intact(&mut self, name: &str, frame: u64, epoch: u64) -> bool {
        if let Some(&intact) = self.verdicts.get(name) {
            return intact;
        }
        match self.read_one(name, frame, epoch) {
            Ok(read) => {
                self.verdicts.insert(name.to_string(), read.is_ok());
                read.is_ok()
            }
            // Unreadable now: neither counted nor removed, and read again next time.
            Err(_) => false,
        }
    }

    fn remove_stale_temporaries(&self) {
        if let Ok(entries) = fs::read_dir(&self.dir) {
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with(".tmp-") {
                    tracing::info!(pipeline = %self.pipeline, file = %entry.path().display(), "removing a temporary file a crashed write left");
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
    }

    /// The checkpoint file `name`, or why it is damaged; `Err` when it could not be read (an I/O
    /// error is no verdict on the file: taken as damage, it made recovery skip good checkpoints).
    fn read_one(
        &self,
        name: &str,
        frame: u64,
        epoch: u64,
    ) -> Result<Result<StoredCheckpoint, String>, StoreError> {
        let path = self.dir.join(name);
        match anes_fs::read_capped(&path, MAX_HEADER_LEN + MAX_PAYLOAD_LEN, "checkpoint") {
            Ok(bytes) => Ok(self.check_one(&bytes, name, frame, epoch)),
            Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => Ok(Err(e.problem())),
            Err(anes_fs::ReadError::Open { error, .. } | anes_fs::ReadError::Read { error, .. }) => {
                Err(unavailable("reading", &path, error))
            }
            // Not a regular file, or too large: no writer of ours left that.
            Err(e) => Ok(Err(e.problem())),
        }
    }

    fn check_one(
        &self,
        bytes: &[u8],
        name: &str,
        frame: u64,
        epoch: u64,
    ) -> Result<StoredCheckpoint, String> {
        let (header, payload) = CheckpointHeader::decode_blob(bytes).map_err(|e| e.to_string())?;
        if header.pipeline_id != self.pipeline {
            return Err(format!(
                "holds pipeline {:?}'s checkpoint, not {:?}'s",
                header.pipeline_id, self.pipeline
            ));
        }
        if (header.frame, header.epoch) != (frame, epoch) {
            return Err(format!(
                "its header says frame {} epoch {}, its name frame {frame} epoch {epoch}",
                header.frame, header.epoch
            ));
        }
        Ok(StoredCheckpoint { payload: payload.to_vec(), header, name: name.to_string() })
    }
}

impl CheckpointStore for FsStore {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn bump_epoch(&mut self) -> Result<u64, StoreError> {
        let _lock = self.lock()?;
        // Under the lock no write is in progress: any temporary file is a crashed write's.
        self.remove_stale_temporaries();
        let current = self.read_epoch()?;
        let epoch = current
            .checked_add(1)
            .ok_or_else(|| super::epoch_at_maximum(BACKEND, &self.pipeline, current))?;
        // Invariant: EPOCH is replaced atomically; a crash leaves the old or the new number, and the
        // new one is in force only once the rename is durable, before any write uses it.
        self.write_atomically("EPOCH", format!("{epoch}\n").as_bytes())?;
        Ok(epoch)
    }

    fn advance_epoch(&mut self, held: u64) -> Result<u64, StoreError> {
        let _lock = self.lock()?;
        // Under the lock the check and the new EPOCH are one step: no takeover can come in between.
        fence::check(&self.pipeline, held, self.read_epoch()?)?;
        let epoch =
            held.checked_add(1).ok_or_else(|| super::epoch_at_maximum(BACKEND, &self.pipeline, held))?;
        self.write_atomically("EPOCH", format!("{epoch}\n").as_bytes())?;
        Ok(epoch)
    }

    fn current_epoch(&mut self) -> Result<u64, StoreError> {
        let _lock = self.lock()?;
        self.read_epoch()
    }

    fn put(&mut self, header: &CheckpointHeader, payload: &mut dyn Read) -> Result<Persisted, StoreError> {
        super::check_put_header(&self.pipeline, header)?;
        let _lock = self.lock()?;
        // The fencing check: the header only, before the payload is touched.
        fence::check(&self.pipeline, header.epoch, self.read_epoch()?)?;
        let name = checkpoint_file_name(header.frame, header.epoch);
        let tmp = self.temp_path();
        let written = (|| -> Result<(), StoreError> {
            let io = |e| unavailable("writing", &tmp, e);
            let mut file = File::create(&tmp).map_err(io)?;
            file.write_all(&header.encode()).map_err(io)?;
            let mut hasher = blake3::Hasher::new();
            let mut left = header.payload_len;
            let mut buffer = vec![0u8; 64 << 10];
            while left > 0 {
                let want = buffer.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                let n = payload
                    .read(&mut buffer[..want])
                    .map_err(|e| StoreError::Invalid(format!("reading the payload: {e}")))?;
                if n == 0 {
                    return Err(StoreError::Invalid(format!(
                        "the payload ended {left} bytes short of the {} its header declares",
                        header.payload_len
                    )));
                }
                hasher.update(&buffer[..n]);
                file.write_all(&buffer[..n]).map_err(io)?;
                left -= n as u64;
            }
            if hasher.finalize().as_bytes() != &header.payload_checksum {
                return Err(StoreError::Invalid("the payload does not match its header's checksum".into()));
            }
            // Invariant: the file is complete and durable before its name appears.
            self.sync_file(&file).map_err(io)?;
            fs::rename(&tmp, self.dir.join(&name)).map_err(io)?;
            // Invariant: the new name survives a power failure before the write is reported done.
            self.sync_dir().map_err(io)
        })();
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        self.verdicts.insert(name, true);
        let oldest_kept_frame = self.retain(header.frame, header.epoch)?;
        Ok(Persisted { frame: header.frame, epoch: header.epoch, oldest_kept_frame })
    }

    fn load(&mut self) -> Result<Loaded, StoreError> {
        let _lock = self.lock()?;
        let mut loaded = Loaded::default();
        for (frame, epoch, name) in self.checkpoint_names()? {
            let read = self.read_one(&name, frame, epoch)?;
            self.verdicts.insert(name.clone(), read.is_ok());
            match read {
                Ok(c) => loaded.verified.push(c),
                Err(reason) => {
                    tracing::error!(pipeline = %self.pipeline, file = %self.dir.join(&name).display(), %reason, "damaged checkpoint skipped");
                    loaded.damaged.push(Damaged { name, reason });
                }
            }
        }
        newest_first(&mut loaded.verified);
        Ok(loaded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "anes-fs-store-{name}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
        ));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn put(store: &mut FsStore, epoch: u64, frame: u64) -> Result<Persisted, StoreError> {
        let payload = vec![frame as u8; 3000];
        let header =
            CheckpointHeader::for_payload("p", epoch, frame, frame * 100, [frame as u8; 32], &payload);
        store.put(&header, &mut payload.as_slice())
    }

    /// Counts the bytes read from it.
    struct Counting<'a> {
        inner: &'a [u8],
        read: usize,
    }

    impl Read for Counting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.read += n;
            Ok(n)
        }
    }

    #[test]
    fn a_checkpoint_that_cannot_be_read_fails_the_load_instead_of_reading_as_damage() {
        // /proc/self/mem is a regular file whose read at offset 0 fails (EIO): an I/O error, no
        // verdict on the checkpoint. Skipped as damage, a passing error made recovery start older.
        let dir = temp_dir("unreadable");
        let mut store = FsStore::open(&dir, "p", 4).unwrap();
        let e = store.bump_epoch().unwrap();
        put(&mut store, e, 60).unwrap();
        std::os::unix::fs::symlink("/proc/self/mem", dir.join(checkpoint_file_name(120, e))).unwrap();
        let err = FsStore::open(&dir, "p", 4).unwrap().load().unwrap_err();
        assert!(matches!(err, StoreError::Unavailable { .. }), "{err}");
        assert!(err.to_string().contains(&checkpoint_file_name(120, e)), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn retention_neither_counts_nor_removes_damaged_checkpoints() {
        let dir = temp_dir("retention-damaged");
        let mut store = FsStore::open(&dir, "p", 2).unwrap();
        let e1 = store.bump_epoch().unwrap();
        for frame in [60, 120, 180] {
            put(&mut store, e1, frame).unwrap();
        }
        let damaged = dir.join(checkpoint_file_name(180, e1));
        let mut bytes = fs::read(&damaged).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        fs::write(&damaged, &bytes).unwrap();
        // A takeover that loads (the service's) and one that does not both read the damage.
        for loads in [true, false] {
            let mut store = FsStore::open(&dir, "p", 2).unwrap();
            let e = store.bump_epoch().unwrap();
            if loads {
                assert_eq!(store.load().unwrap().damaged.len(), 1);
            }
            // The damaged 180 is not one of the two kept: 120 stays beside the new checkpoint.
            let first = if loads { 240 } else { 300 };
            assert_eq!(put(&mut store, e, first).unwrap().oldest_kept_frame, if loads { 120 } else { 240 });
        }
        let loaded = FsStore::open(&dir, "p", 2).unwrap().load().unwrap();
        let frames: Vec<u64> = loaded.verified.iter().map(|c| c.header.frame).collect();
        assert_eq!(frames, [300, 240], "the newest two intact checkpoints");
        assert_eq!(loaded.damaged.len(), 1, "the damaged file is evidence, never removed");
        assert_eq!(loaded.damaged[0].name, checkpoint_file_name(180, e1));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_fenced_write_reads_no_payload_byte() {
        let dir = temp_dir("fenced");
        let mut old = FsStore::open(&dir, "p", 4).unwrap();
        let mut new = FsStore::open(&dir, "p", 4).unwrap();
        let e1 = old.bump_epoch().unwrap();
        put(&mut old, e1, 60).unwrap();
        let e2 = new.bump_epoch().unwrap();
        assert_eq!(e2, e1 + 1);
        let payload = vec![9u8; 50_000];
        let header = CheckpointHeader::for_payload("p", e1, 120, 0, [0; 32], &payload);
        let mut counting = Counting { inner: &payload, read: 0 };
        let err = old.put(&header, &mut counting).unwrap_err();
        assert!(
            matches!(err, StoreError::Fenced { writer, current, .. } if writer == e1 && current == e2),
            "{err}"
        );
        assert_eq!(counting.read, 0, "the refusal read payload bytes");
        assert!(err.to_string().contains(&format!("writer epoch {e1} is older than the store's epoch {e2}")));
        // The accepted write reads it all.
        let header = CheckpointHeader::for_payload("p", e2, 120, 0, [0; 32], &payload);
        let mut counting = Counting { inner: &payload, read: 0 };
        new.put(&header, &mut counting).unwrap();
        assert_eq!(counting.read, payload.len());
        let frames: Vec<u64> = new.load().unwrap().verified.iter().map(|c| c.header.frame).collect();
        assert_eq!(frames, [120, 60]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn torn_and_damaged_files_are_reported_and_skipped_never_deleted() {
        let dir = temp_dir("damaged");
        let mut store = FsStore::open(&dir, "p", 8).unwrap();
        let e = store.bump_epoch().unwrap();
        for frame in [60, 120, 180, 240] {
            put(&mut store, e, frame).unwrap();
        }
        // 240 torn (a crash of a tool that copied it), 180 with a flipped payload bit.
        let torn = dir.join(checkpoint_file_name(240, e));
        let bytes = fs::read(&torn).unwrap();
        fs::write(&torn, &bytes[..bytes.len() / 2]).unwrap();
        let flipped = dir.join(checkpoint_file_name(180, e));
        let mut bytes = fs::read(&flipped).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        fs::write(&flipped, &bytes).unwrap();
        // A crashed write's temporary file.
        fs::write(dir.join(".tmp-1-1"), b"ANESCKPT partial").unwrap();
        let loaded = store.load().unwrap();
        assert_eq!(loaded.verified[0].header.frame, 120, "the newest complete one");
        assert_eq!(loaded.verified.len(), 2);
        assert_eq!(loaded.damaged.len(), 2);
        assert!(loaded.damaged[0].reason.contains("torn"), "{:?}", loaded.damaged);
        assert!(loaded.damaged[1].reason.contains("checksum"), "{:?}", loaded.damaged);
        assert!(torn.exists() && flipped.exists(), "damaged files are kept for the operator");
        store.bump_epoch().unwrap();
        assert!(!dir.join(".tmp-1-1").exists(), "a takeover removes crashed writes' temporaries");
        fs::remove_dir_all(&dir).unwrap();
    }

    fn make_fifo(path: &Path) {
        rustix::fs::mkfifoat(rustix::fs::CWD, path, rustix::fs::Mode::from_raw_mode(0o600)).unwrap();
    }

    #[test]
    fn a_checkpoint_or_epoch_record_that_is_a_fifo_or_too_large_is_refused_without_blocking() {
        let dir = temp_dir("fifo");
        let mut store = FsStore::open(&dir, "p", 8).unwrap();
        let e = store.bump_epoch().unwrap();
        put(&mut store, e, 60).unwrap();
        // A FIFO named like a newer checkpoint: reported damaged, never waited on.
        make_fifo(&dir.join(checkpoint_file_name(120, e)));
        let loaded = store.load().unwrap();
        assert_eq!(loaded.verified.iter().map(|c| c.header.frame).collect::<Vec<_>>(), [60]);
        assert!(
            loaded.damaged[0].reason.contains("is a FIFO (named pipe), not a regular file"),
            "{:?}",
            loaded.damaged
        );
        let epoch_file = dir.join("EPOCH");
        fs::remove_file(&epoch_file).unwrap();
        make_fifo(&epoch_file);
        let err = store.current_epoch().unwrap_err();
        assert!(matches!(&err, StoreError::Damaged(m) if m.contains("is a FIFO (named pipe)")), "{err}");
        fs::remove_file(&epoch_file).unwrap();
        fs::write(&epoch_file, "1".repeat(MAX_EPOCH_FILE_LEN as usize + 1)).unwrap();
        let err = store.current_epoch().unwrap_err();
        assert!(matches!(&err, StoreError::Damaged(m) if m.contains("larger than 64 bytes")), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn retention_keeps_the_newest_and_reports_the_oldest_kept() {
        let dir = temp_dir("retention");
        let mut store = FsStore::open(&dir, "p", 3).unwrap();
        let e = store.bump_epoch().unwrap();
        let mut last = None;
        for frame in (1..=6).map(|k| k * 60) {
            last = Some(put(&mut store, e, frame).unwrap());
        }
        assert_eq!(last.unwrap().oldest_kept_frame, 240);
        assert_eq!(store.checkpoint_names().unwrap().len(), 3);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_payload_that_does_not_match_its_header_is_refused_and_leaves_nothing() {
        let dir = temp_dir("mismatch");
        let mut store = FsStore::open(&dir, "p", 3).unwrap();
        let e = store.bump_epoch().unwrap();
        let header = CheckpointHeader::for_payload("p", e, 60, 0, [0; 32], b"abcdef");
        assert!(matches!(store.put(&header, &mut &b"abcdeX"[..]), Err(StoreError::Invalid(_))));
        assert!(matches!(store.put(&header, &mut &b"abc"[..]), Err(StoreError::Invalid(_))));
        let other = CheckpointHeader::for_payload("q", e, 60, 0, [0; 32], b"abcdef");
        assert!(matches!(store.put(&other, &mut &b"abcdef"[..]), Err(StoreError::Invalid(_))));
        assert!(store.load().unwrap().verified.is_empty());
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 2, "only EPOCH and LOCK");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_damaged_epoch_record_is_an_actionable_error() {
        let dir = temp_dir("epoch");
        let mut store = FsStore::open(&dir, "p", 3).unwrap();
        fs::write(dir.join("EPOCH"), b"seven").unwrap();
        let e = store.bump_epoch().unwrap_err();
        assert!(e.to_string().contains("EPOCH: not an epoch"), "{e}");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Issue 44: an EPOCH of 2^64 - 1 was taken over as epoch 0 (written back as 0): every fenced
    /// writer would count as current again. Refused, and the record left as it is.
    #[test]
    fn an_epoch_at_its_maximum_is_refused_never_wrapped() {
        let dir = temp_dir("epoch-max");
        let mut store = FsStore::open(&dir, "p", 3).unwrap();
        fs::write(dir.join("EPOCH"), format!("{}\n", u64::MAX)).unwrap();
        for e in [store.bump_epoch().unwrap_err(), store.advance_epoch(u64::MAX).unwrap_err()] {
            assert!(matches!(e, StoreError::Damaged(_)) && e.to_string().contains("its maximum"), "{e}");
        }
        assert_eq!(fs::read_to_string(dir.join("EPOCH")).unwrap(), format!("{}\n", u64::MAX));
        fs::remove_dir_all(&dir).unwrap();
    }
}
