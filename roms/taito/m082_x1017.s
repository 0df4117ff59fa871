; m082_x1017.nes: the Taito X1-017 (iNES mapper 82; nesdev "Taito X1-017", the RAM enables from the
; board tracing in the nesdev forum thread on the X1-005 and X1-017), on the ASIC board engine
; (roms/asic/asic.inc). 8 KiB of battery-backed PRG RAM in the header, of which the chip uses 5.
; Checks:
; 0: $7EFA/$7EFB/$7EFC select the 8 KiB banks at $8000/$A000/$C000 by bits 2-5; $E000 holds the last;
; 1: CHR mode 0: $7EF0/$7EF1 2 KiB banks at $0000/$0800 (low bit ignored), $7EF2-$7EF5 1 KiB banks
;    at $1000-$1C00;
; 2: CHR mode 1 ($7EF6 bit 1): the 1 KiB banks at $0000-$0C00, the 2 KiB banks at $1000/$1800;
; 3: $7EF6 bit 0 mirroring: 0 horizontal, 1 vertical;
; 4: $7EF7 = $CA enables $6000-$67FF; any other value disables it: reads 0 (the chip's pull-downs,
;    not open bus), writes lost;
; 5: $7EF8 = $69 enables $6800-$6FFF (and $CA does not);
; 6: $7EF9 = $84 enables $7000-$73FF; $7400-$7FFF and the registers read 0;
; 7: the three regions are 5 KiB of distinct RAM.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 82
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 256
PRG_RAM_SHIFT = $70
CHR_RAM_SHIFT = 0
MIRROR_V = 0
CHECKS = 8

.macro IRQ_ACK
.endmacro

.include "../asic/asic.inc"

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
        ; 0: PRG.
        lda #(3 << 2)
        sta $7EFA
        lda #(9 << 2) | 3
        sta $7EFB
        lda #$C0 | (12 << 2)
        sta $7EFC
        lda $8000
        EXPECT 0, 3
        lda $A000
        EXPECT 0, 9
        lda $C000
        EXPECT 0, 12
        lda $E000
        EXPECT 0, 15

        ; 1: CHR mode 0.
        lda #0
        sta $7EF6
        lda #$85
        sta $7EF0
        lda #$21
        sta $7EF1
        lda #$40
        sta $7EF2
        lda #$9A
        sta $7EF3
        lda #$C3
        sta $7EF4
        lda #$FF
        sta $7EF5
        READ_PPU $0000
        EXPECT 1, $84
        READ_PPU $0400
        EXPECT 1, $85
        READ_PPU $0800
        EXPECT 1, $20
        READ_PPU $0C00
        EXPECT 1, $21
        READ_PPU $1000
        EXPECT 1, $40
        READ_PPU $1400
        EXPECT 1, $9A
        READ_PPU $1800
        EXPECT 1, $C3
        READ_PPU $1C00
        EXPECT 1, $FF

        ; 2: CHR mode 1.
        lda #2
        sta $7EF6
        READ_PPU $0000
        EXPECT 2, $40
        READ_PPU $0400
        EXPECT 2, $9A
        READ_PPU $0800
        EXPECT 2, $C3
        READ_PPU $0C00
        EXPECT 2, $FF
        READ_PPU $1000
        EXPECT 2, $84
        READ_PPU $1400
        EXPECT 2, $85
        READ_PPU $1800
        EXPECT 2, $20
        READ_PPU $1C00
        EXPECT 2, $21

        ; 3: mirroring.
        lda #2
        sta $7EF6
        jsr mirror_probe
        EXPECT 3, 2
        lda ptr
        EXPECT 3, 2
        lda #3
        sta $7EF6
        jsr mirror_probe
        EXPECT 3, 4
        lda ptr
        EXPECT 3, 3
        READ_PPU $1000
        EXPECT 3, $84

        ; 4: $6000-$67FF.
        lda #$CA
        sta $7EF7
        lda #$11
        sta $6000
        lda #$12
        sta $67FF
        lda $6000
        EXPECT 4, $11
        lda $67FF
        EXPECT 4, $12
        lda #$CB
        sta $7EF7
        lda $6000
        EXPECT 4, 0
        lda #$99
        sta $6000
        lda #$CA
        sta $7EF7
        lda $6000
        EXPECT 4, $11

        ; 5: $6800-$6FFF.
        lda #$CA
        sta $7EF8
        lda $6800
        EXPECT 5, 0
        lda #$69
        sta $7EF8
        lda #$21
        sta $6800
        lda #$22
        sta $6FFF
        lda $6800
        EXPECT 5, $21
        lda $6FFF
        EXPECT 5, $22

        ; 6: $7000-$73FF; 0 above.
        lda #$84
        sta $7EF9
        lda #$31
        sta $7000
        lda #$32
        sta $73FF
        lda $7000
        EXPECT 6, $31
        lda $73FF
        EXPECT 6, $32
        lda $7400
        EXPECT 6, 0
        lda $7EF9
        EXPECT 6, 0
        lda $7FFF
        EXPECT 6, 0

        ; 7: 5 KiB of distinct RAM: each region kept its own bytes.
        lda $6000
        EXPECT 7, $11
        lda $6800
        EXPECT 7, $21
        lda $7000
        EXPECT 7, $31
        lda $67FF
        EXPECT 7, $12
        lda $6FFF
        EXPECT 7, $22
        rts

        IMAGE_END
