//! Writing an output file without replacing what must not be replaced.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
use thiserror::Error;

use crate::FileKind;

/// Symbolic links followed before giving up (Linux's own limit, `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// Why an output was not (completely) written. Messages name the file written: the target when the
/// path given is a symbolic link.
#[derive(Debug, Error)]
pub enum WriteError {
    /// The path names a directory (or, through links, something else no file can be written to).
    #[error("{}: is {kind}; give a file path", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: FileKind,
    },
    /// A FIFO with no process reading it (writing would wait forever).
    #[error("{}: no process is reading this FIFO (named pipe)", path.display())]
    NoReader {
        /// The FIFO.
        path: PathBuf,
    },
    /// Symbolic links that never end in a file.
    #[error("{}: more than {MAX_LINKS} symbolic links (a loop?)", path.display())]
    LinkLoop {
        /// The path given.
        path: PathBuf,
    },
    /// The folder the output goes in is missing, or a folder on the way to it is something else.
    #[error("{}: {}", path.display(), match kind {
        None => format!("the folder {} does not exist", at.display()),
        Some(kind) => format!("{} is {kind}, not a folder", at.display()),
    })]
    NoFolder {
        /// The output.
        path: PathBuf,
        /// The first folder on the way to it that is missing or not a folder.
        at: PathBuf,
        /// What is there instead (`None`: nothing).
        kind: Option<FileKind>,
    },
    /// The operating system refused a step.
    #[error("{}: cannot {step}: {error}", path.display())]
    Io {
        /// The output (or its directory, for the directory's sync) the step was on; never the
        /// temporary file, a name the user did not give.
        path: PathBuf,
        /// What was being done ("write", "rename the temporary file over it").
        step: &'static str,
        /// What the operating system said.
        error: io::Error,
    },
}

fn io_error<'a>(path: &'a Path, step: &'static str) -> impl FnOnce(io::Error) -> WriteError + 'a {
    move |error| WriteError::Io { path: path.to_owned(), step, error }
}

/// Writes `bytes` as the whole content of the output at `path`:
///
/// - a path that does not exist yet, or a regular file: a temporary file in the same directory is
///   written, fsynced and renamed over it (the directory then fsynced), so the path holds the old
///   content or the new, never a part; a file replaced keeps its permission bits;
/// - a symbolic link: followed (to its last target, which may not exist yet), the rule applied there;
///   the link stays a link;
/// - a FIFO or a device (`/dev/null`, `/dev/stdout`'s terminal): written in place, neither created,
///   truncated nor replaced. A FIFO no process reads is refused at once ([`WriteError::NoReader`]);
///   one whose reader stops reading makes this wait, as a shell redirection would;
/// - a directory: refused.
///
/// Every failed step is an error (`/dev/full` is one), and a temporary file is removed after one.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_output_with(path, |out| out.write_all(bytes))
}

/// [`write_output`] of what `contents` writes into the writer it is given, as it writes it: the
/// output need not fit in memory. The writer is buffered; an error `contents` returns (its own, or
/// the writer's) fails the write as any other: a regular file's path keeps its old content and the
/// temporary file is removed, while a device or a FIFO keeps what reached it.
pub fn write_output_with(
    path: &Path,
    contents: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), WriteError> {
    let (target, kind) = resolve_links(path)?;
    match kind {
        None | Some(FileKind::Regular) => replace_atomically(&target, contents, kind.is_some()),
        Some(FileKind::Fifo | FileKind::CharDevice | FileKind::BlockDevice | FileKind::Socket) => {
            write_in_place(&target, contents)
        }
        Some(kind @ (FileKind::Directory | FileKind::Symlink)) => {
            Err(WriteError::NotAFile { path: target, kind })
        }
    }
}

/// Checks, without writing anything, what [`write_output`] would refuse from the path alone: a
/// directory, a link loop, a missing folder (or a file where a folder should be) on the way to it.
/// Commands call it before work that takes long, so a mistyped output is refused before the work
/// instead of after it. What only the write can tell (a full disk, a FIFO's reader, permissions)
/// is left to the write.
pub fn check_output(path: &Path) -> Result<(), WriteError> {
    let (target, kind) = resolve_links(path)?;
    match kind {
        Some(kind @ (FileKind::Directory | FileKind::Symlink)) => {
            Err(WriteError::NotAFile { path: target, kind })
        }
        Some(_) => Ok(()),
        None => {
            if target.file_name().is_none() {
                return Err(WriteError::NotAFile { path: target, kind: FileKind::Directory });
            }
            let dir = folder_of(&target);
            match crate::folder::first_gap(dir) {
                Ok(None) => Ok(()),
                Ok(Some(crate::folder::Gap { at, kind })) => {
                    Err(WriteError::NoFolder { path: target, at, kind })
                }
                Err(crate::FolderError::Io { path: at, error }) => {
                    Err(WriteError::Io { path: at, step: "look at its folder", error })
                }
                Err(crate::FolderError::NotAFolder { at, kind, .. }) => {
                    Err(WriteError::NoFolder { path: target, at, kind: Some(kind) })
                }
            }
        }
    }
}

/// The folder an output at `path` goes in: its parent, `.` for a bare name.
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Runs `contents` into `file` through a buffer, then flushes it: the first error of either.
fn write_buffered(
    file: &mut File,
    contents: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut buffered = io::BufWriter::with_capacity(64 << 10, file);
    contents(&mut buffered)?;
    buffered.flush()
}

/// Follows symbolic links from `path` to what they name: that path and its kind (`None`: nothing there
/// yet). Links in the directories above are the operating system's to follow.
fn resolve_links(path: &Path) -> Result<(PathBuf, Option<FileKind>), WriteError> {
    let mut current = path.to_owned();
    for _ in 0..=MAX_LINKS {
        let metadata = match fs::symlink_metadata(&current) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok((current, None)),
            Err(error) => return Err(folder_problem(&current, error, "look at it")),
        };
        let kind = FileKind::of(metadata.file_type());
        if kind != FileKind::Symlink {
            return Ok((current, Some(kind)));
        }
        let link = fs::read_link(&current).map_err(io_error(&current, "read the symbolic link"))?;
        current = match current.parent() {
            Some(dir) if link.is_relative() => dir.join(link),
            _ => link,
        };
    }
    Err(WriteError::LinkLoop { path: path.to_owned() })
}

fn replace_atomically(
    path: &Path,
    contents: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    exists: bool,
) -> Result<(), WriteError> {
    let Some(name) = path.file_name() else {
        return Err(WriteError::NotAFile { path: path.to_owned(), kind: FileKind::Directory });
    };
    let dir = folder_of(path);
    let permissions = if exists {
        Some(fs::metadata(path).map_err(io_error(path, "look at it"))?.permissions())
    } else {
        None
    };
    let (temp_path, file) = create_temp(dir, name)
        .map_err(|error| folder_problem(path, error, "create a temporary file in its folder"))?;
    // Errors name the output: the temporary file is removed below, and its name means nothing to
    // whoever gave the path.
    let written = write_temp(path, file, contents, permissions).and_then(|()| {
        fs::rename(&temp_path, path).map_err(io_error(path, "rename the temporary file over it"))
    });
    if let Err(err) = written {
        let _ = fs::remove_file(&temp_path);
        return Err(err);
    }
    // The rename is durable once the directory is.
    File::open(dir).and_then(|dir| dir.sync_all()).map_err(io_error(dir, "sync the directory"))
}

/// A new file `.NAME.PID-N.tmp` beside the output, created exclusively so nothing already there
/// (a planted link, another writer's file) is written through.
fn create_temp(dir: &Path, name: &std::ffi::OsStr) -> io::Result<(PathBuf, File)> {
    let mut last_error = None;
    for attempt in 0..16 {
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}-{attempt}.tmp", std::process::id()));
        let temp_path = dir.join(temp_name);
        match OpenOptions::new().write(true).create_new(true).open(&temp_path) {
            Ok(file) => return Ok((temp_path, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => last_error = Some(error),
            Err(error) => return Err(error),
        }
    }
    Err(last_error.expect("16 attempts were made"))
}

/// `error` of `step` on the output `path`: when it comes from the folders above it (missing, or a
/// file where a folder should be), the one to fix is named; otherwise the OS error, on `path`.
fn folder_problem(path: &Path, error: io::Error, step: &'static str) -> WriteError {
    if matches!(error.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) {
        let dir = folder_of(path);
        if let Ok(Some(crate::folder::Gap { at, kind })) = crate::folder::first_gap(dir) {
            return WriteError::NoFolder { path: path.to_owned(), at, kind };
        }
    }
    WriteError::Io { path: path.to_owned(), step, error }
}

fn write_temp(
    path: &Path,
    mut file: File,
    contents: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    permissions: Option<Permissions>,
) -> Result<(), WriteError> {
    if let Some(permissions) = permissions {
        file.set_permissions(permissions).map_err(io_error(path, "set the permissions"))?;
    }
    write_buffered(&mut file, contents).map_err(io_error(path, "write"))?;
    file.sync_all().map_err(io_error(path, "sync"))
}

fn write_in_place(
    path: &Path,
    contents: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), WriteError> {
    // Non-blocking, so a FIFO nobody reads fails (ENXIO) instead of waiting in open.
    let mut file =
        OpenOptions::new().write(true).custom_flags(OFlags::NONBLOCK.bits() as i32).open(path).map_err(
            |error| match error.raw_os_error() {
                Some(code) if code == rustix::io::Errno::NXIO.raw_os_error() => {
                    WriteError::NoReader { path: path.to_owned() }
                }
                _ => WriteError::Io { path: path.to_owned(), step: "open it for writing", error },
            },
        )?;
    let kind = FileKind::of(file.metadata().map_err(io_error(path, "look at it"))?.file_type());
    if matches!(kind, FileKind::Regular | FileKind::Directory) {
        // Replaced by a file since it was looked at: writing in place would leave old bytes behind.
        return Err(WriteError::NotAFile { path: path.to_owned(), kind });
    }
    // From here on a FIFO's writes wait for its reader like any other writer's.
    let flags = fcntl_getfl(&file).map_err(|e| io_error(path, "read its flags")(e.into()))?;
    fcntl_setfl(&file, flags - OFlags::NONBLOCK).map_err(|e| io_error(path, "set its flags")(e.into()))?;
    // A device's refusal (`/dev/full`) comes back from a write or from the final flush.
    write_buffered(&mut file, contents).map_err(io_error(path, "write"))
}

#[cfg(test)]
pub(crate) mod tests {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    use std::time::{Duration, Instant};

    use super::*;

    /// A temporary directory removed when dropped.
    pub(crate) struct Scratch(PathBuf);

    impl Scratch {
        pub(crate) fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!("anes-fs-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }

        pub(crate) fn root(&self) -> &Path {
            &self.0
        }

        pub(crate) fn path(&self, name: &str) -> PathBuf {
            self.0.join(name)
        }

        fn names(&self) -> Vec<String> {
            let mut names: Vec<String> = fs::read_dir(&self.0)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    pub(crate) fn mkfifo(path: &Path) {
        rustix::fs::mkfifoat(rustix::fs::CWD, path, rustix::fs::Mode::from_raw_mode(0o600)).unwrap();
    }

    /// A character device node like the system's `/dev/null` (1, 3) or `/dev/full` (1, 7), made here
    /// so no test can touch the system's own; `None` where making device nodes is not permitted.
    pub(crate) fn char_device(path: &Path, minor: u32) -> Option<()> {
        let made = rustix::fs::mknodat(
            rustix::fs::CWD,
            path,
            rustix::fs::FileType::CharacterDevice,
            rustix::fs::Mode::from_raw_mode(0o666),
            rustix::fs::makedev(1, minor),
        );
        match made {
            Ok(()) => Some(()),
            Err(error) => {
                eprintln!("note: cannot make a device node ({error}): device cases skipped");
                None
            }
        }
    }

    #[test]
    fn a_new_path_and_a_regular_file_are_replaced_whole_keeping_its_mode() {
        let scratch = Scratch::new("write-regular");
        let path = scratch.path("out.bin");
        write_output(&path, b"first").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"first");
        fs::set_permissions(&path, Permissions::from_mode(0o640)).unwrap();
        write_output(&path, b"second, longer").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second, longer");
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
        assert_eq!(scratch.names(), ["out.bin"], "no temporary file is left");
    }

    #[test]
    fn a_symlink_is_written_through_and_stays_a_link() {
        let scratch = Scratch::new("write-link");
        let target = scratch.path("target.bin");
        fs::write(&target, b"old").unwrap();
        let link = scratch.path("link.bin");
        std::os::unix::fs::symlink("target.bin", &link).unwrap();
        let chain = scratch.path("chain.bin");
        std::os::unix::fs::symlink(&link, &chain).unwrap();
        write_output(&chain, b"new").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert!(fs::symlink_metadata(&chain).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(&target).unwrap(), b"new");
        // A dangling link is written through too: its target is created.
        let dangling = scratch.path("dangling.bin");
        std::os::unix::fs::symlink("created.bin", &dangling).unwrap();
        write_output(&dangling, b"made").unwrap();
        assert_eq!(fs::read(scratch.path("created.bin")).unwrap(), b"made");
        assert!(fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
        let looped = scratch.path("loop");
        std::os::unix::fs::symlink("loop", &looped).unwrap();
        assert!(matches!(write_output(&looped, b"x"), Err(WriteError::LinkLoop { .. })));
    }

    #[test]
    fn a_fifo_is_written_in_place_and_one_without_a_reader_fails_at_once() {
        let scratch = Scratch::new("write-fifo");
        let fifo = scratch.path("fifo");
        mkfifo(&fifo);
        let started = Instant::now();
        let err = write_output(&fifo, b"x").unwrap_err();
        assert!(matches!(err, WriteError::NoReader { .. }), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(1));
        let reader_path = fifo.clone();
        let reader = std::thread::spawn(move || fs::read(reader_path).unwrap());
        // The reader's open is what lets ours succeed: retry until it has happened.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match write_output(&fifo, &[5u8; 200_000]) {
                Ok(()) => break,
                Err(WriteError::NoReader { .. }) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Err(err) => panic!("{err:?}"),
            }
        }
        assert_eq!(reader.join().unwrap(), vec![5u8; 200_000], "more than a pipe's buffer, all of it");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "still a FIFO");
    }

    #[test]
    fn a_device_is_written_in_place_and_its_refusal_is_an_error() {
        let scratch = Scratch::new("write-device");
        let null = scratch.path("null");
        let full = scratch.path("full");
        if char_device(&null, 3).is_none() || char_device(&full, 7).is_none() {
            return;
        }
        write_output(&null, b"discarded").unwrap();
        assert!(fs::symlink_metadata(&null).unwrap().file_type().is_char_device(), "still a device");
        let err = write_output(&full, b"no room").unwrap_err();
        assert!(
            matches!(&err, WriteError::Io { step: "write", error, .. } if error.raw_os_error() == Some(28)),
            "{err:?}"
        );
        assert!(fs::symlink_metadata(&full).unwrap().file_type().is_char_device(), "still a device");
        // Through a link, the device is still what is written.
        let link = scratch.path("link");
        std::os::unix::fs::symlink(&null, &link).unwrap();
        write_output(&link, b"discarded").unwrap();
        assert!(fs::symlink_metadata(&null).unwrap().file_type().is_char_device());
        assert_eq!(scratch.names(), ["full", "link", "null"], "no temporary file is left");
    }

    #[test]
    fn contents_written_as_made_replace_the_file_whole_or_not_at_all() {
        let scratch = Scratch::new("write-with");
        let path = scratch.path("out.txt");
        fs::write(&path, b"old").unwrap();
        // Far more than the buffer, in small pieces.
        write_output_with(&path, |out| (0..100_000u32).try_for_each(|i| writeln!(out, "{i}"))).unwrap();
        let written = fs::read_to_string(&path).unwrap();
        assert_eq!(written.lines().count(), 100_000);
        assert!(written.ends_with("99999\n"));
        // An error half-way leaves the old content, and no temporary file.
        let err = write_output_with(&path, |out| {
            out.write_all(&[b'x'; 200_000])?;
            Err(io::Error::other("the source failed"))
        })
        .unwrap_err();
        assert!(matches!(&err, WriteError::Io { step: "write", .. }), "{err:?}");
        assert!(err.to_string().contains("the source failed"), "{err}");
        assert_eq!(fs::read_to_string(&path).unwrap(), written);
        assert_eq!(scratch.names(), ["out.txt"]);
    }

    #[test]
    fn a_directory_is_refused() {
        let scratch = Scratch::new("write-dir");
        let err = write_output(scratch.root(), b"x").unwrap_err();
        assert!(matches!(err, WriteError::NotAFile { kind: FileKind::Directory, .. }), "{err:?}");
    }

    /// A missing folder, or a file where a folder should be, is named with the output, never the
    /// temporary file's name.
    #[test]
    fn a_missing_folder_is_named_with_the_output() {
        let scratch = Scratch::new("write-no-folder");
        let out = scratch.path("missing-dir/deeper/out");
        let err = write_output(&out, b"x").unwrap_err().to_string();
        let missing = scratch.path("missing-dir");
        assert_eq!(err, format!("{}: the folder {} does not exist", out.display(), missing.display()));
        let file = scratch.path("afile");
        fs::write(&file, b"x").unwrap();
        let out = file.join("out");
        let err = write_output(&out, b"x").unwrap_err().to_string();
        assert_eq!(err, format!("{}: {} is a regular file, not a folder", out.display(), file.display()));
        // A relative path names what was given.
        let err = write_output(Path::new("anes-fs-no-such-dir/x.out"), b"x").unwrap_err().to_string();
        assert_eq!(err, "anes-fs-no-such-dir/x.out: the folder anes-fs-no-such-dir does not exist");
        assert!(!err.contains(".tmp"), "{err}");
    }

    /// What the write would refuse from the path alone is refused before it, with the same error;
    /// what only a write can tell is not.
    #[test]
    fn an_output_is_checked_before_the_work() {
        let scratch = Scratch::new("check-output");
        check_output(&scratch.path("new.bin")).unwrap();
        fs::write(scratch.path("old.bin"), b"kept").unwrap();
        check_output(&scratch.path("old.bin")).unwrap();
        assert_eq!(fs::read(scratch.path("old.bin")).unwrap(), b"kept", "nothing written");
        let fifo = scratch.path("fifo");
        mkfifo(&fifo);
        check_output(&fifo).unwrap();
        let err = check_output(scratch.root()).unwrap_err();
        assert!(matches!(err, WriteError::NotAFile { kind: FileKind::Directory, .. }), "{err:?}");
        let out = scratch.path("missing-dir/out");
        assert_eq!(
            check_output(&out).unwrap_err().to_string(),
            write_output(&out, b"x").unwrap_err().to_string()
        );
        let below_file = scratch.path("old.bin/out");
        assert_eq!(
            check_output(&below_file).unwrap_err().to_string(),
            write_output(&below_file, b"x").unwrap_err().to_string()
        );
        let looped = scratch.path("loop");
        std::os::unix::fs::symlink("loop", &looped).unwrap();
        assert!(matches!(check_output(&looped), Err(WriteError::LinkLoop { .. })));
        assert_eq!(scratch.names(), ["fifo", "loop", "old.bin"], "nothing created");
    }

    /// Any other refusal in the folder names the output too, with the OS error: /proc refuses new
    /// files with ENOENT although it is there, and a folder without write permission (unless root).
    #[test]
    fn a_refused_temporary_file_is_named_by_the_output() {
        let out = Path::new("/proc/anes-fs-x.out");
        let err = write_output(out, b"x").unwrap_err().to_string();
        assert!(
            err.starts_with("/proc/anes-fs-x.out: cannot create a temporary file in its folder: "),
            "{err}"
        );
        assert!(!err.contains(".tmp"), "{err}");
        let scratch = Scratch::new("write-read-only");
        let dir = scratch.path("ro");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, Permissions::from_mode(0o555)).unwrap();
        let out = dir.join("out");
        let result = write_output(&out, b"x");
        fs::set_permissions(&dir, Permissions::from_mode(0o755)).unwrap();
        // Root writes anywhere.
        if let Err(err) = result {
            let text = err.to_string();
            let expected = format!("{}: cannot create a temporary file in its folder: ", out.display());
            assert!(text.starts_with(&expected), "{text}");
        }
    }
}
