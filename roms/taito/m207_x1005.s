; m207_x1005.nes: the Taito X1-005 with CIRAM A10 on its CHR A17 output (iNES mapper 207) through
; the checks of x1005.inc. Licence: MIT OR Apache-2.0 (ours).
MAPPER = 207
CHR_1K = 128
.include "x1005.inc"
