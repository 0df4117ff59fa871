; m065_h3001.nes: the Irem H3001 (iNES mapper 65; nesdev "INES Mapper 065"), on asic.inc. Checks:
; 0: power-on: PRG register 1 holds bank 1 at $A000; $C000 holds bank $3E (30 of 32), $E000 $3F;
; 1: $8000 and $A000 select the 8 KiB banks at $8000 and $A000 ($13, $1E);
; 2: $9000 bit 7 swaps: register 0's bank at $C000, bank $3E at $8000;
; 3: $B000-$B007 select the eight 1 KiB CHR banks;
; 4: $9001 mirroring: $00 vertical, $80 horizontal, $40 and $C0 single-screen page 0;
; 5: the IRQ: reload 20 ($9005 high, $9006 low, $9004 copies it), enabled by $9003 = $80 on T0:
;    /IRQ on T0 + 20 (probe delay 15 takes it, 14 does not);
; 6: the counter stops at 0: one IRQ in about 600 cycles (the handler acknowledges with $9003 = $80,
;    leaving it enabled); a reload of 0 asserts nothing.
; After the checks the counter runs down from $FFFF (I set). Licence: MIT OR Apache-2.0 (ours).
MAPPER = 65
SUBMAPPER = 0
PRG_8K = 32
CHR_1K = 128
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 0
CHECKS = 7

.macro IRQ_ACK
        lda #$80
        sta $9003
.endmacro

.include "asic.inc"

; The IRQ probe: reload `reload`, enabled on T0, then PROBE_END `delay`.
.macro PROBE reload, delay
        sei
        lda #0
        sta irq_count
        sta $9003
        lda #>(reload)
        sta $9005
        lda #<(reload)
        sta $9006
        sta $9004
        lda #$80
        sta $9003
        PROBE_END delay
.endmacro

; Writes 1, 2, 3, 4 to the first byte of the four nametables; A = $2400's, ptr = $2000's.
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
        READ_PPU $2400
        rts

run_checks:
        ; 0: power-on banks (the boot stub writes nothing).
        lda $A000
        EXPECT 0, 1
        lda $C000
        EXPECT 0, 30
        lda $E000
        EXPECT 0, 31

        ; 1: PRG registers.
        lda #$13
        sta $8000
        lda #$1E
        sta $A000
        lda $8000
        EXPECT 1, $13
        lda $A000
        EXPECT 1, $1E

        ; 2: the swapped layout.
        lda #$80
        sta $9000
        lda $8000
        EXPECT 2, 30
        lda $C000
        EXPECT 2, $13
        lda #0
        sta $9000
        lda $8000
        EXPECT 2, $13

        ; 3: CHR.
.repeat 8, window
        lda #$07 + window * $0F
        sta $B000 + window
.endrep
.repeat 8, window
        READ_PPU window * $400
        EXPECT 3, $07 + window * $0F
.endrep

        ; 4: mirroring.
        lda #$00
        sta $9001
        jsr mirror_probe
        EXPECT 4, 4
        lda ptr
        EXPECT 4, 3
        lda #$80
        sta $9001
        jsr mirror_probe
        EXPECT 4, 2
        lda ptr
        EXPECT 4, 2
        lda #$40
        sta $9001
        jsr mirror_probe
        EXPECT 4, 4
        lda #$C0
        sta $9001
        lda #$55
        WRITE_PPU $2C00
        lda #$00
        sta $9001
        READ_PPU $2000
        EXPECT 4, $55
        READ_PPU $2400
        EXPECT 4, 4             ; page 1 untouched since the vertical probe

        ; 5: the IRQ to the cycle.
        PROBE 20, 14
        EXPECT 5, 0
        PROBE 20, 15
        EXPECT 5, 1

        ; 6: stops at 0: one IRQ in about 600 cycles; a reload of 0: none.
        sei
        lda #0
        sta irq_count
        sta $9005
        lda #20
        sta $9006
        sta $9004
        lda #$80
        sta $9003
        cli
        ldx #120                ; 120 * 5 cycles
:       dex
        bne :-
        sei
        lda irq_count
        EXPECT 6, 1
        PROBE 0, 30
        EXPECT 6, 0

        ; Left running from $FFFF (I set): the counter the lazy schedule owes across frames.
        lda #$FF
        sta $9005
        sta $9006
        sta $9004
        lda #$80
        sta $9003
        rts

        IMAGE_END
