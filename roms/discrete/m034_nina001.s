; m034_nina001.nes: NINA-001 (iNES mapper 34, NES 2.0 submapper 1; nesdev "NINA-001"): $7FFD bit 0
; selects the 32 KiB PRG bank, $7FFE and $7FFF the 4 KiB CHR banks at $0000 and $1000; the writes
; also land in the 8 KiB PRG RAM. Checks: 0 PRG; 1 CHR at $0000; 2 CHR at $1000; 3 the registers
; are RAM too, and $7FFC is only RAM. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 34
SUBMAPPER = 1
PRG_8K = 8
CHR_1K = 64
PRG_RAM_SHIFT = 7
CHR_RAM_SHIFT = 0
MIRROR_V = 1
HOME_VALUE = 1
HOME_ADDR = $7FFD
CHECKS = 4
.include "discrete.inc"

vectors:
        VECTOR 0, $7FFD, 0, 0, 1, 2, 3, X_, X_
        VECTOR 0, $7FFD, 1, 4, 5, 6, 7, X_, X_
        VECTOR 1, $7FFE, 0, X_, X_, X_, X_, 0, X_
        VECTOR 1, $7FFE, 5, X_, X_, X_, X_, 20, X_
        VECTOR 1, $7FFE, 15, X_, X_, X_, X_, 60, X_
        VECTOR 2, $7FFF, 9, X_, X_, X_, X_, 60, 39
        VECTOR 2, $7FFF, 14, X_, X_, X_, X_, 60, 59
        VECTOR 3, $7FFC, 3, 4, 5, 6, 7, 60, 59
        .byte $FF

extra_checks:
        lda #$0B
        sta $7FFE
        lda $7FFE
        EXPECT 3, $0B
        lda #$A5
        sta $7FFC
        lda $7FFC
        EXPECT 3, $A5
        rts

        IMAGE_END
