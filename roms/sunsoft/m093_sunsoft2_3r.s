; m093_sunsoft2_3r.nes: Sunsoft-2 on the Sunsoft-3R board (iNES mapper 93; nesdev "INES Mapper
; 093") on the discrete-board engine (roms/discrete/discrete.inc): bits 4-6 of a write to
; $8000-$FFFF select the 16 KiB bank at $8000, $C000 holds the last; bus conflicts; CHR RAM.
; Checks: 0 each bank (bits 0-3 and 7 ignored); 1 the bus conflict. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 93
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 0
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 7
MIRROR_V = 1
HOME_VALUE = $01
HOME_ADDR = $8100 + HOME_VALUE
CHECKS = 2
.include "../discrete/discrete.inc"

vectors:
        VECTOR 0, CONFLICT_FREE($8000, $01), $01, 0, 1, 14, 15, X_, X_
        VECTOR 0, CONFLICT_FREE($8000, $11), $11, 2, 3, 14, 15, X_, X_
        VECTOR 0, CONFLICT_FREE($8000, $2F), $2F, 4, 5, 14, 15, X_, X_
        VECTOR 0, CONFLICT_FREE($A000, $51), $51, 10, 11, 14, 15, X_, X_
        VECTOR 0, CONFLICT_FREE($C000, $71), $71, 14, 15, 14, 15, X_, X_
        VECTOR 0, CONFLICT_FREE($E000, $F1), $F1, 14, 15, 14, 15, X_, X_
        VECTOR 1, CONFLICT_FREE($8000, $31), $71, 6, 7, 14, 15, X_, X_
        .byte $FF

extra_checks:
        rts

        IMAGE_END
