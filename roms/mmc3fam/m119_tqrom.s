; m119_tqrom.nes: the MMC3 on TQROM (iNES mapper 119; nesdev "INES Mapper 119"): 64 KiB of CHR ROM
; and 8 KiB of CHR RAM; bit 6 of a CHR bank selects the RAM (bits 0-2 its 1 KiB bank) or the ROM
; (bits 0-5).
; Checks: 0 ROM banks through a 1 KiB register; 1 RAM banks hold what was written, each its own;
; 2 bits 3-5 do not address the RAM; 3 the ROM ignores writes; 4 a 2 KiB register maps RAM banks
; 0-1 (its low bit ignored); 5 PRG banking as the MMC3's.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 119
SUBMAPPER = 0
PRG_8K = 8
CHR_1K = 64
PRG_RAM_SHIFT = 7
CHR_RAM_SHIFT = 7
MIRROR_V = 1
CHECKS = 6
.include "checks.inc"
.include "mmc3.inc"

run_checks:
        ; $8000 bit 7 clear: R2 is the 1 KiB bank at $1000, R0 the 2 KiB bank at $0000.
        BANK $00, 2, 5
        READ_PPU $1000
        EXPECT 0, 5
        BANK $00, 2, $3F
        READ_PPU $1000
        EXPECT 0, $3F

        BANK $00, 2, $40
        lda #$5A
        WRITE_PPU $1000
        BANK $00, 2, $41
        lda #$A5
        WRITE_PPU $1000
        BANK $00, 2, $40
        READ_PPU $1000
        EXPECT 1, $5A
        BANK $00, 2, $41
        READ_PPU $1000
        EXPECT 1, $A5

        BANK $00, 2, $78
        READ_PPU $1000
        EXPECT 2, $5A
        BANK $00, 2, $79
        READ_PPU $1000
        EXPECT 2, $A5

        BANK $00, 2, 9
        lda #$FF
        WRITE_PPU $1000
        READ_PPU $1000
        EXPECT 3, 9

        BANK $00, 0, $41
        READ_PPU $0000
        EXPECT 4, $5A
        READ_PPU $0400
        EXPECT 4, $A5

        BANK $00, 6, 3
        BANK $00, 7, 5
        lda $8000
        EXPECT 5, 3
        lda $A000
        EXPECT 5, 5
        lda $C000
        EXPECT 5, PRG_8K - 2
        lda $E000
        EXPECT 5, PRG_8K - 1
        rts

        IMAGE_END
