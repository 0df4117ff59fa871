; m180_unrom.nes: UNROM with the first bank fixed (iNES mapper 180; nesdev "INES Mapper 180"):
; $8000-$BFFF holds the first 16 KiB, bits 0-2 of a write to $8000-$FFFF select the 16 KiB bank at
; $C000; bus conflicts. Checks: 0 each bank; 1 the bus conflict. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 180
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 0
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 7
MIRROR_V = 1
HOME_VALUE = 7
HOME_ADDR = $8100 + HOME_VALUE
CHECKS = 2
.include "discrete.inc"

vectors:
        VECTOR 0, CONFLICT_FREE($8000, 0), 0, 0, 1, 0, 1, X_, X_
        VECTOR 0, CONFLICT_FREE($8000, 2), 2, 0, 1, 4, 5, X_, X_
        VECTOR 0, CONFLICT_FREE($8000, 5), 5, 0, 1, 10, 11, X_, X_
        VECTOR 0, CONFLICT_FREE($8000, 7), 7, 0, 1, 14, 15, X_, X_
        VECTOR 1, CONFLICT_FREE($8000, 3), 7, 0, 1, 6, 7, X_, X_
        .byte $FF

extra_checks:
        rts

        IMAGE_END
