; m016_lz93d50.nes: Bandai LZ93D50 with a 24C02 (iNES mapper 16 submapper 5): registers at
; $8000-$FFFF, the IRQ latch, the 256-byte EEPROM over I2C. Checks: see bandai.inc.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 16
SUBMAPPER = 5
NVRAM = $20                     ; 256 bytes of PRG-NVRAM: the 24C02
REG = $8000
LATCHED = 1
EEPROM = 2
.include "bandai.inc"
