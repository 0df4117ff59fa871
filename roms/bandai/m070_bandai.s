; m070_bandai.nes: Bandai's discrete board (iNES mapper 70; nesdev "INES Mapper 070"): a write to
; $8000-$FFFF, PPPP CCCC, selects the 16 KiB PRG bank at $8000 and the 8 KiB CHR bank; the last
; 16 KiB is fixed at $C000; bus conflicts. Checks: 0 PRG and CHR banks; 1 the bus conflict.
; The check engine is roms/discrete/discrete.inc. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 70
SUBMAPPER = 0
PRG_8K = 32
CHR_1K = 128
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
HOME_VALUE = 0
HOME_ADDR = $8100 + HOME_VALUE
CHECKS = 2
.include "../discrete/discrete.inc"

vectors:
        VECTOR 0, CONFLICT_FREE($8000, $00), $00, 0, 1, 30, 31, 0, 7
        VECTOR 0, CONFLICT_FREE($8000, $35), $35, 6, 7, 30, 31, 40, 47
        VECTOR 0, CONFLICT_FREE($8000, $F0), $F0, 30, 31, 30, 31, 0, 7
        VECTOR 0, CONFLICT_FREE($8000, $0F), $0F, 0, 1, 30, 31, 120, 127
        VECTOR 0, CONFLICT_FREE($8000, $A9), $A9, 20, 21, 30, 31, 72, 79
        ; $FF written where the ROM holds $35: the board sees $35.
        VECTOR 1, CONFLICT_FREE($8000, $35), $FF, 6, 7, 30, 31, 40, 47
        .byte $FF

extra_checks:
        rts

        IMAGE_END
