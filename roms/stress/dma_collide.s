; dma_collide.nes (NROM): DMC sample DMA colliding with everything else. The DMC loops a sample at
; its fastest rate (a fetch every 432 CPU cycles), so fetches land inside the OAM DMA started each
; NMI (at an LFSR-varied moment), inside a burst of $2007 reads in vblank (a DMC fetch there repeats
; the read and skips a VRAM byte on real hardware) and inside the main loop's continuous controller
; reads (where the repeated read drops a bit). Shown: sums of the $2007 and $4016/$4017 values,
; reads whose 8 bits differed from the previous read, frame, and the sample start/length in use.
; Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

.segment "HEADER"
        .byte "NES", $1A, 1, 1, $00, $00
        .res 8, 0

.segment "ZEROPAGE"
sum2007:  .res 1
sum4016:  .res 1
glitches: .res 1
cur1:     .res 1
cur2:     .res 1
prev1:    .res 1
prev2:    .res 1
dmc_addr: .res 1
dmc_len:  .res 1
vram_lo:  .res 1

; A 1 KiB sample of alternating ramps at $C000 (any bytes would do: only the fetch timing matters).
.segment "DMCDATA"
        .repeat 1024, i
        .byte <((i * 37) ^ (i >> 2))
        .endrepeat

.segment "CODE"
.include "stress.inc"

reset:
        BOOT
        jsr init_video
        jsr print
        .word $2064
        .byte "DMC DMA COLLISIONS", 0
        jsr print
        .word $20C4
        .byte "2007 4016 GLCH FRAME", 0
        jsr print
        .word $2144
        .byte "ADDR LEN", 0
        lda #$4F                ; loop, rate 15 (54 cycles per bit), no IRQ
        sta DMC_FREQ
        lda #0
        sta DMC_START
        lda #$3F
        sta DMC_LEN
        lda #$10
        sta SND_CHN
        lda #%10000000
        sta PPUCTRL
main:
        lda #0
        sta nmi_seen
@reads: lda #1
        sta JOY1
        lda #0
        sta JOY1
        ldx #8
:       lda JOY1
        adc sum4016
        sta sum4016
        lsr
        rol cur1
        lda JOY2
        eor sum4016
        sta sum4016
        lsr
        rol cur2
        dex
        bne :-
        lda cur1
        cmp prev1
        sta prev1
        beq :+
        inc glitches
:       lda cur2
        cmp prev2
        sta prev2
        beq :+
        inc glitches
:
        lda nmi_seen
        beq @reads
        ; New sample window for the next frame (takes effect when the current one loops).
        jsr lfsr_step
        and #$0F
        sta dmc_addr
        sta DMC_START
        jsr lfsr_step
        and #$0F
        sta dmc_len
        sta DMC_LEN
        jmp main

nmi:
        PUSH_AXY
        ; Start OAM DMA after 0-31 loop turns, so its alignment against the DMC fetches wanders.
        lda seed
        and #31
        tax
:       dex
        bpl :-
        OAM_DMA_AND_HEX
        ; 64 reads of $2007 from a varying address in the font's pattern data.
        lda #$03
        sta PPUADDR
        lda vram_lo
        sta PPUADDR
        inc vram_lo
        lda PPUDATA             ; the first read only fills the read buffer
        ldx #64                 ; (more would run past the end of vblank)
        lda sum2007
:       clc
        adc PPUDATA
        rol
        dex
        bne :-
        sta sum2007
        SCROLL_CTRL_MASK %10000000, %00011110
        FRAME_DONE
        PULL_AXY
irq:    rti

hex_list:
        .word $20E4
        .byte sum2007
        .word $20E9
        .byte sum4016
        .word $20EE
        .byte glitches
        .word $20F3
        .byte frame+1
        .word $20F5
        .byte frame
        .word $2164
        .byte dmc_addr
        .word $2169
        .byte dmc_len
        .word 0

.segment "VECTORS"
        .word nmi, reset, irq

.segment "CHARS"
        .include "chr_basic.inc"
        .include "chr_basic.inc"
