; m079_nina03.nes: NINA-03/06 (iNES mapper 79; nesdev "INES Mapper 079"): one register at
; $4100-$5FFF where A8 is set (mask $E100 = $4100): bit 3 the 32 KiB PRG bank, bits 0-2 the 8 KiB
; CHR bank. Checks: 0 PRG; 1 CHR; 2 decoding ($5100 answers; $4200 and $6100 do not).
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 79
SUBMAPPER = 0
PRG_8K = 8
CHR_1K = 64
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
HOME_VALUE = $08
HOME_ADDR = $4100
CHECKS = 3
.include "discrete.inc"

vectors:
        VECTOR 0, $4100, $00, 0, 1, 2, 3, 0, 7
        VECTOR 0, $4100, $08, 4, 5, 6, 7, 0, 7
        VECTOR 1, $4100, $0D, 4, 5, 6, 7, 40, 47
        VECTOR 1, $4100, $03, 0, 1, 2, 3, 24, 31
        VECTOR 2, $5100, $0B, 4, 5, 6, 7, 24, 31
        VECTOR 2, $41FF, $02, 0, 1, 2, 3, 16, 23
        VECTOR 2, $4200, $00, 4, 5, 6, 7, 0, 7
        VECTOR 2, $6100, $00, 4, 5, 6, 7, 0, 7
        .byte $FF

extra_checks:
        rts

        IMAGE_END
