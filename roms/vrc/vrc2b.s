; vrc2b.nes: the Konami VRC2b (A0 A1) board (iNES mapper 23, NES 2.0 submapper 3) through the
; checks of vrc_test.inc. The chip's register selects 0-3 sit at $x000 + 0, 1, 2, 3 here.
; Licence: MIT OR Apache-2.0 (ours).

MAPPER    = 23
SUBMAPPER = 3
SEL0      = 0
SEL1      = 1
SEL2      = 2
SEL3      = 3
VRC2      = 1
.define BOARD_NAME "VRC2B (A0 A1)"

.include "vrc_test.inc"
