//! Records the git commit of the source tree, when there is one, as `ANES_GIT_COMMIT` for the build
//! identity in evidence bundles. Builds from a tarball (no git, or not a checkout) simply have none.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=ANES_GIT_COMMIT");
    if let Some(commit) = git(&["rev-parse", "HEAD"]) {
        let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some();
        println!("cargo:rustc-env=ANES_GIT_COMMIT={commit}{}", if dirty { "-dirty" } else { "" });
        // Rebuild when HEAD moves (a commit, a checkout); the paths work in worktrees too.
        for path in ["HEAD", "index"] {
            if let Some(p) = git(&["rev-parse", "--git-path", path]) {
                println!("cargo:rerun-if-changed={p}");
            }
        }
    }
}
