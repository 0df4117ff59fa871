; m140_jf11.nes: Jaleco JF-11/JF-14 (iNES mapper 140; nesdev "INES Mapper 140"): one register at
; $6000-$7FFF: bits 4-5 the 32 KiB PRG bank, bits 0-3 the 8 KiB CHR bank; no PRG RAM. Checks: 0 PRG;
; 1 CHR; 2 the whole of $6000-$7FFF decodes it, $5FFF does not; 3 reads of $6000-$7FFF are open bus
; (LDA absolute: the address's high byte). Licence: MIT OR Apache-2.0 (ours).
MAPPER = 140
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 128
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
HOME_VALUE = $30
HOME_ADDR = $6000
CHECKS = 4
.include "discrete.inc"

vectors:
        VECTOR 0, $6000, $00, 0, 1, 2, 3, 0, 7
        VECTOR 0, $6000, $10, 4, 5, 6, 7, 0, 7
        VECTOR 0, $6000, $20, 8, 9, 10, 11, 0, 7
        VECTOR 1, $6000, $3F, 12, 13, 14, 15, 120, 127
        VECTOR 1, $6000, $05, 0, 1, 2, 3, 40, 47
        VECTOR 2, $7FFF, $21, 8, 9, 10, 11, 8, 15
        VECTOR 2, $5FFF, $00, 12, 13, 14, 15, 0, 7
        .byte $FF

extra_checks:
        lda $6000
        EXPECT 3, $60
        lda $7ABC
        EXPECT 3, $7A
        rts

        IMAGE_END
