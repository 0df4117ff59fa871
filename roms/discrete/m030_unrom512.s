; m030_unrom512.nes: UNROM 512 (iNES mapper 30, NES 2.0 submapper 2: bus conflicts), nametables
; wired one-screen (header byte 6: bit 3 set, bit 0 clear); the checks of m030_unrom512.inc.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 30
SUBMAPPER = 2
MIRROR_V = $08                  ; byte 6 bit 3, bit 0 clear: one-screen
FLASHABLE = 0
.include "m030_unrom512.inc"
