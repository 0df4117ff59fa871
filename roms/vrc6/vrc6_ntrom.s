; vrc6_ntrom.nes: the VRC6a's nametables by $B003 (iNES mapper 24; nesdev "VRC6", "PPU Banking
; Style ($B003)"): each quadrant takes a CHR register by $B003 & 7 (R6 R6 R7 R7 in modes 0, 6, 7;
; R4 R5 R6 R7 in 1, 5; R6 R7 R6 R7 in 2, 3, 4); with P ($20) set, the register's bit 0 is replaced
; by $B003 & $0F: 0/7 PPU A10, 3/4 PPU A11, 8/F 0, B/C 1. N ($10) set: the nametables are those
; CHR ROM banks; clear: the bit is CIRAM A10. Every byte of 1 KiB CHR bank n is n. Checks:
; 0: N set, P clear, R0-R7 = $81 $88 $90 $99 $A0 $A9 $B1 $B8: $B003 = $10, $11, $12, $14 show
;    $B1 $B1 $B8 $B8, $A0 $A9 $B1 $B8, $B1 $B8 $B1 $B8, $B1 $B8 $B1 $B8 (the register dumps on the
;    wiki's VRC6 talk page), the pattern tables still R0-R7 in mode 0;
; 1: N and P set, R6 = $71, R7 = $78: $33 shows $70 $78 $71 $79, $37 $70 $71 $78 $79, $3B $71 $79
;    $71 $79, $3F $70 $70 $78 $78 (the dumps for $23, $27, $2B, $2F on User talk:Natt/VRC6
;    Musings, here from ROM);
; 2: writes to a ROM nametable go nowhere: the ROM byte reads back, CIRAM keeps its bytes;
; 3: N clear, P set, the same registers: $23 CIRAM pages 0 0 1 1, $27 0 1 0 1, $2B 1 1 1 1, $2F
;    0 0 0 0.
; Then rendering shows ROM nametables (banks $41 and $42), so the golden record covers the picture
; fetched through them.
; Results (CPU RAM) and backdrop as the other check ROMs. Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

RES_STATUS = $0700
RES_COUNT  = $0701
RES_CODE   = $0710
RES_SEEN   = $0740
CHECKS     = 4
PPU_BANKING = $B003

.segment "HEADER"
        .byte "NES", $1A
        .byte 16                ; 256 KiB PRG ROM
        .byte 32                ; 256 KiB CHR ROM
        .byte $80               ; mapper 24 low nibble, horizontal
        .byte $18               ; mapper 24 high nibble, NES 2.0
        .byte $00, $00
        .byte $07               ; 8 KiB PRG RAM
        .byte $00, $00, $00, $00, $00

.segment "BANKDATA"
.repeat 31, bank
        .byte bank
        .res $1FFF, $FF
.endrep

.segment "TAG"
        .byte 31

.segment "CHARS"
.repeat 256, bank
        .res $400, bank
.endrep

.segment "ZEROPAGE"
tmp:       .res 1
pages:     .res 4

.segment "CODE"

.macro EXPECT num, value
        ldx #num
        ldy #value
        jsr expect
.endmacro

.macro POKE addr, value
        lda #value
        sta addr
.endmacro

; Writes `value` at PPU address `addr` (rendering off).
.macro WRITE_PPU addr, value
        lda #>(addr)
        sta PPUADDR
        lda #<(addr)
        sta PPUADDR
        lda #value
        sta PPUDATA
.endmacro

; A = the PPU byte at `addr` (rendering off).
.macro READ_PPU addr
        lda #>(addr)
        sta PPUADDR
        lda #<(addr)
        sta PPUADDR
        lda PPUDATA
        lda PPUDATA
.endmacro

; $B003 = `b003`, then check `num`: the four nametables read `tag0` to `tag3` at offset $10.
.macro NAMETABLES num, b003, tag0, tag1, tag2, tag3
        POKE PPU_BANKING, b003
        jsr read_nametables
        lda pages
        EXPECT num, tag0
        lda pages+1
        EXPECT num, tag1
        lda pages+2
        EXPECT num, tag2
        lda pages+3
        EXPECT num, tag3
.endmacro

reset:
        sei
        cld
        ldx #$FF
        txs
        lda #0
        sta PPUCTRL
        sta PPUMASK
        sta $4010
        lda #$40
        sta $4017
        lda $4015
        lda #$80
        sta RES_STATUS
        lda #$FF
        ldx #CHECKS-1
:       sta RES_CODE,x
        dex
        bpl :-
        lda #CHECKS
        sta RES_COUNT
        bit PPUSTATUS
:       bit PPUSTATUS
        bpl :-
:       bit PPUSTATUS
        bpl :-

        ; CIRAM markers: $AA on page 0, $BB on page 1 (vertical).
        POKE PPU_BANKING, $20
        WRITE_PPU $2010, $AA
        WRITE_PPU $2410, $BB

        ; 0: N set, P clear.
        ldx #3
:       lda registers,x
        sta $D000,x
        lda registers+4,x
        sta $E000,x
        dex
        bpl :-
        NAMETABLES 0, $10, $B1, $B1, $B8, $B8
        READ_PPU $0010
        EXPECT 0, $81
        READ_PPU $1C10
        EXPECT 0, $B8
        NAMETABLES 0, $11, $A0, $A9, $B1, $B8
        NAMETABLES 0, $12, $B1, $B8, $B1, $B8
        NAMETABLES 0, $14, $B1, $B8, $B1, $B8

        ; 1: N and P set.
        POKE $E002, $71
        POKE $E003, $78
        NAMETABLES 1, $33, $70, $78, $71, $79
        NAMETABLES 1, $37, $70, $71, $78, $79
        NAMETABLES 1, $3B, $71, $79, $71, $79
        NAMETABLES 1, $3F, $70, $70, $78, $78

        ; 2: writes to ROM go nowhere.
        POKE PPU_BANKING, $37
        WRITE_PPU $2010, $12
        WRITE_PPU $2410, $34
        NAMETABLES 2, $37, $70, $71, $78, $79
        NAMETABLES 2, $20, $AA, $BB, $AA, $BB

        ; 3: N clear, P set: CIRAM pages from the same bits.
        NAMETABLES 3, $23, $AA, $AA, $BB, $BB
        NAMETABLES 3, $27, $AA, $BB, $AA, $BB
        NAMETABLES 3, $2B, $BB, $BB, $BB, $BB
        NAMETABLES 3, $2F, $AA, $AA, $AA, $AA

        ; The picture: ROM nametables R6 = $41, R7 = $42 in mode 0 with P set, vertical.
        POKE $E002, $41
        POKE $E003, $42
        POKE PPU_BANKING, $30
        lda #$3F
        sta PPUADDR
        lda #$01
        sta PPUADDR
        ldx #0
:       lda palette,x
        sta PPUDATA
        inx
        cpx #7
        bne :-

        ldy #0
        ldx #CHECKS-1
@count: lda RES_CODE,x
        beq :+
        iny
:       dex
        bpl @count
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
        lda #100
        sta PPUSCROLL
        lda #0
        sta PPUSCROLL
        sta PPUCTRL
        lda #%00001010
        sta PPUMASK
forever:
        jmp forever

read_nametables:
        ldx #0
:       lda nametables,x
        sta PPUADDR
        lda #$10
        sta PPUADDR
        lda PPUDATA
        lda PPUDATA
        sta pages,x
        inx
        cpx #4
        bne :-
        rts

nametables:
        .byte $20, $24, $28, $2C
registers:
        .byte $81, $88, $90, $99, $A0, $A9, $B1, $B8
palette:
        .byte $16, $27, $18, $0F, $21, $31, $01

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

nmi:
        rti

irq:
        rti

.segment "VECTORS"
        .word nmi, reset, irq
