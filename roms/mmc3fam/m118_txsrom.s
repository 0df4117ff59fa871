; m118_txsrom.nes: the MMC3 on TKSROM/TLSROM (iNES mapper 118; nesdev "INES Mapper 118"). The MMC3
; ignores PPU A13, so nametable fetches see the CHR bank of the pattern window of the same low address
; bits, and these boards wire its bit 7 (CHR A17) to CIRAM A10: $2000/$2400/$2800/$2C00 take the
; CIRAM page of the register behind $0000/$0400/$0800/$0C00 (R0, R0, R1, R1 with $8000 bit 7 clear;
; R2-R5 with it set), and $A000 does nothing.
; Checks: 0 2 KiB mode, R0 bit 7 set; 1 2 KiB mode, R1 bit 7 set; 2 1 KiB mode, R2-R5 one page each;
; 3 $A000 changes nothing; 4 bit 7 is not a CHR bank bit (1 KiB and 2 KiB registers); 5 PRG banking
; (R6, R7, the fixed banks) as the MMC3's.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 118
SUBMAPPER = 0
PRG_8K = 8
CHR_1K = 128
PRG_RAM_SHIFT = 7
CHR_RAM_SHIFT = 0
MIRROR_V = 0
CHECKS = 6
.include "checks.inc"
.include "mmc3.inc"

; Reads the four nametables' first bytes into the checks' `num` (in order $2000, $2400, $2800,
; $2C00), expecting CIRAM pages p0-p3 (page 0 holds $10, page 1 $11).
.macro NAMETABLES num, p0, p1, p2, p3
        READ_PPU $2000
        EXPECT num, $10 + p0
        READ_PPU $2400
        EXPECT num, $10 + p1
        READ_PPU $2800
        EXPECT num, $10 + p2
        READ_PPU $2C00
        EXPECT num, $10 + p3
.endmacro

run_checks:
        ; Page 1 at $2000 and page 0 at $2400 (1 KiB mode, R2 bit 7 set, R3 clear); tag both.
        BANK $80, 2, $80
        BANK $80, 3, $00
        lda #$11
        WRITE_PPU $2000
        lda #$10
        WRITE_PPU $2400

        BANK $00, 0, $80
        BANK $00, 1, $00
        NAMETABLES 0, 1, 1, 0, 0
        BANK $00, 0, $00
        BANK $00, 1, $80
        NAMETABLES 1, 0, 0, 1, 1
        BANK $80, 2, $00
        BANK $80, 3, $80
        BANK $80, 4, $80
        BANK $80, 5, $00
        NAMETABLES 2, 0, 1, 1, 0
        lda #0
        sta MMC3_MIRROR
        NAMETABLES 3, 0, 1, 1, 0
        lda #1
        sta MMC3_MIRROR
        NAMETABLES 3, 0, 1, 1, 0

        ; 1 KiB mode: R2 = $85 is CHR bank 5 at $0000; R0 = $86 is banks 6-7 at $1000-$17FF.
        BANK $80, 2, $85
        BANK $80, 0, $86
        READ_PPU $0000
        EXPECT 4, 5
        READ_PPU $1000
        EXPECT 4, 6
        READ_PPU $1400
        EXPECT 4, 7
        BANK $80, 2, $7F
        READ_PPU $0000
        EXPECT 4, $7F

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
