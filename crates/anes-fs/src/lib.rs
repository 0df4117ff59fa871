//! The files anes is given on the command line and keeps in its data directory, read and written so
//! that what sits at a path cannot hang, balloon or be destroyed; and the flags it reads from its
//! environment.
//!
//! - [`read_capped`] / [`read_text_capped`]: opens without blocking, refuses anything that is not a
//!   regular file (a FIFO, a directory, a device) with an error naming the path and what it is, refuses
//!   a file larger than the cap from its size alone, then reads at most the cap.
//! - [`write_output`]: a new path or a regular file is replaced atomically (a temporary file beside it,
//!   fsynced, renamed over it); a symbolic link is followed and the rule applied to its target; a
//!   device or a FIFO is written in place, never replaced. Every write and flush error is returned.
//!   [`write_output_with`] does the same for contents written as they are made, in bounded memory;
//!   [`check_output`] refuses before long work what the write would refuse from the path alone.
//! - [`folder_or_missing`]: a folder named for output is a folder or can be made one, checked before
//!   the work that fills it.
//! - [`env_flag`] / [`ci_is_set`]: an environment flag is set unless it is empty, `0` or `false`.
//! - [`orphaned_process_folders`]: the temporary folders a killed process named after itself and
//!   could not remove.
//!
//! Unix only, like the service: the non-blocking open and the file types are POSIX's.

mod env;
mod folder;
mod kind;
mod orphans;
mod read;
mod write;

pub use env::{ci_is_set, env_flag};
pub use folder::{FolderError, folder_or_missing};
pub use kind::FileKind;
pub use orphans::{FolderName, orphaned_process_folders};
pub use read::{ReadError, read_capped, read_text_capped};
pub use write::{WriteError, check_output, write_output, write_output_with};

/// `limit` for messages: whole MiB as "16 MiB", anything else in bytes.
fn describe_size(limit: u64) -> String {
    if limit >= 1 << 20 && limit % (1 << 20) == 0 {
        format!("{} MiB", limit >> 20)
    } else {
        format!("{limit} bytes")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_as_mib_when_whole() {
        assert_eq!(super::describe_size(16 << 20), "16 MiB");
        assert_eq!(super::describe_size((1 << 20) + 1), "1048577 bytes");
        assert_eq!(super::describe_size(11), "11 bytes");
    }
}
