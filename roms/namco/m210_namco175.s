; m210_namco175.nes: Namco 175 (iNES mapper 210, NES 2.0 submapper 1); the checks are in
; namco210.inc. Licence: MIT OR Apache-2.0 (ours).
SUBMAPPER = 1
RAM_A5 = $A5                    ; PRG RAM answers while enabled
RAM_5A = $5A
.include "namco210.inc"

expected_nametables:
        .byte $C0, $C1, $C0, $C1
        .byte $C0, $C1, $C0, $C1
        .byte $C0, $C1, $C0, $C1
        .byte $C0, $C1, $C0, $C1

        NAMCO_IMAGE_END
