; m032_g101.nes: Irem G-101 (iNES mapper 32), the checks of m032_g101.inc.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 32
SUBMAPPER = 0
.include "m032_g101.inc"
