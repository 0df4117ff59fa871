; m089_sunsoft2.nes: Sunsoft-2 on the Sunsoft-3 board (iNES mapper 89; nesdev "INES Mapper 089")
; on the discrete-board engine (roms/discrete/discrete.inc): a write to $8000-$FFFF, `CPPP MCCC`:
; P the 16 KiB bank at $8000 ($C000 holds the last), C (bit 7 high) the 8 KiB CHR bank, M the
; single-screen page; bus conflicts. Checks: 0 PRG; 1 CHR with bit 7; 2 single-screen pages; 3 the
; bus conflict. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 89
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 128
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
HOME_VALUE = $00
HOME_ADDR = $8100 + HOME_VALUE
CHECKS = 4
.include "../discrete/discrete.inc"

vectors:
        VECTOR 0, CONFLICT_FREE($8000, $00), $00, 0, 1, 14, 15, 0, 7
        VECTOR 0, CONFLICT_FREE($8000, $30), $30, 6, 7, 14, 15, 0, 7
        VECTOR 0, CONFLICT_FREE($A000, $60), $60, 12, 13, 14, 15, 0, 7
        VECTOR 1, CONFLICT_FREE($8000, $05), $05, 0, 1, 14, 15, 40, 47
        VECTOR 1, CONFLICT_FREE($8000, $80), $80, 0, 1, 14, 15, 64, 71
        VECTOR 1, CONFLICT_FREE($C000, $97), $97, 2, 3, 14, 15, 120, 127
        VECTOR 3, CONFLICT_FREE($8000, $21), $FF, 4, 5, 14, 15, 8, 15
        .byte $FF

; A = the byte at nametable address (A << 8).
read_nametable:
        sta PPUADDR
        lda #0
        sta PPUADDR
        lda PPUDATA
        lda PPUDATA
        rts

; M clear: every nametable is CIRAM page 0: a marker written at $2000 reads at $2400-$2C00. M set:
; page 1: a marker at $2C00 reads at $2000, and page 0's marker is gone.
extra_checks:
        lda #$00
        sta $8100
        lda #$20
        sta PPUADDR
        lda #0
        sta PPUADDR
        lda #$AA
        sta PPUDATA
        lda #$24
        jsr read_nametable
        EXPECT 2, $AA
        lda #$2C
        jsr read_nametable
        EXPECT 2, $AA
        lda #$08
        sta $8108
        lda #$2C
        sta PPUADDR
        lda #0
        sta PPUADDR
        lda #$BB
        sta PPUDATA
        lda #$20
        jsr read_nametable
        EXPECT 2, $BB
        lda #$00
        sta $8100
        lda #$28
        jsr read_nametable
        EXPECT 2, $AA
        rts

        IMAGE_END
