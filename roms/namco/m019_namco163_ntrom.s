; m019_namco163_ntrom.nes: the Namco 163's CHR ROM nametables (iNES mapper 19, NES 2.0 submapper 1:
; no sound output; nesdev "INES Mapper 019": $C000-$D800 values $E0-$FF select nametable RAM page
; bit 0, values below $E0 the 1 KiB CHR ROM bank of that number). Checks:
; 0: $C000, $C800, $D000, $D800 below $E0 select CHR ROM banks $00, $01, $55, $DF at $2000, $2400,
;    $2800, $2C00 (every byte of 1 KiB bank n is n, attribute bytes included);
; 1: a write to a ROM nametable goes nowhere: the ROM byte reads back, and the nametable RAM page
;    the register selected before keeps its byte;
; 2: ROM and RAM nametables side by side: $C000 = $E1 (RAM page 1) takes a write that $D000 = $E1
;    shows too, while $C800 = $20 shows ROM;
; 3: $E800 bits 6 and 7, which keep nametable RAM out of the pattern tables, do not touch the
;    nametable registers: $E0 still selects RAM there, $DF ROM.
; Then rendering shows nametables from CHR ROM (banks $41 and $42 as tiles and attributes), so the
; golden record covers the picture fetched through them.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 19
SUBMAPPER = 1
PRG_RAM_SHIFT = 0
MIRROR_V = 0
CHECKS = 4
.include "namco.inc"

checks:
        POKE $E000, $40         ; no sound
        POKE $E800, $00
        POKE $F800, $40
        ; Pattern tables: 1 KiB banks 0-7.
        ldx #0
:       txa
        asl
        asl
        asl
        ora #$80
        sta reg+1
        lda #0
        sta reg
        txa
        ldy #0
        sta (reg),y
        inx
        cpx #8
        bne :-

        ; 0: ROM banks in all four nametables, at a tile byte and an attribute byte.
        POKE $C000, $00
        POKE $C800, $01
        POKE $D000, $55
        POKE $D800, $DF
        READ_PPU $2005
        EXPECT 0, $00
        READ_PPU $27C3
        EXPECT 0, $01
        READ_PPU $2A00
        EXPECT 0, $55
        READ_PPU $2FFF
        EXPECT 0, $DF

        ; 1: writes to ROM go nowhere; RAM page 0 keeps its byte.
        POKE $C000, $E0
        WRITE_PPU $2010, $66
        POKE $C000, $10
        WRITE_PPU $2010, $77
        READ_PPU $2010
        EXPECT 1, $10
        POKE $C000, $E0
        READ_PPU $2010
        EXPECT 1, $66

        ; 2: RAM page 1 at $2000 and $2800, ROM at $2400.
        POKE $C000, $E1
        POKE $C800, $20
        POKE $D000, $E1
        WRITE_PPU $2123, $5A
        READ_PPU $2923
        EXPECT 2, $5A
        READ_PPU $2523
        EXPECT 2, $20

        ; 3: $E800 = $C0: nametable registers as before.
        POKE $E800, $C0
        READ_PPU $2923
        EXPECT 3, $5A
        POKE $C800, $DF
        READ_PPU $2523
        EXPECT 3, $DF
        POKE $E800, $00

        ; The picture: tiles from bank $41 (tile $41 everywhere), palette set 1 from bank $42's
        ; attribute bytes in the other nametables, scrolled to show them.
        POKE $C000, $41
        POKE $C800, $42
        POKE $D000, $42
        POKE $D800, $41
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
        jsr report
        lda #128
        sta PPUSCROLL
        lda #120
        sta PPUSCROLL
        lda #0
        sta PPUCTRL
forever:
        jmp forever

palette:
        .byte $16, $27, $18, $0F, $21, $31, $01

nmi:
        rti

irq:
        rti

        NAMCO_IMAGE_END
