; m018_ss88006.nes: the Jaleco SS 88006 (iNES mapper 18; nesdev "INES Mapper 018"), on asic.inc.
; Every 8-bit register is two nibbles at a pair of addresses (low nibble first). Checks:
; 0: $8000/1, $8002/3, $9000/1 select the 8 KiB banks at $8000, $A000, $C000 (both nibbles: banks
;    $13, $1E, $07); $E000 holds the last bank (31);
; 1: $A000/1 ... $D002/3 select the eight 1 KiB CHR banks (both nibbles: $07, $16, ... $70);
; 2: $F002 mirroring: 0 horizontal, 1 vertical, 2 single-screen page 0, 3 page 1;
; 3: $9002 PRG RAM: 3 read and write, 1 read-only (the write is lost), 0 disabled (open bus: $60);
; 4: 16-bit counter ($F001 = 1): reload $0014 asserts /IRQ on the 21st cycle after the enabling
;    write (probe delay 16 takes it, 15 does not); reload $1014 not within the probe;
; 5: 12-bit ($F001 = 3): reload $F014 counts only $014: delay 16 takes it, 15 does not;
; 6: 8-bit ($F001 = 5): reload $F10E counts $0E: delay 10 takes it, 9 does not;
; 7: 4-bit ($F001 = 9): reload $12F7 counts 7: delay 3 takes it, 2 does not;
; 8: a write to $F001 acknowledges (and here disables): an IRQ asserted before it is not taken;
;    disabled, the counter holds.
; The probe arms with $F000 (reload), then $F001 (enable) on cycle T0 (asic.inc); the handler
; acknowledges and disables with $F001 = 0. After the checks the 16-bit counter runs from $FFFF
; (I set). Licence: MIT OR Apache-2.0 (ours).
MAPPER = 18
SUBMAPPER = 0
PRG_8K = 32
CHR_1K = 128
PRG_RAM_SHIFT = 7               ; 8 KiB
CHR_RAM_SHIFT = 0
MIRROR_V = 1
CHECKS = 9

.macro IRQ_ACK
        lda #0
        sta $F001
.endmacro

.include "asic.inc"

; Writes `value` to the nibble pair at `addr`.
.macro SET addr, value
        lda #<(value)
        sta addr
        lsr
        lsr
        lsr
        lsr
        sta addr+1
.endmacro

; The IRQ probe: reload `reload`, control `control` written on T0, then PROBE_END `delay`.
.macro PROBE reload, control, delay
        sei
        lda #0
        sta irq_count
        sta $F001
        lda #<(reload)
        sta $E000
        lsr
        lsr
        lsr
        lsr
        sta $E001
        lda #>(reload)
        sta $E002
        lsr
        lsr
        lsr
        lsr
        sta $E003
        sta $F000
        lda #control
        sta $F001
        PROBE_END delay
.endmacro

; Writes 1, 2, 3, 4 to the first byte of the four nametables and reads back $2000 and $2400.
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
        ; 0: PRG.
        SET $8000, $13
        SET $8002, $1E
        SET $9000, $07
        lda $8000
        EXPECT 0, $13
        lda $A000
        EXPECT 0, $1E
        lda $C000
        EXPECT 0, $07
        lda $E000
        EXPECT 0, 31

        ; 1: CHR.
        SET $A000, $07
        SET $A002, $16
        SET $B000, $25
        SET $B002, $34
        SET $C000, $43
        SET $C002, $52
        SET $D000, $61
        SET $D002, $70
.repeat 8, window
        READ_PPU window * $400
        EXPECT 1, $07 + window * $0F
.endrep

        ; 2: mirroring. Horizontal: $2000 and $2400 share page 0 (2, 2); vertical: 3, 4.
        lda #0
        sta $F002
        jsr mirror_probe
        EXPECT 2, 2
        lda ptr
        EXPECT 2, 2
        lda #1
        sta $F002
        jsr mirror_probe
        EXPECT 2, 4
        lda ptr
        EXPECT 2, 3
        ; Single-screen: $55 through page 0, $AA through page 1, read back in vertical mode.
        lda #2
        sta $F002
        lda #$55
        WRITE_PPU $2C00
        lda #3
        sta $F002
        lda #$AA
        WRITE_PPU $2000
        lda #1
        sta $F002
        READ_PPU $2000
        EXPECT 2, $55
        READ_PPU $2400
        EXPECT 2, $AA

        ; 3: PRG RAM.
        lda #3
        sta $9002
        lda #$A5
        sta $6000
        lda #$5A
        sta $7FFF
        lda $6000
        EXPECT 3, $A5
        lda $7FFF
        EXPECT 3, $5A
        lda #1
        sta $9002
        lda #$11
        sta $6000
        lda $6000
        EXPECT 3, $A5
        lda #0
        sta $9002
        lda $6000
        EXPECT 3, $60

        ; 4-7: the counter widths.
        PROBE $0014, $01, 15
        EXPECT 4, 0
        PROBE $0014, $01, 16
        EXPECT 4, 1
        PROBE $1014, $01, 16
        EXPECT 4, 0
        PROBE $F014, $03, 15
        EXPECT 5, 0
        PROBE $F014, $03, 16
        EXPECT 5, 1
        PROBE $F10E, $05, 9
        EXPECT 6, 0
        PROBE $F10E, $05, 10
        EXPECT 6, 1
        PROBE $12F7, $09, 2
        EXPECT 7, 0
        PROBE $12F7, $09, 3
        EXPECT 7, 1

        ; 8: reload 0 in 4-bit mode asserts /IRQ one cycle after the enable; the $F001 write that
        ; disables the counter acknowledges it before the CLI.
        PROBE $0000, $09, 2
        EXPECT 8, 1
        sei
        lda #0
        sta irq_count
        sta $E000
        sta $F000
        lda #$09
        sta $F001
        nop
        lda #0
        sta $F001
        cli
        nop
        sei
        lda irq_count
        EXPECT 8, 0

        ; Left running (16 bits from $FFFF, I set): the counter the lazy schedule owes across frames.
        lda #$0F
        sta $E000
        sta $E001
        sta $E002
        sta $E003
        sta $F000
        lda #1
        sta $F001
        rts

        IMAGE_END
