; m069_fme7.nes: Sunsoft FME-7 / 5B (iNES mapper 69; nesdev "Sunsoft FME-7", "Sunsoft 5B audio").
; Every 8 KiB PRG bank n holds n in its first byte; every 1 KiB CHR bank n holds n at offset $3F8.
; Commands go to $8000, their parameters to $A000. Checks:
; 0: commands $9, $A, $B select the 8 KiB banks at $8000, $A000, $C000 (6 bits, modulo the 32
;    banks here); $E000-$FFFF holds the last bank (31);
; 1: command $8 with bit 6 clear: ROM bank (bits 0-5) at $6000-$7FFF;
; 2: command $8 = $C0: PRG RAM at $6000-$7FFF; $40 (RAM selected, not enabled): open bus, writes
;    lost;
; 3: commands $0-$7 select the 1 KiB CHR bank of each window ($0000 + $400 n);
; 4: command $C: 0 vertical, 1 horizontal, 2 single-screen page 0, 3 page 1;
; 5: the IRQ: counter 15 ($E, $F), control $81 ($D): /IRQ on the 16th clock: D = 11 takes it,
;    D = 10 does not;
; 6: counter $0100: 257 clocks: D = 252 takes it, D = 251 does not (the high byte counts);
; 7: control $80 (count, T clear): a wrap asserts nothing, nor does setting T afterwards; control
;    $01 (T, not counting): nothing;
; 8: /IRQ stays asserted until a $D write: taken after 100 cycles with I set, once; a $D write
;    before CLI acknowledges it (not taken).
; IRQ probe (as in roms/vrc3/m073_vrc3.s): with I set, the control write on cycle T0, exactly D
; cycles, CLI, NOP, SEI: the IRQ is taken when it comes by T0 + D + 5. The counter counts down on
; each CPU cycle after the write; the clock that finds $0000 asserts /IRQ: N + 1 clocks from N.
; Then the 5B sound (read from the audio output by tests/boards/sunsoft.rs): channel A alone, tone
; period 127 at volume 15 (CPU / (32 x 127) = 440.40 Hz); from frame $40 channel B on the envelope
; (shape $0E, period 40) and channel C on the noise (period 7) too.
; Results (CPU RAM): $0700 $80 while running, then the number of checks not passed; $0701 the
; number of checks; $0710+n check n: 0 passed, 1 failed, $FF not run; $0740+n the value read at the
; first mismatch. The backdrop turns green when all passed, red otherwise.
; Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

RES_STATUS = $0700
RES_COUNT  = $0701
RES_CODE   = $0710
RES_SEEN   = $0740
CHECKS     = 9

COMMAND   = $8000
PARAMETER = $A000
AUDIO_SELECT = $C000
AUDIO_DATA   = $E000

.segment "HEADER"
        .byte "NES", $1A
        .byte 16                ; 256 KiB PRG ROM
        .byte 32                ; 256 KiB CHR ROM
        .byte $50               ; mapper 69 low nibble, horizontal
        .byte $48               ; mapper 69 high nibble, NES 2.0
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
frames:    .res 1
pages:     .res 4

.segment "CODE"

.macro EXPECT num, value
        ldx #num
        ldy #value
        jsr expect
.endmacro

; Command `cmd`, parameter A.
.macro SET cmd
        ldx #cmd
        stx COMMAND
        sta PARAMETER
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

; Counter `counter`, then control `control` (its parameter write is T0), `delay` cycles, CLI,
; NOP, SEI, control 0; A = the IRQs taken.
.macro PROBE counter, control, delay
        sei
        lda #0
        sta irq_count
        lda #<(counter)
        SET $0E
        lda #>(counter)
        SET $0F
        lda #control
        SET $0D
        DELAY delay
        cli
        nop
        sei
        lda #0
        sta PARAMETER
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
        sta $4010               ; no DMC IRQ
        lda #$40
        sta $4017               ; no APU frame IRQ: only the board's reaches the probes
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

        ; 0: PRG banks at $8000, $A000, $C000; the last at $E000.
        ldx #0
@prg:   stx index
        lda prg_values,x
        SET $09
        ldx index
        lda prg_values,x
        clc
        adc #1
        SET $0A
        ldx index
        lda prg_values,x
        clc
        adc #2
        SET $0B
        ldx index
        lda prg_values,x
        and #$1F
        sta tmp
        lda $8000
        ldy tmp
        ldx #0
        jsr expect
        ldx index
        lda prg_values,x
        clc
        adc #1
        and #$1F
        sta tmp
        lda $A000
        ldy tmp
        ldx #0
        jsr expect
        ldx index
        lda prg_values,x
        clc
        adc #2
        and #$1F
        sta tmp
        lda $C000
        ldy tmp
        ldx #0
        jsr expect
        lda $E000
        EXPECT 0, 31
        ldx index
        inx
        cpx #PRG_VALUES
        bne @prg

        ; 1: ROM banks at $6000: 0-63 (bank modulo 32).
        ldx #0
@rom:   stx index
        txa
        SET $08
        lda index
        and #$1F
        tay
        lda $6000
        ldx #1
        jsr expect
        ldx index
        inx
        cpx #64
        bne @rom

        ; 2: PRG RAM enabled; selected but disabled: open bus, writes lost.
        lda #$C0
        SET $08
        lda #$A5
        sta $6000
        lda #$5A
        sta $7FFF
        lda $6000
        EXPECT 2, $A5
        lda $7FFF
        EXPECT 2, $5A
        lda #$40
        SET $08
        lda #$00
        sta $6000
        lda $6000               ; open bus: the operand's high byte
        EXPECT 2, $60
        lda #$C0
        SET $08
        lda $6000
        EXPECT 2, $A5

        ; 3: each CHR window selects every bank of chr_values.
        lda #0
        sta window
@chr_window:
        ldx #0
@chr_value:
        stx index
        lda chr_values,x
        ldx window
        stx COMMAND
        sta PARAMETER
        lda window
        asl
        asl
        ora #$03
        sta PPUADDR
        lda #$F8
        sta PPUADDR
        lda PPUDATA
        lda PPUDATA
        ldx index
        ldy chr_values,x
        ldx #3
        jsr expect
        ldx index
        inx
        cpx #CHR_VALUES
        bne @chr_value
        inc window
        lda window
        cmp #8
        bne @chr_window

        ; 4: mirroring. Markers $AA on CIRAM page 0, $BB on page 1 (written in vertical).
        lda #0
        SET $0C
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
        lda pages
        EXPECT 4, $AA
        lda pages+1
        EXPECT 4, $BB
        lda pages+2
        EXPECT 4, $AA
        lda pages+3
        EXPECT 4, $BB
        lda #1
        SET $0C
        jsr read_nametables
        lda pages
        EXPECT 4, $AA
        lda pages+1
        EXPECT 4, $AA
        lda pages+2
        EXPECT 4, $BB
        lda pages+3
        EXPECT 4, $BB
        lda #2
        SET $0C
        jsr read_nametables
        lda pages+1
        EXPECT 4, $AA
        lda pages+3
        EXPECT 4, $AA
        lda #3
        SET $0C
        jsr read_nametables
        lda pages
        EXPECT 4, $BB
        lda pages+2
        EXPECT 4, $BB

        ; 5: the low byte counts: from 15, 16 clocks.
        PROBE 15, $81, 10
        EXPECT 5, 0
        PROBE 15, $81, 11
        EXPECT 5, 1

        ; 6: the high byte counts: from $0100, 257 clocks.
        PROBE $0100, $81, 251
        EXPECT 6, 0
        PROBE $0100, $81, 252
        EXPECT 6, 1

        ; 7: a wrap with T clear asserts nothing, nor does T set after it; T alone does not count.
        PROBE 5, $80, 20
        EXPECT 7, 0
        sei
        lda #0
        sta irq_count
        lda #5
        SET $0E
        lda #0
        SET $0F
        lda #$80
        SET $0D
        DELAY 20
        lda #$81
        sta PARAMETER
        DELAY 20
        cli
        nop
        sei
        lda #0
        sta PARAMETER
        lda irq_count
        EXPECT 7, 0
        PROBE 0, $01, 40
        EXPECT 7, 0

        ; 8: /IRQ held until a $D write.
        PROBE 15, $81, 100
        EXPECT 8, 1
        sei
        lda #0
        sta irq_count
        lda #15
        SET $0E
        lda #0
        SET $0F
        lda #$81
        SET $0D
        DELAY 100
        sta PARAMETER           ; $81 again: acknowledged, counting on from $FFxx
        cli
        nop
        sei
        lda #0
        sta PARAMETER
        lda irq_count
        EXPECT 8, 0

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

        ; The 5B: channel A's tone alone, period 127, volume 15.
        ldx #0
:       lda sound_a,x
        sta AUDIO_SELECT
        lda sound_a+1,x
        sta AUDIO_DATA
        inx
        inx
        cpx #SOUND_A
        bne :-
        lda #0
        sta frames
        lda #$80
        sta PPUCTRL
@wait:  lda frames
        cmp #$40
        bne @wait
        ; From frame $40: channel B on the envelope, channel C on the noise.
        ldx #0
:       lda sound_bc,x
        sta AUDIO_SELECT
        lda sound_bc+1,x
        sta AUDIO_DATA
        inx
        inx
        cpx #SOUND_BC
        bne :-
forever:
        jmp forever

; Reads $2000, $2400, $2800, $2C00 into pages.
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
prg_values:
        .byte 0, 1, 2, 4, 8, 16, 29, $25, $3D
PRG_VALUES = 9
chr_values:
        .byte 0, 1, 2, 4, 8, 16, 32, 64, 128, 255
CHR_VALUES = 10
; (register, value) pairs.
sound_a:
        .byte $00, 127, $01, $00, $07, %00111110, $08, $0F
SOUND_A = * - sound_a
sound_bc:
        .byte $02, 200, $03, $00, $09, $10, $0B, 40, $0C, 0, $0D, $0E
        .byte $06, 7, $0A, $0C, $07, %00011100
SOUND_BC = * - sound_bc

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
        inc frames
        rti

irq:
        pha
        inc irq_count
        lda #$0D
        sta COMMAND
        lda #0
        sta PARAMETER           ; acknowledged, and the counter stopped
        pla
        rti

.segment "VECTORS"
        .word nmi, reset, irq
