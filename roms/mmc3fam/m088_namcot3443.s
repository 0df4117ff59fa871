; m088_namcot3443.nes: the Namco 108 on NAMCOT-3443 (iNES mapper 88; nesdev "INES Mapper 088"): PPU
; A12 drives CHR A16, so R0-R1 bank within the first 64 KiB of CHR and R2-R5 within the second.
; Checks: 0 R6, R7 and the fixed banks; 1 no PRG mode bit, no registers at $A000-$FFFF; 2 R0-R1 in
; the first 64 KiB; 3 R2-R5 in the second. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 88
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
        BANK $00, 0, $3E
        BANK $00, 1, 4
        READ_PPU $0000
        EXPECT 2, 62
        READ_PPU $0C00
        EXPECT 2, 5
        BANK $00, 2, 0
        BANK $00, 5, $3F
        READ_PPU $1000
        EXPECT 3, 64
        READ_PPU $1C00
        EXPECT 3, 127
        rts

        IMAGE_END
