; m034_bnrom.nes: BNROM (iNES mapper 34, NES 2.0 submapper 2; nesdev "BNROM"): a write to
; $8000-$FFFF selects the 32 KiB PRG bank; 8 KiB CHR RAM; bus conflicts. Checks: 0 each bank;
; 1 the bus conflict (3 written over a ROM 2 selects bank 2). Licence: MIT OR Apache-2.0 (ours).
MAPPER = 34
SUBMAPPER = 2
PRG_8K = 16
CHR_1K = 0
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 7
MIRROR_V = 1
HOME_VALUE = 3
HOME_ADDR = $8100 + HOME_VALUE
CHECKS = 2
.include "discrete.inc"

vectors:
        VECTOR 0, CONFLICT_FREE($8000, 0), 0, 0, 1, 2, 3, X_, X_
        VECTOR 0, CONFLICT_FREE($8000, 1), 1, 4, 5, 6, 7, X_, X_
        VECTOR 0, CONFLICT_FREE($8000, 2), 2, 8, 9, 10, 11, X_, X_
        VECTOR 0, CONFLICT_FREE($8000, 3), 3, 12, 13, 14, 15, X_, X_
        VECTOR 1, CONFLICT_FREE($8000, 2), 3, 8, 9, 10, 11, X_, X_
        .byte $FF

extra_checks:
        rts

        IMAGE_END
