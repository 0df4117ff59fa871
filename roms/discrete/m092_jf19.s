; m092_jf19.nes: Jaleco JF-19 (iNES mapper 92; nesdev "INES Mapper 092", "INES Mapper 072"): one
; register at $8000-$FFFF, PC.. DDDD, with bus conflicts; a rising edge of bit 7 latches D as the
; 16 KiB PRG bank at $C000 ($8000 holds the first), a rising edge of bit 6 latches D as the 8 KiB
; CHR bank. The home write is $00 then $8F (a rising edge of bit 7: bank 15 at $C000), so every
; vector follows a write with bit 7 high and bit 6 low. Checks: 0 bit 6 rising latches CHR; 1 bit
; 7 high without an edge latches nothing; 2 bit 7 rising latches PRG (run from RAM); 3 the bus
; conflict (bit 7 ANDed away: no edge). Licence: MIT OR Apache-2.0 (ours).
MAPPER = 92
SUBMAPPER = 0
PRG_8K = 32
CHR_1K = 128
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
HOME_PRE_VALUE = $00
HOME_VALUE = $8F
HOME_ADDR = $8100 + HOME_VALUE
CHECKS = 4
RAM_EDGES = $0380
.include "discrete.inc"

vectors:
        VECTOR 0, CONFLICT_FREE($8000, $4A), $4A, 0, 1, 30, 31, 80, 87
        VECTOR 0, CONFLICT_FREE($8000, $45), $45, 0, 1, 30, 31, 40, 47
        VECTOR 1, CONFLICT_FREE($8000, $85), $85, 0, 1, 30, 31, 40, 47
        VECTOR 1, CONFLICT_FREE($8000, $83), $83, 0, 1, 30, 31, 40, 47
        VECTOR 0, CONFLICT_FREE($8000, $C6), $C6, 0, 1, 30, 31, 48, 55
        .byte $FF

extra_checks:
        ldx #ram_edges_end - RAM_EDGES - 1
:       lda ram_edges_image,x
        sta RAM_EDGES,x
        dex
        bpl :-
        jsr RAM_EDGES
        lda seen
        EXPECT 2, 20
        lda seen+1
        EXPECT 1, 20
        lda seen+2
        EXPECT 0, 88
        lda seen+3
        EXPECT 3, 20
        rts

; $00 then $8A (PRG 10); $CB (CHR 11, PRG kept); $00 then $8D written where the ROM holds $0D
; (bit 7 lost: PRG kept); then home.
ram_edges_image:
        .org RAM_EDGES
        lda #$00
        sta $8100
        lda #$8A
        sta $818A
        lda $C000
        sta seen
        lda #$CB
        sta $81CB
        lda $C000
        sta seen+1
        READ_CHR $00, $00
        sta seen+2
        lda #$00
        sta $8100
        lda #$8D
        sta $810D
        lda $C000
        sta seen+3
        lda #HOME_PRE_VALUE
        sta HOME_ADDR
        lda #HOME_VALUE
        sta HOME_ADDR
        rts
ram_edges_end:
        .org ram_edges_image + (ram_edges_end - RAM_EDGES)

        IMAGE_END
