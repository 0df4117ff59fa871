//! Folders a process names after itself in the temporary folder and removes when it ends: one
//! killed first (`kill -9`, out of memory, Ctrl-C in the middle of a run) leaves them behind, and
//! the next process of the kind finds them here.

use std::path::{Path, PathBuf};

/// How a kind of process names its folders after itself, after a prefix of the kind's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FolderName {
    /// `{prefix}{pid}`: one folder per process.
    Pid,
    /// `{prefix}{pid}-{n}`: any number of them (decimal `n`).
    PidAndNumber,
}

/// The folders in `parent` with names of `shape` after `prefix` whose process `pid` is gone. A live
/// process's folders, entries of any other name, and symbolic links (whatever they name) are not
/// listed; an unreadable `parent` lists nothing. What to remove of them is the caller's to decide.
///
/// ```
/// use anes_fs::FolderName;
/// let parent = std::env::temp_dir().join(format!("orphans-doc-{}", std::process::id()));
/// std::fs::create_dir_all(parent.join(format!("made-by-{}", std::process::id())))?;
/// // A process that has exited and been waited for: its PID names no process.
/// let mut exited = std::process::Command::new("true").spawn()?;
/// exited.wait()?;
/// std::fs::create_dir_all(parent.join(format!("made-by-{}-3", exited.id())))?;
/// let orphans = anes_fs::orphaned_process_folders(&parent, "made-by-", FolderName::PidAndNumber);
/// assert_eq!(orphans, [parent.join(format!("made-by-{}-3", exited.id()))]);
/// # std::fs::remove_dir_all(&parent)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn orphaned_process_folders(parent: &Path, prefix: &str, shape: FolderName) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut orphans = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| folder_owner(name, prefix, shape)) else {
            continue;
        };
        let gone = match rustix::process::Pid::from_raw(pid) {
            Some(pid) => rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH),
            None => false,
        };
        // The entry's own type: a symbolic link is not followed.
        if gone && entry.file_type().is_ok_and(|t| t.is_dir()) {
            orphans.push(entry.path());
        }
    }
    orphans.sort();
    orphans
}

/// The PID in a folder's name of `shape` after `prefix`.
fn folder_owner(name: &str, prefix: &str, shape: FolderName) -> Option<i32> {
    let rest = name.strip_prefix(prefix)?;
    let digits = |t: &str| !t.is_empty() && t.len() <= 19 && t.bytes().all(|b| b.is_ascii_digit());
    let pid = match shape {
        FolderName::Pid => rest,
        FolderName::PidAndNumber => {
            let (pid, n) = rest.split_once('-')?;
            if !digits(n) {
                return None;
            }
            pid
        }
    };
    if !digits(pid) {
        return None;
    }
    pid.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_folders_of_gone_processes_with_names_of_the_shape_are_listed() {
        let parent = std::env::temp_dir().join(format!("anes-fs-orphans-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        std::fs::create_dir(&parent).unwrap();
        let mut exited = std::process::Command::new("true").spawn().unwrap();
        exited.wait().unwrap();
        let dead = exited.id();
        let live = std::process::id();
        let numbered = [format!("kind-{dead}-0"), format!("kind-{dead}-17")];
        let plain = [format!("kind-{dead}")];
        let neither = [
            format!("kind-{live}"),
            format!("kind-{live}-0"),
            format!("kind-{dead}-x"),
            format!("kind-{dead}-"),
            format!("kind-{dead}-1-2"),
            format!("kind-+{dead}"),
            format!("kind-{dead}9999999999999999999"),
            format!("other-{dead}"),
        ];
        for name in numbered.iter().chain(&plain).chain(&neither) {
            std::fs::create_dir(parent.join(name)).unwrap();
        }
        // A file and a link by an orphan's name are not folders of their own.
        std::fs::write(parent.join(format!("kind-{dead}-5")), b"x").unwrap();
        std::os::unix::fs::symlink(parent.join(&neither[0]), parent.join(format!("kind-{dead}-3"))).unwrap();
        let paths = |names: &[String]| names.iter().map(|name| parent.join(name)).collect::<Vec<_>>();
        assert_eq!(orphaned_process_folders(&parent, "kind-", FolderName::PidAndNumber), paths(&numbered));
        assert_eq!(orphaned_process_folders(&parent, "kind-", FolderName::Pid), paths(&plain));
        assert!(orphaned_process_folders(&parent.join("missing"), "kind-", FolderName::Pid).is_empty());
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
