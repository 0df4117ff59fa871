#!/usr/bin/env bash
# Lockstep speed by sync granularity (issues 29 and 48): CPU time (user + system) of
#   anes lockstep roms/demo/demo.nes --input roms/demo/demo.input --frames N --granularity G [--threads] --json
# for G = frame, scanline, instruction on one thread, and instruction on two threads, in R interleaved
# rounds (frame, scanline, instruction, threaded instruction, frame, ...), best of the rounds per
# mode. CPU time, not wall time: the machine is shared, and the threaded run's two workers may not run
# side by side. Prints the ratios of speed (frames per CPU second) the issues ask for:
#   scanline / frame (issue 29: >= 0.90; issue 48: >= 0.98), instruction / frame (>= 0.40; >= 0.75),
#   threaded / same-thread instruction (issue 29: >= 0.8).
#
# bash benches/granularity.sh [--frames N] [--rounds R] [--json]
#   ANES_GRANULARITY_BIN=path checks another build (default: target/release/anes, built first).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

frames=1000
rounds=3
json=0
while (($#)); do
    case "$1" in
        --frames) frames=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --json) json=1; shift ;;
        *) echo "granularity: unknown argument $1 (use --frames N, --rounds R, --json)" >&2; exit 2 ;;
    esac
done

if [[ -n "${ANES_GRANULARITY_BIN:-}" ]]; then
    anes=$ANES_GRANULARITY_BIN
else
    bash scripts/release-build.sh --quiet
    anes="${CARGO_TARGET_DIR:-target}/release/anes"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

modes=(frame scanline instruction threaded_instruction)
declare -A best

# Runs one mode once; prints its CPU seconds (user + system).
run() {
    local mode=$1 granularity=$1 threads=()
    if [[ $mode == threaded_* ]]; then
        granularity=${mode#threaded_}
        threads=(--threads)
    fi
    /usr/bin/time -f "%U %S" -o "$work/time" "$anes" lockstep roms/demo/demo.nes \
        --input roms/demo/demo.input --frames "$frames" --granularity "$granularity" "${threads[@]}" \
        --json >"$work/out.json"
    grep -Eq '"frames_verified": *'"$frames"'[^0-9]' "$work/out.json" || {
        echo "granularity: $mode did not verify $frames frames:" >&2
        cat "$work/out.json" >&2
        exit 1
    }
    # A build that does not stop at every line or instruction would measure a false ratio (a stale
    # variant binary once read 1.000): each granularity's sync points must be there.
    local sync_points per_frame
    sync_points=$(grep -Eo '"sync_points": *[0-9]+' "$work/out.json" | grep -Eo '[0-9]+$')
    case $granularity in
        frame) per_frame=1 ;;
        scanline) per_frame=240 ;;
        instruction) per_frame=1000 ;;
    esac
    if ((sync_points < frames * per_frame)); then
        echo "granularity: $mode compared $sync_points sync points in $frames frames (at least $per_frame a frame expected): $anes does not sync at that granularity" >&2
        exit 1
    fi
    awk '{ printf "%.3f\n", $1 + $2 }' "$work/time"
}

for ((round = 1; round <= rounds; round++)); do
    for mode in "${modes[@]}"; do
        seconds=$(run "$mode")
        if [[ -z "${best[$mode]:-}" ]] || awk -v a="$seconds" -v b="${best[$mode]}" 'BEGIN { exit !(a < b) }'; then
            best[$mode]=$seconds
        fi
        ((json)) || echo "round $round: $mode ${seconds} s CPU" >&2
    done
done

ratio() { awk -v slow="$1" -v fast="$2" 'BEGIN { printf "%.3f", fast / slow }'; }
fps() { awk -v s="$1" -v f="$frames" 'BEGIN { printf "%.1f", f / s }'; }
scanline=$(ratio "${best[scanline]}" "${best[frame]}")
instruction=$(ratio "${best[instruction]}" "${best[frame]}")
threaded=$(ratio "${best[threaded_instruction]}" "${best[instruction]}")

if ((json)); then
    printf '{"frames": %s, "rounds": %s, "cpu_seconds": {' "$frames" "$rounds"
    sep=""
    for mode in "${modes[@]}"; do
        printf '%s"%s": %s' "$sep" "$mode" "${best[$mode]}"
        sep=", "
    done
    printf '}, "scanline_over_frame": %s, "instruction_over_frame": %s, "threaded_over_same_thread_instruction": %s}\n' \
        "$scanline" "$instruction" "$threaded"
else
    printf '%-22s %10s %14s\n' mode "CPU s" "frames/CPU s"
    for mode in "${modes[@]}"; do
        printf '%-22s %10s %14s\n' "$mode" "${best[$mode]}" "$(fps "${best[$mode]}")"
    done
    echo "scanline / frame:                        $scanline (issue 29: >= 0.90; issue 48: >= 0.98)"
    echo "instruction / frame:                     $instruction (issue 29: >= 0.40; issue 48: >= 0.75)"
    echo "threaded / same-thread instruction:      $threaded (issue 29: >= 0.80)"
fi
