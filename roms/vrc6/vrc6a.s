; vrc6a.nes: the Konami VRC6a board (iNES mapper 24: the chip's A0 A1 on CPU A0 A1) through the
; checks of vrc6_test.inc. Licence: MIT OR Apache-2.0 (ours).

MAPPER = 24
SEL0   = 0
SEL1   = 1
SEL2   = 2
SEL3   = 3
.define BOARD_NAME "VRC6A (A0 A1)"

.include "vrc6_test.inc"
