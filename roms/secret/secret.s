; secret.nes (NROM): a RAM byte that matters only after a secret sequence, for the shrinker's tests
; (crates/anes-lockstep/tests/shrink.rs and the CLI's). Pad 1 must hold exactly Up when the NMI
; counter reads SECRET_1, exactly Up at SECRET_2 and exactly A at SECRET_3, in that order. Until
; then the main loop shifts `secret` ($0342, 0) right every few cycles, so a bit flipped there in
; the middle of a frame is gone again before the frame ends (masked); after the sequence the loop
; leaves the byte alone and the flip shows at the frame's end.
;
; The NMI handler takes the same cycles whatever the pads hold (table lookups, no branch on input),
; so two runs whose inputs differ only before some frame reach the same state one frame after it
; when the stage they reached is the same: the shrinker's convergence shortcut relies on it.
; Pad 2 is never read. Rendering stays off. The idle loops are mostly 7-cycle instructions, about
; 4,700 instructions a frame, so the tests' 10,000-frame runs stay short.
;
; RAM: $0010/$0011 NMI counter (lo/hi), $0012 stage (0-3), $0013 pad 1 as read this frame,
; $0342 the secret byte, $0343 a byte the unlocked loop shifts instead.
; Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

SECRET_1 = 1000
SECRET_2 = 3000
SECRET_3 = 5000
BUTTON_A  = %00000001
BUTTON_UP = %00010000

secret = $0342
idle   = $0343

.segment "HEADER"
        .byte "NES", $1A, 1, 1, $00, $00    ; mapper 0, 16 KiB PRG, 8 KiB CHR, horizontal
        .res 8, 0

.segment "ZEROPAGE"
count_lo:   .res 1
count_hi:   .res 1
stage:      .res 1
pad:        .res 1
mismatch:   .res 1

.segment "CODE"

reset:
        sei
        cld
        ldx #$FF
        txs
        inx
        stx PPUCTRL
        stx PPUMASK
        bit PPUSTATUS
:       bit PPUSTATUS           ; two vblanks: the PPU is warm
        bpl :-
:       bit PPUSTATUS
        bpl :-
        lda #0
        tax
:       sta $00,x               ; zero page and the secret's page start known
        sta $0300,x
        inx
        bne :-
        lda #%10000000          ; NMI on, rendering off
        sta PPUCTRL
        ldx #0                  ; for the idle loops' 7-cycle abs,X shifts (the NMI keeps X)
locked:
.repeat 16
        lsr secret,x            ; a flipped bit is shifted out within four of these
.endrepeat
        lda stage
        cmp #3
        bne locked
unlocked:
.repeat 16
        lsr idle,x
.endrepeat
        jmp unlocked

nmi:
        pha
        txa
        pha
        ; Pad 1 into `pad`, A in bit 0 ... Right in bit 7 (anes's button bits).
        lda #1
        sta JOY1
        lda #0
        sta JOY1
        ldx #8
:       lda JOY1
        lsr a
        ror pad
        dex
        bne :-
        inc count_lo
        bne :+
        inc count_hi
:       ; mismatch = (count, pad) xor what this stage waits for: 0 exactly on a match.
        ldx stage
        lda count_lo
        eor want_lo,x
        sta mismatch
        lda count_hi
        eor want_hi,x
        ora mismatch
        sta mismatch
        lda pad
        eor want_pad,x
        ora mismatch
        ; Carry clear exactly on a match; stage += 1 - carry, without a branch.
        cmp #1
        lda #0
        adc #$FF                ; $FF on a match, 0 otherwise
        sta mismatch
        lda stage
        sec
        sbc mismatch
        sta stage
        pla
        tax
        pla
irq:
        rti

.segment "RODATA"
; Stage 3 waits for a count whose high byte is $FF, which 10,000 frames never reach.
want_lo:    .byte <SECRET_1, <SECRET_2, <SECRET_3, $00
want_hi:    .byte >SECRET_1, >SECRET_2, >SECRET_3, $FF
want_pad:   .byte BUTTON_UP, BUTTON_UP, BUTTON_A, $00

.segment "VECTORS"
        .word nmi, reset, irq

.segment "CHARS"
        .res 16, 0              ; one blank tile; the rest is filled with zeros
