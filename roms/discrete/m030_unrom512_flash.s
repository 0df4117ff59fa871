; m030_unrom512_flash.nes: UNROM 512, self-flashable (iNES mapper 30, NES 2.0 submapper 1, battery
; bit set), four screens (header byte 6 bits 3 and 0 set); the checks of m030_unrom512.inc.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 30
SUBMAPPER = 1
MIRROR_V = $0B                  ; byte 6: four screens (bits 3, 0), battery (bit 1)
FLASHABLE = 1
.include "m030_unrom512.inc"
