; vrc7a.nes: the Konami VRC7a board (NES 2.0 mapper 85.2: the register select on CPU A4, so a
; page's second register sits at $x010; Lagrange Point) through the checks of vrc7_test.inc.
; Licence: MIT OR Apache-2.0 (ours).

MAPPER    = 85
SUBMAPPER = 2
SEL       = $10
.define BOARD_NAME "VRC7A (A4)"

.include "vrc7_test.inc"
