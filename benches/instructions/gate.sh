#!/usr/bin/env bash
# The instruction-count gate: host instructions per emulated frame of our ROMs and two menus, counted
# by cachegrind (exact and repeatable for one binary, whatever else the machine is doing), against the
# committed baseline (benches/instructions/baseline.tsv). Fails when a ROM costs more than 3% above
# its baseline; prints the table either way. A change that makes something faster updates the
# baseline in the same commit (--bless), so the gate keeps the gain.
#
# Per ROM: `anes run ROM --frames N` at N = 70 and N = 10 under `valgrind --tool=cachegrind
# --cache-sim=no`; (I refs(70) - I refs(10)) / 60 is one frame's cost, start-up and the first frames
# excluded. Counts depend on the binary: the baseline is for this repository's release profile and
# toolchain (rust-toolchain-less: the machine's one toolchain), on x86_64.
#
#   bash benches/instructions/gate.sh            check against the baseline (CI: .ci/run)
#   bash benches/instructions/gate.sh --bless    rewrite the baseline from this build
#   ANES_GATE_BIN=path/to/anes bash benches/instructions/gate.sh   check another build
#
# Needs valgrind; builds target/release/anes unless ANES_GATE_BIN names a binary. The conformance
# menus come from ../shared/conformance (or ANES_CONFORMANCE_DIR); missing, they are skipped unless CI
# is set.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

long=70
short=10
limit_percent=3
baseline=benches/instructions/baseline.tsv
conformance_dir="${ANES_CONFORMANCE_DIR:-../shared/conformance}"
bless=false
[[ "${1:-}" == "--bless" ]] && bless=true

command -v valgrind >/dev/null 2>&1 || { echo "instruction gate: valgrind not found" >&2; exit 1; }
if [[ -n "${ANES_GATE_BIN:-}" ]]; then
    anes="$ANES_GATE_BIN"
else
    bash scripts/release-build.sh --quiet
    anes="${CARGO_TARGET_DIR:-target}/release/anes"
fi

# The ROMs: name, then path (relative to the repository, or under the conformance folder as
# conformance:PATH), then optionally more arguments for `anes run` (the PAL and Dendy demo rows keep
# the regions at NTSC's cost, issue 48). Arguments that start with `lockstep` run `anes lockstep`
# instead (two consoles compared at every instruction or scanline: the sync digest and the lagging
# steps, issue 48; its per-frame figure covers both consoles; with --threads, both workers and the
# comparator: cachegrind runs the threads one at a time, and their counts vary by about 0.01%).
roms=(
    "demo|roms/demo/demo.nes"
    "demo (PAL)|roms/demo/demo.nes|--region pal"
    "demo (Dendy)|roms/demo/demo.nes|--region dendy"
    "demo (lockstep, instruction)|roms/demo/demo.nes|lockstep --granularity instruction"
    "demo (lockstep, scanline)|roms/demo/demo.nes|lockstep --granularity scanline"
    "demo (lockstep, instruction, two threads)|roms/demo/demo.nes|lockstep --granularity instruction --threads"
    "unofficial|roms/stress/unofficial.nes"
    "dma_collide|roms/stress/dma_collide.nes"
    "ppu_race|roms/stress/ppu_race.nes"
    "mmc3_irq|roms/stress/mmc3_irq.nes"
    "mmc3_a12|roms/stress/mmc3_a12.nes"
    "frame_irq|roms/stress/frame_irq.nes"
    "smc|roms/stress/smc.nes"
    "mmc6|roms/mmc6/mmc6.nes"
    "mmc5|roms/mmc5/mmc5.nes"
    "vrc6a|roms/vrc6/vrc6a.nes"
    "nestest (menu)|conformance:roms/other/nestest.nes"
    "AccuracyCoin (menu)|conformance:roms/AccuracyCoin/AccuracyCoin.nes"
)

irefs() {
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        sed -n 's/^==[0-9]*== I *refs: *//p' | tr -d ','
}
per_frame() {
    local at_long at_short rom="$1" command=run
    shift
    if [[ "${1:-}" == lockstep ]]; then
        command=lockstep
        shift
    fi
    at_long=$(irefs "$anes" "$command" "$rom" --frames "$long" "$@")
    at_short=$(irefs "$anes" "$command" "$rom" --frames "$short" "$@")
    [[ -n "$at_long" && -n "$at_short" ]] || { echo "instruction gate: no I refs for $1" >&2; exit 1; }
    echo $(( (at_long - at_short) / (long - short) ))
}
baseline_of() {
    [[ -f "$baseline" ]] || return 0
    awk -F'\t' -v name="$1" '$1 == name { print $2 }' "$baseline"
}

fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
printf '# Host instructions per emulated frame (bash benches/instructions/gate.sh --bless writes this).\n' >"$fresh"
printf '# ROM\tinstructions per frame\n' >>"$fresh"
echo "host instructions per frame, (I refs($long) - I refs($short)) / $((long - short)), cachegrind; limit +$limit_percent%"
printf '%-30s %12s %12s %9s\n' "ROM" "baseline" "now" "change"
failed=()
for entry in "${roms[@]}"; do
    name="${entry%%|*}"
    rom="${entry#*|}"
    extra=()
    if [[ "$rom" == *"|"* ]]; then
        read -r -a extra <<<"${rom#*|}"
        rom="${rom%%|*}"
    fi
    [[ "$rom" == conformance:* ]] && rom="$conformance_dir/${rom#conformance:}"
    if [[ ! -f "$rom" ]]; then
        if [[ "${CI:-}" == "true" && "$name" == *menu* ]]; then
            echo "instruction gate: $rom not found and CI is set" >&2
            exit 1
        fi
        printf '%-30s %s\n' "$name" "skipped: $rom not found"
        continue
    fi
    now=$(per_frame "$rom" "${extra[@]}")
    printf '%s\t%s\n' "$name" "$now" >>"$fresh"
    base=$(baseline_of "$name")
    if [[ -z "$base" ]]; then
        printf '%-30s %12s %12s %9s\n' "$name" "none" "$now" "new"
        $bless || failed+=("$name: no baseline (bless it)")
        continue
    fi
    # Change in hundredths of a percent, integer arithmetic.
    change=$(( (now - base) * 10000 / base ))
    printf '%-30s %12s %12s %9s\n' "$name" "$base" "$now" "$(awk -v c="$change" 'BEGIN { printf "%+.2f%%", c / 100 }')"
    if (( change > limit_percent * 100 )); then
        failed+=("$name: $now instructions per frame, $base in the baseline")
    fi
done

if $bless; then
    cp "$fresh" "$baseline"
    echo "wrote $baseline"
    exit 0
fi
if (( ${#failed[@]} > 0 )); then
    echo "instruction gate FAILED: more than $limit_percent% above the baseline:" >&2
    printf '  %s\n' "${failed[@]}" >&2
    exit 1
fi
echo "instruction gate: every ROM within +$limit_percent% of its baseline"
