; m113_nina06.nes: the HES wiring of NINA-03/06 (iNES mapper 113; nesdev "INES Mapper 113"): the
; register at $4100-$5FFF (A8 set): bits 3-5 the 32 KiB PRG bank, bits 0-2 and 6 the 8 KiB CHR
; bank, bit 7 the mirroring (0 horizontal, 1 vertical). Checks: 0 PRG; 1 CHR (bit 6 as bit 3);
; 2 mirroring. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 113
SUBMAPPER = 0
PRG_8K = 32
CHR_1K = 128
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 0
HOME_VALUE = $38
HOME_ADDR = $4100
CHECKS = 3
.include "discrete.inc"

vectors:
        VECTOR 0, $4100, $00, 0, 1, 2, 3, 0, 7
        VECTOR 0, $4100, $28, 20, 21, 22, 23, 0, 7
        VECTOR 0, $4100, $38, 28, 29, 30, 31, 0, 7
        VECTOR 1, $4100, $45, 0, 1, 2, 3, 104, 111
        VECTOR 1, $4100, $07, 0, 1, 2, 3, 56, 63
        VECTOR 1, $4100, $40, 0, 1, 2, 3, 64, 71
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
        lda #HOME_VALUE | $80
        sta $4100
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
        EXPECT 2, $BB
        lda #$28
        jsr read_nametable
        EXPECT 2, $AA
        lda #HOME_VALUE
        sta $4100
        lda #$24
        jsr read_nametable
        EXPECT 2, $AA
        lda #$28
        jsr read_nametable
        EXPECT 2, $BB
        rts

        IMAGE_END
