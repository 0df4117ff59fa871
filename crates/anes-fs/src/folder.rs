//! Folders named on the command line (an output folder, a data directory): checked before the work
//! that fills them, so a file or a device in their place is refused by name instead of failing as
//! `File exists` or `Not a directory` after it.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::FileKind;

/// Why a path cannot be (or become) a folder.
#[derive(Debug)]
pub enum FolderError {
    /// The path, or a folder on the way to it, is something else than a folder.
    NotAFolder {
        /// The path given.
        path: PathBuf,
        /// What is not a folder: `path` itself or one of the folders above it.
        at: PathBuf,
        /// What is there instead.
        kind: FileKind,
    },
    /// It could not be looked at (permissions, a link loop).
    Io {
        /// The path looked at.
        path: PathBuf,
        /// What the operating system said.
        error: io::Error,
    },
}

impl fmt::Display for FolderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FolderError::NotAFolder { path, at, kind } if path == at => {
                write!(f, "{}: is {kind}, not a folder", path.display())
            }
            FolderError::NotAFolder { path, at, kind } => {
                write!(f, "{}: {} is {kind}, not a folder", path.display(), at.display())
            }
            FolderError::Io { path, error } => write!(f, "{}: cannot look at it: {error}", path.display()),
        }
    }
}

impl std::error::Error for FolderError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FolderError::Io { error, .. } => Some(error),
            FolderError::NotAFolder { .. } => None,
        }
    }
}

/// Checks that `path` is a folder (a link to one counts) or can be created as one: nothing is there
/// yet and every existing folder above it is a folder. Nothing is created.
pub fn folder_or_missing(path: &Path) -> Result<(), FolderError> {
    match first_gap(path)? {
        None | Some(Gap { kind: None, .. }) => Ok(()),
        Some(Gap { at, kind: Some(kind) }) => {
            Err(FolderError::NotAFolder { path: path.to_owned(), at, kind })
        }
    }
}

/// Where a path stops being made of folders.
pub(crate) struct Gap {
    /// The first path, from the top, that is not a folder.
    pub(crate) at: PathBuf,
    /// What is there (`None`: nothing).
    pub(crate) kind: Option<FileKind>,
}

/// The first path from the top down to `dir` (`dir` included, links followed) that is not a folder.
/// `None` when `dir` is a folder.
pub(crate) fn first_gap(dir: &Path) -> Result<Option<Gap>, FolderError> {
    let mut ancestors: Vec<&Path> = dir.ancestors().filter(|p| !p.as_os_str().is_empty()).collect();
    ancestors.reverse();
    for at in ancestors {
        let kind = match fs::metadata(at) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(meta) => Some(FileKind::of(meta.file_type())),
            Err(error) if error.kind() == io::ErrorKind::NotFound => None,
            Err(error) => return Err(FolderError::Io { path: at.to_owned(), error }),
        };
        return Ok(Some(Gap { at: at.to_owned(), kind }));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::tests::{Scratch, mkfifo};

    #[test]
    fn a_folder_or_nothing_passes_and_anything_else_is_named() {
        let scratch = Scratch::new("folder");
        folder_or_missing(scratch.root()).unwrap();
        folder_or_missing(&scratch.path("new/deeper")).unwrap();
        let file = scratch.path("afile");
        fs::write(&file, b"x").unwrap();
        let e = folder_or_missing(&file).unwrap_err();
        assert_eq!(e.to_string(), format!("{}: is a regular file, not a folder", file.display()));
        // Below a file nothing can be created: the file is named.
        let below = file.join("sub/dir");
        let e = folder_or_missing(&below).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{}: {} is a regular file, not a folder", below.display(), file.display())
        );
        let fifo = scratch.path("fifo");
        mkfifo(&fifo);
        assert!(
            folder_or_missing(&fifo)
                .unwrap_err()
                .to_string()
                .ends_with("is a FIFO (named pipe), not a folder")
        );
        let e = folder_or_missing(Path::new("/dev/null")).unwrap_err();
        assert_eq!(e.to_string(), "/dev/null: is a character device, not a folder");
        // A link to a folder is a folder.
        let link = scratch.path("link");
        std::os::unix::fs::symlink(scratch.root(), &link).unwrap();
        folder_or_missing(&link).unwrap();
    }
}
