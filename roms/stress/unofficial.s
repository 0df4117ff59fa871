; unofficial.nes (NROM): every unofficial opcode except the JAMs, once per frame in one pass, each
; result (A, X, Y, P and sometimes S) folded into a 16-bit checksum shown on screen.
; Includes the unstable ones (SHA, SHX, SHY, TAS, ANE, LXA; their page-crossing address corruption
; is allowed to happen: targets are arranged so that both outcomes land in scratch RAM) and every NOP
; form. The registers entering each pass come from the previous checksum, so one wrong result changes
; every later frame; the DMC plays throughout so its DMA lands on varying instructions.
; Shown: checksum, frame, a sum of the scratch RAM the stores wrote.
; Licence: MIT OR Apache-2.0 (ours).

.setcpu "6502X"
.include "nes.inc"

.segment "HEADER"
        .byte "NES", $1A, 1, 1, $00, $00
        .res 8, 0

; Scratch: $00-$07 pointers into page $04 (X is masked to 0 or 4 for (zp,X)), $08/$09 a pointer to $05F0 for SHA (zp),Y, $0A-$0F RMW
; targets. Unstable stores whose page crossing corrupts the high address byte to (value & $06) land in
; $00xx/$02xx/$04xx/$06xx with a low byte of $00-$0F, all scratch here (this ROM shows no sprites).
ZPT     = $0A
PAGE4   = $0400
PAGE5   = $0500

.segment "ZEROPAGE"
chk:    .res 2
memsum: .res 1
fa:     .res 1
fx:     .res 1

.segment "CODE"
.include "stress.inc"

; Folds A, X, Y and P into chk, preserving all four.
fold:
        php
        sta fa
        stx fx
        pla
        pha
        eor chk
        clc
        adc fa
        sta chk
        lda chk+1
        rol
        eor fx
        sta chk+1
        tya
        adc chk
        sta chk
        lda fa
        ldx fx
        plp
        rts

.macro F
        jsr fold
.endmacro

; Keep X (or Y) small before indexed zero-page and indirect modes so that no access reaches the
; variables above $0F or an I/O register.
.macro XSMALL
        pha
        txa
        and #$04
        tax
        pla
.endmacro
.macro YSH                      ; Y in $00-$1F: from $05F0 it may or may not cross a page
        pha
        tya
        and #$1F
        tay
        pla
.endmacro
.macro XSH
        pha
        txa
        and #$1F
        tax
        pla
.endmacro

reset:
        BOOT
        jsr init_video
        jsr print
        .word $2064
        .byte "UNOFFICIAL OPCODES", 0
        jsr print
        .word $20C4
        .byte "CHK   FRAME MEM", 0
        ; The DMC loops at its fastest rate so that its DMA sometimes lands inside the unstable
        ; stores (a halt there changes which value/address they use on real hardware).
        lda #$4F
        sta DMC_FREQ
        lda #$FF
        sta DMC_LEN
        lda #$10
        sta SND_CHN
        lda #%10000000
        sta PPUCTRL
main:
        jsr wait_nmi
        ldx #$FF                ; TAS and LAS move S: start every pass from a known stack
        txs
        ldx #7
:       lda ptr_init,x
        sta $00,x
        dex
        bpl :-
        lda chk
        ldx chk+1
        ldy frame
        F
        ; RMW combos, every addressing mode: (zp,X) zp abs (zp),Y zp,X abs,Y abs,X
        XSMALL
        slo ($00,x)
        F
        slo ZPT
        F
        slo PAGE5+$40
        F
        slo ($04),y
        F
        slo ZPT,x
        F
        slo PAGE5,y
        F
        slo PAGE5,x
        F
        rla ($00,x)
        F
        rla ZPT+1
        F
        rla PAGE5+$41
        F
        rla ($04),y
        F
        rla ZPT+1,x
        F
        rla PAGE5+1,y
        F
        rla PAGE5+1,x
        F
        XSMALL
        sre ($00,x)
        F
        sre ZPT+2
        F
        sre PAGE5+$42
        F
        sre ($00),y
        F
        sre ZPT,x
        F
        sre PAGE5+2,y
        F
        sre PAGE5+2,x
        F
        rra ($00,x)
        F
        rra ZPT+3
        F
        rra PAGE5+$43
        F
        rra ($00),y
        F
        rra ZPT+1,x
        F
        rra PAGE5+3,y
        F
        rra PAGE5+3,x
        F
        XSMALL
        dcp ($00,x)
        F
        dcp ZPT+4
        F
        dcp PAGE5+$44
        F
        dcp ($04),y
        F
        dcp ZPT,x
        F
        dcp PAGE5+4,y
        F
        dcp PAGE5+4,x
        F
        isc ($00,x)
        F
        isc ZPT+5
        F
        isc PAGE5+$45
        F
        isc ($04),y
        F
        isc ZPT+1,x
        F
        isc PAGE5+5,y
        F
        isc PAGE5+5,x
        F
        ; SAX: (zp,X) zp abs zp,Y
        XSMALL
        sax ($00,x)
        F
        sax ZPT
        F
        sax PAGE5+$46
        F
        pha
        tya
        and #3
        tay
        pla
        sax ZPT,y
        F
        ; LAX: (zp,X) zp abs (zp),Y zp,Y abs,Y, and the immediate form (LXA, unstable)
        XSMALL
        lax ($00,x)
        F
        lax ZPT+1
        F
        lax PAGE5+$47
        F
        lax ($00),y
        F
        pha
        tya
        and #7
        tay
        pla
        lax ZPT-5,y
        F
        lax PAGE5+6,y
        F
        .byte $AB, $5A          ; LXA #$5A
        F
        ; Immediate combos
        anc #$C3
        F
        .byte $2B, $81          ; ANC #$81, the second encoding
        F
        alr #$7E
        F
        arr #$E7
        F
        sed                     ; ARR's flags differ in decimal mode on other 6502s; not on the 2A03
        arr #$3C
        F
        cld
        axs #$19
        F
        .byte $EB, $21          ; SBC #$21, unofficial encoding
        F
        ane #$F0                ; unstable: (A | magic) & X & imm
        F
        ane #$0F
        F
        ; LAS moves S: A = X = S = mem & S
        las PAGE5+$80,y
        F
        tsx
        F
        ldx #$FF
        txs
        ; Unstable stores. TAS sets S = A & X first; keep S in the lower half of the stack page.
        YSH
        sha PAGE5+$F0,y
        F
        XSH
        shy PAGE5+$F0,x
        F
        shx PAGE5+$F0,y
        F
        pha
        lda #$F0
        sta $08
        lda #$05
        sta $09
        pla
        sha ($08),y
        F
        pha
        txa
        and #$7F
        tax
        pla
        tas PAGE5+$F0,y
        F
        tsx
        F
        ldx #$FF
        txs
        ; Every NOP form: implied, immediate, zp, zp,X, abs, abs,X (with a page crossing)
        .byte $1A, $3A, $5A, $7A, $DA, $FA
        F
        .byte $80, $11, $82, $22, $89, $33, $C2, $44, $E2, $55
        F
        .byte $04, ZPT, $44, ZPT, $64, ZPT
        F
        XSMALL
        .byte $14, ZPT, $34, ZPT, $54, ZPT, $74, ZPT, $D4, ZPT, $F4, ZPT
        F
        .byte $0C, <(PAGE5+$10), >(PAGE5+$10)
        F
        ldx #$F0
        .byte $1C, $20, >PAGE5, $3C, $20, >PAGE5, $5C, $20, >PAGE5
        .byte $7C, $20, >PAGE5, $DC, $20, >PAGE5, $FC, $20, >PAGE5
        F
        ; Fold the scratch memory the stores may have touched.
        ldx #0
        lda #0
        clc
:       adc PAGE4,x
        adc PAGE5,x
        eor $0200,x
        adc $0600,x
        inx
        bne :-
        ldx #$0F
:       adc $00,x
        dex
        bpl :-
        sta memsum
        eor chk
        sta chk
        jmp main

ptr_init:
        .word PAGE4, PAGE4+$10, PAGE4+$80, PAGE4+$C0

nmi:
        PUSH_AXY
        jsr show_hex
        SCROLL_CTRL_MASK %10000000, %00001010
        FRAME_DONE
        PULL_AXY
irq:    rti

hex_list:
        .word $20E4
        .byte chk+1
        .word $20E6
        .byte chk
        .word $20EA
        .byte frame+1
        .word $20EC
        .byte frame
        .word $20F0
        .byte memsum
        .word 0

.segment "VECTORS"
        .word nmi, reset, irq

.segment "CHARS"
        .include "chr_basic.inc"
        .include "chr_basic.inc"
