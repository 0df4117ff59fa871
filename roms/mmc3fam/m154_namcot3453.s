; m154_namcot3453.nes: the Namco 108 on NAMCOT-3453 (iNES mapper 154; nesdev "INES Mapper 154"):
; mapper 88's CHR wiring, and bit 6 of any write to $8000-$FFFF selects single-screen mirroring
; (0: page 0, 1: page 1).
; Checks: 0 R6, R7 and the fixed banks; 1 no PRG mode bit, no registers at $A000-$FFFF; 2 CHR as on
; mapper 88; 3 bit 6 set: page 1 everywhere; 4 bit 6 clear (written at $C000): page 0 everywhere.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 154
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 128
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
CHECKS = 5
PRG_CHECK = 0
.include "checks.inc"
.include "mmc3.inc"
.include "namco108.inc"

run_checks:
        NAMCO_PRG_CHECKS
        BANK $00, 0, $3E
        BANK $00, 2, 0
        READ_PPU $0000
        EXPECT 2, 62
        READ_PPU $1000
        EXPECT 2, 64
        ; Tag page 1 through $2000, page 0 through $2C00.
        lda #$40
        sta $E000
        lda #$11
        WRITE_PPU $2000
        lda #$00
        sta $C000
        lda #$10
        WRITE_PPU $2C00
        lda #$40
        sta $A001
        READ_PPU $2400
        EXPECT 3, $11
        READ_PPU $2800
        EXPECT 3, $11
        lda #$00
        sta $C000
        READ_PPU $2000
        EXPECT 4, $10
        READ_PPU $2C00
        EXPECT 4, $10
        rts

        IMAGE_END
