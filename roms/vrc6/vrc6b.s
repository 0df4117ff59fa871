; vrc6b.nes: the Konami VRC6b board (iNES mapper 26: the chip's A0 A1 on CPU A1 A0, so selects 1
; and 2 sit at $x002 and $x001) through the checks of vrc6_test.inc. Licence: MIT OR Apache-2.0
; (ours).

MAPPER = 26
SEL0   = 0
SEL1   = 2
SEL2   = 1
SEL3   = 3
.define BOARD_NAME "VRC6B (A1 A0)"

.include "vrc6_test.inc"
