; m076_namcot3446.nes: the Namco 108 on NAMCOT-3446 (iNES mapper 76; nesdev "INES Mapper 076"):
; R2-R5 select 2 KiB CHR banks at $0000, $0800, $1000, $1800 (128 KiB); R0 and R1 do nothing.
; Checks: 0 R6, R7 and the fixed banks; 1 no PRG mode bit, no registers at $A000-$FFFF; 2 R2-R5 as
; 2 KiB banks; 3 R0 and R1 change nothing. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 76
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 128
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
CHECKS = 4
PRG_CHECK = 0
.include "checks.inc"
.include "mmc3.inc"
.include "namco108.inc"

run_checks:
        NAMCO_PRG_CHECKS
        BANK $00, 2, $3F
        BANK $00, 3, 1
        BANK $00, 4, $20
        BANK $00, 5, 5
        READ_PPU $0000
        EXPECT 2, 126
        READ_PPU $0400
        EXPECT 2, 127
        READ_PPU $0800
        EXPECT 2, 2
        READ_PPU $1000
        EXPECT 2, 64
        READ_PPU $1800
        EXPECT 2, 10
        READ_PPU $1C00
        EXPECT 2, 11
        BANK $00, 0, 9
        BANK $00, 1, 9
        READ_PPU $0000
        EXPECT 3, 126
        READ_PPU $0C00
        EXPECT 3, 3
        rts

        IMAGE_END
