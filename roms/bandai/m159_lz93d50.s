; m159_lz93d50.nes: Bandai LZ93D50 with an X24C01 (iNES mapper 159): registers at $8000-$FFFF,
; the IRQ latch, the 128-byte EEPROM addressed in its first byte. Checks: see bandai.inc.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 159
SUBMAPPER = 0
NVRAM = $10                     ; 128 bytes of PRG-NVRAM: the X24C01
REG = $8000
LATCHED = 1
EEPROM = 1
.include "bandai.inc"
