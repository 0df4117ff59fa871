; m073_vrc3.nes: Konami VRC3 (iNES mapper 73; nesdev "VRC3"). Every 8 KiB PRG bank n holds n in its
; first byte. Checks:
; 0: $F000 selects the 16 KiB bank at $8000 (3 bits: 8 KiB banks 2n, 2n + 1); $C000-$FFFF holds the
;    last 16 KiB (banks 14, 15);
; 1: 16-bit mode: from latch $FFF0 (written by nibbles at $8000, $9000, $A000, $B000) the IRQ comes
;    16 cycles after the control write; from latch $00F0 not within the probe;
; 2: 8-bit mode: from latch $00F0 (and $12F0) 16 cycles after the write: only the low byte counts;
; 3: acknowledge ($D000) with A set keeps the counter running, with A clear stops it;
; 4: PRG RAM at $6000-$7FFF.
; IRQ probe (as in roms/vrc/vrc_test.inc): with I set, the control write on cycle T0, exactly D
; cycles, CLI, NOP, SEI: the IRQ is taken when it comes by T0 + D + 5. The counter counts every
; CPU cycle after the write; the clock that finds $FFFF (8-bit mode: a low byte of $FF) reloads it
; and asserts /IRQ: from latch L, 65536 - L clocks (8-bit: 256 - (L & $FF)). So latch $FFF0: D = 11
; takes it, D = 10 does not.
; Results (CPU RAM): $0700 $80 while running, then the number of checks not passed; $0701 the
; number of checks; $0710+n check n: 0 passed, 1 failed, $FF not run; $0740+n the value read at the
; first mismatch. The backdrop turns green when all passed, red otherwise.
; Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

RES_STATUS = $0700
RES_COUNT  = $0701
RES_CODE   = $0710
RES_SEEN   = $0740
CHECKS     = 5

IRQ_A = 1
IRQ_E = 2
IRQ_M = 4

.segment "HEADER"
        .byte "NES", $1A
        .byte 8                 ; 128 KiB PRG ROM
        .byte 0                 ; CHR RAM
        .byte $91               ; mapper 73 low nibble, vertical
        .byte $48               ; mapper 73 high nibble, NES 2.0
        .byte $00, $00
        .byte $07               ; 8 KiB PRG RAM
        .byte $07               ; 8 KiB CHR RAM
        .byte $00, $00, $00, $00

.segment "BANKDATA"
.repeat 15, bank
        .byte bank
        .res $1FFF, $FF
.endrep

.segment "TAG"
        .byte 15

.segment "ZEROPAGE"
irq_count: .res 1
tmp:       .res 1
index:     .res 1
bank:      .res 1

.segment "CODE"

.macro EXPECT num, value
        ldx #num
        ldy #value
        jsr expect
.endmacro

; Exactly `cycles` CPU cycles (at least 2) of code with no other effect than on the flags.
.macro DELAY cycles
.if (cycles) .mod 2 = 1
        bit $00
  .repeat ((cycles) - 3) / 2
        nop
  .endrep
.else
  .repeat (cycles) / 2
        nop
  .endrep
.endif
.endmacro

; The IRQ probe: A = 1 when the IRQ came by T0 + `delay` + 5, else 0.
.macro PROBE control, latch, delay
        sei
        lda #0
        sta irq_count
        lda #(latch) & $0F
        sta $8000
        lda #((latch) >> 4) & $0F
        sta $9000
        lda #((latch) >> 8) & $0F
        sta $A000
        lda #(latch) >> 12
        sta $B000
        lda #control
        sta $C000
        DELAY delay
        cli
        nop
        sei
        lda #0
        sta $C000
        lda irq_count
.endmacro

reset:
        sei
        cld
        ldx #$FF
        txs
        lda #0
        sta PPUCTRL
        sta PPUMASK
        lda #$80
        sta RES_STATUS
        lda #$FF
        ldx #CHECKS-1
:       sta RES_CODE,x
        dex
        bpl :-
        lda #CHECKS
        sta RES_COUNT

        ; 0: PRG banks.
        ldx #0
@prg:   stx index
        lda prg_values,x
        sta $F000
        and #7
        asl
        sta bank
        lda $8000
        ldy bank
        ldx #0
        jsr expect
        inc bank
        lda $A000
        ldy bank
        ldx #0
        jsr expect
        lda $C000
        EXPECT 0, 14
        lda $E000
        EXPECT 0, 15
        ldx index
        inx
        cpx #PRG_VALUES
        bne @prg

        ; 1: 16-bit mode.
        PROBE IRQ_E, $FFF0, 10
        EXPECT 1, 0
        PROBE IRQ_E, $FFF0, 11
        EXPECT 1, 1
        PROBE IRQ_E, $00F0, 11
        EXPECT 1, 0

        ; 2: 8-bit mode.
        PROBE IRQ_E | IRQ_M, $00F0, 10
        EXPECT 2, 0
        PROBE IRQ_E | IRQ_M, $00F0, 11
        EXPECT 2, 1
        PROBE IRQ_E | IRQ_M, $12F0, 11
        EXPECT 2, 1

        ; 3: latch $FF00 in 8-bit mode: an IRQ every 256 cycles. With A set the handler's
        ; acknowledge keeps it going: 3 by about 890 cycles; with A clear: 1.
        lda #0
        sta irq_count
        sta $8000
        sta $9000
        lda #$0F
        sta $A000
        sta $B000
        lda #(IRQ_A | IRQ_E | IRQ_M)
        sta $C000
        cli
        ldx #160                ; 160 * 5 cycles
:       dex
        bne :-
        sei
        lda irq_count
        EXPECT 3, 3
        lda #0
        sta irq_count
        lda #(IRQ_E | IRQ_M)
        sta $C000
        cli
        ldx #160
:       dex
        bne :-
        sei
        lda irq_count
        EXPECT 3, 1
        lda #0
        sta $C000

        ; 4: PRG RAM.
        lda #$A5
        sta $6000
        lda #$5A
        sta $7FFF
        lda $6000
        EXPECT 4, $A5
        lda $7FFF
        EXPECT 4, $5A

        ; The verdict, and the backdrop: green when all passed, red otherwise.
        ldy #0
        ldx #CHECKS-1
@count: lda RES_CODE,x
        beq :+
        iny
:       dex
        bpl @count
        sty RES_STATUS
        lda #$3F
        sta PPUADDR
        lda #$00
        sta PPUADDR
        lda #$2A
        cpy #0
        beq :+
        lda #$16
:       sta PPUDATA
        lda #%00001010
        sta PPUMASK
forever:
        jmp forever

prg_values:
        .byte 0, 1, 2, 4, 7, 5, $0B, $FE
PRG_VALUES = 8

; A = value read, X = check, Y = expected. A mismatch marks the check failed and keeps the value;
; a check stays failed once it has failed.
expect:
        sty tmp
        ldy RES_CODE,x
        cpy #1
        beq @done
        sta RES_SEEN,x
        cmp tmp
        beq @pass
        lda #1
        sta RES_CODE,x
        rts
@pass:  lda #0
        sta RES_CODE,x
@done:  rts

nmi:
        rti

irq:
        pha
        inc irq_count
        sta $D000
        pla
        rti

.segment "VECTORS"
        .word nmi, reset, irq
