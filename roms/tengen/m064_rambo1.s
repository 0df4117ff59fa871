; m064_rambo1.nes: the Tengen RAMBO-1 (iNES mapper 64; nesdev "RAMBO-1"), on asic.inc (the ASIC
; family's image layout, IRQ handler and probe; included through common/, build.sh's include path).
; Checks:
; 0: PRG mode 0 ($8000 bit 6 clear): R6, R7, RF at $8000, $A000, $C000; $E000 the last bank;
; 1: PRG mode 1: RF at $8000, R7 still at $A000, R6 at $C000;
; 2: CHR 2 KiB mode (bit 5 clear): R0 and R1 select 2 KiB banks at $0000/$0800 (bit 0 ignored),
;    R2-R5 1 KiB banks at $1000-$1C00, all eight bits (256 banks);
; 3: CHR 1 KiB mode (bit 5 set): R0, R8, R1, R9 at $0000, $0400, $0800, $0C00;
; 4: CHR A12 inversion (bit 7): those four at $1000-$1C00 and R2-R5 at $0000-$0C00, both modes;
; 5: $A000 bit 0 mirroring (0 vertical, 1 horizontal);
; 6: A12 mode, the counter clocked by hand through PPUADDR (A12 low for 20 M2 cycles, then high):
;    latch 2, $C001: the first clock reloads 2 ORed with 1 = 3, so the fourth clock raises the IRQ,
;    not the third; re-enabled, the next reload takes the latch as it is (2): the seventh clock
;    raises it, not the sixth;
; 7: $E001 does not acknowledge: an IRQ raised with I set is still taken after an $E001 write;
; 8: the A12-mode IRQ's delay: after the clock's PPUADDR write (T0), INX (2 cycles each) from X = 0
;    runs twice before the IRQ is taken: /IRQ rises on the second M2 edge after the A12 rise (an
;    MMC3's, rising with the clock, would stop the run after one INX; the TC0690's, four edges
;    late, after three);
; 9: cycle mode ($C001 bit 0 on T0, which also restarts the prescaler): latch 4 (reloaded as 5) is
;    clocked at T0 + 4, 8, ..., and reaches 0 at the sixth clock, T0 + 24; /IRQ one M2 edge later,
;    T0 + 25: probe delay 20 takes it, 19 does not;
; 10: $E000 acknowledges and disables: after it the IRQ is not taken.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 64
SUBMAPPER = 0
PRG_8K = 32
CHR_1K = 256
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 0
CHECKS = 11

IRQ_X = $0780                   ; X when the IRQ was taken

.macro IRQ_ACK
        stx IRQ_X
        sta $E000
.endmacro

.include "../asic/asic.inc"

; $8001 register `reg` := `value`, keeping the mode bits `mode` of $8000.
.macro SET_REG mode, reg, value
        lda #(mode) | (reg)
        sta $8000
        lda #value
        sta $8001
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

; One rising edge of PPU A12 through PPUADDR (rendering off): $0000, then $1000 after A12 stayed
; low for 20 M2 cycles (more than any filter the wiki describes needs).
clock_a12:
        lda #$00
        sta PPUADDR
        sta PPUADDR
  .repeat 8
        nop
  .endrep
        lda #$10
        sta PPUADDR
        sta PPUADDR
        rts

; A12 mode, latch `latch`, a $C001 reload, the IRQ enabled; irq_count 0.
.macro ARM_A12 latch
        lda #0
        sta irq_count
        sta $E000
        lda #latch
        sta $C000
        lda #0
        sta $C001
        sta $E001
.endmacro

; The delay probe: three clocks with I set (reload 3, 2, 1), then, with I clear, the fourth clock's
; PPUADDR write on T0 followed by INX (2 cycles each) from X = 0: the handler keeps X, which counts
; the INXs run before the IRQ was taken.
probe_delay:
        sei
        ARM_A12 2
        jsr clock_a12
        jsr clock_a12
        jsr clock_a12
        lda #$00
        sta PPUADDR
        sta PPUADDR
  .repeat 8
        nop
  .endrep
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

; The cycle-mode probe: latch 4, $C001 = 1 on T0, the IRQ enabled by the next write (so that no
; clock of a running counter can raise it before T0), then the rest of PROBE_END `delay`.
.macro CYCLE_PROBE delay
        sei
        lda #0
        sta irq_count
        sta $E000
        lda #4
        sta $C000
        lda #1
        sta $C001
        sta $E001
        PROBE_END (delay) - 4
.endmacro

run_checks:
        ; 0: PRG mode 0.
        SET_REG $00, 6, 5
        SET_REG $00, 7, 9
        SET_REG $00, 15, 17
        lda $8000
        EXPECT 0, 5
        lda $A000
        EXPECT 0, 9
        lda $C000
        EXPECT 0, 17
        lda $E000
        EXPECT 0, 31

        ; 1: PRG mode 1.
        lda #$40
        sta $8000
        lda $8000
        EXPECT 1, 17
        lda $A000
        EXPECT 1, 9
        lda $C000
        EXPECT 1, 5
        lda $E000
        EXPECT 1, 31

        ; 2: CHR, 2 KiB mode.
        SET_REG $00, 0, $21
        SET_REG $00, 1, $40
        SET_REG $00, 2, $80
        SET_REG $00, 3, $81
        SET_REG $00, 4, $C2
        SET_REG $00, 5, $FF
        SET_REG $00, 8, $33
        SET_REG $00, 9, $55
        READ_PPU $0000
        EXPECT 2, $20
        READ_PPU $0400
        EXPECT 2, $21
        READ_PPU $0800
        EXPECT 2, $40
        READ_PPU $0C00
        EXPECT 2, $41
        READ_PPU $1000
        EXPECT 2, $80
        READ_PPU $1400
        EXPECT 2, $81
        READ_PPU $1800
        EXPECT 2, $C2
        READ_PPU $1C00
        EXPECT 2, $FF

        ; 3: CHR, 1 KiB mode.
        lda #$20
        sta $8000
        READ_PPU $0000
        EXPECT 3, $21
        READ_PPU $0400
        EXPECT 3, $33
        READ_PPU $0800
        EXPECT 3, $40
        READ_PPU $0C00
        EXPECT 3, $55
        READ_PPU $1000
        EXPECT 3, $80

        ; 4: the inversion, 1 KiB mode then 2 KiB mode.
        lda #$A0
        sta $8000
        READ_PPU $1000
        EXPECT 4, $21
        READ_PPU $1400
        EXPECT 4, $33
        READ_PPU $1800
        EXPECT 4, $40
        READ_PPU $1C00
        EXPECT 4, $55
        READ_PPU $0000
        EXPECT 4, $80
        READ_PPU $0C00
        EXPECT 4, $FF
        lda #$80
        sta $8000
        READ_PPU $1000
        EXPECT 4, $20
        READ_PPU $1400
        EXPECT 4, $21
        READ_PPU $1C00
        EXPECT 4, $41
        lda #$00
        sta $8000

        ; 5: mirroring.
        lda #0
        sta $A000
        jsr mirror_probe
        EXPECT 5, 4
        lda ptr
        EXPECT 5, 3
        lda #1
        sta $A000
        jsr mirror_probe
        EXPECT 5, 2
        lda ptr
        EXPECT 5, 2
        lda #0
        sta $A000

        ; 6: the counter by hand, the IRQ taken as it comes (I clear); the handler disables it.
        ARM_A12 2
        cli
        jsr clock_a12
        jsr clock_a12
        jsr clock_a12
        nop
        nop
        lda irq_count
        EXPECT 6, 0
        jsr clock_a12
        nop
        nop
        nop
        nop
        lda irq_count
        EXPECT 6, 1
        sta $E001
        jsr clock_a12
        jsr clock_a12
        nop
        nop
        nop
        nop
        lda irq_count
        EXPECT 6, 1
        jsr clock_a12
        nop
        nop
        nop
        nop
        sei
        lda irq_count
        EXPECT 6, 2

        ; 7: raised with I set (latch 1: reload 1, then 0), $E001, then I clear: taken.
        ARM_A12 1
        jsr clock_a12
        jsr clock_a12
        nop
        nop
        sta $E001
        cli
        nop
        nop
        sei
        lda irq_count
        EXPECT 7, 1

        ; 8: the delay.
        jsr probe_delay
        EXPECT 8, 2

        ; 9: cycle mode.
        CYCLE_PROBE 20
        EXPECT 9, 1
        CYCLE_PROBE 19
        EXPECT 9, 0

        ; 10: $E000 (the IRQ of the last probe is asserted now): not taken after it.
        lda #0
        sta irq_count
        sta $E000
        cli
        nop
        nop
        sei
        lda irq_count
        EXPECT 10, 0
        ; Back to A12 mode, disabled.
        lda #0
        sta $C001
        rts

        IMAGE_END
