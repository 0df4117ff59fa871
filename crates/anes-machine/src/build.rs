//! The build identity every report carries (evidence bundles, worker handshakes).

use serde::Serialize;

/// What built this harness: the crate version and, when the build saw a git checkout, its commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BuildIdentity {
    /// The workspace version the harness was built from.
    pub crate_version: &'static str,
    /// Git commit of the source tree at build time, if it was a git checkout.
    pub git_commit: Option<&'static str>,
}

/// The build identity of this binary.
pub const BUILD: BuildIdentity =
    BuildIdentity { crate_version: env!("CARGO_PKG_VERSION"), git_commit: option_env!("ANES_GIT_COMMIT") };
