; m206_dxrom.nes: the Namco 108 on DxROM (iNES mapper 206; nesdev "INES Mapper 206"): $8000/$8001
; (A0 decoded, up to $9FFF) select and write R0-R7; R0-R1 2 KiB CHR banks at $0000/$0800 (bits 1-5),
; R2-R5 1 KiB CHR banks at $1000-$1FFF (bits 0-5); mirroring as the header says (vertical here).
; Checks: 0 R6, R7 and the fixed banks; 1 no PRG mode bit, no registers at $A000-$FFFF; 2 R0-R1 (low
; bit ignored); 3 R2-R5 (6 bits); 4 $9FFE/$9FFF decode as $8000/$8001; 5 the header's vertical
; mirroring. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 206
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 64
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
CHECKS = 6
PRG_CHECK = 0
.include "checks.inc"
.include "mmc3.inc"
.include "namco108.inc"

run_checks:
        NAMCO_PRG_CHECKS
        BANK $00, 0, $0B
        BANK $00, 1, $FF
        READ_PPU $0000
        EXPECT 2, 10
        READ_PPU $0400
        EXPECT 2, 11
        READ_PPU $0800
        EXPECT 2, 62
        READ_PPU $0C00
        EXPECT 2, 63
        BANK $00, 2, 1
        BANK $00, 3, $3F
        BANK $00, 4, $20
        BANK $00, 5, $7F
        READ_PPU $1000
        EXPECT 3, 1
        READ_PPU $1400
        EXPECT 3, 63
        READ_PPU $1800
        EXPECT 3, 32
        READ_PPU $1C00
        EXPECT 3, 63
        lda #$FA                ; bits 3-7 of the select are ignored: R2
        sta $9FFE
        lda #9
        sta $9FFF
        READ_PPU $1000
        EXPECT 4, 9
        lda #$11
        WRITE_PPU $2000
        lda #$22
        WRITE_PPU $2400
        READ_PPU $2800
        EXPECT 5, $11
        READ_PPU $2C00
        EXPECT 5, $22
        rts

        IMAGE_END
