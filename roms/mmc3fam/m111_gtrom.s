; m111_gtrom.nes: GTROM / Cheapocabra (iNES mapper 111; nesdev "GTROM"): one register at $5000-$5FFF
; and $7000-$7FFF, `grnc pppp`: the 32 KiB PRG bank (pppp), the 8 KiB CHR RAM bank (c), the 8 KiB
; nametable RAM page (n: four screens of the board's RAM, no CIRAM); LEDs (g, r) not observable.
; 128 KiB of PRG here; the probe that switches PRG runs from CPU RAM.
; Checks: 0 pppp selects each 32 KiB bank; 1 $7FFF is the register too, $6000 and $4FFF are not;
; 2 c selects one of two CHR RAM banks; 3 four distinct screens per page, n selects the page; 4 the
; pattern and nametable RAM are apart (bank 1 of CHR keeps its byte over nametable writes).
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 111
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 0
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 9               ; 32 KiB: the board's RAM
MIRROR_V = $08                  ; four-screen
CHECKS = 5
HOME_ADDR = $5000
HOME_VALUE = PRG_8K / 4 - 1     ; the last 32 KiB bank, where the code is
.include "checks.inc"

RAM_CODE = $0300
; The probe's argument and results (zero page below the linker's ZP, which starts at $10).
value = $00
addr  = $01                     ; 2 bytes
seen  = $03                     ; 4 bytes: the tags at $8000, $A000, $C000, $E000

; Writes `v` to the register address `target` and reads the four PRG tags into `seen` (from RAM).
.macro PROBE target, v
        lda #<(target)
        sta addr
        lda #>(target)
        sta addr+1
        lda #v
        sta value
        jsr RAM_CODE
.endmacro

; Checks `num`: the tags of 32 KiB bank `bank`.
.macro EXPECT_BANK num, bank
        lda seen
        EXPECT num, bank * 4
        lda seen+1
        EXPECT num, bank * 4 + 1
        lda seen+2
        EXPECT num, bank * 4 + 2
        lda seen+3
        EXPECT num, bank * 4 + 3
.endmacro

run_checks:
        ldx #probe_end - RAM_CODE - 1
:       lda probe_image,x
        sta RAM_CODE,x
        dex
        bpl :-

        PROBE $5000, $00
        EXPECT_BANK 0, 0
        PROBE $5FFF, $F1
        EXPECT_BANK 0, 1
        PROBE $5000, $02
        EXPECT_BANK 0, 2
        PROBE $7FFF, $01
        EXPECT_BANK 1, 1
        PROBE $6000, $01
        EXPECT_BANK 1, 3
        PROBE $4FFF, $01
        EXPECT_BANK 1, 3

        lda #$13
        sta $5000
        lda #$A1
        WRITE_PPU $1000
        lda #$03
        sta $5000
        lda #$A0
        WRITE_PPU $1000
        lda #$13
        sta $5000
        READ_PPU $1000
        EXPECT 2, $A1
        lda #$03
        sta $5000
        READ_PPU $1000
        EXPECT 2, $A0

        lda #$B0
        WRITE_PPU $2000
        lda #$B1
        WRITE_PPU $2400
        lda #$B2
        WRITE_PPU $2800
        lda #$B3
        WRITE_PPU $2C00
        lda #$23
        sta $5000
        lda #$C0
        WRITE_PPU $2000
        lda #$C3
        WRITE_PPU $2C00
        lda #$03
        sta $5000
        READ_PPU $2000
        EXPECT 3, $B0
        READ_PPU $2400
        EXPECT 3, $B1
        READ_PPU $2800
        EXPECT 3, $B2
        READ_PPU $2C00
        EXPECT 3, $B3
        lda #$23
        sta $5000
        READ_PPU $2000
        EXPECT 3, $C0
        READ_PPU $2C00
        EXPECT 3, $C3
        lda #$13
        sta $5000
        READ_PPU $1000
        EXPECT 4, $A1
        rts

; Copied to RAM_CODE: writes `value` to (addr), reads the tags, maps the code's bank back.
probe_image:
        .org RAM_CODE
        ldy #0
        lda value
        sta (addr),y
        lda $8000
        sta seen
        lda $A000
        sta seen+1
        lda $C000
        sta seen+2
        lda $E000
        sta seen+3
        lda #HOME_VALUE
        sta HOME_ADDR
        rts
probe_end:
        .org probe_image + (probe_end - RAM_CODE)

        IMAGE_END
