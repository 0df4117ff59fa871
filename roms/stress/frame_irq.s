; frame_irq.nes (NROM): the APU frame IRQ (4-step mode, IRQ enabled) racing the NMI.
; The 4-step sequence raises its IRQ every 29830 CPU cycles, the NMI comes every 29780.5, so the two
; drift through each other; on top, $4017 is rewritten at LFSR-chosen moments (which restarts the
; sequence and moves the IRQ phase) and $4015 is read at varying times around the flag's set time.
; Shown: NMIs, IRQs, NMIs with no IRQ since the last one, IRQs that arrived while the NMI handler ran,
; a checksum of the $4015 reads, the last $4017 write delay, and one bit per recent NMI telling
; whether an IRQ came before it.
; Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

.segment "HEADER"
        .byte "NES", $1A, 1, 1, $00, $00    ; mapper 0, 16 KiB PRG, 8 KiB CHR, horizontal
        .res 8, 0

.segment "ZEROPAGE"
nmi_count:  .res 1
irq_count:  .res 1
lonely:     .res 1      ; NMIs without an IRQ since the previous NMI
inside:     .res 1      ; IRQs taken while the NMI handler was running (nested)
in_nmi:     .res 1
irq_since:  .res 1
sum4015:    .res 1
delay:      .res 1
order:      .res 1      ; shift register: 1 = IRQ came before this NMI, 0 = not

.segment "CODE"
.include "stress.inc"

reset:
        BOOT
        jsr init_video
        jsr print
        .word $2064
        .byte "FRAME IRQ VS NMI", 0
        jsr print
        .word $20C4
        .byte "NMI  IRQ  LONE NEST", 0
        jsr print
        .word $2144
        .byte "4015 DLY  ORDR", 0
        lda #$00
        sta JOY2                ; 4-step mode, frame IRQ enabled
        lda #%10000000
        sta PPUCTRL
        cli
main:
        jsr wait_nmi
        ; Read $4015 after an LFSR-chosen delay of 0-255 loop turns; the read clears the frame
        ; IRQ flag, so whether this or the IRQ handler sees the flag first is part of the race.
        jsr lfsr_step
        tax
:       dex
        bne :-
        lda SND_CHN
        jsr mix4015
        ; About one frame in eight, restart the frame counter at an LFSR-chosen point anywhere in the
        ; next two frames (about 231 cycles per delay step): the IRQs that follow come 49.5 cycles
        ; later each frame from there, so some land just before the NMI and some inside its handler.
        jsr lfsr_step
        and #7
        bne main
        jsr lfsr_step
        sta delay
        tax
@outer: ldy #45
:       dey
        bne :-
        dex
        bne @outer
        ; Half of the time pass through 5-step mode first: the $80 write clocks the envelopes and
        ; length counters at once and the $00 write a few cycles later restarts the 4-step sequence.
        lda frame
        and #$10
        beq :+
        lda #$80
        sta JOY2
        nop
:       lda #$00                ; 4-step mode, IRQ enabled
        sta JOY2
        jmp main

nmi:
        PUSH_AXY
        lda #1
        sta in_nmi
        inc nmi_count
        asl order
        lda irq_since
        beq :+
        inc order
        bne :++
:       inc lonely
:       lda #0
        sta irq_since
        ; Let a pending IRQ in now so that it can land inside this handler, and stay a while
        ; (about 1300 cycles): IRQs re-phased by the $4017 writes arrive early in the frame.
        cli
        ldx #0
:       dex
        bne :-
        jsr show_hex
        SCROLL_CTRL_MASK %10000000, %00001010
        COUNT_FRAME
        lda sum4015             ; stir: 1-4 extra LFSR steps chosen by the timing-dependent checksum
        and #3                  ; (stepping, not overwriting, keeps the maximal-length orbit)
        tax
:       jsr lfsr_step
        dex
        bpl :-
        lda #1
        sta nmi_seen
        lda #0
        sta in_nmi
        PULL_AXY
        rti

irq:
        pha
        inc irq_count
        inc irq_since
        lda in_nmi
        beq :+
        inc inside
:       lda SND_CHN             ; acknowledges the frame IRQ
        jsr mix4015
        pla
        rti

; sum4015 = rotate-left(sum4015) + A: the order of the reads matters, not only their values.
mix4015:
        asl sum4015
        adc sum4015
        sta sum4015
        rts

hex_list:
        .word $20E4
        .byte nmi_count
        .word $20E9
        .byte irq_count
        .word $20EE
        .byte lonely
        .word $20F3
        .byte inside
        .word $2164
        .byte sum4015
        .word $2169
        .byte delay
        .word $216E
        .byte order
        .word 0

.segment "VECTORS"
        .word nmi, reset, irq

.segment "CHARS"
        .include "chr_basic.inc"
        .include "chr_basic.inc"
