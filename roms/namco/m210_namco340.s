; m210_namco340.nes: Namco 340 (iNES mapper 210, NES 2.0 submapper 2); the checks are in
; namco210.inc. Licence: MIT OR Apache-2.0 (ours).
SUBMAPPER = 2
RAM_A5 = $60                    ; no PRG RAM: open bus (the address's high byte)
RAM_5A = $7F
.include "namco210.inc"

expected_nametables:
        .byte $C0, $C0, $C0, $C0
        .byte $C0, $C1, $C0, $C1
        .byte $C1, $C1, $C1, $C1
        .byte $C0, $C0, $C1, $C1

        NAMCO_IMAGE_END
