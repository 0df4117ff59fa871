; m184_sunsoft1.nes: Sunsoft-1 (iNES mapper 184; nesdev "INES Mapper 184") on the discrete-board
; engine (roms/discrete/discrete.inc): one register at $6000-$7FFF, bits 0-2 the 4 KiB CHR bank at
; $0000, bits 4-6 the one at $1000; 32 KiB of PRG, unbanked; no PRG RAM. Checks: 0 the $0000 bank;
; 1 the $1000 bank; 2 the whole of $6000-$7FFF decodes it, $5FFF does not (the engine rewrites HOME_VALUE after each vector); 3 reads of $6000-$7FFF
; are open bus. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 184
SUBMAPPER = 0
PRG_8K = 4
CHR_1K = 32
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 0
MIRROR_V = 1
HOME_VALUE = $00
HOME_ADDR = $6000
CHECKS = 4
.include "../discrete/discrete.inc"

vectors:
        VECTOR 0, $6000, $00, 0, 1, 2, 3, 0, 3
        VECTOR 0, $6000, $01, 0, 1, 2, 3, 4, 3
        VECTOR 0, $6000, $07, 0, 1, 2, 3, 28, 3
        VECTOR 0, $6000, $0E, 0, 1, 2, 3, 24, 3
        VECTOR 1, $6000, $10, 0, 1, 2, 3, 0, 7
        VECTOR 1, $6000, $52, 0, 1, 2, 3, 8, 23
        VECTOR 1, $6000, $E3, 0, 1, 2, 3, 12, 27
        VECTOR 2, $7FFF, $25, 0, 1, 2, 3, 20, 11
        VECTOR 2, $5FFF, $77, 0, 1, 2, 3, 0, 3
        .byte $FF

extra_checks:
        lda $6000
        EXPECT 3, $60
        lda $7ABC
        EXPECT 3, $7A
        rts

        IMAGE_END
