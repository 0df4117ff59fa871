; vrc4d.nes: the Konami VRC4d (A3 A2) board (iNES mapper 25, NES 2.0 submapper 2) through the
; checks of vrc_test.inc. The chip's register selects 0-3 sit at $x000 + 0, 8, 4, 12 here.
; Licence: MIT OR Apache-2.0 (ours).

MAPPER    = 25
SUBMAPPER = 2
SEL0      = 0
SEL1      = 8
SEL2      = 4
SEL3      = 12
VRC4      = 1
.define BOARD_NAME "VRC4D (A3 A2)"

.include "vrc_test.inc"
