; vrc7b.nes: the Konami VRC7b board (NES 2.0 mapper 85.1: the register select on CPU A3, so a
; page's second register sits at $x008; Tiny Toon Adventures 2) through the checks of
; vrc7_test.inc. Licence: MIT OR Apache-2.0 (ours).

MAPPER    = 85
SUBMAPPER = 1
SEL       = $08
.define BOARD_NAME "VRC7B (A3)"

.include "vrc7_test.inc"
