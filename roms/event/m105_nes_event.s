; m105_nes_event.nes: NES-EVENT, the Nintendo World Championships 1990 board (iNES mapper 105;
; nesdev "NES-EVENT" with Disch's notes there): an MMC1 whose $A000 register drives the board. 256 KiB
; of PRG as two 128 KiB chips (byte 0 of every 8 KiB bank is its number), 8 KiB of CHR RAM, 8 KiB of
; PRG RAM. The code sits in bank 3, the $E000 of the first 32 KiB the board is locked to at power-on;
; every bank resets the MMC1 (PRG mode 3) and jumps there, and the probes that move the banks run
; from CPU RAM. Checks:
; 0: locked: $A000 = $1E (O=1, A=3, I=1) still shows the first 32 KiB (tags 0-3);
; 1: locked, the MMC1 still drives PRG A14: mode 3, register 1 shows 16 KiB bank 1 in both halves;
; 2: I written 0 alone does not unlock (tags 0-3 with A=2); after I = 1 (the probe's restore),
;    $A000 = $14 (O=0, A=2) in 32 KiB mode shows tags 8-11;
; 3: O=1, mode 3, register 2: the second chip's 16 KiB banks 2 and 7 (tags 20, 21, 30, 31);
; 4: O=1, mode 2, register 5: banks 0 and 5 of the second chip (16, 17, 26, 27);
; 5: O=1, 32 KiB mode, register $0E (bit 3 unused): tags 28-31;
; 6: O=0, A=3 in mode 3: A14 from the MMC1 (register 0: tags 12-15; register 1: 14, 15, 14, 15);
; 7: PRG RAM: read back with $E000 bit 4 clear; bit 4 set: open bus ($60), writes lost;
; 8: mirroring by the MMC1's control: vertical, horizontal, one-screen lower and upper (told apart);
; 9: CHR RAM is not banked: $A000 bit 0 (4 KiB CHR mode) changes nothing at $0000;
; 10: the timer: $A000 = $00 (I=0) written on T0; /IRQ not asserted by T0 + $28000000 - 1 (the DIP
;     switches at the tournament's setting, C closed: the counter must reach $28000000);
; 11: ... and asserted by T0 + $28000000 + 8 (the next probe window);
; 12: /IRQ stays asserted (taken again) until $A000 is written with I = 1 (then not taken).
; Checks 10-12 take 6 min 15 s of emulated time (about 22 530 frames). Results in CPU RAM as the VRC
; ROMs (read by tests/boards/event.rs); a green backdrop when all passed, red otherwise.
; Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

CHECKS = 13
PRG_8K = 32

RES_STATUS = $0700
RES_COUNT  = $0701
RES_CODE   = $0710
RES_SEEN   = $0740

RAM_CODE = $0300

; The timer's target: bit 29, and DIP switch C (bit 27) closed (nesdev "NES-EVENT", Disch's notes).
TIMER_TARGET = $28000000
; The wait loop: LOOP_CYCLES per pass but the last (one less); fewer than 2^24 passes.
LOOP_CYCLES = 45
; Cycles from T0 (the arming write) to the first probe window: TARGET - 6, so /IRQ on T0 + TARGET is
; not taken in it (taken when asserted by T0 + D + 5).
WAIT = TIMER_TARGET - 6
LOOP_PASSES = (WAIT - 2 + 1) / LOOP_CYCLES
WAIT_REST = WAIT - (LOOP_PASSES * LOOP_CYCLES - 1)

.segment "ZEROPAGE"
tmp:       .res 1
ptr:       .res 2
irq_count: .res 1
count:     .res 3
; The probe's arguments and results.
control:   .res 1
chr0:      .res 1
prg:       .res 1
seen:      .res 4

.segment "IMAGE"
        .byte "NES", $1A
        .byte PRG_8K / 2
        .byte 0                                 ; CHR RAM
        .byte ((105 & $0F) << 4) | $01
        .byte (105 & $F0) | $08                 ; NES 2.0
        .byte $00
        .byte $00
        .byte $07                               ; 8 KiB PRG RAM
        .byte $07                               ; 8 KiB CHR RAM
        .byte $00, $00, $00, $00

; The MMC1 register at `addr` := A, through the serial port (5 writes, LSB first, none on
; consecutive cycles).
.macro MMC1_WRITE addr
  .repeat 4
        sta addr
        lsr
  .endrep
        sta addr
.endmacro

; Every bank's end: a reset stub that resets the MMC1's shift register and PRG mode (mode 3: the
; locked board shows bank 3 at $E000) and jumps to the code, then the vectors.
.macro BANK_END
        .res $FFE0 - *, $FF
        lda #$80
        sta $8000
        jmp reset
        .res $FFFA - *, $FF
        .word nmi, reset_stub, irq
.endmacro
reset_stub = $FFE0

.repeat 3, bank
        .org $E000
        .byte bank
        BANK_END
.endrep

        .org $E000
        .byte 3

; Compares A with `value` for check `num`.
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

; Runs the RAM probe with control `ctl`, $A000 = `reg_a`, $E000 = `reg_e`: the tags at $8000, $A000, $C000,
; $E000 in `seen`.
.macro PROBE ctl, reg_a, reg_e
        lda #ctl
        sta control
        lda #reg_a
        sta chr0
        lda #reg_e
        sta prg
        jsr RAM_CODE
.endmacro

; Expects the four tags of the last probe.
.macro EXPECT_TAGS num, t0, t1, t2, t3
        lda seen
        EXPECT num, t0
        lda seen+1
        EXPECT num, t1
        lda seen+2
        EXPECT num, t2
        lda seen+3
        EXPECT num, t3
.endmacro

; A = the byte at PPU address `addr` (rendering off: the first PPUDATA read is the stale buffer).
.macro READ_PPU addr
        lda #>(addr)
        sta PPUADDR
        lda #<(addr)
        sta PPUADDR
        lda PPUDATA
        lda PPUDATA
.endmacro

; Writes A to PPU address `addr`.
.macro WRITE_PPU addr
        ldx #>(addr)
        stx PPUADDR
        ldx #<(addr)
        stx PPUADDR
        sta PPUDATA
.endmacro

; The MMC1 control register := `value` (keep PRG mode 3: bits 2-3 set).
.macro CONTROL value
        lda #value
        MMC1_WRITE $8000
.endmacro

reset:
        sei
        cld
        ldx #$FF
        txs
        inx
        stx PPUCTRL
        stx PPUMASK
        stx DMC_FREQ
        lda #$40
        sta JOY2
        bit PPUSTATUS
:       bit PPUSTATUS
        bpl :-
:       bit PPUSTATUS
        bpl :-
        lda #$80
        sta RES_STATUS
        lda #$FF
        ldx #CHECKS - 1
:       sta RES_CODE,x
        dex
        bpl :-
        lda #CHECKS
        sta RES_COUNT
        ldx #0
:       lda probe_image,x
        sta RAM_CODE,x
        inx
        cpx #probe_end - RAM_CODE
        bne :-
        jsr run_checks
        ; The verdict: checks not passed (failed or not run).
        ldy #0
        ldx #CHECKS - 1
:       lda RES_CODE,x
        beq :+
        iny
:       dex
        bpl :--
        sty RES_STATUS
        ; The backdrop: green ($2A) when all passed, red ($16) otherwise; rendering on.
        lda #$3F
        sta PPUADDR
        lda #$00
        sta PPUADDR
        lda #$2A
        cpy #0
        beq :+
        lda #$16
:       sta PPUDATA
        lda #0
        sta PPUSCROLL
        sta PPUSCROLL
        sta PPUCTRL
        lda #%00001010
        sta PPUMASK
forever:
        jmp forever

nmi:
        rti

; Counts the IRQ and returns with I set in the pushed flags, so /IRQ may stay asserted.
irq:
        pha
        txa
        pha
        tsx
        lda $0103,x
        ora #$04
        sta $0103,x
        inc irq_count
        pla
        tax
        pla
        rti

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

; Writes 1, 2, 3, 4 to the first byte of the four nametables; A = $2400's, ptr = $2000's,
; ptr+1 = $2C00's.
mirror_probe:
        lda #1
        WRITE_PPU $2000
        lda #2
        WRITE_PPU $2400
        lda #3
        WRITE_PPU $2800
        lda #4
        WRITE_PPU $2C00
        READ_PPU $2000
        sta ptr
        READ_PPU $2C00
        sta ptr+1
        READ_PPU $2400
        rts

run_checks:
        ; 0, 1: locked.
        PROBE $0C, $1E, $00
        EXPECT_TAGS 0, 0, 1, 2, 3
        PROBE $0C, $1E, $01
        EXPECT_TAGS 1, 2, 3, 2, 3

        ; 2: I = 0 alone, then unlocked (the probe restores I = 1).
        PROBE $0C, $04, $00
        EXPECT_TAGS 2, 0, 1, 2, 3
        PROBE $02, $14, $00
        EXPECT_TAGS 2, 8, 9, 10, 11

        ; 3-5: the second chip.
        PROBE $0E, $18, $02
        EXPECT_TAGS 3, 20, 21, 30, 31
        PROBE $0A, $18, $05
        EXPECT_TAGS 4, 16, 17, 26, 27
        PROBE $02, $18, $0E
        EXPECT_TAGS 5, 28, 29, 30, 31

        ; 6: the first chip's 32 KiB bank 3, A14 from the MMC1.
        PROBE $0C, $16, $00
        EXPECT_TAGS 6, 12, 13, 14, 15
        PROBE $0C, $16, $01
        EXPECT_TAGS 6, 14, 15, 14, 15

        ; 7: PRG RAM (register 0 keeps bank 3 at $E000).
        lda #$00
        MMC1_WRITE $E000
        lda #$5A
        sta $6000
        lda $6000
        EXPECT 7, $5A
        lda #$10
        MMC1_WRITE $E000
        lda #$A5
        sta $6000
        lda $6000
        EXPECT 7, $60
        lda #$00
        MMC1_WRITE $E000
        lda $6000
        EXPECT 7, $5A

        ; 8: mirroring.
        CONTROL $0E
        jsr mirror_probe
        EXPECT 8, 4
        lda ptr
        EXPECT 8, 3
        CONTROL $0F
        jsr mirror_probe
        EXPECT 8, 2
        lda ptr
        EXPECT 8, 2
        CONTROL $0C
        jsr mirror_probe
        EXPECT 8, 4
        lda ptr+1
        EXPECT 8, 4
        CONTROL $0D
        lda #9
        WRITE_PPU $2000
        CONTROL $0C
        READ_PPU $2C00
        EXPECT 8, 4
        CONTROL $0D
        READ_PPU $2400
        EXPECT 8, 9

        ; 9: CHR RAM, 4 KiB CHR mode: $A000 bit 0 set selects nothing.
        CONTROL $1E
        lda #$01
        MMC1_WRITE $C000
        lda #$A5
        WRITE_PPU $0000
        lda #$5A
        WRITE_PPU $1000
        lda #$11
        MMC1_WRITE $A000
        READ_PPU $0000
        EXPECT 9, $A5
        READ_PPU $1000
        EXPECT 9, $5A
        lda #$10
        MMC1_WRITE $A000
        CONTROL $0E

        ; 10, 11: the timer, I = 0 written on T0 (the fifth write), then the wait and two windows.
        lda #0
        sta irq_count
        lda #<LOOP_PASSES
        sta count
        lda #>LOOP_PASSES
        sta count+1
        lda #^LOOP_PASSES
        sta count+2
        lda #$00
        MMC1_WRITE $A000
wait_loop:
        lda count
        sec
        sbc #1
        sta count
        lda count+1
        sbc #0
        sta count+1
        lda count+2
        sbc #0
        sta count+2
        ora count+1
        ora count
  .repeat 5
        nop
  .endrep
        bne wait_loop
wait_end:
.assert >wait_loop = >wait_end, error, "the wait loop's branch crosses a page"
.assert LOOP_PASSES < $1000000, error, "the pass count needs more than 24 bits"
        DELAY WAIT_REST
        cli
        nop
        sei
        ldy irq_count
        cli
        nop
        sei
        tya
        EXPECT 10, 0
        lda irq_count
        EXPECT 11, 1

        ; 12: still asserted: taken again; after I = 1, not.
        cli
        nop
        sei
        lda irq_count
        EXPECT 12, 2
        lda #$10
        MMC1_WRITE $A000
        cli
        nop
        sei
        lda irq_count
        EXPECT 12, 2
        rts

; Copied to RAM_CODE: sets control, $A000 and $E000, reads the four tags, then maps this code's
; bank back (mode 3, $A000 = $10: I = 1, O = 0, A = 0; register 0).
probe_image:
        .org RAM_CODE
        lda control
        MMC1_WRITE $8000
        lda chr0
        MMC1_WRITE $A000
        lda prg
        MMC1_WRITE $E000
        lda $8000
        sta seen
        lda $A000
        sta seen+1
        lda $C000
        sta seen+2
        lda $E000
        sta seen+3
        lda #$0C
        MMC1_WRITE $8000
        lda #$10
        MMC1_WRITE $A000
        lda #$00
        MMC1_WRITE $E000
        rts
probe_end:
        .org probe_image + (probe_end - RAM_CODE)

        BANK_END

.repeat PRG_8K - 4, n
        .org $E000
        .byte n + 4
        BANK_END
.endrep
