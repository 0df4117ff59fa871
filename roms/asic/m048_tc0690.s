; m048_tc0690.nes: the Taito TC0690 (iNES mapper 48; nesdev "INES Mapper 048"), on asic.inc.
; Checks:
; 0: $8000 (6 bits) and $8001 select the 8 KiB banks at $8000 and $A000; the last two fixed;
; 1: $8002/$8003 2 KiB CHR banks counted in 2 KiB, $A000-$A003 1 KiB banks;
; 2: $E000 bit 6 mirroring (0 vertical, 1 horizontal); $8000 bit 6 is a bank bit, not mirroring;
; 3: the scanline counter, clocked by hand through PPUADDR (A12 low, then high): the latch written
;    inverted ($FD: 2) after $C001 and $C002 raises the IRQ at the third clock, not the second;
;    $C003 acknowledges and disables (a fourth clock raises nothing);
; 4: the IRQ's delay: after the clock's PPUADDR write (T0), a run of INX from X = 0 (2 cycles each)
;    is interrupted after 3 of them (`probe_delay`): /IRQ rises on the fourth M2 edge after the
;    clock, T0 + 4 (an MMC3's, rising with the clock, would stop the run after 1);
; 5: registers decode with mask $E003: $C004 is $C000, $E004 is $E000, $E001 is nothing.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 48
SUBMAPPER = 0
PRG_8K = 32
CHR_1K = 128
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 0
CHECKS = 6

IRQ_X = $0780                   ; X when the IRQ was taken

.macro IRQ_ACK
        stx IRQ_X
        sta $C003
.endmacro

.include "asic.inc"

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

; One rising edge of PPU A12 through PPUADDR (rendering off): $0000, then $1000 after A12 stayed
; low for more than three M2 cycles.
clock_a12:
        lda #$00
        sta PPUADDR
        sta PPUADDR
        lda #$10
        sta PPUADDR
        sta PPUADDR
        rts

; Latch 2 (written inverted), a $C001 reload, the IRQ enabled; irq_count 0.
arm:
        lda #0
        sta irq_count
        lda #$FD
        sta $C000
        sta $C001
        sta $C002
        rts

; The delay probe: two clocks with I set, then, with I clear, the third clock's PPUADDR write on T0
; followed by INX (2 cycles each) from X = 0: the handler keeps X, which counts the INXs run before
; the IRQ was taken.
probe_delay:
        sei
        jsr arm
        jsr clock_a12
        jsr clock_a12
        lda #$00
        sta PPUADDR
        sta PPUADDR
        lda #$10
        sta PPUADDR
        ldx #0
        stx IRQ_X
        cli
        sta PPUADDR
  .repeat 16
        inx
  .endrep
        sei
        lda IRQ_X
        rts

run_checks:
        ; 0: PRG.
        lda #$53
        sta $8000
        lda #$1E
        sta $8001
        lda $8000
        EXPECT 0, $13
        lda $A000
        EXPECT 0, $1E
        lda $C000
        EXPECT 0, 30
        lda $E000
        EXPECT 0, 31

        ; 1: CHR.
        lda #5
        sta $8002
        lda #$3F
        sta $8003
        lda #$40
        sta $A000
        lda #$7F
        sta $A003
        READ_PPU $0000
        EXPECT 1, 10
        READ_PPU $0C00
        EXPECT 1, $7F
        READ_PPU $1000
        EXPECT 1, $40
        READ_PPU $1C00
        EXPECT 1, $7F

        ; 2: mirroring at $E000 (the $53 above set $8000 bit 6: still vertical).
        jsr mirror_probe
        EXPECT 2, 4
        lda ptr
        EXPECT 2, 3
        lda #$40
        sta $E000
        jsr mirror_probe
        EXPECT 2, 2
        lda ptr
        EXPECT 2, 2
        lda #$00
        sta $E000

        ; 3: the counter by hand, the IRQ taken as it comes (I clear).
        jsr arm
        cli
        jsr clock_a12
        jsr clock_a12
        nop
        nop
        lda irq_count
        EXPECT 3, 0
        jsr clock_a12
        nop
        nop
        nop
        nop
        lda irq_count
        EXPECT 3, 1
        jsr clock_a12
        jsr clock_a12
        jsr clock_a12
        nop
        nop
        nop
        nop
        sei
        lda irq_count
        EXPECT 3, 1

        ; 4: the delay, to two cycles: /IRQ rises on T0 + 4, polled at the end of the third INX's
        ; first cycle (T0 + 5), so three INXs run (an MMC3, /IRQ with the clock: one).
        jsr probe_delay
        EXPECT 4, 3

        ; 5: the mask.
        lda #$11
        sta $8004
        lda $8000
        EXPECT 5, $11
        lda #$40
        sta $E004
        jsr mirror_probe
        EXPECT 5, 2
        lda #$00
        sta $E001
        jsr mirror_probe
        EXPECT 5, 2
        lda #$00
        sta $E000
        rts

        IMAGE_END
