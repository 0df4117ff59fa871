; m075_vrc1.nes: Konami VRC1 (iNES mapper 75; nesdev "VRC1"): 8 KiB PRG banks at $8000, $A000,
; $C000 (4 bits; $E000 the last), 4 KiB CHR banks at $0000 and $1000 (low 4 bits at $E000 and
; $F000, bit 4 in $9000 bits 1 and 2), $9000 bit 0 the mirroring (0 vertical, 1 horizontal). The
; chip decodes A12-A15 only. Checks: 0 the $8000 register; 1 $A000 and $C000 (any address of the
; page); 2 the CHR registers' low bits; 3 the high bits in $9000; 4 mirroring.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 75
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 128
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
HOME_VALUE = 0
HOME_ADDR = $8000
CHECKS = 5
.include "../discrete/discrete.inc"

; CHR bytes: 1 KiB bank n is all n; PPU $0000 shows 4 KiB bank b's first (4b), $1C05 its last (4b + 3).
vectors:
        VECTOR 0, $8000, $05, 5, 0, 0, 15, 0, 3
        VECTOR 0, $8FFF, $0F, 15, 0, 0, 15, 0, 3
        VECTOR 0, $8000, $1A, 10, 0, 0, 15, 0, 3
        VECTOR 1, $A000, $07, 0, 7, 0, 15, 0, 3
        VECTOR 1, $C555, $0C, 0, 7, 12, 15, 0, 3
        VECTOR 1, $AFFF, $03, 0, 3, 12, 15, 0, 3
        VECTOR 2, $E000, $05, 0, 3, 12, 15, 20, 3
        VECTOR 2, $F000, $0A, 0, 3, 12, 15, 20, 43
        VECTOR 3, $9000, $02, 0, 3, 12, 15, 84, 43
        VECTOR 3, $9000, $04, 0, 3, 12, 15, 20, 107
        VECTOR 3, $9000, $06, 0, 3, 12, 15, 84, 107
        .byte $FF

; A = the byte at nametable address (A << 8).
read_nametable:
        sta PPUADDR
        lda #0
        sta PPUADDR
        lda PPUDATA
        lda PPUDATA
        rts

; Markers $AA at $2000 and $BB at $2400 in vertical mirroring (CIRAM pages 0 and 1), then: vertical
; reads them back at $2800 and $2C00 too, horizontal reads $AA at $2400 and $BB at $2800.
extra_checks:
        lda #0
        sta $9000
        lda #$20
        sta PPUADDR
        lda #0
        sta PPUADDR
        lda #$AA
        sta PPUDATA
        lda #$24
        sta PPUADDR
        lda #0
        sta PPUADDR
        lda #$BB
        sta PPUDATA
        lda #$2C
        jsr read_nametable
        EXPECT 4, $BB
        lda #$28
        jsr read_nametable
        EXPECT 4, $AA
        lda #1
        sta $9000
        lda #$24
        jsr read_nametable
        EXPECT 4, $AA
        lda #$28
        jsr read_nametable
        EXPECT 4, $BB
        rts

        IMAGE_END
