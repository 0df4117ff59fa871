; m086_jf13.nes: Jaleco JF-13 (iNES mapper 86; nesdev "INES Mapper 086"): one register at
; $6000-$6FFF, .CPP ..CC: bits 4-5 the 32 KiB PRG bank, bits 0-1 and 6 (as bit 2) the 8 KiB CHR
; bank; $7000-$7FFF is the speech chip's (no banking); no PRG RAM. Checks: 0 PRG; 1 CHR, bit 6 as
; the third bit, bits 2-3 ignored; 2 $7000-$7FFF and $5FFF do not bank; 3 the whole of
; $6000-$6FFF decodes the register; 4 reads of $6000-$7FFF are open bus (LDA absolute: the
; address's high byte). Licence: MIT OR Apache-2.0 (ours).
MAPPER = 86
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 64
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
HOME_VALUE = $30
HOME_ADDR = $6000
CHECKS = 5
.include "discrete.inc"

vectors:
        VECTOR 0, $6000, $00, 0, 1, 2, 3, 0, 7
        VECTOR 0, $6000, $10, 4, 5, 6, 7, 0, 7
        VECTOR 0, $6000, $20, 8, 9, 10, 11, 0, 7
        VECTOR 1, $6000, $33, 12, 13, 14, 15, 24, 31
        VECTOR 1, $6000, $70, 12, 13, 14, 15, 32, 39
        VECTOR 1, $6000, $7E, 12, 13, 14, 15, 48, 55
        VECTOR 1, $6000, $0D, 0, 1, 2, 3, 8, 15
        VECTOR 2, $7000, $21, 12, 13, 14, 15, 0, 7
        VECTOR 2, $7FFF, $43, 12, 13, 14, 15, 0, 7
        VECTOR 2, $5FFF, $01, 12, 13, 14, 15, 0, 7
        VECTOR 3, $6FFF, $21, 8, 9, 10, 11, 8, 15
        VECTOR 3, $6ABC, $12, 4, 5, 6, 7, 16, 23
        .byte $FF

extra_checks:
        lda $6000
        EXPECT 4, $60
        lda $7ABC
        EXPECT 4, $7A
        rts

        IMAGE_END
