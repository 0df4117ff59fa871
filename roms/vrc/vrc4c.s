; vrc4c.nes: the Konami VRC4c (A6 A7) board (iNES mapper 21, NES 2.0 submapper 2) through the
; checks of vrc_test.inc. The chip's register selects 0-3 sit at $x000 + 0, 64, 128, 192 here.
; Licence: MIT OR Apache-2.0 (ours).

MAPPER    = 21
SUBMAPPER = 2
SEL0      = 0
SEL1      = 64
SEL2      = 128
SEL3      = 192
VRC4      = 1
.define BOARD_NAME "VRC4C (A6 A7)"

.include "vrc_test.inc"
