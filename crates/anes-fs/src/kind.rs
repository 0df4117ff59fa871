//! What a path names, as far as reading and writing it goes.

use std::fmt;
use std::fs::FileType;
use std::os::unix::fs::FileTypeExt;

/// The type of a file, from `stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file: the only kind read, and the only kind replaced by a rename.
    Regular,
    /// A directory.
    Directory,
    /// A symbolic link (seen only where links are not followed).
    Symlink,
    /// A FIFO (named pipe): reading it would wait for a writer, and replacing it would break whoever
    /// listens on it.
    Fifo,
    /// A character device (`/dev/null`, `/dev/zero`, a terminal).
    CharDevice,
    /// A block device (a disk).
    BlockDevice,
    /// A Unix domain socket.
    Socket,
}

impl FileKind {
    /// The kind of `file_type`.
    pub fn of(file_type: FileType) -> FileKind {
        if file_type.is_file() {
            FileKind::Regular
        } else if file_type.is_dir() {
            FileKind::Directory
        } else if file_type.is_symlink() {
            FileKind::Symlink
        } else if file_type.is_fifo() {
            FileKind::Fifo
        } else if file_type.is_char_device() {
            FileKind::CharDevice
        } else if file_type.is_block_device() {
            FileKind::BlockDevice
        } else {
            // POSIX has no other file type.
            FileKind::Socket
        }
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::Regular => "a regular file",
            FileKind::Directory => "a directory",
            FileKind::Symlink => "a symbolic link",
            FileKind::Fifo => "a FIFO (named pipe)",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Socket => "a socket",
        })
    }
}
