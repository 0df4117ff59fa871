; m152_bandai.nes: Bandai's discrete board with one-screen mirroring (iNES mapper 152; nesdev
; "INES Mapper 152"): a write to $8000-$FFFF, MPPP CCCC, selects the 16 KiB PRG bank at $8000 (3
; bits), the 8 KiB CHR bank and the CIRAM page shown in all four nametables (M); the last 16 KiB is
; fixed at $C000; bus conflicts. Checks: 0 PRG and CHR banks (bit 7 not a PRG bit); 1 the bus
; conflict; 2 the one-screen page. The check engine is roms/discrete/discrete.inc.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 152
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 128
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
HOME_VALUE = 0
HOME_ADDR = $8100 + HOME_VALUE
CHECKS = 3
.include "../discrete/discrete.inc"

vectors:
        VECTOR 0, CONFLICT_FREE($8000, $00), $00, 0, 1, 14, 15, 0, 7
        VECTOR 0, CONFLICT_FREE($8000, $35), $35, 6, 7, 14, 15, 40, 47
        VECTOR 0, CONFLICT_FREE($8000, $70), $70, 14, 15, 14, 15, 0, 7
        VECTOR 0, CONFLICT_FREE($8000, $F2), $F2, 14, 15, 14, 15, 16, 23
        VECTOR 0, CONFLICT_FREE($8000, $0F), $0F, 0, 1, 14, 15, 120, 127
        ; $FF written where the ROM holds $35: the board sees $35.
        VECTOR 1, CONFLICT_FREE($8000, $35), $FF, 6, 7, 14, 15, 40, 47
        .byte $FF

; A = the byte at nametable address (A << 8).
read_nametable:
        sta PPUADDR
        lda #0
        sta PPUADDR
        lda PPUDATA
        lda PPUDATA
        rts

; Writes A at nametable address $2000.
write_2000:
        ldx #$20
        stx PPUADDR
        ldx #0
        stx PPUADDR
        sta PPUDATA
        rts

; $AA into page A (M = 0) and $BB into page B (M = 1), each through $2000; then every nametable
; shows the selected page: page B at $2C00 and $2400, page A at $2800.
extra_checks:
        lda #$00
        sta $8100
        lda #$AA
        jsr write_2000
        lda #$80
        sta $8180
        lda #$BB
        jsr write_2000
        lda #$2C
        jsr read_nametable
        EXPECT 2, $BB
        lda #$24
        jsr read_nametable
        EXPECT 2, $BB
        lda #$00
        sta $8100
        lda #$28
        jsr read_nametable
        EXPECT 2, $AA
        lda #$2C
        jsr read_nametable
        EXPECT 2, $AA
        rts

        IMAGE_END
