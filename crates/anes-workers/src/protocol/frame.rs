//! Binary framing: `len u32` little-endian, the contents (tag and payload), then a checksum of both
//! ([`FRAME_CHECKSUM_LEN`] bytes), at most [`MAX_FRAME_LEN`] bytes of contents.

use super::{FRAME_CHECKSUM_LEN, HELLO_MAGIC, MAX_FRAME_LEN, PROTOCOL_VERSION, ProtocolError, tag};

pub(crate) fn begin_frame(out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    start
}

pub(crate) fn end_frame(out: &mut Vec<u8>, start: usize) {
    let len = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
    let checksum = frame_checksum(&out[start..start + 4], &out[start + 4..]);
    out.extend_from_slice(&checksum);
}

/// blake3 of a frame's length bytes and contents, first [`FRAME_CHECKSUM_LEN`] bytes: the length is
/// covered too, so a damaged length reads other bytes as the frame and fails the check.
pub(crate) fn frame_checksum(len: &[u8], contents: &[u8]) -> [u8; FRAME_CHECKSUM_LEN] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(len);
    hasher.update(contents);
    let mut out = [0; FRAME_CHECKSUM_LEN];
    out.copy_from_slice(&hasher.finalize().as_bytes()[..FRAME_CHECKSUM_LEN]);
    out
}

/// Reads one binary frame's contents from `reader` into `buf` and verifies its checksum. `Ok(false)` at
/// a clean end of stream (before the first byte of a frame).
pub fn read_frame(reader: &mut impl std::io::Read, buf: &mut Vec<u8>) -> Result<bool, ProtocolError> {
    let Some(len) = read_contents(reader, buf)? else { return Ok(false) };
    verify_checksum(reader, len, buf)?;
    Ok(true)
}

/// Reads a child's first frame, its hello, into `buf`. Every version's hello starts with its tag, the
/// magic and the protocol version, and only a hello of this version is followed by this version's
/// checksum: a child of another version is read far enough to name its version (and refused by the
/// caller on [`decode_reply`](super::decode_reply)'s `Hello`), instead of being waited on for bytes it never sends.
pub fn read_hello_frame(reader: &mut impl std::io::Read, buf: &mut Vec<u8>) -> Result<bool, ProtocolError> {
    let Some(len) = read_contents(reader, buf)? else { return Ok(false) };
    let this_version = buf.len() >= 7
        && buf[0] == tag::HELLO
        && buf[1..5] == HELLO_MAGIC
        && u16::from_le_bytes([buf[5], buf[6]]) == PROTOCOL_VERSION;
    if this_version {
        verify_checksum(reader, len, buf)?;
    }
    Ok(true)
}

/// Reads a frame's length and contents; returns the length's bytes, or `None` at a clean end.
fn read_contents(
    reader: &mut impl std::io::Read,
    buf: &mut Vec<u8>,
) -> Result<Option<[u8; 4]>, ProtocolError> {
    let mut len_bytes = [0u8; 4];
    let got = fill(reader, &mut len_bytes)?;
    if got == 0 {
        return Ok(None);
    }
    if got < 4 {
        return Err(ProtocolError::UnexpectedEof { missing: 4 - got });
    }
    let len = u32::from_le_bytes(len_bytes) as usize;
    if len > MAX_FRAME_LEN {
        return Err(ProtocolError::FrameTooLong { len: len as u64, max: MAX_FRAME_LEN });
    }
    buf.clear();
    buf.resize(len, 0);
    let filled = fill(reader, buf)?;
    if filled < len {
        return Err(ProtocolError::UnexpectedEof { missing: len - filled + FRAME_CHECKSUM_LEN });
    }
    Ok(Some(len_bytes))
}

fn verify_checksum(reader: &mut impl std::io::Read, len: [u8; 4], buf: &[u8]) -> Result<(), ProtocolError> {
    let mut checksum = [0u8; FRAME_CHECKSUM_LEN];
    let got = fill(reader, &mut checksum)?;
    if got < FRAME_CHECKSUM_LEN {
        return Err(ProtocolError::UnexpectedEof { missing: FRAME_CHECKSUM_LEN - got });
    }
    if checksum != frame_checksum(&len, buf) {
        return Err(ProtocolError::ChecksumMismatch {
            len: buf.len(),
            tag: buf.first().copied().unwrap_or(0),
        });
    }
    Ok(())
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
fn fill(reader: &mut impl std::io::Read, buf: &mut [u8]) -> Result<usize, ProtocolError> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(filled)
}
