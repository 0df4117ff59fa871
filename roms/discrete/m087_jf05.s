; m087_jf05.nes: the Jaleco/Konami CHR latch (iNES mapper 87; nesdev "INES Mapper 087"): one
; register at $6000-$7FFF, .... ..LH: the 8 KiB CHR bank with its bits swapped (bit 0 the high
; bit); PRG fixed; no PRG RAM. Checks: 0 the swapped bits; 1 the whole of $6000-$7FFF decodes it,
; $5FFF does not; 2 PRG fixed; 3 reads of $6000-$7FFF are open bus. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 87
SUBMAPPER = 0
PRG_8K = 4
CHR_1K = 32
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
HOME_VALUE = $00
HOME_ADDR = $6000
CHECKS = 4
.include "discrete.inc"

vectors:
        VECTOR 0, $6000, $01, X_, X_, X_, X_, 16, 23
        VECTOR 0, $6000, $02, X_, X_, X_, X_, 8, 15
        VECTOR 0, $6000, $03, X_, X_, X_, X_, 24, 31
        VECTOR 0, $6000, $FC, X_, X_, X_, X_, 0, 7
        VECTOR 1, $7FFF, $01, X_, X_, X_, X_, 16, 23
        VECTOR 1, $7123, $02, X_, X_, X_, X_, 8, 15
        VECTOR 1, $5FFF, $01, X_, X_, X_, X_, 0, 7
        VECTOR 2, $6000, $03, 0, 1, 2, 3, X_, X_
        .byte $FF

extra_checks:
        lda $6000
        EXPECT 3, $60
        lda $7ABC
        EXPECT 3, $7A
        rts

        IMAGE_END
