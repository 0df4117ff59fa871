#!/usr/bin/env bash
# Writes an 8 KiB PC Engine HuCard image, the smallest program that gives Beetle PCE Fast something
# to audit (docs/LIBRETRO.md): at reset ($E000) it maps the I/O page and RAM (TAM), then increments a
# 16-bit counter at RAM $0000-$0001 forever. No picture, no sound. Reset and interrupt vectors
# ($FFF6-$FFFF) point at $E000; MPR7 is bank 0 after reset, so the image's last bytes are the vectors.
#   78        SEI           d4        CSH (7.16 MHz)
#   a9 ff     LDA #$FF      53 01     TAM #$01 (MPR0: I/O)
#   a9 f8     LDA #$F8      53 02     TAM #$02 (MPR1: RAM at $2000)
#   e6 00     INC $00       d0 fc     BNE -4
#   e6 01     INC $01       80 f8     BRA -8
# Usage: scripts/make-pce-counter.sh OUT.pce
set -euo pipefail
out=${1:?usage: make-pce-counter.sh OUT.pce}
head -c 8192 /dev/zero >"$out"
printf '\x78\xd4\xa9\xff\x53\x01\xa9\xf8\x53\x02\xe6\x00\xd0\xfc\xe6\x01\x80\xf8' |
    dd of="$out" conv=notrunc status=none
printf '\x00\xe0\x00\xe0\x00\xe0\x00\xe0\x00\xe0' | dd of="$out" bs=1 seek=8182 conv=notrunc status=none
