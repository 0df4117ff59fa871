#!/usr/bin/env bash
# Retakes every picture in README.md and docs/ with today's build; review them in the commit
# (crates/anes-cli/tests/docs.rs fails when one of the emulator's pictures no longer matches the binary).
#   1. the pictures anes run draws: docs/demo-frame-300.png, docs/anes-run-demo-frame-300.png
#      (ANES_BLESS=1 on that test, which names the command of each);
#   2. RetroArch's frame 300 of the demo, docs/retroarch-demo-frame-300.png, taken by RetroArch under
#      Xvfb through the libretro core's test, which also checks it equals anes run's pixel for pixel
#      (scripts/install-retroarch.sh installs RetroArch when it is missing);
#   3. the status page, docs/status-page.png (scripts/status-page-screenshot.sh, headless Chromium;
#      anes-ops's test of the page fails when the page renders differently).
#   bash scripts/pictures.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ANES_BLESS=1 cargo test -p anes-cli --test docs pictures_match_the_binary
# The RetroArch test compares with the anes binary beside it in target/debug (built here).
cargo build -p anes-cli
ANES_RETROARCH_SCREENSHOT="$PWD/docs/retroarch-demo-frame-300.png" cargo test -p anes-libretro --test retroarch
bash scripts/status-page-screenshot.sh docs/status-page.png
# What the emulator's pictures show must now be the binary's, RetroArch's included.
cargo test -p anes-cli --test docs pictures_match_the_binary
