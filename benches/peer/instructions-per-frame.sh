#!/usr/bin/env bash
# Host instructions per emulated frame, anes and Nestopia on the same ROMs, by cachegrind (exact:
# instruction counts do not depend on what else the machine is doing). Each emulator runs a ROM for
# 360 and for 60 frames without input; (I refs(360) - I refs(60)) / 300 is the cost of one frame,
# start-up (loading, Nestopia's game database, the first frames) excluded.
#   anes:     target/release/anes run ROM --frames N
#   Nestopia: benches/peer's examples/libretro_frames CORE ROM N (the peer group's libretro host,
#             which copies each picture and drops the 48 kHz audio the core synthesizes)
# The ratio is Nestopia / anes (above 1: anes runs fewer instructions), issue 29's measure; the last
# line is the median ratio over the ROMs measured.
# ROMs (13, issue 29's set): our demo and stress ROMs (roms/), the MMC5's, and from the conformance
# ROMs (../shared/conformance or ANES_CONFORMANCE_DIR) nestest's and AccuracyCoin's menus (a RAM loop
# with the picture on), sprite_hit_tests' 09.timing_basics and instr_test-v5's all_instrs (both run
# their tests for the whole 360 frames). The gate's mmc6 and vrc6a are not in it.
#
# bash benches/peer/instructions-per-frame.sh              all 13 (from anywhere; builds both first)
# bash benches/peer/instructions-per-frame.sh ppu_race smc  only the ROMs named (as in the table)
# Needs valgrind and Nestopia (bash benches/peer/install-nestopia.sh, or ANES_NESTOPIA_CORE).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

long=360
short=60
conformance_dir="${ANES_CONFORMANCE_DIR:-../shared/conformance}"
core="${ANES_NESTOPIA_CORE:-/usr/lib/$(uname -m)-linux-gnu/libretro/nestopia_libretro.so}"

# Name, then path (relative to the repository, or under the conformance folder as conformance:PATH).
roms=(
    "demo|roms/demo/demo.nes"
    "nestest (menu)|conformance:roms/other/nestest.nes"
    "AccuracyCoin (menu)|conformance:roms/AccuracyCoin/AccuracyCoin.nes"
    "09.timing_basics|conformance:roms/sprite_hit_tests_2005.10.05/09.timing_basics.nes"
    "all_instrs|conformance:roms/instr_test-v5/all_instrs.nes"
    "smc|roms/stress/smc.nes"
    "frame_irq|roms/stress/frame_irq.nes"
    "unofficial|roms/stress/unofficial.nes"
    "dma_collide|roms/stress/dma_collide.nes"
    "ppu_race|roms/stress/ppu_race.nes"
    "mmc3_irq|roms/stress/mmc3_irq.nes"
    "mmc3_a12|roms/stress/mmc3_a12.nes"
    "mmc5|roms/mmc5/mmc5.nes"
)
if (( $# > 0 )); then
    chosen=()
    for want in "$@"; do
        found=false
        for entry in "${roms[@]}"; do
            if [[ "${entry%%|*}" == "$want" ]]; then
                chosen+=("$entry")
                found=true
            fi
        done
        $found || { echo "instructions-per-frame: no ROM named '$want' (names: $(printf '%s, ' "${roms[@]%%|*}"))" >&2; exit 2; }
    done
    roms=("${chosen[@]}")
fi

for tool in valgrind cargo; do
    command -v "$tool" >/dev/null 2>&1 || { echo "instructions-per-frame: $tool not found" >&2; exit 1; }
done
[[ -f "$core" ]] || { echo "instructions-per-frame: no Nestopia core at $core (bash benches/peer/install-nestopia.sh)" >&2; exit 1; }

bash scripts/release-build.sh --quiet
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

echo "host instructions per emulated frame, (I refs($long) - I refs($short)) / $((long - short)), cachegrind"
printf '%-22s %12s %12s %14s\n' "ROM" "anes" "Nestopia" "Nestopia/anes"
ratios=()
for entry in "${roms[@]}"; do
    name="${entry%%|*}"
    rom="${entry#*|}"
    [[ "$rom" == conformance:* ]] && rom="$conformance_dir/${rom#conformance:}"
    if [[ ! -f "$rom" ]]; then
        printf '%-22s %s\n' "$name" "skipped: $rom not found"
        continue
    fi
    a=$(per_frame "$anes" run "$rom" --frames)
    n=$(per_frame "$frames" "$core" "$rom")
    ratio=$(awk -v a="$a" -v n="$n" 'BEGIN { printf "%.3f", n / a }')
    ratios+=("$ratio")
    awk -v name="$name" -v a="$a" -v n="$n" -v r="$ratio" \
        'BEGIN { printf "%-22s %10.3f M %10.3f M %14.2f\n", name, a / 1e6, n / 1e6, r }'
done
if (( ${#ratios[@]} > 0 )); then
    printf '%s\n' "${ratios[@]}" | sort -g | awk '
        { r[NR] = $1 }
        END {
            m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
            printf "median Nestopia/anes over %d ROMs: %.2f; lowest %.2f\n", NR, m, r[1]
        }'
fi
