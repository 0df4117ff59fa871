//! Reading the manifest and the files it names, each capped at the largest size its kind can validly
//! have, so a device or a FIFO in a file's place (`/dev/zero`) is refused instead of read until memory
//! runs out.

use std::io::{self, Read};
use std::path::Path;

/// The largest manifest read: 1 MiB (the shared manifest of 88 ROMs is 31 KiB).
pub const MAX_MANIFEST_LEN: usize = 1 << 20;
/// The largest baseline read: 1 MiB (a line per ROM).
pub const MAX_BASELINE_LEN: usize = 1 << 20;
/// The largest golden trace log read: 16 MiB (nestest.log is 839 KiB).
pub const MAX_LOG_LEN: usize = 16 << 20;

/// Reads the file at `path`, or fails with [`io::ErrorKind::FileTooLarge`] when it holds more than
/// `limit` bytes (the message says the limit and `what` the file is).
pub(crate) fn read_limited(path: &Path, limit: usize, what: &str) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    // One byte past the limit tells a file at the limit from a longer one.
    std::fs::File::open(path)?.take(limit as u64 + 1).read_to_end(&mut bytes)?;
    if bytes.len() > limit {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than {} MiB, the limit for {what} files; is it a device or a pipe?", limit >> 20),
        ));
    }
    Ok(bytes)
}

/// [`read_limited`] for text: invalid UTF-8 is [`io::ErrorKind::InvalidData`], as with
/// `std::fs::read_to_string`.
pub(crate) fn read_text_limited(path: &Path, limit: usize, what: &str) -> io::Result<String> {
    String::from_utf8(read_limited(path, limit, what)?).map_err(|err| {
        let offset = err.utf8_error().valid_up_to();
        io::Error::new(io::ErrorKind::InvalidData, format!("not UTF-8 text: invalid byte at offset {offset}"))
    })
}
