; m185_cnrom.nes: CNROM with copy protection (iNES mapper 185, NES 2.0 submapper 5; nesdev "INES
; Mapper 185"): CHR ROM answers only while the latch's chip-select bits (0-1) hold the board's
; value, 1 for submapper 5; otherwise the pattern tables are open bus, "the LSB of the address
; read" ($05 at $1C05). Bus conflicts. Checks: 0 selects 1 enable; 1 selects 0, 2, 3 disable;
; 2 the bus conflict; 3 PRG fixed. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 185
SUBMAPPER = 5
PRG_8K = 4
CHR_1K = 8
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
HOME_VALUE = $01
HOME_ADDR = $8100 + HOME_VALUE
CHECKS = 4
.include "discrete.inc"

vectors:
        VECTOR 0, CONFLICT_FREE($8000, $01), $01, X_, X_, X_, X_, X_, 7
        VECTOR 0, CONFLICT_FREE($8000, $11), $11, X_, X_, X_, X_, X_, 7
        VECTOR 0, CONFLICT_FREE($8000, $21), $21, X_, X_, X_, X_, X_, 7
        VECTOR 1, CONFLICT_FREE($8000, $00), $00, X_, X_, X_, X_, X_, $05
        VECTOR 1, CONFLICT_FREE($8000, $02), $02, X_, X_, X_, X_, X_, $05
        VECTOR 1, CONFLICT_FREE($8000, $03), $03, X_, X_, X_, X_, X_, $05
        VECTOR 1, CONFLICT_FREE($8000, $13), $13, X_, X_, X_, X_, X_, $05
        VECTOR 2, CONFLICT_FREE($8000, $01), $FF, X_, X_, X_, X_, X_, 7
        VECTOR 2, CONFLICT_FREE($8000, $02), $FD, X_, X_, X_, X_, X_, $05
        VECTOR 3, CONFLICT_FREE($8000, $01), $01, 0, 1, 2, 3, X_, X_
        .byte $FF

extra_checks:
        rts

        IMAGE_END
