; m093_sunsoft2_3r.nes: Sunsoft-2 on the Sunsoft-3R board (iNES mapper 93; nesdev "INES Mapper
; 093") on the discrete-board engine (roms/discrete/discrete.inc): bits 4-6 of a write to
; $8000-$FFFF select the 16 KiB bank at $8000, $C000 holds the last; bus conflicts; CHR RAM.
; Checks: 0 each bank (bits 1-3 and 7 ignored); 1 the bus conflict; 2 bit 0 clear disables the CHR
; RAM: pattern reads are open bus ("like iNES Mapper 185": the address's low byte, $05 at $1C05),
; set: the RAM again ($A7, written by check 3, which runs first); 3 while disabled, writes are
; lost, and setting bit 0 brings the RAM back unchanged.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 93
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 0
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 7
MIRROR_V = 1
HOME_VALUE = $01
HOME_ADDR = $8100 + HOME_VALUE
CHECKS = 4
.include "../discrete/discrete.inc"

vectors:
        VECTOR 0, CONFLICT_FREE($8000, $01), $01, 0, 1, 14, 15, X_, X_
        VECTOR 0, CONFLICT_FREE($8000, $11), $11, 2, 3, 14, 15, X_, X_
        VECTOR 0, CONFLICT_FREE($8000, $2F), $2F, 4, 5, 14, 15, X_, X_
        VECTOR 0, CONFLICT_FREE($A000, $51), $51, 10, 11, 14, 15, X_, X_
        VECTOR 0, CONFLICT_FREE($C000, $71), $71, 14, 15, 14, 15, X_, X_
        VECTOR 0, CONFLICT_FREE($E000, $F1), $F1, 14, 15, 14, 15, X_, X_
        VECTOR 1, CONFLICT_FREE($8000, $31), $71, 6, 7, 14, 15, X_, X_
        VECTOR 2, CONFLICT_FREE($8000, $00), $00, 0, 1, 14, 15, X_, $05
        VECTOR 2, CONFLICT_FREE($8000, $30), $30, 6, 7, 14, 15, X_, $05
        VECTOR 2, CONFLICT_FREE($8000, $31), $31, 6, 7, 14, 15, X_, $A7
        .byte $FF

; 3: with the RAM enabled (the home value), $1C05 takes $A7; bit 0 clear: a write of $3C is lost
; and the read is open bus; bit 0 set again: $A7.
extra_checks:
        lda #$1C
        sta PPUADDR
        lda #$05
        sta PPUADDR
        lda #$A7
        sta PPUDATA
        READ_CHR $1C, $05
        EXPECT 3, $A7
        lda #$00
        sta $E100                       ; CONFLICT_FREE($E000, $00)
        lda #$1C
        sta PPUADDR
        lda #$05
        sta PPUADDR
        lda #$3C
        sta PPUDATA
        READ_CHR $1C, $05
        EXPECT 3, $05
        lda #HOME_VALUE
        sta HOME_ADDR
        READ_CHR $1C, $05
        EXPECT 3, $A7
        rts

        IMAGE_END
