; m028_action53.nes: Action 53 (iNES mapper 28; nesdev "Action 53 mapper"): register select at
; $5000 (bits 7, 0), value at $8000-$FFFF; $00 CHR RAM bank, $01 inner PRG bank, $80 mode (..SS
; PPMM), $81 outer PRG bank; no bus conflicts. Each probe is a sequence of writes run from RAM
; (copied there first, as the banks move under it), then the PRG tags and the CHR byte at $0000
; read, then the power-on mapping restored (mode 0, outer bank $FF: the last 32 KiB). Checks: 0 the
; 32 KiB modes with the game sizes; 1 PRG mode 3 (the outer bank's last 16 KiB fixed at $C000);
; 2 PRG mode 2 (its first 16 KiB fixed at $8000); 3 the CHR RAM banks; 4 the nametable modes and
; D4 of $00/$01 in the one-screen modes only. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 28
SUBMAPPER = 0
PRG_8K = 32
CHR_1K = 0
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 9               ; 32 KiB
MIRROR_V = 1
HOME_VALUE = $01                ; select the inner bank register: changes no bank
HOME_ADDR = $5000
CHECKS = 5
RAM_SEQ = $0380
SEQ_BUF = $0340
SEQ_LEN = $033F                 ; the probe's length in bytes (expect uses tmp)
.include "discrete.inc"
.include "nametables.inc"

vectors:
        .byte $FF

; A probe: check, expected tags at $8000, $A000, $C000, $E000 and CHR $0000, then the writes.
.macro SEQ check, p0, p1, p2, p3, chr, count
        .byte check, p0, p1, p2, p3, chr, count
.endmacro
.macro W address, value
        .word address
        .byte value
.endmacro
SEQ_HEAD = 7

sequences:
        SEQ 0, 8, 9, 10, 11, X_, 4
        W $5000, $81
        W $8000, $02
        W $5000, $80
        W $8000, $00
        SEQ 0, 12, 13, 14, 15, X_, 6
        W $5000, $81
        W $8000, $02
        W $5000, $80
        W $8000, $10
        W $5000, $01
        W $8000, $01
        SEQ 1, 10, 11, 6, 7, X_, 6
        W $5000, $81
        W $8000, $01
        W $5000, $01
        W $8000, $05
        W $5000, $80
        W $8000, $2C
        SEQ 2, 4, 5, 10, 11, X_, 6
        W $5000, $81
        W $8000, $01
        W $5000, $01
        W $8000, $05
        W $5000, $80
        W $8000, $28
        SEQ 1, 30, 31, 2, 3, X_, 6
        W $5000, $81
        W $8000, $00
        W $5000, $01
        W $8000, $0F
        W $5000, $80
        W $8000, $3C
        SEQ 3, 28, 29, 30, 31, $B2, 2
        W $5000, $00
        W $8000, $02
        SEQ 3, 28, 29, 30, 31, $B1, 2
        W $5000, $00
        W $8000, $01
        .byte $FF

extra_checks:
        ldx #ram_seq_end - RAM_SEQ - 1
:       lda ram_seq_image,x
        sta RAM_SEQ,x
        dex
        bpl :-
        ; CHR RAM tags: $B0 + b at $0000 of bank b.
        lda #$00
        sta $5000
        ldx #3
@tag:   stx $8000
        lda #$00
        sta PPUADDR
        sta PPUADDR
        txa
        ora #$B0
        sta PPUDATA
        dex
        bpl @tag
        jsr run_sequences
        jmp nametable_checks

run_sequences:
        lda #<sequences
        sta vptr
        lda #>sequences
        sta vptr+1
@next:  ldy #0
        lda (vptr),y
        cmp #$FF
        beq @done
        ; Copy the head and the writes to SEQ_BUF: 7 + 3 * count bytes.
        ldy #6
        lda (vptr),y
        sta tmp
        asl
        adc tmp
        adc #SEQ_HEAD
        sta SEQ_LEN
        ldy #0
:       lda (vptr),y
        sta SEQ_BUF,y
        iny
        cpy SEQ_LEN
        bne :-
        jsr RAM_SEQ
        ; Compare the five values.
        lda #0
        sta index
@compare:
        ldx index
        lda SEQ_BUF+1,x
        cmp #X_
        beq :+
        tay
        lda seen,x
        ldx SEQ_BUF
        jsr expect
:       inc index
        lda index
        cmp #5
        bne @compare
        lda vptr
        clc
        adc SEQ_LEN
        sta vptr
        bcc @next
        inc vptr+1
        jmp @next
@done:  rts

; Mode $02 vertical, $03 horizontal, $00 and $01 one-screen pages ($A0 and $B1 written through
; them, read back through vertical at $2000 and $2400); D4 of the inner bank register sets page 1
; in mode 0 and is ignored in mode 2. The last 32 KiB stay mapped throughout (outer bank $FF,
; 32 KiB game size).
nametable_checks:
        lda #$80
        sta $5000
        lda #$02
        sta $8000
        jsr nt_signature
        EXPECT 4, NT_VERTICAL
        lda #$03
        sta $8000
        jsr nt_signature
        EXPECT 4, NT_HORIZONTAL
        lda #$00
        sta $8000
        jsr nt_signature
        EXPECT 4, NT_ONE_SCREEN
        lda #$A0
        ldy #$20
        jsr nt_write
        lda #$01
        sta $8000
        lda #$B1
        ldy #$2C
        jsr nt_write
        lda #$02
        sta $8000
        ldy #$20
        jsr nt_read
        EXPECT 4, $A0
        ldy #$24
        jsr nt_read
        EXPECT 4, $B1
        lda #$00                ; mode 0, then D4 of register $01: page 1
        sta $8000
        lda #$01
        sta $5000
        lda #$10
        sta $8000
        ldy #$20
        jsr nt_read
        EXPECT 4, $B1
        lda #$80                ; mode 2, then D4: ignored, still vertical
        sta $5000
        lda #$02
        sta $8000
        lda #$01
        sta $5000
        lda #$10
        sta $8000
        jsr nt_signature
        EXPECT 4, NT_VERTICAL
        lda #$80
        sta $5000
        lda #$00
        sta $8000
        lda #HOME_VALUE
        sta HOME_ADDR
        rts

; Runs the writes at SEQ_BUF + 7, reads the tags and CHR $0000 into `seen`, restores mode 0 and
; outer bank $FF.
ram_seq_image:
        .org RAM_SEQ
        lda SEQ_BUF+6
        sta index
        ldx #SEQ_HEAD
@write: lda index
        beq @read
        lda SEQ_BUF,x
        sta ptr
        lda SEQ_BUF+1,x
        sta ptr+1
        lda SEQ_BUF+2,x
        ldy #0
        sta (ptr),y
        inx
        inx
        inx
        dec index
        jmp @write
@read:  lda $8000
        sta seen
        lda $A000
        sta seen+1
        lda $C000
        sta seen+2
        lda $E000
        sta seen+3
        READ_CHR $00, $00
        sta seen+4
        lda #$80
        sta $5000
        lda #$00
        sta $8000
        lda #$81
        sta $5000
        lda #$FF
        sta $8000
        lda #$00
        sta $5000
        sta $8000
        lda #HOME_VALUE
        sta HOME_ADDR
        rts
ram_seq_end:
        .org ram_seq_image + (ram_seq_end - RAM_SEQ)

        IMAGE_END
