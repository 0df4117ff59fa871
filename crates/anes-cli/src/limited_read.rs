//! Reading the files named on the command line, each capped at the largest size its kind can validly
//! have, so a device or a FIFO given as a file (`/dev/zero`) is refused instead of read until memory
//! runs out.

use std::io::Read;
use std::path::Path;

use anes_core::cart::MAX_ROM_FILE_LEN;
use anes_core::movie::MAX_INPUT_STREAM_LEN;
use anyhow::{Context, bail};

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
pub const INPUT: FileKind = FileKind { name: "input stream and movie", limit: MAX_INPUT_STREAM_LEN };
/// Golden frame logs: 64 MiB (a record line is about 100 bytes: 5,000 frames take 500 KB).
pub const GOLDEN_LOG: FileKind = FileKind { name: "golden log", limit: 64 << 20 };
/// An evidence bundle's `report.json`: 16 MiB (its field list is capped; a report is a few KiB).
pub const REPORT: FileKind = FileKind { name: "evidence report", limit: 16 << 20 };
/// Canary corpus manifests: 1 MiB.
pub const CORPUS: FileKind = FileKind { name: "corpus manifest", limit: 1 << 20 };

/// Reads the whole file at `path`, refusing it when it holds more than `kind` can.
/// Errors name the file.
pub fn read_limited(path: &Path, kind: FileKind) -> anyhow::Result<Vec<u8>> {
    let name = path.display();
    let file = std::fs::File::open(path).with_context(|| name.to_string())?;
    let mut bytes = Vec::new();
    // One byte past the limit tells a file at the limit from a longer one.
    file.take(kind.limit as u64 + 1).read_to_end(&mut bytes).with_context(|| name.to_string())?;
    if bytes.len() > kind.limit {
        bail!(
            "{name}: larger than {} MiB, the limit for {} files; is it a device or a pipe?",
            kind.limit >> 20,
            kind.name
        );
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_at_the_limit_is_read_and_one_byte_more_is_refused() {
        let dir = std::env::temp_dir().join(format!("anes-limited-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("file");
        let kind = FileKind { name: "test", limit: 1 << 20 };
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        assert_eq!(read_limited(&path, kind).unwrap().len(), 1 << 20);
        std::fs::write(&path, vec![7u8; (1 << 20) + 1]).unwrap();
        let err = format!("{:#}", read_limited(&path, kind).unwrap_err());
        assert!(err.contains("larger than 1 MiB, the limit for test files"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
