#!/usr/bin/env bash
# The release build that .ci/run and the bench scripts share: the `anes` binary, the GGRS sync test and
# the benchmarks .ci/run runs, in one cargo invocation over the whole workspace. One target selection
# means one feature resolution, so `cargo bench --workspace --bench NAME` afterwards and the scripts
# that run target/release/anes find everything built (a build per package resolved the dependencies'
# features differently and compiled the shared crates again: about seven minutes of CI's 40).
#   bash scripts/release-build.sh [cargo flags, e.g. --quiet]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec cargo build --release --workspace --bin anes --example sync_test \
    --bench core --bench lockstep --bench pipeline --bench store --bench frontend "$@"
