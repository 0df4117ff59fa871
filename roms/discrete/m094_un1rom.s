; m094_un1rom.nes: UN1ROM (iNES mapper 94; nesdev "INES Mapper 094"): bits 2-4 of a write to
; $8000-$FFFF select the 16 KiB PRG bank at $8000, the last is fixed at $C000; 8 KiB CHR RAM; bus
; conflicts. Checks: 0 each bank; 1 bits 0-1 ignored and the bus conflict. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 94
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 0
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 7
MIRROR_V = 1
HOME_VALUE = 0
HOME_ADDR = $8100 + HOME_VALUE
CHECKS = 2
.include "discrete.inc"

vectors:
        VECTOR 0, CONFLICT_FREE($8000, $00), $00, 0, 1, 14, 15, X_, X_
        VECTOR 0, CONFLICT_FREE($8000, $04), $04, 2, 3, 14, 15, X_, X_
        VECTOR 0, CONFLICT_FREE($8000, $08), $08, 4, 5, 14, 15, X_, X_
        VECTOR 0, CONFLICT_FREE($8000, $14), $14, 10, 11, 14, 15, X_, X_
        VECTOR 0, CONFLICT_FREE($8000, $1C), $1C, 14, 15, 14, 15, X_, X_
        VECTOR 1, CONFLICT_FREE($8000, $03), $03, 0, 1, 14, 15, X_, X_
        VECTOR 1, CONFLICT_FREE($8000, $0C), $1C, 6, 7, 14, 15, X_, X_
        .byte $FF

extra_checks:
        rts

        IMAGE_END
