; m097_tam_s1.nes: Irem TAM-S1 (iNES mapper 97; nesdev "INES Mapper 097"): one register at
; $8000-$BFFF, MM.. PPPP: the 16 KiB PRG bank at $C000 ($8000 holds the last bank); M: 0 one-screen
; page 0, 1 horizontal, 2 vertical, 3 one-screen page 1. Checks: 0 the $C000 bank; 1 $8000 fixed
; to the last bank; 2 the register answers at $8000-$BFFF only; 3 the four nametable modes, page 0
; and page 1 told apart through vertical mode. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 97
SUBMAPPER = 0
PRG_8K = 32
CHR_1K = 8
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
HOME_VALUE = $8F
HOME_ADDR = $8000
CHECKS = 4
.include "discrete.inc"
.include "nametables.inc"

vectors:
        VECTOR 0, $8000, $00, X_, X_, 0, 1, 0, 7
        VECTOR 0, $BFFF, $05, X_, X_, 10, 11, 0, 7
        VECTOR 0, $A000, $4E, X_, X_, 28, 29, 0, 7
        VECTOR 1, $8000, $03, 30, 31, 6, 7, X_, X_
        VECTOR 2, $C000, $05, 30, 31, 30, 31, X_, X_
        VECTOR 2, $FFFF, $02, 30, 31, 30, 31, X_, X_
        .byte $FF

; Each mode's signature; then $A0 at page 0 and $B1 at page 1 (written in vertical mode), read
; back at $2000 in modes 0 and 3.
extra_checks:
        ldx #0
@mode:  stx index
        lda modes,x
        sta $8000
        jsr nt_signature
        ldx index
        ldy signatures,x
        ldx #3
        jsr expect
        ldx index
        inx
        cpx #4
        bne @mode
        lda #$8F
        sta $8000
        lda #$A0
        ldy #$20
        jsr nt_write
        lda #$B1
        ldy #$24
        jsr nt_write
        lda #$0F
        sta $8000
        ldy #$20
        jsr nt_read
        EXPECT 3, $A0
        lda #$CF
        sta $8000
        ldy #$20
        jsr nt_read
        EXPECT 3, $B1
        lda #HOME_VALUE
        sta HOME_ADDR
        rts
modes:      .byte $0F, $4F, $8F, $CF
signatures: .byte NT_ONE_SCREEN, NT_HORIZONTAL, NT_VERTICAL, NT_ONE_SCREEN

        IMAGE_END
