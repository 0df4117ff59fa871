//! Size-capped reads of regular files.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use rustix::fs::OFlags;
use thiserror::Error;

use crate::{FileKind, describe_size};

/// Why a file was not read. Every message names the file and says what it was expected to be.
#[derive(Debug, Error)]
pub enum ReadError {
    /// The file could not be opened (missing, no permission...).
    #[error("{}: cannot read the {what}: {error}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// What the file was to be ("ROM", "manifest").
        what: &'static str,
        /// What the operating system said.
        error: io::Error,
    },
    /// The path names a FIFO, a directory, a device or a socket.
    #[error("{}: the {what} is {kind}, not a regular file", path.display())]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What the file was to be.
        what: &'static str,
        /// What it is.
        kind: FileKind,
    },
    /// The file holds more than any valid file of its kind.
    #[error("{}: {size} bytes, larger than {}, the limit for {what} files", path.display(), describe_size(*limit))]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// What the file was to be.
        what: &'static str,
        /// The cap.
        limit: u64,
        /// Its size (at least `limit + 1` when it grew while being read).
        size: u64,
    },
    /// Reading failed after the file was opened.
    #[error("{}: cannot read the {what}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the file was to be.
        what: &'static str,
        /// What the operating system said.
        error: io::Error,
    },
    /// A text file holds bytes that are not UTF-8.
    #[error("{}: the {what} is not UTF-8 text: invalid byte at offset {offset}", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
        /// What the file was to be.
        what: &'static str,
        /// The first byte that is not UTF-8.
        offset: usize,
    },
}

impl ReadError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ReadError::Open { path, .. }
            | ReadError::NotRegular { path, .. }
            | ReadError::TooLarge { path, .. }
            | ReadError::Read { path, .. }
            | ReadError::NotText { path, .. } => path,
        }
    }

    /// The message without the leading path, for errors that name the file themselves.
    pub fn problem(&self) -> String {
        let message = self.to_string();
        let prefix = format!("{}: ", self.path().display());
        message.strip_prefix(&prefix).map_or_else(|| message.clone(), str::to_string)
    }

    /// The operating system's error kind, for errors that come from it.
    pub fn io_kind(&self) -> Option<io::ErrorKind> {
        match self {
            ReadError::Open { error, .. } | ReadError::Read { error, .. } => Some(error.kind()),
            _ => None,
        }
    }
}

/// Reads the whole regular file at `path` (symbolic links followed), `what` naming its kind in
/// errors. Refuses, without reading a byte, anything that is not a regular file and a file whose size
/// is over `limit`; a file that grows past `limit` while being read is refused after `limit + 1`
/// bytes. Never blocks on a FIFO: the open is non-blocking.
pub fn read_capped(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>, ReadError> {
    let file = open_regular(path, what)?;
    let size = file.metadata().map_err(|error| ReadError::Read { path: path.to_owned(), what, error })?.len();
    if size > limit {
        return Err(ReadError::TooLarge { path: path.to_owned(), what, limit, size });
    }
    // The size is a hint (the file may change): never more than `limit + 1` bytes, one past the limit
    // telling a file at the limit from a longer one.
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(|error| ReadError::Read {
        path: path.to_owned(),
        what,
        error,
    })?;
    let read = bytes.len() as u64;
    if read > limit {
        return Err(ReadError::TooLarge { path: path.to_owned(), what, limit, size: read });
    }
    Ok(bytes)
}

/// [`read_capped`] for text files: bytes that are not UTF-8 are [`ReadError::NotText`].
pub fn read_text_capped(path: &Path, limit: u64, what: &'static str) -> Result<String, ReadError> {
    String::from_utf8(read_capped(path, limit, what)?).map_err(|err| ReadError::NotText {
        path: path.to_owned(),
        what,
        offset: err.utf8_error().valid_up_to(),
    })
}

/// Opens `path` for reading without blocking (a FIFO with no writer opens at once) and checks what
/// the opened descriptor is, so nothing can be swapped in between the check and the read.
fn open_regular(path: &Path, what: &'static str) -> Result<File, ReadError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(|error| ReadError::Open { path: path.to_owned(), what, error })?;
    let metadata = file.metadata().map_err(|error| ReadError::Read { path: path.to_owned(), what, error })?;
    match FileKind::of(metadata.file_type()) {
        FileKind::Regular => Ok(file),
        kind => Err(ReadError::NotRegular { path: path.to_owned(), what, kind }),
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::write::tests::{Scratch, mkfifo};

    #[test]
    fn a_file_at_the_limit_is_read_and_one_byte_more_is_refused_by_its_size() {
        let scratch = Scratch::new("read-limit");
        let path = scratch.path("file");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        assert_eq!(read_capped(&path, 1 << 20, "test").unwrap().len(), 1 << 20);
        std::fs::write(&path, vec![7u8; (1 << 20) + 1]).unwrap();
        let err = read_capped(&path, 1 << 20, "test").unwrap_err();
        assert!(matches!(err, ReadError::TooLarge { size: 1048577, limit: 1048576, .. }), "{err:?}");
        assert!(
            err.to_string().contains("1048577 bytes, larger than 1 MiB, the limit for test files"),
            "{err}"
        );
        assert_eq!(err.problem(), "1048577 bytes, larger than 1 MiB, the limit for test files");
    }

    /// A sparse file claims a gigabyte it does not hold: its size refuses it before any read.
    #[test]
    fn a_sparse_file_over_the_limit_is_refused_without_reading_it() {
        let scratch = Scratch::new("read-sparse");
        let path = scratch.path("sparse");
        File::create(&path).unwrap().set_len(1 << 40).unwrap();
        let started = Instant::now();
        let err = read_capped(&path, 1 << 30, "queue").unwrap_err();
        assert!(matches!(err, ReadError::TooLarge { size, .. } if size == 1 << 40), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    }

    #[test]
    fn a_fifo_a_directory_and_a_device_are_refused_by_what_they_are() {
        let scratch = Scratch::new("read-kinds");
        let fifo = scratch.path("fifo");
        mkfifo(&fifo);
        let started = Instant::now();
        let err = read_capped(&fifo, 100, "ROM").unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(1), "a FIFO with no writer must not block");
        assert!(matches!(err, ReadError::NotRegular { kind: FileKind::Fifo, .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!("{}: the ROM is a FIFO (named pipe), not a regular file", fifo.display())
        );
        let err = read_capped(scratch.root(), 100, "ROM").unwrap_err();
        assert!(matches!(err, ReadError::NotRegular { kind: FileKind::Directory, .. }), "{err:?}");
        let err = read_capped(Path::new("/dev/zero"), 100, "ROM").unwrap_err();
        assert!(matches!(err, ReadError::NotRegular { kind: FileKind::CharDevice, .. }), "{err:?}");
    }

    #[test]
    fn a_symlink_to_a_regular_file_is_read_and_a_missing_file_is_an_open_error() {
        let scratch = Scratch::new("read-link");
        let target = scratch.path("target");
        std::fs::write(&target, b"bytes").unwrap();
        let link = scratch.path("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(read_capped(&link, 100, "test").unwrap(), b"bytes");
        let err = read_capped(&scratch.path("missing"), 100, "test").unwrap_err();
        assert_eq!(err.io_kind(), Some(io::ErrorKind::NotFound));
        assert_eq!(err.path(), scratch.path("missing"));
    }

    #[test]
    fn text_that_is_not_utf8_names_the_offset() {
        let scratch = Scratch::new("read-text");
        let path = scratch.path("text");
        std::fs::write(&path, b"abc\xffdef").unwrap();
        let err = read_text_capped(&path, 100, "manifest").unwrap_err();
        assert!(matches!(err, ReadError::NotText { offset: 3, .. }), "{err:?}");
        std::fs::write(&path, "π").unwrap();
        assert_eq!(read_text_capped(&path, 100, "manifest").unwrap(), "π");
    }
}
