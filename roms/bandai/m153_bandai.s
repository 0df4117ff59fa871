; m153_bandai.nes: Bandai LZ93D50 with SRAM (iNES mapper 153; nesdev "INES Mapper 153"): 512 KiB of
; PRG, bit 0 of the CHR registers $8000-$8003 is PRG A18 (the 256 KiB half both windows use),
; $8008 the 16 KiB bank at $8000, the last 16 KiB of the half at $C000; 8 KiB of CHR RAM; 8 KiB of
; battery-backed PRG RAM at $6000 enabled by $800D bit 5. The code lives in the last bank: its
; reset stub (in every bank) sets A18 first. Checks: 0 PRG banks in both halves; 1 PRG RAM enable.
; The check engine is roms/discrete/discrete.inc. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 153
SUBMAPPER = 0
PRG_8K = 64
CHR_1K = 0
PRG_RAM_SHIFT = $70             ; 8 KiB of PRG-NVRAM
CHR_RAM_SHIFT = 7
MIRROR_V = 1
HOME_VALUE = 1
HOME_ADDR = $8000
CHECKS = 2
.include "../discrete/discrete.inc"

vectors:
        VECTOR 0, $8008, $00, 32, 33, 62, 63, X_, X_
        VECTOR 0, $8008, $03, 38, 39, 62, 63, X_, X_
        VECTOR 0, $8008, $0F, 62, 63, 62, 63, X_, X_
        VECTOR 0, $8008, $15, 42, 43, 62, 63, X_, X_
        ; A18 clear: the first half, its last 16 KiB at $C000.
        VECTOR 0, $8000, $00, 10, 11, 30, 31, X_, X_
        VECTOR 0, $8000, $FE, 10, 11, 30, 31, X_, X_
        VECTOR 0, $8000, $01, 42, 43, 62, 63, X_, X_
        .byte $FF

; PRG RAM: enabled by $800D = $20 it keeps $A5 and $5A; disabled it reads open bus (the high byte
; of the address, $60 and $7F) and takes no writes.
extra_checks:
        lda #$20
        sta $800D
        lda #$A5
        sta $6000
        lda #$5A
        sta $7FFF
        lda $6000
        EXPECT 1, $A5
        lda $7FFF
        EXPECT 1, $5A
        lda #$00
        sta $800D
        sta $6000
        lda $6000
        EXPECT 1, $60
        lda #$20
        sta $800D
        lda $6000
        EXPECT 1, $A5
        lda #$00
        sta $800D
        rts

        IMAGE_END
