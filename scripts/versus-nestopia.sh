#!/usr/bin/env bash
# anes against Nestopia, frame by frame, over the shared conformance ROMs and homebrew programs
# (issue 46): one `anes lockstep ROM --versus nestopia_libretro.so` per program, a tab-separated line
# each: program, frames run, the phase chosen (frames agreeing from power-on in phases 0-3), the first
# frame that differs when compared at every frame (and where anes's run holds the other's RAM of
# that frame: the sampling offset), and the comparison at the last frame only
# (`--at-end`: anes's $6000 status when the ROM has one, the picture, the RAM outside anes's free
# stack, the free stack's differing bytes, AGREE or DIFFER).
# The table in docs/LIBRETRO.md comes from this output.
#
#   scripts/versus-nestopia.sh [OUT.tsv]   (needs libretro-nestopia: scripts/install-libretro-cores.sh)
#
# Environment: ANES (default target/release/anes), SHARED (default ../shared), CAP (frames per
# conformance ROM at most, default 3600), HOMEBREW_FRAMES (default 3600), EVIDENCE (default
# target/versus-evidence/), ONLY (a regular expression: only the programs whose names match).
set -euo pipefail
cd "$(dirname "$0")/.."
ANES=${ANES:-target/release/anes}
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
  [[ $name =~ ${ONLY:-.} ]] || return 0
  local log="$WORK/log" end="$WORK/end"
  local status=0 end_status=0
  # Every frame: the first frame whose RAM or picture differs.
  "$ANES" lockstep "$rom" --versus "$CORE" "${OPTIONS[@]}" --frames "$frames" "$@" \
    --report "$EVIDENCE/$name" --force >"$log" 2>&1 || status=$?
  # The last frame only (--at-end): the picture (a test's verdict) and the RAM outside anes's free
  # stack, in the phase the first run chose.
  local phase_number
  phase_number=$(sed -n 's/^phase *\([0-3]\).*/\1/p' "$log")
  "$ANES" lockstep "$rom" --versus "$CORE" "${OPTIONS[@]}" --frames "$frames" "$@" --at-end \
    --phase "${phase_number:-auto}" --report "$EVIDENCE/$name-end" --force >"$end" 2>&1 || end_status=$?
  local phase first at_end
  phase=$(sed -n 's/^phase *//p' "$log" | sed 's/ (frames agreeing from power-on, phases 0-3: \(.*\))/ (\1)/')
  first=$(sed -n 's/^DIVERGENCE *.*first divergent frame: \([0-9]*\).*/\1/p' "$log")
  case $status in
    0) first=agree ;;
    1) first="frame $first: $(grep '^  ' "$log" | head -2 | sed 's/^ *//; s/ colour class//' | paste -sd';' - || true); $(sed -n 's/^sampling offset *//p' "$log")" ;;
    *) first="error: $(tail -1 "$log")" ;;
  esac
  case $end_status in
    0 | 1)
      at_end=$(grep -E '^(AGREE|DIFFER|picture|ram|free stack|anes .6000)' "$end" |
        sed 's/^anes .6000 */$6000 /; s/^free stack *\([^:]*\): \([0-9]*\) bytes differ, not compared/free stack \2 differ/; s/^picture */picture /; s/^ram */ram /' |
        paste -sd';' -) ;;
    *) at_end="error: $(tail -1 "$end")" ;;
  esac
  echo -e "$name\t$frames\t$phase\t$first\t$at_end" >>"$OUT"
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
