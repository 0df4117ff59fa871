; m016_fcg.nes: Bandai FCG-1/2 (iNES mapper 16 submapper 4): registers at $6000-$7FFF, REG+B/C
; writing the IRQ counter itself, no EEPROM. Checks: see bandai.inc.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 16
SUBMAPPER = 4
NVRAM = $00
REG = $6000
LATCHED = 0
EEPROM = 0
.include "bandai.inc"
