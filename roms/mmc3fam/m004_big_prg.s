; m004_big_prg.nes: an MMC3 with 1 MiB of PRG ROM (iNES mapper 4, NES 2.0; nesdev "MMC3", "iNES Mapper
; 004": the extension to 8-bit PRG bank registers for more than 512 KiB): R6 and R7 select among all
; 128 8 KiB banks; $E000 holds the last and, in PRG mode 0, $C000 the second-last.
; Checks: 0 R6 above bank 63; 1 R7 above bank 63; 2 the fixed banks are the last two of 1 MiB;
; 3 PRG mode 1: R6 at $C000, the second-last bank at $8000.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 4
SUBMAPPER = 0
PRG_8K = 128
CHR_1K = 8
PRG_RAM_SHIFT = 7
CHR_RAM_SHIFT = 0
MIRROR_V = 1
CHECKS = 4
.include "checks.inc"
.include "mmc3.inc"

run_checks:
        BANK $00, 6, $40
        lda $8000
        EXPECT 0, $40
        BANK $00, 6, $7F
        lda $8000
        EXPECT 0, $7F
        BANK $00, 7, $65
        lda $A000
        EXPECT 1, $65
        BANK $00, 7, $3F
        lda $A000
        EXPECT 1, $3F
        lda $C000
        EXPECT 2, $7E
        lda $E000
        EXPECT 2, $7F
        BANK $40, 6, $52
        lda $C000
        EXPECT 3, $52
        lda $8000
        EXPECT 3, $7E
        rts

        IMAGE_END
