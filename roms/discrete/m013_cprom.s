; m013_cprom.nes: CPROM (iNES mapper 13; nesdev "CPROM"): 32 KiB PRG fixed, 16 KiB CHR RAM with
; $0000-$0FFF fixed to its first 4 KiB and $1000-$1FFF the 4 KiB bank bits 0-1 select; bus conflicts.
; Checks: 0 PRG fixed; 1 the $1000 bank select (tags written into each bank first), $0000 fixed;
; 2 the bus conflict (3 written over a ROM 1 selects bank 1). Licence: MIT OR Apache-2.0 (ours).
MAPPER = 13
SUBMAPPER = 0
PRG_8K = 4
CHR_1K = 0
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 8               ; 16 KiB
MIRROR_V = 1
HOME_VALUE = 0
HOME_ADDR = $8100 + HOME_VALUE
CHECKS = 3
.include "discrete.inc"

vectors:
        VECTOR 0, CONFLICT_FREE($8000, 2), 2, 0, 1, 2, 3, X_, X_
        VECTOR 1, CONFLICT_FREE($8000, 0), 0, X_, X_, X_, X_, $5A, $A0
        VECTOR 1, CONFLICT_FREE($8000, 1), 1, X_, X_, X_, X_, $5A, $A1
        VECTOR 1, CONFLICT_FREE($8000, 2), 2, X_, X_, X_, X_, $5A, $A2
        VECTOR 1, CONFLICT_FREE($8000, 3), 3, X_, X_, X_, X_, $5A, $A3
        VECTOR 2, CONFLICT_FREE($8000, 1), 3, X_, X_, X_, X_, $5A, $A1
        .byte $FF

; Tags in CHR RAM: $A0 + b at $1C05 of each 4 KiB bank b (through $1000), $5A at $0000.
extra_checks:
        ldx #3
:       txa
        sta $8100,x             ; past the bus conflict: the ROM holds x there
        lda #$1C
        sta PPUADDR
        lda #$05
        sta PPUADDR
        txa
        ora #$A0
        sta PPUDATA
        dex
        bpl :-
        lda #$00
        sta PPUADDR
        sta PPUADDR
        lda #$5A
        sta PPUDATA
        rts

        IMAGE_END
