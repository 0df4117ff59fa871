#!/usr/bin/env bash
# anes against Nestopia, frame by frame, over the shared conformance ROMs and homebrew programs
# (issue 46): one `anes lockstep ROM --versus nestopia_libretro.so` per program, a tab-separated line
# each (program, frames run, the power-on phases' agreement, verified frames, the first difference).
# The table in docs/LIBRETRO.md comes from this output.
#
#   scripts/versus-nestopia.sh [OUT.tsv]   (needs libretro-nestopia: scripts/install-libretro-cores.sh)
#
# Environment: ANES (default target/debug/anes), SHARED (default ../shared), CAP (frames per
# conformance ROM at most, default 3600), HOMEBREW_FRAMES (default 3600), EVIDENCE (default
# target/versus-evidence/).
set -euo pipefail
cd "$(dirname "$0")/.."
ANES=${ANES:-target/debug/anes}
SHARED=${SHARED:-../shared}
CAP=${CAP:-3600}
HOMEBREW_FRAMES=${HOMEBREW_FRAMES:-3600}
EVIDENCE=${EVIDENCE:-target/versus-evidence}
OUT=${1:-/dev/stdout}
CORE=/usr/lib/x86_64-linux-gnu/libretro/nestopia_libretro.so
[ -f "$CORE" ] || { echo "needs $CORE: sudo scripts/install-libretro-cores.sh" >&2; exit 2; }
# A 256x240 picture (no overscan cropped) through the raw palette, which keeps the 512 colours apart.
OPTIONS=(--option nestopia_overscan_v=disabled --option nestopia_overscan_h=disabled --option nestopia_palette=raw)
mkdir -p "$EVIDENCE"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The homebrew programs wait for Start on a title screen (../shared/homebrew/README.md): Start is
# held for 10 frames at 2, 5 and 8 seconds, A for 10 frames at 11 seconds.
movie="$WORK/start.fm2"
{
  printf 'version 3\nemuVersion 22020\nport0 1\nport1 1\nport2 0\n'
  for ((f = 0; f < HOMEBREW_FRAMES; f++)); do
    pad=........
    if (( (f >= 120 && f < 130) || (f >= 300 && f < 310) || (f >= 480 && f < 490) )); then pad=....T...; fi
    if (( f >= 660 && f < 670 )); then pad=.......A; fi
    printf '|0|%s|........||\n' "$pad"
  done
} >"$movie"

run() { # NAME ROM FRAMES [--input FILE]
  local name=$1 rom=$2 frames=$3; shift 3
  local log="$WORK/log"
  local status=0
  "$ANES" lockstep "$rom" --versus "$CORE" "${OPTIONS[@]}" --frames "$frames" "$@" \
    --report "$EVIDENCE/$name" --force >"$log" 2>&1 || status=$?
  local phase verified first
  phase=$(sed -n 's/^phase *//p' "$log")
  verified=$(sed -n 's/^frames verified *//p' "$log")
  first=$(sed -n 's/^DIVERGENCE *.*first divergent frame: \([0-9]*\).*/frame \1/p' "$log")
  local fields
  fields=$(grep '^  ' "$log" | head -4 | sed 's/^ *//' | paste -sd';' - || true)
  case $status in
    0) echo -e "$name\t$frames\t$phase\t$verified\tagree" ;;
    1) echo -e "$name\t$frames\t$phase\t$verified\t$first: $fields" ;;
    *) echo -e "$name\t$frames\t$phase\t-\terror: $(tail -1 "$log")" ;;
  esac >>"$OUT"
}

manifest=$SHARED/conformance/manifest.toml
awk '/^path = / { gsub(/"/, "", $3); path = $3 } /^frame_budget = / { print path, $3 }' "$manifest" |
  while read -r path budget; do
    frames=$(( budget == 0 || budget > CAP ? CAP : budget ))
    name=$(echo "$path" | sed 's|^roms/||; s|/|_|g; s|\.nes$||')
    run "$name" "$SHARED/conformance/$path" "$frames"
  done
for rom in "$SHARED"/homebrew/*.nes; do
  run "homebrew_$(basename "$rom" .nes)" "$rom" "$HOMEBREW_FRAMES" --input "$movie"
done
