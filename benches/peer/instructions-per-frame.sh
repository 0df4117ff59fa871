#!/usr/bin/env bash
# Host instructions per emulated frame, anes and Nestopia on the same ROMs, by cachegrind (exact:
# instruction counts do not depend on what else the machine is doing). Each emulator runs a ROM for
# 360 and for 60 frames without input; (I refs(360) - I refs(60)) / 300 is the cost of one frame,
# start-up (loading, Nestopia's game database, the first frames) excluded.
#   anes:     target/release/anes run ROM --frames N
#   Nestopia: benches/peer's examples/libretro_frames CORE ROM N (the peer group's libretro host,
#             which copies each picture and drops the 48 kHz audio the core synthesizes)
# ROMs: nestest's and AccuracyCoin's menus (a RAM loop with the picture on) from the conformance
# ROMs (../shared/conformance or ANES_CONFORMANCE_DIR), and our demo (roms/demo/demo.nes).
#
# bash benches/peer/instructions-per-frame.sh        (from anywhere; builds both first)
# Needs valgrind and Nestopia (bash benches/peer/install-nestopia.sh, or ANES_NESTOPIA_CORE).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

long=360
short=60
conformance_dir="${ANES_CONFORMANCE_DIR:-../shared/conformance}"
core="${ANES_NESTOPIA_CORE:-/usr/lib/$(uname -m)-linux-gnu/libretro/nestopia_libretro.so}"
for tool in valgrind cargo; do
    command -v "$tool" >/dev/null 2>&1 || { echo "instructions-per-frame: $tool not found" >&2; exit 1; }
done
[[ -f "$core" ]] || { echo "instructions-per-frame: no Nestopia core at $core (bash benches/peer/install-nestopia.sh)" >&2; exit 1; }

cargo build --quiet --release -p anes-cli
cargo build --quiet --profile bench --manifest-path benches/peer/Cargo.toml --example libretro_frames
anes="${CARGO_TARGET_DIR:-target}/release/anes"
frames="${CARGO_TARGET_DIR:-benches/peer/target}/release/examples/libretro_frames"

# I refs of one run (the command's own output is discarded).
irefs() {
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        sed -n 's/^==[0-9]*== I *refs: *//p' | tr -d ','
}
# Instructions per frame of one emulator: the command with the frame count last.
per_frame() {
    local at_long at_short
    at_long=$(irefs "$@" "$long")
    at_short=$(irefs "$@" "$short")
    [[ -n "$at_long" && -n "$at_short" ]] || { echo "instructions-per-frame: no I refs from: $*" >&2; exit 1; }
    echo $(( (at_long - at_short) / (long - short) ))
}

roms=(
    "nestest (menu)|$conformance_dir/roms/other/nestest.nes"
    "AccuracyCoin (menu)|$conformance_dir/roms/AccuracyCoin/AccuracyCoin.nes"
    "demo (no input)|roms/demo/demo.nes"
)
echo "host instructions per emulated frame, (I refs($long) - I refs($short)) / $((long - short)), cachegrind"
printf '%-22s %12s %12s %14s\n' "ROM" "anes" "Nestopia" "anes/Nestopia"
for entry in "${roms[@]}"; do
    name="${entry%%|*}"
    rom="${entry#*|}"
    if [[ ! -f "$rom" ]]; then
        printf '%-22s %s\n' "$name" "skipped: $rom not found"
        continue
    fi
    a=$(per_frame "$anes" run "$rom" --frames)
    n=$(per_frame "$frames" "$core" "$rom")
    awk -v name="$name" -v a="$a" -v n="$n" \
        'BEGIN { printf "%-22s %10.2f M %10.2f M %14.2f\n", name, a / 1e6, n / 1e6, a / n }'
done
