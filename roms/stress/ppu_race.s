; ppu_race.nes (NROM): PPU register writes in the middle of the picture and $2002 reads racing the
; vblank flag. Frame sync is done by polling $2002 (with NMI enabled too): a read in the cycle before
; the flag is set returns 0 and suppresses both the flag and the NMI, so the loop phase matters. After
; the sprite 0 hit, $2001 (emphasis/greyscale), $2005 and $2006 are written after LFSR-varied delays,
; so the colour band, the fine-X jitter and the scroll jump move every frame.
; Shown: sum of poll counts, NMIs, vblanks found by polling, frames whose NMI did not arrive between
; two found vblanks, frames with two NMIs between them, the last $2002 value read with bit 7 set.
; Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

.segment "HEADER"
        .byte "NES", $1A, 1, 1, $00, $00
        .res 8, 0

.segment "ZEROPAGE"
nmi_count: .res 1
vbl_count: .res 1
last_nmi:  .res 1
no_nmi:    .res 1
two_nmi:   .res 1
pollsum:   .res 1
polls:     .res 1
status:    .res 1
mask:      .res 1

.segment "CODE"
.include "stress.inc"

reset:
        BOOT
        jsr init_video
        jsr print
        .word $2064
        .byte "PPU REGISTER RACES", 0
        jsr print
        .word $20C4
        .byte "POLL NMI  VBL  NONM 2NMI", 0
        jsr print
        .word $2144
        .byte "2002", 0
        ; Rows of text below give the mid-frame scroll changes something to show.
        lda #$21
        sta PPUADDR
        lda #$A0
        sta PPUADDR
        ldy #12
@row:   ldx #0
:       lda fox,x
        sta PPUDATA
        inx
        cpx #32
        bne :-
        dey
        bne @row
        ; A solid tile under sprite 0 (row 11, column 2) for the hit: the numbers above stay readable.
        lda #$21
        sta PPUADDR
        lda #$62
        sta PPUADDR
        lda #$01
        sta PPUDATA
        lda #11*8-1             ; sprite 0: Y, tile, attributes (behind the background), X
        sta OAM
        lda #$01
        sta OAM+1
        lda #$20
        sta OAM+2
        lda #2*8
        sta OAM+3
        lda #%10000000
        sta PPUCTRL
        lda nmi_count
        sta last_nmi
main:
        ; Everything above resynchronised to the sprite 0 hit, so the poll phase would repeat; an
        ; LFSR-chosen 0-7 cycle jitter and one of two loop shapes (9 or 12 cycles) sweep it.
        jsr lfsr_step
        and #7
        lsr
        bcs :+                  ; bit 0: 3 cycles taken, 2 not
:       lsr
        bcc :+                  ; bit 1: 2 more cycles when set
        bit $00
:       lsr
        bcc :+                  ; bit 2: 4 more cycles when set
        nop
        bit $00
:       ldx #0
        lda seed+1
        lsr
        bcs @slow
@fast:  inx
        lda PPUSTATUS
        bpl @fast
        bmi @found
@slow:  inx
        bit $00
        lda PPUSTATUS
        bpl @slow
@found: sta status
        stx polls
        txa
        clc
        adc pollsum
        sta pollsum
        inc vbl_count
        lda nmi_count
        sec
        sbc last_nmi
        beq @none
        cmp #1
        beq @one
        inc two_nmi
        bne @one
@none:  inc no_nmi
@one:   lda nmi_count
        sta last_nmi
        ; Vblank work.
        OAM_DMA_AND_HEX
        SCROLL_CTRL_MASK %10000000, %00011110
        inc frame
        ; Sprite 0 hit: wait for last frame's flag to clear, then for this frame's.
        ldx #0
        ldy #8
:       bit PPUSTATUS
        bvc :+
        dex                     ; the timeouts keep the ROM running if the hit never comes
        bne :-
        dey
        bne :-
:       ldx #0
        ldy #8
:       bit PPUSTATUS
        bvs :+
        dex
        bne :-
        dey
        bne :-
:       ; Mid-frame $2001: emphasis and greyscale bits from the LFSR.
        jsr lfsr_step
        tax
:       dex
        bne :-
        jsr lfsr_step
        and #%11100001
        ora #%00011110
        sta mask
        sta PPUMASK
        ; Mid-frame $2005 pair: changes fine X at once (and t).
        jsr lfsr_step
        and #$3F
        tax
:       dex
        bne :-
        jsr lfsr_step
        sta PPUSCROLL
        sta PPUSCROLL
        ; Mid-frame $2006 pair: the address becomes v at once, a scroll jump.
        jsr lfsr_step
        and #$3F
        tax
:       dex
        bne :-
        jsr lfsr_step
        and #$03
        ora #$20
        sta PPUADDR
        jsr lfsr_step
        sta PPUADDR
        ; Restore the plain mask some lines later.
        jsr lfsr_step
        tax
:       dex
        bne :-
        lda #%00011110
        sta PPUMASK
        jmp main

fox:    .byte " THE QUICK BROWN FOX JUMPS OVER "

nmi:
        inc nmi_count
irq:    rti

hex_list:
        .word $20E4
        .byte pollsum
        .word $20E9
        .byte nmi_count
        .word $20EE
        .byte vbl_count
        .word $20F3
        .byte no_nmi
        .word $20F8
        .byte two_nmi
        .word $2164
        .byte status
        .word $2167
        .byte polls
        .word $216A
        .byte mask
        .word 0

.segment "VECTORS"
        .word nmi, reset, irq

.segment "CHARS"
        .include "chr_basic.inc"
        .include "chr_basic.inc"
