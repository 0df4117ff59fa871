#!/usr/bin/env bash
# The peer group in one command: its tests (the libretro host on Nestopia, tetanes-core under the
# lockstep runner), the criterion bench (anes against tetanes-core and Nestopia, same ROMs, same
# frames) and the conformance manifest on all three. Not part of .ci/run: the package is its own
# workspace, so its build (about four minutes on two cores) shares nothing with CI's release build,
# and with its runs it took about eight of CI's forty minutes.
#   bash benches/peer/run.sh [--quick]      (--quick: criterion's few-seconds mode, as .ci/run's benches)
# Installs Debian's libretro-nestopia when it is missing and this runs as root with apt-get; finds
# the conformance ROMs in ../shared/conformance (or ANES_CONFORMANCE_DIR) and skips that step without.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bench_flags=()
case "${1:-}" in
    --quick) bench_flags=(-- --warm-up-time 0.3 --measurement-time 1 --noplot) ;;
    "") ;;
    *) echo "usage: bash benches/peer/run.sh [--quick]" >&2; exit 2 ;;
esac
manifest=benches/peer/Cargo.toml
bash benches/peer/install-nestopia.sh
echo "== peer group tests"
cargo test --profile bench --manifest-path "$manifest"
echo "== peer group bench: anes against tetanes-core and Nestopia"
cargo bench --manifest-path "$manifest" "${bench_flags[@]}"
conformance_dir="${ANES_CONFORMANCE_DIR:-../shared/conformance}"
if [[ -f "$conformance_dir/manifest.toml" ]]; then
    echo "== peer group: the conformance manifest on anes, tetanes-core and Nestopia"
    cargo run --profile bench --manifest-path "$manifest" --example conformance -- \
        "$conformance_dir/manifest.toml"
else
    echo "== peer group: conformance skipped, $conformance_dir/manifest.toml not found"
fi
