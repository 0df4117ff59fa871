//! Keeping a worker's protocol away from a core's stdout. A libretro core is foreign code in the
//! worker's process, and cores print: Debian's Gambatte writes to stdout at load, others log every
//! frame with `printf`. The worker speaks its protocol on its stdout, so whatever the core writes
//! to descriptor 1 would land in the middle of the protocol's frames (a core printing a line per
//! frame once broke the worker after about 4 KB: `frame of 1701536102 bytes is longer than the
//! 16777216-byte limit`, the length read from its text). [`divert_stdout`] moves the protocol to a
//! descriptor of its own before the core is loaded and points descriptor 1 at stderr.

use std::ffi::c_int;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, RawFd};

// POSIX dup2(2), from the C library the standard library links already.
unsafe extern "C" {
    fn dup2(old: c_int, new: c_int) -> c_int;
}

/// The descriptor C's `printf` and Rust's `print!` write to.
const STDOUT: RawFd = 1;

/// Moves this process's stdout to a private descriptor and returns it as a file; descriptor 1 then
/// writes to stderr (to `/dev/null` when stderr is closed), so what a core loaded later prints with
/// `printf`, `puts`, `write(1, ...)` or Rust's `print!` goes to the worker's log and the protocol
/// written to the returned file stays intact. The returned descriptor is close-on-exec: a process
/// the core starts does not inherit the protocol. Call it once, before loading a core.
pub fn divert_stdout() -> io::Result<File> {
    // Bytes buffered for the old stdout must not come out on stderr afterwards.
    io::stdout().flush()?;
    // F_DUPFD_CLOEXEC: a new descriptor above 2, closed on exec.
    let protocol = io::stdout().as_fd().try_clone_to_owned()?;
    let stderr = io::stderr().as_raw_fd();
    if point_stdout_at(stderr).is_err() {
        let null = File::options().write(true).open("/dev/null")?;
        point_stdout_at(null.as_raw_fd())?;
    }
    Ok(File::from(protocol))
}

/// Makes descriptor 1 a duplicate of `fd`.
fn point_stdout_at(fd: RawFd) -> io::Result<()> {
    // SAFETY: dup2 reads no memory; it closes descriptor 1 and makes it a duplicate of `fd`, an open
    // descriptor of this process (or it fails and changes nothing). No Rust value owns descriptor 1:
    // std's stdout writes to the number 1, which stays open throughout, and the protocol's duplicate
    // is another descriptor.
    let result = unsafe { dup2(fd, STDOUT) };
    if result < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}
