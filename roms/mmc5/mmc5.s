; mmc5.nes: the MMC5 (iNES mapper 5; nesdev "MMC5"), NES 2.0 with 128 KiB PRG ROM, 64 KiB CHR ROM
; and 64 KiB of PRG RAM. Every 8 KiB PRG bank n holds n in its first byte; every byte of 1 KiB CHR
; bank n is n. The code lives in the last bank, which stays at $E000 in every PRG mode ($5117 = $FF).
;
; Checks (expected values from the wiki's register descriptions, never from an emulator):
;  0 PRG mode 3: $5114-$5116 select 8 KiB ROM banks at $8000, $A000, $C000; $E000 is $5117's
;  1 PRG mode 2: $5115 a 16 KiB bank at $8000 (bit 0 ignored), $5116 8 KiB at $C000
;  2 PRG mode 1: $5115 16 KiB at $8000, $5117 16 KiB at $C000 (bit 0 ignored)
;  3 PRG mode 0: $5117 one 32 KiB bank (bits 0-1 ignored)
;  4 PRG RAM: $5113 banks $6000; bit 7 clear in $5114 maps RAM at $8000, written there
;  5 RAM protect: writes need $5102 = 2 and $5103 = 1
;  6 ExRAM: mode 2 reads back; mode 3 is read-only; mode 0 while not rendering stores 0 and reads
;    open bus ($5C, the address's high byte)
;  7 multiplier: $5205 x $5206, product low at $5205, high at $5206
;  8 CHR modes 0-3 through $2007, set $5120-$5127 written last
;  9 CHR mode 3, set $5128-$512B written last: $0000-$0FFF repeated at $1000
; 10 nametables: fill mode ($5106 tile, $5107 attribute in every quadrant), ExRAM as a nametable in
;    mode 0 (written by the PPU), zeros in mode 2
; 11 scanline IRQ status: $5203 = 1 sets $5204 bit 7 at the start of line 1, $5203 = 100 at the
;    start of line 100 (cycles counted from the vblank flag), in-frame bit 6 set then, clear in vblank
; 12 $5203 = 0 never sets bit 7 in a frame
; 13 the /IRQ line: $5204 bit 7 enables it; the CPU takes one IRQ per frame, its $5204 read
;    acknowledges it
;
; Results (CPU RAM, read by tests/boards.rs): $0700 $80 while running, then the number of checks not
; passed; $0701 the number of checks; $0710+n check n: 0 passed, 1 failed, $FF not run; $0740+n the
; value read at the first mismatch (or the last one compared). Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

RES_STATUS = $0700
RES_COUNT  = $0701
RES_CODE   = $0710
RES_SEEN   = $0740
CHECKS     = 14
PRG_8K     = 16
CHR_1K     = 64

.segment "ZEROPAGE"
tmp:     .res 1
irqs:    .res 1
lo:      .res 1
hi:      .res 1

.segment "IMAGE"
        .byte "NES", $1A
        .byte PRG_8K / 2
        .byte CHR_1K / 8
        .byte $50                       ; mapper 5
        .byte $08                       ; NES 2.0
        .byte $00, $00
        .byte $0A                       ; 64 << 10 bytes of PRG RAM
        .byte $00, $00, $00, $00, $00

.repeat PRG_8K - 1, bank
        .byte bank
        .res $1FFF, $FF
.endrep
        .org $E000
        .byte PRG_8K - 1

; A compared with `value` for check `num`.
.macro EXPECT num, value
        ldx #num
        ldy #value
        jsr expect
.endmacro

; A = the PPU byte at `addr` through $2007 (rendering off).
.macro PPU_READ addr
        lda #>(addr)
        sta PPUADDR
        lda #<(addr)
        sta PPUADDR
        lda PPUDATA
        lda PPUDATA
.endmacro

.macro SET reg, value
        lda #value
        sta reg
.endmacro

reset:
        sei
        cld
        ldx #$FF
        txs
        inx
        stx PPUCTRL
        stx PPUMASK
        stx DMC_FREQ
        lda #$40
        sta JOY2
        bit PPUSTATUS
:       bit PPUSTATUS
        bpl :-
:       bit PPUSTATUS
        bpl :-
        lda #$80
        sta RES_STATUS
        lda #$FF
        ldx #CHECKS - 1
:       sta RES_CODE,x
        dex
        bpl :-
        lda #CHECKS
        sta RES_COUNT

        ; 0: PRG mode 3.
        SET $5100, 3
        SET $5114, $81
        SET $5115, $82
        SET $5116, $83
        lda $8000
        EXPECT 0, 1
        lda $A000
        EXPECT 0, 2
        lda $C000
        EXPECT 0, 3
        lda $E000
        EXPECT 0, 15
        ; 1: PRG mode 2.
        SET $5100, 2
        SET $5115, $85
        SET $5116, $87
        lda $8000
        EXPECT 1, 4
        lda $A000
        EXPECT 1, 5
        lda $C000
        EXPECT 1, 7
        lda $E000
        EXPECT 1, 15
        ; 2: PRG mode 1 ($5117 = $FF: 16 KiB bank 63, banks 126-127, i.e. 14-15 of 16).
        SET $5100, 1
        SET $5115, $87
        lda $8000
        EXPECT 2, 6
        lda $A000
        EXPECT 2, 7
        lda $C000
        EXPECT 2, 14
        lda $E000
        EXPECT 2, 15
        ; 3: PRG mode 0 (32 KiB bank 31: banks 124-127, i.e. 12-15).
        SET $5100, 0
        lda $8000
        EXPECT 3, 12
        lda $A000
        EXPECT 3, 13
        lda $C000
        EXPECT 3, 14
        SET $5100, 3

        ; 4: PRG RAM banks at $6000 and in $8000.
        SET $5102, 2
        SET $5103, 1
        SET $5113, 0
        SET $6000, $A5
        SET $5113, 1
        SET $6000, $5A
        SET $5113, 0
        lda $6000
        EXPECT 4, $A5
        SET $5114, $01                  ; RAM bank 1 at $8000
        lda $8000
        EXPECT 4, $5A
        SET $8001, $C3
        SET $5113, 1
        lda $6001
        EXPECT 4, $C3
        SET $5114, $81
        lda $8000
        EXPECT 4, 1
        ; 5: protect.
        SET $5102, 0
        SET $5113, 0
        SET $6000, $11
        lda $6000
        EXPECT 5, $A5
        SET $5102, 2
        SET $5103, 3
        SET $6000, $11
        lda $6000
        EXPECT 5, $A5
        SET $5103, 1
        SET $6000, $11
        lda $6000
        EXPECT 5, $11

        ; 6: ExRAM.
        SET $5104, 2
        SET $5C00, $12
        SET $5FFF, $34
        lda $5C00
        EXPECT 6, $12
        lda $5FFF
        EXPECT 6, $34
        SET $5104, 3
        SET $5C00, $56
        lda $5C00
        EXPECT 6, $12
        SET $5104, 0
        SET $5C01, $77
        lda $5C01
        EXPECT 6, $5C
        SET $5104, 2
        lda $5C01
        EXPECT 6, $00

        ; 7: multiplier: $C3 x $7B = $5DB1.
        SET $5205, $C3
        SET $5206, $7B
        lda $5205
        EXPECT 7, $B1
        lda $5206
        EXPECT 7, $5D

        ; 8: CHR modes, set A written last ($5128-$512B first).
        SET $5128, 60
        SET $512B, 61
        SET $5101, 0
        SET $5127, 2                    ; 8 KiB bank 2: 1 KiB banks 16-23
        PPU_READ $0000
        EXPECT 8, 16
        PPU_READ $1C05
        EXPECT 8, 23
        SET $5101, 1
        SET $5123, 3                    ; 4 KiB banks 3 and 5: 12-15, 20-23
        SET $5127, 5
        PPU_READ $0000
        EXPECT 8, 12
        PPU_READ $1C05
        EXPECT 8, 23
        SET $5101, 2
        SET $5121, 4                    ; 2 KiB banks 4, 5, 6, 7 at $0000-$1FFF
        SET $5123, 5
        SET $5125, 6
        SET $5127, 7
        PPU_READ $0000
        EXPECT 8, 8
        PPU_READ $0C05
        EXPECT 8, 11
        PPU_READ $1C05
        EXPECT 8, 15
        SET $5101, 3
        ldx #7
:       txa
        clc
        adc #30
        sta $5120,x
        dex
        bpl :-
        PPU_READ $0000
        EXPECT 8, 30
        PPU_READ $1C05
        EXPECT 8, 37
        ; 9: set B written last.
        SET $5128, 40
        SET $5129, 41
        SET $512A, 42
        SET $512B, 43
        PPU_READ $0000
        EXPECT 9, 40
        PPU_READ $0C05
        EXPECT 9, 43
        PPU_READ $1005
        EXPECT 9, 40
        PPU_READ $1C05
        EXPECT 9, 43

        ; 10: nametables.
        SET $5106, $42
        SET $5107, $02
        SET $5105, $FF
        PPU_READ $2000
        EXPECT 10, $42
        PPU_READ $2FC0
        EXPECT 10, $AA
        SET $5104, 0
        SET $5105, $02                  ; $2000: ExRAM
        lda #$20
        sta PPUADDR
        lda #$10
        sta PPUADDR
        SET PPUDATA, $99
        PPU_READ $2010
        EXPECT 10, $99
        SET $5104, 2
        lda $5C10
        EXPECT 10, $99
        PPU_READ $2010
        EXPECT 10, $00
        SET $5105, $00

        ; 11: IRQ status timing, rendering on (background), NMI off.
        SET $5204, $00
        lda #0
        sta PPUSCROLL
        sta PPUSCROLL
        SET PPUMASK, $08
        SET $5203, 1
        jsr irq_time
        lda hi
        EXPECT 11, 0
        lda lo
        cmp #205
        bcc :+
        cmp #213
        bcs :+
        lda #0
:       EXPECT 11, 0
        SET $5203, 100
        jsr irq_time
        lda $5204                       ; line 100: in frame
        and #$40
        EXPECT 11, $40
        lda hi
        EXPECT 11, 4
        lda lo                          ; 1143-1149 = 4 * 256 + 119-125
        cmp #119
        bcc :+
        cmp #126
        bcs :+
        lda #0
:       EXPECT 11, 0
:       bit PPUSTATUS
        bpl :-
        lda $5204                       ; vblank: not in frame
        and #$40
        EXPECT 11, 0

        ; 12: $5203 = 0: never, polled for more than a frame (3072 x 11 cycles).
        SET $5203, 0
        lda $5204
        ldx #0
        ldy #12
@never: bit $5204
        bmi :+
        dex
        bne @never
        dey
        bne @never
        lda #0
        beq :++
:       lda #1
:       EXPECT 12, 0

        ; 13: the /IRQ line, one IRQ a frame for $5203 = 50.
        SET $5203, 50
        lda $5204
        SET $5204, $80
:       bit PPUSTATUS
        bpl :-
        lda $5204                       ; line 50 of the frame before
        lda #0
        sta irqs
        cli
:       bit PPUSTATUS
        bpl :-
        sei
        lda irqs
        EXPECT 13, 1
        SET $5204, $00

        SET PPUMASK, $00
        ; The verdict: checks not passed (failed or not run).
        ldy #0
        ldx #CHECKS - 1
:       lda RES_CODE,x
        beq :+
        iny
:       dex
        bpl :--
        sty RES_STATUS
        lda #$3F
        sta PPUADDR
        lda #$00
        sta PPUADDR
        lda #$2A
        cpy #0
        beq :+
        lda #$16
:       sta PPUDATA
        lda #0
        sta PPUSCROLL
        sta PPUSCROLL
        lda #%00001010
        sta PPUMASK
forever:
        jmp forever

; hi:lo = polling iterations from the read that finds the vblank flag to the first $5204 read with
; bit 7 set (the one right after the flag acknowledges a line of the frame before). The k-th read
; comes 7 + 12k cycles after the flag's read (one cycle more each time lo wraps). The IRQ's line N
; starts 7161 + 1 + 341 N dots (21 lines and a dot, less one on odd frames) after the flag, which
; its read sees 0-6 cycles late: k = 208 for N = 1, 1145 or 1146 for N = 100 (1136 and 1155 for
; lines 99 and 101).
irq_time:
:       bit PPUSTATUS
        bpl :-
        lda $5204
        ldx #0
        ldy #0
@loop:  inx
        bne :+
        iny
:       bit $5204
        bpl @loop
        stx lo
        sty hi
        rts

; A = value read, X = check, Y = expected. A mismatch marks the check failed and keeps the value.
expect:
        sty tmp
        ldy RES_CODE,x
        cpy #1
        beq @done
        sta RES_SEEN,x
        cmp tmp
        beq @pass
        lda #1
        sta RES_CODE,x
        rts
@pass:  lda #0
        sta RES_CODE,x
@done:  rts

irq:
        pha
        lda $5204                       ; acknowledges
        inc irqs
        pla
nmi:
        rti

        .res $FFFA - *, $FF
        .word nmi, reset, irq

.repeat CHR_1K, bank
        .res $400, bank
.endrep
