; m033_tc0190.nes: the Taito TC0190 (iNES mapper 33; nesdev "INES Mapper 033"), on asic.inc.
; Checks:
; 0: $8000 bits 0-5 and $8001 select the 8 KiB banks at $8000 and $A000 ($13, $1E); $C000 and $E000
;    hold the last two (30, 31);
; 1: $8002/$8003 select 2 KiB CHR banks counted in 2 KiB (value 5: 1 KiB banks 10, 11), $A000-$A003
;    the 1 KiB banks at $1000-$1C00;
; 2: $8000 bit 6 mirroring: 0 vertical, 1 horizontal (bank bits unchanged);
; 3: decoding with mask $A003: $9FFE is $8002, $BFFD $A001, $C001 $8001, $E002 $A002.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 33
SUBMAPPER = 0
PRG_8K = 32
CHR_1K = 128
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 0
CHECKS = 4

.macro IRQ_ACK
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

run_checks:
        ; 0: PRG.
        lda #$13
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
        lda #$51
        sta $A001
        lda #$62
        sta $A002
        lda #$7F
        sta $A003
        READ_PPU $0000
        EXPECT 1, 10
        READ_PPU $0400
        EXPECT 1, 11
        READ_PPU $0800
        EXPECT 1, $7E
        READ_PPU $0C00
        EXPECT 1, $7F
        READ_PPU $1000
        EXPECT 1, $40
        READ_PPU $1400
        EXPECT 1, $51
        READ_PPU $1800
        EXPECT 1, $62
        READ_PPU $1C00
        EXPECT 1, $7F

        ; 2: mirroring.
        lda #$13
        sta $8000
        jsr mirror_probe
        EXPECT 2, 4
        lda ptr
        EXPECT 2, 3
        lda #$53
        sta $8000
        jsr mirror_probe
        EXPECT 2, 2
        lda ptr
        EXPECT 2, 2
        lda $8000
        EXPECT 2, $13

        ; 3: the decoding mask.
        lda #7
        sta $9FFE
        READ_PPU $0000
        EXPECT 3, 14
        lda #$21
        sta $BFFD
        READ_PPU $1400
        EXPECT 3, $21
        lda #9
        sta $C001
        lda $A000
        EXPECT 3, 9
        lda #$33
        sta $E002
        READ_PPU $1800
        EXPECT 3, $33
        rts

        IMAGE_END
