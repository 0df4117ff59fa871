; m067_sunsoft3.nes: Sunsoft-3 (iNES mapper 67; nesdev "INES Mapper 067"). Every 8 KiB PRG bank n
; holds n in its first byte; every 1 KiB CHR bank n holds n at offset $3F8. Checks:
; 0: $F800 selects the 16 KiB bank at $8000 (8 KiB banks 2n, 2n + 1); $C000 holds the last 16 KiB;
; 1: $8800, $9800, $A800, $B800 select the 2 KiB CHR banks at $0000, $0800, $1000, $1800;
; 2: $E800: 0 vertical, 1 horizontal, 2 single-screen page 0, 3 page 1;
; 3: the IRQ: counter 15 (written high byte, then low, at $C800), $D800 = $10: /IRQ on the 16th
;    clock: D = 11 takes it, D = 10 does not;
; 4: counter $0100: 257 clocks: D = 252 takes it, D = 251 does not;
; 5: a $D800 write resets the $C800 toggle: after one stray write, high then low again;
; 6: /IRQ held until a $8000 write: taken after 100 cycles with I set; a $8000 write before CLI
;    acknowledges it;
; 7: PRG RAM at $6000-$7FFF.
; IRQ probe as in roms/sunsoft/m069_fme7.s: the enable write on cycle T0, exactly D cycles, CLI,
; NOP, SEI: taken when /IRQ comes by T0 + D + 5. From N the clock that finds $0000 asserts /IRQ:
; N + 1 clocks.
; Results (CPU RAM) and backdrop as the other check ROMs. Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

RES_STATUS = $0700
RES_COUNT  = $0701
RES_CODE   = $0710
RES_SEEN   = $0740
CHECKS     = 8

.segment "HEADER"
        .byte "NES", $1A
        .byte 16                ; 256 KiB PRG ROM
        .byte 32                ; 256 KiB CHR ROM
        .byte $30               ; mapper 67 low nibble, horizontal
        .byte $48               ; mapper 67 high nibble, NES 2.0
        .byte $00, $00
        .byte $07               ; 8 KiB PRG RAM
        .byte $00, $00, $00, $00, $00

.segment "BANKDATA"
.repeat 31, bank
        .byte bank
        .res $1FFF, $FF
.endrep

.segment "TAG"
        .byte 31

.segment "CHARS"
.repeat 256, bank
        .res $3F8, 0
        .byte bank
        .res 7, 0
.endrep

.segment "ZEROPAGE"
irq_count: .res 1
tmp:       .res 1
index:     .res 1
window:    .res 1
pages:     .res 4
ptr:       .res 2

.segment "CODE"

.macro EXPECT num, value
        ldx #num
        ldy #value
        jsr expect
.endmacro

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

; Counter `counter`, enable (T0), `delay` cycles, CLI, NOP, SEI, disable and acknowledge; A = the
; IRQs taken.
.macro PROBE counter, delay
        sei
        lda #0
        sta irq_count
        sta $D800
        lda #>(counter)
        sta $C800
        lda #<(counter)
        sta $C800
        lda #$10
        sta $D800
        DELAY delay
        cli
        nop
        sei
        lda #0
        sta $D800
        sta $8000
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
        sta $4010
        lda #$40
        sta $4017
        lda $4015
        lda #$80
        sta RES_STATUS
        lda #$FF
        ldx #CHECKS-1
:       sta RES_CODE,x
        dex
        bpl :-
        lda #CHECKS
        sta RES_COUNT
        bit PPUSTATUS
:       bit PPUSTATUS
        bpl :-
:       bit PPUSTATUS
        bpl :-

        ; 0: PRG.
        ldx #0
@prg:   stx index
        stx $F800
        txa
        asl
        tay
        lda $8000
        ldx #0
        jsr expect
        lda index
        asl
        tay
        iny
        lda $A000
        ldx #0
        jsr expect
        lda $C000
        EXPECT 0, 30
        lda $E000
        EXPECT 0, 31
        ldx index
        inx
        cpx #16
        bne @prg

        ; 1: CHR, each window over chr_values: the 2 KiB bank's first and second KiB.
        lda #0
        sta window
@chr_window:
        ldx #0
@chr_value:
        stx index
        lda window
        asl
        asl
        asl
        asl
        ora #$88                ; $8800, $9800, $A800, $B800
        sta ptr+1
        lda #0
        sta ptr
        tay
        lda chr_values,x
        sta (ptr),y
        lda window
        asl
        asl
        asl
        ora #$03
        sta PPUADDR
        lda #$F8
        sta PPUADDR
        lda PPUDATA
        lda PPUDATA
        sta tmp
        ldx index
        lda chr_values,x
        asl
        tay
        lda tmp
        ldx #1
        jsr expect
        lda window
        asl
        asl
        asl
        ora #$07
        sta PPUADDR
        lda #$F8
        sta PPUADDR
        lda PPUDATA
        lda PPUDATA
        sta tmp
        ldx index
        lda chr_values,x
        asl
        tay
        iny
        lda tmp
        ldx #1
        jsr expect
        ldx index
        inx
        cpx #CHR_VALUES
        bne @chr_value
        inc window
        lda window
        cmp #4
        bne @chr_window

        ; 2: mirroring; markers $AA on CIRAM page 0, $BB on page 1 (written in vertical).
        lda #0
        sta $E800
        lda #$20
        sta PPUADDR
        lda #$00
        sta PPUADDR
        lda #$AA
        sta PPUDATA
        lda #$24
        sta PPUADDR
        lda #$00
        sta PPUADDR
        lda #$BB
        sta PPUDATA
        jsr read_nametables
        lda pages+2
        EXPECT 2, $AA
        lda pages+3
        EXPECT 2, $BB
        lda #1
        sta $E800
        jsr read_nametables
        lda pages+1
        EXPECT 2, $AA
        lda pages+2
        EXPECT 2, $BB
        lda #2
        sta $E800
        jsr read_nametables
        lda pages+3
        EXPECT 2, $AA
        lda #3
        sta $E800
        jsr read_nametables
        lda pages
        EXPECT 2, $BB

        ; 3, 4: the IRQ to the cycle.
        PROBE 15, 10
        EXPECT 3, 0
        PROBE 15, 11
        EXPECT 3, 1
        PROBE $0100, 251
        EXPECT 4, 0
        PROBE $0100, 252
        EXPECT 4, 1

        ; 5: one stray $C800 write, then $D800 resets the toggle: 15 loads as high 0, low 15.
        sei
        lda #0
        sta irq_count
        lda #$12
        sta $C800
        lda #0
        sta $D800
        sta $C800
        lda #15
        sta $C800
        lda #$10
        sta $D800
        DELAY 11
        cli
        nop
        sei
        lda #0
        sta $D800
        sta $8000
        lda irq_count
        EXPECT 5, 1

        ; 6: held until acknowledged.
        PROBE 15, 100
        EXPECT 6, 1
        sei
        lda #0
        sta irq_count
        sta $D800
        sta $C800
        lda #15
        sta $C800
        lda #$10
        sta $D800
        DELAY 100
        sta $8000
        cli
        nop
        sei
        lda irq_count
        EXPECT 6, 0

        ; 7: PRG RAM.
        lda #$A5
        sta $6000
        lda #$5A
        sta $7FFF
        lda $6000
        EXPECT 7, $A5
        lda $7FFF
        EXPECT 7, $5A

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

read_nametables:
        ldx #0
:       lda nametables,x
        sta PPUADDR
        lda #0
        sta PPUADDR
        lda PPUDATA
        lda PPUDATA
        sta pages,x
        inx
        cpx #4
        bne :-
        rts

nametables:
        .byte $20, $24, $28, $2C
chr_values:
        .byte 0, 1, 2, 4, 8, 16, 32, 64, 127
CHR_VALUES = 9

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
        sta $8000               ; acknowledge
        pla
        rti

.segment "VECTORS"
        .word nmi, reset, irq
