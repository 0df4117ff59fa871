; m078_cosmo_carrier.nes: Irem 74HC161 as wired for Uchuusen: Cosmo Carrier (iNES mapper 78, NES 2.0
; submapper 1), the checks of m078_irem.inc. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 78
SUBMAPPER = 1
MIRROR_V = 0
.include "m078_irem.inc"
