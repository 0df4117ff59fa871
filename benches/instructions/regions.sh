#!/usr/bin/env bash
# PAL and Dendy at NTSC's cost, for every bundled ROM (issue 48): host instructions per emulated frame
# of each ROM under roms/ as an NTSC, a PAL and a Dendy console, counted by cachegrind (exact and
# repeatable for one binary, whatever else the machine is doing), and the ratios PAL / NTSC and
# Dendy / NTSC. Fails when a ratio exceeds 1.25 (a PAL frame has 1.19x NTSC's dots, so a region
# that costs more than that per dot has fallen off the fast path); prints the table either way.
#
# Per ROM and region: `anes run ROM --frames N --region R` at N = 70 and N = 10 under `valgrind
# --tool=cachegrind --cache-sim=no`; (I refs(70) - I refs(10)) / 60 is one frame's cost, start-up and
# the first frames excluded (the gate's method, benches/instructions/gate.sh). Every `roms/*/*.nes`
# is measured: the demo, the stress ROMs, the power-on and region ROMs and every board's check ROM
# (a board's ROM checks its registers in its first frames and then idles with the picture on, so
# frames 10-70 are mostly the idle picture, which is what a region's schedule costs). The schedule
# column says which PPU schedule the board runs by default: "eager" for the mappers whose row in
# crates/anes-core/src/cart/board.rs declares `eager_ppu: true`, else "lazy".
#
#   bash benches/instructions/regions.sh            the table (2 valgrind runs at a time)
#   bash benches/instructions/regions.sh --json     one JSON object per ROM, one a line
#   ANES_REGIONS_BIN=path/to/anes bash benches/instructions/regions.sh   measure another build
#   ANES_REGIONS_JOBS=1 ...                         fewer parallel runs (counts do not change)
#
# Needs valgrind; builds target/release/anes (scripts/release-build.sh) unless ANES_REGIONS_BIN names
# a binary. About 500 valgrind runs: ten minutes or so on two cores.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

long=70
short=10
limit_hundredths=125
jobs="${ANES_REGIONS_JOBS:-2}"
json=false
[[ "${1:-}" == "--json" ]] && json=true

command -v valgrind >/dev/null 2>&1 || { echo "regions: valgrind not found" >&2; exit 1; }
if [[ -n "${ANES_REGIONS_BIN:-}" ]]; then
    anes="$ANES_REGIONS_BIN"
else
    bash scripts/release-build.sh --quiet
    anes="${CARGO_TARGET_DIR:-target}/release/anes"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mapfile -t roms < <(ls roms/*/*.nes)
(( ${#roms[@]} > 0 )) || { echo "regions: no ROMs under roms/" >&2; exit 1; }

# One valgrind run: ROM index, region, frames; the I refs land in $work/INDEX.REGION.FRAMES.
measure() {
    local index="$1" region="$2" frames="$3" rom refs
    rom="${roms[$index]}"
    refs=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        "$anes" run "$rom" --frames "$frames" --region "$region" 2>&1 >/dev/null |
        sed -n 's/^==[0-9]*== I *refs: *//p' | tr -d ',')
    [[ -n "$refs" ]] || { echo "regions: no I refs for $rom ($region, $frames frames)" >&2; return 1; }
    echo "$refs" >"$work/$index.$region.$frames"
}
export -f measure
export anes work
# Arrays do not cross into xargs's shells: the ROM list goes through a file.
printf '%s\n' "${roms[@]}" >"$work/roms"
runs() {
    local index region frames
    for index in "${!roms[@]}"; do
        for region in ntsc pal dendy; do
            for frames in "$long" "$short"; do
                echo "$index $region $frames"
            done
        done
    done
}
runs | xargs -P "$jobs" -L 1 bash -c 'mapfile -t roms <"$work/roms"; measure "$@"' _

# Mapper numbers whose board row declares the eager PPU schedule, and each mapper's board name.
board_rows=$(grep -E '^\s+[A-Za-z0-9_]+\(.*\) = \[[0-9, ]+\]' crates/anes-core/src/cart/board.rs)
board_of() {
    awk -v m="$1" '{
        name = $1; sub(/\(.*/, "", name)
        list = $0; sub(/.*= \[/, "", list); sub(/\].*/, "", list)
        n = split(list, ms, /, */)
        for (i = 1; i <= n; i++) if (ms[i] == m) { print name (index($0, "eager_ppu: true") ? " eager" : " lazy"); exit }
    }' <<<"$board_rows"
}
# The iNES mapper number: flags 6's high nibble, flags 7's high nibble, NES 2.0 byte 8's low nibble.
mapper_of() {
    local bytes
    read -r -a bytes < <(od -An -tu1 -j6 -N3 "$1")
    local mapper=$(( (bytes[0] >> 4) | (bytes[1] & 0xF0) ))
    (( (bytes[1] & 0x0C) == 0x08 )) && mapper=$(( mapper | (bytes[2] & 0x0F) << 8 ))
    echo "$mapper"
}
per_frame() {
    local at_long at_short
    at_long=$(<"$work/$1.$2.$long")
    at_short=$(<"$work/$1.$2.$short")
    echo $(( (at_long - at_short) / (long - short) ))
}
# A ratio in hundredths, rounded to nearest.
ratio() { echo $(( ($1 * 100 + $2 / 2) / $2 )); }
show() { awk -v r="$1" 'BEGIN { printf "%.2f", r / 100 }'; }

$json || {
    echo "host instructions per frame, (I refs($long) - I refs($short)) / $((long - short)), cachegrind; limit $(show "$limit_hundredths")"
    printf '%-38s %-16s %6s %11s %11s %8s %11s %8s %s\n' \
        "ROM" "board" "mapper" "NTSC" "PAL" "PAL/NTSC" "Dendy" "Dendy/NTSC" "schedule"
}
failed=()
for index in "${!roms[@]}"; do
    rom="${roms[$index]}"
    mapper=$(mapper_of "$rom")
    read -r board schedule <<<"$(board_of "$mapper")"
    ntsc=$(per_frame "$index" ntsc)
    pal=$(per_frame "$index" pal)
    dendy=$(per_frame "$index" dendy)
    pal_ratio=$(ratio "$pal" "$ntsc")
    dendy_ratio=$(ratio "$dendy" "$ntsc")
    if $json; then
        printf '{"rom":"%s","board":"%s","mapper":%s,"ntsc":%s,"pal":%s,"dendy":%s,"pal_ratio":%s,"dendy_ratio":%s,"schedule":"%s"}\n' \
            "$rom" "$board" "$mapper" "$ntsc" "$pal" "$dendy" "$(show "$pal_ratio")" "$(show "$dendy_ratio")" "$schedule"
    else
        printf '%-38s %-16s %6s %11s %11s %8s %11s %8s %s\n' "$rom" "$board" "$mapper" "$ntsc" "$pal" \
            "$(show "$pal_ratio")" "$dendy" "$(show "$dendy_ratio")" "$schedule"
    fi
    (( pal_ratio <= limit_hundredths )) || failed+=("$rom: PAL / NTSC $(show "$pal_ratio")")
    (( dendy_ratio <= limit_hundredths )) || failed+=("$rom: Dendy / NTSC $(show "$dendy_ratio")")
done

if (( ${#failed[@]} > 0 )); then
    echo "regions FAILED: a ratio above $(show "$limit_hundredths"):" >&2
    printf '  %s\n' "${failed[@]}" >&2
    exit 1
fi
$json || echo "regions: every ROM's PAL and Dendy frame within $(show "$limit_hundredths")x its NTSC frame"
