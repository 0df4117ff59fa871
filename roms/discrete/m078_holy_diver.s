; m078_holy_diver.nes: Irem 74HC161 as wired for Holy Diver (iNES mapper 78, NES 2.0 submapper 3),
; the checks of m078_irem.inc. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 78
SUBMAPPER = 3
MIRROR_V = 0
.include "m078_irem.inc"
