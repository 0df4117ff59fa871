//! The temporary folder of an `anes worker` child ([`crate::WorkerChild`]): a child is stopped by
//! killing it, so it removes nothing itself; its parent removes the folder once it is gone, and a
//! parent killed before it could is swept up after by the next one.

use std::path::{Path, PathBuf};
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

/// A child's temporary folder, `anes-worker-{our pid}-{n}` in ours, handed to it as `TMPDIR`
/// (where a libretro core's default system folder goes) and removed with all it holds when dropped.
#[derive(Debug)]
pub(crate) struct ChildTemp(pub(crate) PathBuf);

impl ChildTemp {
    pub(crate) fn create() -> std::io::Result<ChildTemp> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        static SWEPT: Once = Once::new();
        let parent = std::env::temp_dir();
        SWEPT.call_once(|| sweep_orphaned_temps(&parent));
        let name = format!("anes-worker-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let dir = parent.join(name);
        if let Err(e) = std::fs::create_dir(&dir) {
            if e.kind() != std::io::ErrorKind::AlreadyExists {
                return Err(e);
            }
            // Left by an earlier process with our PID that was killed: no live process but us makes
            // this name. (`remove_dir_all` removes a symbolic link in its place, not what it names.)
            std::fs::remove_dir_all(&dir)?;
            std::fs::create_dir(&dir)?;
        }
        Ok(ChildTemp(dir))
    }
}

impl Drop for ChildTemp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Removes the children's folders in `parent` whose process is gone: it was killed (out of memory,
/// `kill -9`) before it could remove them.
fn sweep_orphaned_temps(parent: &Path) {
    for dir in anes_fs::orphaned_process_folders(parent, "anes-worker-", anes_fs::FolderName::PidAndNumber) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folders_of_a_killed_services_children_are_swept_and_no_others() {
        let parent = ChildTemp::create().unwrap();
        // A PID that names no process: a child that has exited and been waited for.
        let mut exited = std::process::Command::new("true").spawn().unwrap();
        exited.wait().unwrap();
        let dead = exited.id();
        let live = std::process::id();
        let names = [
            format!("anes-worker-{dead}-0"),
            format!("anes-worker-{dead}-17"),
            format!("anes-worker-{live}-0"),
            format!("anes-worker-{dead}-x"),
            format!("anes-worker-{dead}"),
            format!("anes-worker-+{dead}-0"),
            format!("other-{dead}-0"),
        ];
        for name in &names {
            std::fs::create_dir(parent.0.join(name)).unwrap();
            std::fs::write(parent.0.join(name).join("left"), b"x").unwrap();
        }
        // A link by a child folder's name is not followed.
        let target = parent.0.join("target");
        std::fs::create_dir(&target).unwrap();
        std::os::unix::fs::symlink(&target, parent.0.join(format!("anes-worker-{dead}-3"))).unwrap();
        sweep_orphaned_temps(&parent.0);
        for (i, name) in names.iter().enumerate() {
            assert_eq!(parent.0.join(name).exists(), i >= 2, "{name}");
        }
        assert!(target.is_dir());
    }
}
