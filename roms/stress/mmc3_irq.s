; mmc3_irq.nes (mapper 4, MMC3): scanline IRQs on lines that change every frame. The NMI arms the
; counter with an LFSR-chosen latch; each IRQ waits an LFSR-chosen time before acknowledging ($E000),
; flips the colour emphasis (so the IRQ lines are visible as bands), and re-arms with a new latch
; (up to four IRQs a frame); the main loop sometimes rewrites the latch or forces a reload ($C001) at
; a random moment. A spin counter captured by each IRQ records exactly when it arrived.
; Shown: IRQs last frame, total IRQs, last latch, checksum of the captured spin counts, frame.
; Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"
.include "mmc3.inc"

.segment "HEADER"
        .byte "NES", $1A, 2, 1, $41, $00    ; mapper 4, 32 KiB PRG, 8 KiB CHR, vertical
        .res 8, 0

.segment "ZEROPAGE"
irqs:      .res 1       ; IRQs in the current frame
irqs_last: .res 1
irq_total: .res 1
latch:     .res 1
chk:       .res 1
spin:      .res 2
emph:      .res 1
irq_rnd:   .res 1       ; the IRQ handler's own generator (the main LFSR is not reentrant)

.segment "CODE"
.include "stress.inc"

reset:
        BOOT
        ; Power-on MMC3 bank registers are unknown: set all eight (PRG mode 0, CHR mode 0).
        MMC3_SET_BANKS
        lda #0
        sta MMC3_MIRROR         ; vertical
        sta MMC3_DISABLE
        jsr init_video
        jsr print
        .word $2064
        .byte "MMC3 SCANLINE IRQ", 0
        jsr print
        .word $20C4
        .byte "IRQS TOTL LTCH CHK  FRAME", 0
        ; A few sprites so that sprite fetches come from $1000 on every line (the A12 edges).
        ldx #0
:       lda sprites,x
        sta OAM,x
        inx
        cpx #16
        bne :-
        lda #1
        sta irq_rnd
        lda #%10001000          ; NMI on, sprites at $1000, background at $0000
        sta PPUCTRL
        cli
main:
        jsr wait_nmi
        ; Now and then touch the counter at a random moment of the frame.
        jsr lfsr_step
        and #3
        bne @spin
        jsr lfsr_step
        tax
:       dex
        bne :-
        jsr lfsr_step
        sta MMC3_LATCH
        and #1
        beq @spin
        sta MMC3_RELOAD
@spin:  inc spin
        bne :+
        inc spin+1
:       lda nmi_seen
        beq @spin
        jmp main

bank_init:
        .byte 0, 2, 4, 5, 6, 7, 0, 1

sprites:
        .byte 100, $2A, 0, 40,  140, $2B, 1, 80,  180, $2A, 2, 120,  60, $2B, 3, 200

nmi:
        PUSH_AXY
        OAM_DMA_AND_HEX
        SCROLL_CTRL_MASK %10001000, %00011110
        sta emph
        lda irqs
        sta irqs_last
        lda #0
        sta irqs
        ; Arm the first IRQ of the frame on an LFSR-chosen line.
        jsr lfsr_step
        and #$7F
        clc
        adc #8
        sta latch
        MMC3_ARM_IRQ
        FRAME_DONE
        PULL_AXY
        rti

irq:
        pha
        txa
        pha
        lda spin
        eor chk
        asl
        adc spin+1
        sta chk
        ; Acknowledge after a varying delay (the line stays asserted until then).
        jsr irq_random
        and #$1F
        tax
:       dex
        bpl :-
        sta MMC3_DISABLE
        lda emph
        eor #%11100000
        sta emph
        sta PPUMASK
        inc irq_total
        inc irqs
        lda irqs
        cmp #4
        bcs @done
        jsr irq_random
        and #$1F
        adc #4
        sta latch
        MMC3_ARM_IRQ
@done:  pla
        tax
        pla
        rti

; 8-bit Galois LFSR (taps $B8), period 255.
irq_random:
        IRQ_RANDOM_STEP
        rts

hex_list:
        .word $20E4
        .byte irqs_last
        .word $20E9
        .byte irq_total
        .word $20EE
        .byte latch
        .word $20F3
        .byte chk
        .word $20F8
        .byte frame+1
        .word $20FA
        .byte frame
        .word 0

.segment "VECTORS"
        .word nmi, reset, irq

.segment "CHARS"
        .include "chr_basic.inc"
        .include "chr_basic.inc"
