//! The most bytes each kind of file named on the command line may hold. Every read goes through
//! `anes_fs::read_capped`: a FIFO, a directory or a device (`/dev/zero`) is refused by what it is
//! without blocking, and a regular file over its kind's limit by its size, before a byte is read.

use std::path::Path;

use anes_core::cart::MAX_ROM_FILE_LEN;
use anes_core::movie::MAX_INPUT_STREAM_LEN;

/// A kind of file and the most bytes one can hold.
#[derive(Debug, Clone, Copy)]
pub struct FileKind {
    /// What the file is, for messages.
    name: &'static str,
    /// The largest valid file of this kind.
    limit: usize,
}

/// iNES / NES 2.0 ROMs: 16 MiB (`anes_core::cart::MAX_ROM_FILE_LEN`).
pub const ROM: FileKind = FileKind { name: "ROM", limit: MAX_ROM_FILE_LEN };
/// Snapshots: 16 MiB. The largest holds the RAM a NES 2.0 header can declare (8 MiB), four-screen
/// VRAM and a few KiB of console state.
pub const SNAPSHOT: FileKind = FileKind { name: "snapshot", limit: 16 << 20 };
/// Input streams and `.fm2` movies: 64 MiB (`anes_core::movie::MAX_INPUT_STREAM_LEN`).
pub const INPUT: FileKind = FileKind { name: "input stream", limit: MAX_INPUT_STREAM_LEN };
/// Golden frame logs: 64 MiB (a record line is about 100 bytes: 5,000 frames take 500 KB).
pub const GOLDEN_LOG: FileKind = FileKind { name: "golden log", limit: 64 << 20 };
/// An evidence bundle's `report.json`: 16 MiB (its field list is capped; a report is a few KiB).
pub const REPORT: FileKind = FileKind { name: "evidence report", limit: 16 << 20 };
/// Canary corpus manifests: 1 MiB.
pub const CORPUS: FileKind = FileKind { name: "corpus manifest", limit: 1 << 20 };

/// Reads the whole regular file at `path`, refusing anything else and a file larger than `kind`
/// holds. Errors name the file and what it is.
pub fn read_limited(path: &Path, kind: FileKind) -> anyhow::Result<Vec<u8>> {
    Ok(anes_fs::read_capped(path, kind.limit as u64, kind.name)?)
}
