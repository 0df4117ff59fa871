//! Reading input streams named on the command line.

use std::path::Path;

use anes_core::Region;
use anes_core::movie::{INPUT_STREAM_MAGIC, InputStream};
use anyhow::{Context, bail};

use crate::limited_read::{self, read_limited};

/// Reads an input stream in anes's binary format or an FCEUX `.fm2` movie (told apart by content).
/// Errors name the file and, for movies, the line.
pub fn read_input(path: &Path) -> anyhow::Result<InputStream> {
    read_input_with_region(path).map(|(stream, _)| stream)
}

/// [`read_input`], and the region the file asks for: a `.fm2` movie's `palFlag 1` asks for PAL; an
/// anes input stream does not say.
pub fn read_input_with_region(path: &Path) -> anyhow::Result<(InputStream, Option<Region>)> {
    let bytes = read_limited(path, limited_read::INPUT)?;
    let name = path.display();
    if bytes.starts_with(&INPUT_STREAM_MAGIC) {
        let stream = InputStream::from_bytes(&bytes).with_context(|| format!("{name}: anes input stream"))?;
        Ok((stream, None))
    } else if bytes.starts_with(b"version ") {
        let (stream, header) =
            InputStream::from_fm2_with_header(&bytes).with_context(|| format!("{name}: fm2 movie"))?;
        Ok((stream, header.region))
    } else {
        bail!(
            "{name}: not an input stream: expected an anes input stream (magic \"ANESINPT\") or an FCEUX .fm2 movie (first line \"version 3\")"
        )
    }
}
