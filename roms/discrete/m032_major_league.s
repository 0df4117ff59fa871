; m032_major_league.nes: Irem G-101 as wired for Major League (iNES mapper 32, NES 2.0 submapper 1),
; the checks of m032_g101.inc. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 32
SUBMAPPER = 1
.include "m032_g101.inc"
