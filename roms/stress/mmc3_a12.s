; mmc3_a12.nes (mapper 4, MMC3): the PPU A12 patterns that clock the MMC3's scanline counter, under
; every pattern-table arrangement. Every 16 frames the NMI picks the next of eight PPUCTRL/PPUMASK
; set-ups (background and sprites at $0000 or $1000, 8x8 or 8x16 sprites whose tiles alternate
; between the tables, sprites only, background only). 64 sprites stacked 8 and more per line keep
; all eight fetch slots busy. The counter is armed with small latches (0 included); each IRQ re-arms
; it with another, and every other IRQ flips the sprite size and the 8x8 sprite table, so IRQs land
; a few lines apart and anywhere on a line. Every other frame the main loop turns rendering off and
; on again at random moments (fetches restart mid-line); otherwise it only spins, which leaves the
; emulator's PPU running in long stretches between IRQs: what its lazy schedule must predict.
; Shown: IRQs last frame, total IRQs, set-up, checksum of the spin counts the IRQs captured, frame.
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
setup:     .res 1       ; index into the set-up tables
ctrl:      .res 1       ; the PPUCTRL value in force
chk:       .res 1
spin:      .res 2
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
        .byte "MMC3 A12 PATTERNS", 0
        jsr print
        .word $20C4
        .byte "IRQS TOTL SET CHK  FRAME", 0
        ; 64 sprites: rows of 9 on the same lines (overflow, all slots fetched), tiles alternating odd
        ; and even (8x16 sprites take their table from bit 0), X spread across the screen.
        ldx #0
        ldy #0
:       tya
        lsr
        lsr
        lsr
        and #7
        asl
        asl
        asl
        asl
        adc #40
        sta OAM,x               ; Y: a band of lines per group of 8
        tya
        sta OAM+1,x             ; tile: odd and even in turn
        and #3
        sta OAM+2,x             ; palette
        tya
        asl
        asl
        asl
        asl
        adc #12
        sta OAM+3,x             ; X
        iny
        inx
        inx
        inx
        inx
        bne :-
        lda #1
        sta irq_rnd
        lda #%10001000
        sta ctrl
        sta PPUCTRL
        cli
main:
        ; Every other frame, rendering goes off at a random moment and back on a random moment later,
        ; so fetches (and the clock of the first one from $1000 after a pause) start anywhere.
        lda frame
        and #1
        beq @spin
        jsr lfsr_step           ; up to 255 x 8 turns of 5 cycles: anywhere in the first third
        tax
:       ldy #8
:       dey
        bne :-
        dex
        bne :--
        lda #0
        sta PPUMASK
        jsr lfsr_step           ; off for up to 63 turns of 5 cycles (about half a line)
        and #$3F
        tax
:       dex
        bne :-
        ldx setup
        lda setup_mask,x
        sta PPUMASK
        ; Spin without touching the PPU until the NMI has run.
@spin:  inc spin
        bne :+
        inc spin+1
:       lda nmi_seen
        beq @spin
        lda #0
        sta nmi_seen
        jmp main

bank_init:
        .byte 0, 2, 4, 5, 6, 7, 0, 1

; Set-ups, 16 frames each: PPUCTRL (NMI on) and PPUMASK.
setup_ctrl:
        .byte %10001000         ; background $0000, sprites $1000, 8x8
        .byte %10010000         ; background $1000, sprites $0000, 8x8
        .byte %10100000         ; background $0000, 8x16
        .byte %10110000         ; background $1000, 8x16
        .byte %10011000         ; both $1000: A12 never low for long
        .byte %10000000         ; both $0000: A12 never high
        .byte %10101000         ; 8x16 (the 8x8 table bit is ignored)
        .byte %10001000         ; background $0000, sprites $1000, sprites only
setup_mask:
        .byte %00011110, %00011110, %00011110, %00001010
        .byte %00011110, %00011110, %00011000, %00010100

nmi:
        PUSH_AXY
        OAM_DMA_AND_HEX
        SCROLL_TOP_LEFT
        lda frame
        lsr
        lsr
        lsr
        lsr
        and #7
        sta setup
        tax
        lda setup_ctrl,x
        sta ctrl
        sta PPUCTRL
        lda setup_mask,x
        sta PPUMASK
        lda irqs
        sta irqs_last
        lda #0
        sta irqs
        ; Pad 1 stirs the generator (kept nonzero), so input changes every latch that follows.
        jsr read_pad1
        lda pad1
        eor seed
        sta seed
        ora seed+1
        bne :+
        inc seed
:       ; Arm the first IRQ of the frame with a small latch (0-15; 0 fires on every clock).
        jsr lfsr_step
        and #$0F
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
        sta MMC3_DISABLE
        inc irq_total
        inc irqs
        lda irqs
        cmp #12
        bcs @done
        ; Every other IRQ flips the sprite size (and the 8x8 table), changing the A12 pattern
        ; mid-frame.
        and #1
        beq :+
        lda ctrl
        eor #%00101000
        sta ctrl
        sta PPUCTRL
:       jsr irq_random
        and #$07
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
        .byte setup
        .word $20F2
        .byte chk
        .word $20F7
        .byte frame+1
        .word $20F9
        .byte frame
        .word 0

.segment "VECTORS"
        .word nmi, reset, irq

.segment "CHARS"
        .include "chr_basic.inc"
        .include "chr_basic.inc"
