; m095_namcot3425.nes: the Namco 108 on NAMCOT-3425 (iNES mapper 95; nesdev "INES Mapper 095"): CHR
; A15, bit 5 of R0 and R1, also drives CIRAM A10: R0 picks the page of $2000-$27FF, R1 of
; $2800-$2FFF. 32 KiB of CHR ROM, as on Dragon Buster.
; Checks: 0 R6, R7 and the fixed banks; 1 no PRG mode bit, no registers at $A000-$FFFF; 2 R0 bit 5
; set, R1 clear; 3 R0 clear, R1 set; 4 R2-R5 (bit 5 in them) do not touch the nametables.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 95
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 32
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
CHECKS = 5
PRG_CHECK = 0
.include "checks.inc"
.include "mmc3.inc"
.include "namco108.inc"

; Reads the four nametables' first bytes for check `num`, expecting pages p0-p3 (page 0 holds $10,
; page 1 $11).
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
        NAMCO_PRG_CHECKS
        BANK $00, 0, $20
        BANK $00, 1, $00
        lda #$11
        WRITE_PPU $2000
        lda #$10
        WRITE_PPU $2800
        NAMETABLES 2, 1, 1, 0, 0
        BANK $00, 0, $02
        BANK $00, 1, $22
        NAMETABLES 3, 0, 0, 1, 1
        BANK $00, 2, $20
        BANK $00, 3, $20
        BANK $00, 4, $00
        BANK $00, 5, $3F
        NAMETABLES 4, 0, 0, 1, 1
        rts

        IMAGE_END
