; vrc4e.nes: the Konami VRC4e (A2 A3) board (iNES mapper 23, NES 2.0 submapper 2) through the
; checks of vrc_test.inc. The chip's register selects 0-3 sit at $x000 + 0, 4, 8, 12 here.
; Licence: MIT OR Apache-2.0 (ours).

MAPPER    = 23
SUBMAPPER = 2
SEL0      = 0
SEL1      = 4
SEL2      = 8
SEL3      = 12
VRC4      = 1
.define BOARD_NAME "VRC4E (A2 A3)"

.include "vrc_test.inc"
