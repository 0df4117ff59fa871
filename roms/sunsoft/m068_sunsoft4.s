; m068_sunsoft4.nes: Sunsoft-4 (iNES mapper 68; nesdev "INES Mapper 068"). Every 8 KiB PRG bank n
; holds n in its first byte; every 1 KiB CHR bank n holds n at offset $3F8. Checks:
; 0: $F000 selects the 16 KiB bank at $8000 (8 KiB banks 2n, 2n + 1, n = 0-15); $C000 holds the
;    last 16 KiB;
; 1: $8000, $9000, $A000, $B000 select the 2 KiB CHR banks at $0000, $0800, $1000, $1800;
; 2: $E000 with bit 4 clear, CIRAM: 0 vertical, 1 horizontal, 2 single-screen page 0, 3 page 1;
; 3: $E000 bit 4 set: CHR ROM nametables, $C000 in place of page 0 and $D000 of page 1, vertical:
;    1 KiB banks $80 | value ($C000 = $05: bank $85; D7 is treated as 1, so $D000 = $8A: bank $8A);
; 4: the same in the horizontal and both single-screen arrangements;
; 5: writes to a ROM nametable go nowhere: the ROM byte reads back, and CIRAM keeps its bytes;
; 6: $F000 bit 4 enables PRG RAM at $6000-$7FFF; with it clear reads are open bus (the address's
;    high byte, $60) and writes are lost.
; Then rendering shows ROM nametables (banks $81 and $82), so the golden record covers the picture
; fetched through them.
; Results (CPU RAM) and backdrop as the other check ROMs. Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

RES_STATUS = $0700
RES_COUNT  = $0701
RES_CODE   = $0710
RES_SEEN   = $0740
CHECKS     = 7

.segment "HEADER"
        .byte "NES", $1A
        .byte 16                ; 256 KiB PRG ROM
        .byte 32                ; 256 KiB CHR ROM
        .byte $40               ; mapper 68 low nibble, horizontal
        .byte $48               ; mapper 68 high nibble, NES 2.0
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
        .res $3F8, bank & $7F
        .byte bank
        .res 7, bank
.endrep

.segment "ZEROPAGE"
tmp:       .res 1
index:     .res 1
window:    .res 1
pages:     .res 4
ptr:       .res 2

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

; Check `num`: the four nametables' tags (offset $3F8) are `tag0` to `tag3`.
.macro NAMETABLES num, tag0, tag1, tag2, tag3
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

        ; 0: PRG.
        ldx #0
@prg:   stx index
        stx $F000
        txa
        asl
        tay
        lda $8000
        ldx #0
        jsr expect
        lda index
        asl
        tay
        iny
        lda $A000
        ldx #0
        jsr expect
        lda $C000
        EXPECT 0, 30
        lda $E000
        EXPECT 0, 31
        ldx index
        inx
        cpx #16
        bne @prg

        ; 1: CHR, each window over chr_values: the 2 KiB bank's first and second KiB.
        lda #0
        sta window
@chr_window:
        ldx #0
@chr_value:
        stx index
        lda window
        asl
        asl
        asl
        asl
        ora #$80                ; $8000, $9000, $A000, $B000
        sta ptr+1
        lda #0
        sta ptr
        tay
        lda chr_values,x
        sta (ptr),y
        lda window
        asl
        asl
        asl
        ora #$03
        sta PPUADDR
        lda #$F8
        sta PPUADDR
        lda PPUDATA
        lda PPUDATA
        sta tmp
        ldx index
        lda chr_values,x
        asl
        tay
        lda tmp
        ldx #1
        jsr expect
        lda window
        asl
        asl
        asl
        ora #$07
        sta PPUADDR
        lda #$F8
        sta PPUADDR
        lda PPUDATA
        lda PPUDATA
        sta tmp
        ldx index
        lda chr_values,x
        asl
        tay
        iny
        lda tmp
        ldx #1
        jsr expect
        ldx index
        inx
        cpx #CHR_VALUES
        bne @chr_value
        inc window
        lda window
        cmp #4
        bne @chr_window

        ; 2: CIRAM; markers $AA on page 0, $BB on page 1 (written in vertical).
        POKE $E000, 0
        WRITE_PPU $23F8, $AA
        WRITE_PPU $27F8, $BB
        NAMETABLES 2, $AA, $BB, $AA, $BB
        POKE $E000, 1
        NAMETABLES 2, $AA, $AA, $BB, $BB
        POKE $E000, 2
        NAMETABLES 2, $AA, $AA, $AA, $AA
        POKE $E000, 3
        NAMETABLES 2, $BB, $BB, $BB, $BB

        ; 3: ROM nametables, vertical.
        POKE $C000, $05
        POKE $D000, $8A
        POKE $E000, $10
        NAMETABLES 3, $85, $8A, $85, $8A
        POKE $C000, $85
        POKE $D000, $0A
        NAMETABLES 3, $85, $8A, $85, $8A
        POKE $C000, $7F
        POKE $D000, $00
        NAMETABLES 3, $FF, $80, $FF, $80

        ; 4: horizontal and single-screen.
        POKE $C000, $11
        POKE $D000, $22
        POKE $E000, $11
        NAMETABLES 4, $91, $91, $A2, $A2
        POKE $E000, $12
        NAMETABLES 4, $91, $91, $91, $91
        POKE $E000, $13
        NAMETABLES 4, $A2, $A2, $A2, $A2

        ; 5: writes to ROM go nowhere, CIRAM keeps its markers.
        POKE $E000, $10
        WRITE_PPU $23F8, $12
        WRITE_PPU $27F8, $34
        NAMETABLES 5, $91, $A2, $91, $A2
        POKE $E000, $00
        NAMETABLES 5, $AA, $BB, $AA, $BB

        ; 6: PRG RAM enable.
        POKE $F000, $10
        POKE $6000, $A5
        POKE $7FFF, $5A
        lda $6000
        EXPECT 6, $A5
        lda $7FFF
        EXPECT 6, $5A
        POKE $F000, $00
        lda $6000
        EXPECT 6, $60
        POKE $6000, $00
        POKE $F000, $10
        lda $6000
        EXPECT 6, $A5

        ; The picture: ROM nametables $81 (tiles $01, attributes $01) and $82, scrolled across them.
        POKE $C000, $01
        POKE $D000, $02
        POKE $E000, $10
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
        lda #$F8
        sta PPUADDR
        lda PPUDATA
        lda PPUDATA
        sta pages,x
        inx
        cpx #4
        bne :-
        rts

nametables:
        .byte $23, $27, $2B, $2F
chr_values:
        .byte 0, 1, 2, 4, 8, 16, 32, 64, 127
CHR_VALUES = 9
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
