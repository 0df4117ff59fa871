//! Reading input streams and snapshots named on the command line.

use std::path::Path;

use anes_core::movie::{INPUT_STREAM_MAGIC, InputStream};
use anyhow::{Context, bail};

use crate::limited_read::{self, read_limited};

/// Reads an input stream in anes's binary format or an FCEUX `.fm2` movie (told apart by content).
/// Errors name the file and, for movies, the line.
pub fn read_input(path: &Path) -> anyhow::Result<InputStream> {
    let bytes = read_limited(path, limited_read::INPUT)?;
    let name = path.display();
    if bytes.starts_with(&INPUT_STREAM_MAGIC) {
        InputStream::from_bytes(&bytes).with_context(|| format!("{name}: anes input stream"))
    } else if bytes.starts_with(b"version ") {
        InputStream::from_fm2(&bytes).with_context(|| format!("{name}: fm2 movie"))
    } else {
        bail!(
            "{name}: not an input stream: expected an anes input stream (magic \"ANESINPT\") or an FCEUX .fm2 movie (first line \"version 3\")"
        )
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename, so an existing file is replaced
/// whole or not at all.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let file_name = path.file_name().with_context(|| format!("{}: not a file path", path.display()))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(file_name);
    temp_name.push(".tmp");
    let temp = path.with_file_name(temp_name);
    std::fs::write(&temp, bytes).with_context(|| temp.display().to_string())?;
    std::fs::rename(&temp, path).with_context(|| path.display().to_string())?;
    Ok(())
}
