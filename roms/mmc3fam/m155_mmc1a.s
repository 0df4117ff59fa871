; m155_mmc1a.nes: the MMC1A (iNES mapper 155; nesdev "INES Mapper 155", "MMC1"): the PRG bank
; register's bit 4 does not disable PRG RAM, and while it is set bit 3 bypasses the fixed-bank logic
; and drives PRG A17 for both 16 KiB halves. 256 KiB of PRG (16 KiB banks 0-15), 8 KiB of PRG RAM,
; 8 KiB of CHR RAM. The probe runs from CPU RAM, since these writes move the fixed bank away.
; Checks: 0 PRG mode 3, $12: banks 2 and 7; 1 PRG mode 3, $1A: banks 10 and 15; 2 PRG RAM reads back
; what was written with bit 4 set; 3 PRG mode 2, $1A: banks 8 and 10; 4 bit 4 clear: the fixed banks
; of the MMC1B (mode 3, $02: 2 and 15; mode 2, $0A: 0 and 10).
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 155
SUBMAPPER = 0
PRG_8K = 32
CHR_1K = 0
PRG_RAM_SHIFT = 7
CHR_RAM_SHIFT = 7
MIRROR_V = 1
CHECKS = 5
.include "checks.inc"

RAM_CODE = $0300

; The probe's arguments and results (zero page below the linker's ZP, which starts at $10).
control = $00
prg     = $01
marker  = $02
seen    = $03                   ; 3 bytes

; The MMC1 register at `addr` := A, through the serial port (5 writes, LSB first, none on
; consecutive cycles).
.macro MMC1_WRITE addr
  .repeat 4
        sta addr
        lsr
  .endrep
        sta addr
.endmacro

; Probes control `c`, PRG bank `p` with `m` written to $6000: the 8 KiB tags at $8000 and $C000 and
; $6000 read back, in `seen`.
.macro PROBE c, p, m
        lda #c
        sta control
        lda #p
        sta prg
        lda #m
        sta marker
        jsr RAM_CODE
.endmacro

run_checks:
        ldx #probe_end - RAM_CODE - 1
:       lda probe_image,x
        sta RAM_CODE,x
        dex
        bpl :-

        PROBE $0C, $12, $5A
        lda seen
        EXPECT 0, 4
        lda seen+1
        EXPECT 0, 14
        lda seen+2
        EXPECT 2, $5A
        PROBE $0C, $1A, $A5
        lda seen
        EXPECT 1, 20
        lda seen+1
        EXPECT 1, 30
        lda seen+2
        EXPECT 2, $A5
        PROBE $08, $1A, $3C
        lda seen
        EXPECT 3, 16
        lda seen+1
        EXPECT 3, 20
        PROBE $0C, $02, $00
        lda seen
        EXPECT 4, 4
        lda seen+1
        EXPECT 4, 30
        PROBE $08, $0A, $00
        lda seen
        EXPECT 4, 0
        lda seen+1
        EXPECT 4, 20
        rts

; Copied to RAM_CODE: sets control and PRG bank, reads the tags, writes and reads $6000, then maps
; this code's bank back (PRG mode 3, bank 0, RAM enabled).
probe_image:
        .org RAM_CODE
        lda control
        MMC1_WRITE $8000
        lda prg
        MMC1_WRITE $E000
        lda $8000
        sta seen
        lda $C000
        sta seen+1
        lda marker
        sta $6000
        lda $6000
        sta seen+2
        lda #$0C
        MMC1_WRITE $8000
        lda #$00
        MMC1_WRITE $E000
        rts
probe_end:
        .org probe_image + (probe_end - RAM_CODE)

        IMAGE_END
