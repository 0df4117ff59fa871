; m019_namco163.nes: Namco 163 (iNES mapper 19, NES 2.0 submapper 3; nesdev "INES Mapper 019",
; "Namco 163 audio"). Checks:
; 0-2: $E000, $E800, $F000 select the 8 KiB bank at $8000, $A000, $C000 (6 bits; bits 6-7 do not
;      reach the bank); $E000-$FFFF holds the last bank;
; 3: each pattern table register ($8000-$B800) selects every 1 KiB bank, $E0-$FF too with $E800
;    bits 6 and 7 set;
; 4: the eight windows are independent;
; 5: with $E800 bit 6 (7) clear, $E0-$FF in $0000-$0FFF ($1000-$1FFF) select nametable RAM page
;    bit 0, read and written through the pattern table;
; 6: $C000-$D800 select each nametable's RAM page ($E0: page 0, $E1: page 1);
; 7: the internal RAM's port $4800 at the address $F800 set; bit 7 of $F800 moves it on after each
;    read and write, wrapping from $7F to $00;
; 8: $5000/$5800 read back the IRQ counter; counting, it has counted 4 at an LDA 4 cycles after the
;    enabling write and 8 at the next; it stops at $7FFF;
; 9: the IRQ: from $7FF0, asserted when the count reaches $7FFF, 15 cycles after the enabling write
;    (the probe of roms/vrc3: taken by T0 + D + 5, so D = 10 takes it and D = 9 does not);
; 10: PRG RAM writes only while $F800's high nibble is 0100, each 2 KiB quarter protected by its
;     bit 0-3; reads always.
; Then the sound: channel 7 alone (a 16-sample square wave, 8 samples at 15 and 8 at 0, volume 15,
; frequency $00F1C) plays CPU x $F1C / (15 x 65536 x 1 x 16) = 440.14 Hz from the end of the checks.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 19
SUBMAPPER = 3
PRG_RAM_SHIFT = 7               ; 8 KiB
MIRROR_V = 0
CHECKS = 11
.include "namco.inc"

; The IRQ probe: A = 1 when the IRQ came by T0 + `delay` + 5, else 0 (T0: the enabling write).
.macro PROBE start, delay
        sei
        lda #0
        sta irq_count
        lda #<(start)
        sta $5000
        lda #>(start) | $80
        sta $5800
        DELAY delay
        cli
        nop
        sei
        lda #0
        sta $5800
        lda irq_count
.endmacro

checks:
        POKE $E000, $40         ; the sound off while the checks use the internal RAM
        POKE $E800, $C0
        POKE $F800, $40
        ; 0-2: PRG banks.
        ldx #0
@prg:   stx check
        txa
        asl
        asl
        tax
        lda prg_registers,x
        sta reg
        lda prg_registers+1,x
        sta reg+1
        lda prg_registers+2,x
        sta win
        lda prg_registers+3,x
        sta win+1
        jsr prg_register
        ldx check
        inx
        cpx #3
        bne @prg
        lda $E000
        EXPECT 2, PRG_BANKS - 1
        POKE $E000, $40
        POKE $E800, $C0

        ; 3: every CHR register, nametable RAM off in both halves.
        lda #3
        sta check
        jsr chr_registers

        ; 4: independent windows.
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
        asl
        asl
        asl
        asl
        ora #3
        ldy #0
        sta (reg),y
        inx
        cpx #8
        bne :-
        lda #0
        sta window
@ind:   lda window
        asl
        asl
        sta PPUADDR
        lda #0
        sta PPUADDR
        lda PPUDATA
        lda PPUDATA
        sta tmp
        lda window
        asl
        asl
        asl
        asl
        ora #3
        tay
        lda tmp
        ldx #4
        jsr expect
        inc window
        lda window
        cmp #8
        bne @ind

        ; 5: nametable RAM in the pattern tables.
        POKE $C000, $E0
        POKE $C800, $E1
        POKE $D000, $E0
        POKE $D800, $E1
        WRITE_PPU $2000, $11
        WRITE_PPU $2400, $22
        POKE $E800, $00
        POKE $8000, $E0
        READ_PPU $0000
        EXPECT 5, $11
        POKE $8000, $E1
        READ_PPU $0000
        EXPECT 5, $22
        POKE $B800, $E1
        READ_PPU $1C00
        EXPECT 5, $22
        POKE $E800, $40
        READ_PPU $0000
        EXPECT 5, $E1
        READ_PPU $1C00
        EXPECT 5, $22
        POKE $E800, $80
        READ_PPU $0000
        EXPECT 5, $22
        READ_PPU $1C00
        EXPECT 5, $E1
        POKE $E800, $00
        POKE $8000, $E0
        WRITE_PPU $0010, $5A
        READ_PPU $2010
        EXPECT 5, $5A
        POKE $E800, $C0

        ; 6: nametable selection: horizontal, then diagonal.
        POKE $C000, $E0
        POKE $C800, $E0
        POKE $D000, $E1
        POKE $D800, $E1
        WRITE_PPU $2000, $33
        WRITE_PPU $2800, $44
        READ_PPU $2400
        EXPECT 6, $33
        READ_PPU $2C00
        EXPECT 6, $44
        POKE $C000, $E1
        POKE $C800, $E0
        READ_PPU $2000
        EXPECT 6, $44
        READ_PPU $2400
        EXPECT 6, $33

        ; 7: the internal RAM's port.
        POKE $F800, $90
        POKE $4800, $A1
        POKE $4800, $A2
        POKE $4800, $A3
        POKE $F800, $10
        lda $4800
        EXPECT 7, $A1
        lda $4800
        EXPECT 7, $A1
        POKE $F800, $91
        lda $4800
        EXPECT 7, $A2
        lda $4FFF
        EXPECT 7, $A3
        POKE $F800, $FF
        POKE $4800, $B1
        POKE $4800, $B2
        POKE $F800, $7F
        lda $4800
        EXPECT 7, $B1
        POKE $F800, $00
        lda $4800
        EXPECT 7, $B2

        ; 8: the counter's registers.
        sei
        POKE $5000, $34
        POKE $5800, $12
        lda $5000
        EXPECT 8, $34
        lda $5800
        EXPECT 8, $12
        POKE $5000, $00
        lda #$80
        sta $5800
        ldx $5000
        ldy $5000
        POKE $5800, $00
        stx index
        sty window
        lda index
        EXPECT 8, 4
        lda window
        EXPECT 8, 8
        POKE $5000, $F0
        POKE $5800, $FF
        DELAY 20
        lda $5000
        EXPECT 8, $FF
        lda $5800
        EXPECT 8, $FF
        POKE $5800, $00

        ; 9: the IRQ.
        PROBE $7FF0, 9
        EXPECT 9, 0
        PROBE $7FF0, 10
        EXPECT 9, 1
        PROBE $7F00, 10
        EXPECT 9, 0

        ; 10: PRG RAM write protection.
        POKE $F800, $40
        POKE $6000, $A5
        POKE $6800, $B5
        POKE $7000, $C5
        POKE $7FFF, $D5
        lda $6000
        EXPECT 10, $A5
        lda $7FFF
        EXPECT 10, $D5
        POKE $F800, $4F
        POKE $6000, $00
        POKE $6800, $00
        POKE $7000, $00
        POKE $7FFF, $00
        lda $6000
        EXPECT 10, $A5
        lda $6800
        EXPECT 10, $B5
        lda $7000
        EXPECT 10, $C5
        lda $7FFF
        EXPECT 10, $D5
        POKE $F800, $45
        POKE $6000, $EE
        POKE $6800, $EE
        POKE $7000, $EE
        POKE $7FFF, $EE
        lda $6000
        EXPECT 10, $A5
        lda $6800
        EXPECT 10, $EE
        lda $7000
        EXPECT 10, $C5
        lda $7FFF
        EXPECT 10, $EE
        POKE $F800, $80
        POKE $6800, $01
        lda $6800
        EXPECT 10, $EE

        jsr report

        ; The sound: the wave at samples 0-15, channel 7's registers, then the sound on.
        POKE $F800, $80
        ldx #8
        lda #$FF
:       sta $4800
        dex
        cpx #4
        bne :-
        lda #$00
:       sta $4800
        dex
        bne :-
        POKE $F800, $F8
        ldx #0
:       lda channel_7,x
        sta $4800
        inx
        cpx #8
        bne :-
        POKE $E000, $00
forever:
        jmp forever

; Register, window for checks 0-2.
prg_registers:
        .word $E000, $8000, $E800, $A000, $F000, $C000

; $78-$7F: frequency $00F1C, phase 0, length 16 samples, wave at sample 0, one channel at volume 15.
channel_7:
        .byte $1C, $00, $0F, $00, $100 - 16, $00, $00, $0F

nmi:
        rti

irq:
        pha
        inc irq_count
        lda #0
        sta $5800
        pla
        rti

        NAMCO_IMAGE_END
