; m080_x1005.nes: the Taito X1-005 (iNES mapper 80) through the checks of x1005.inc.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 80
CHR_1K = 256
.include "x1005.inc"
