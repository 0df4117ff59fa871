; m232_quattro.nes: Camerica BF9096, Quattro (iNES mapper 232; nesdev "INES Mapper 232"): a write
; to $8000-$BFFF selects the 64 KiB block (bits 3-4), one to $C000-$FFFF the 16 KiB bank in it at
; $8000 (bits 0-1); $C000 holds the block's last bank. Checks: 0 the inner bank (block 3); 1 blocks
; 0 and 3; 2 blocks 1 and 2 (bit 3 is block bit 0; the Aladdin Deck Enhancer, submapper 1, swaps
; them). Licence: MIT OR Apache-2.0 (ours).
MAPPER = 232
SUBMAPPER = 0
PRG_8K = 32
CHR_1K = 0
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 7
MIRROR_V = 1
HOME_VALUE = $18
HOME_ADDR = $8100 + HOME_VALUE
CHECKS = 3
.include "discrete.inc"

vectors:
        VECTOR 0, CONFLICT_FREE($C000, 0), 0, 24, 25, 30, 31, X_, X_
        VECTOR 0, CONFLICT_FREE($C000, 2), 2, 28, 29, 30, 31, X_, X_
        VECTOR 0, CONFLICT_FREE($C000, 1), 1, 26, 27, 30, 31, X_, X_
        VECTOR 1, CONFLICT_FREE($8000, $00), $00, 2, 3, 6, 7, X_, X_
        VECTOR 1, CONFLICT_FREE($8000, $18), $18, 26, 27, 30, 31, X_, X_
        VECTOR 2, CONFLICT_FREE($8000, $08), $08, 10, 11, 14, 15, X_, X_
        VECTOR 2, CONFLICT_FREE($8000, $10), $10, 18, 19, 22, 23, X_, X_
        .byte $FF

extra_checks:
        rts

        IMAGE_END
