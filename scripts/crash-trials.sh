#!/usr/bin/env bash
# The crash-consistency acceptance run: 100 kill -9s of `anes serve` during checkpoint writes, journal
# and dead-letter queue appends (crates/anes-cli/tests/crash_trials.rs). CI runs 20 of them inside
# `cargo test`; this runs the full 100 (about three minutes on 2 cores). ANES_CRASH_SEED=N fixes the
# random moments.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ANES_CRASH_TRIALS="${ANES_CRASH_TRIALS:-100}" cargo test -p anes-cli --test crash_trials -- --nocapture
