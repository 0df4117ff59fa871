; one_vblank.nes (NROM): a homebrew-style start-up that waits for one VBlank, then writes the
; palette and the nametable and turns rendering on. Whether it shows its picture depends on the
; power-on state (nesdev wiki, "PPU power up state" and "Init code"):
;   - PPUSTATUS's VBlank flag clear at power-on: the wait ends at the first VBlank (~27384 CPU
;     cycles), but that is still inside the PPU's warm-up (~29658) if the warm-up ignores writes;
;   - VBlank flag set at power-on: the wait ends at once (~cycle 30) and everything below follows
;     within the first frame, long before the warm-up ends;
;   - so the picture shows only on a PPU without the warm-up (anes's default profile); with the
;     warm-up ignoring the PPUADDR and PPUMASK writes (profiles warm-up and quick-power-cycle) the
;     palette writes land in CHR ROM, rendering stays off and the screen stays the grey of palette
;     entry $00. The init code the wiki recommends waits for a second VBlank first.
;
; The picture: every tile is tile 1, four 4x4 squares of colours 0-3 (palette 0: $21 blue, $16 red,
; $2A green, $30 white), so pixel (0,0) is $21, (4,0) $16, (0,4) $2A and (4,4) $30.
; RAM: $0010 = $A5 once the picture is set up (the main loop then spins).
; Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

.segment "HEADER"
        .byte "NES", $1A, 1, 1, $00, $00    ; mapper 0, 16 KiB PRG, 8 KiB CHR, horizontal
        .res 8, 0

.segment "ZEROPAGE"
done:       .res 1

.segment "CODE"

reset:
        sei
        cld
        ldx #$40
        stx JOY2                ; no APU frame IRQ
        ldx #$FF
        txs
        inx
        stx PPUCTRL             ; no NMI
        stx PPUMASK             ; rendering off
        stx DMC_FREQ
        txa
:       sta $00,x               ; clear RAM, as start-ups do
        sta $0100,x
        sta $0200,x
        sta $0300,x
        sta $0400,x
        sta $0500,x
        sta $0600,x
        sta $0700,x
        inx
        bne :-
        ; The one wait for VBlank (the wiki's init code waits for two).
:       bit PPUSTATUS
        bpl :-
        lda #$3F
        sta PPUADDR
        lda #$00
        sta PPUADDR
        ldx #0
:       lda palette,x
        sta PPUDATA
        inx
        cpx #32
        bne :-
        lda #$20
        sta PPUADDR
        lda #$00
        sta PPUADDR
        lda #1                  ; 960 tiles (four pages of 256: the last 64 bytes are the attributes)
        ldy #4
        ldx #0
:       sta PPUDATA
        inx
        bne :-
        dey
        bne :-
        lda #$23
        sta PPUADDR
        lda #$C0
        sta PPUADDR
        lda #0                  ; attributes: palette 0 everywhere
        ldx #64
:       sta PPUDATA
        dex
        bne :-
        sta PPUCTRL             ; nametable $2000, increment 1, no NMI
        sta PPUSCROLL
        sta PPUSCROLL
        lda #%00001010          ; background on, also in the leftmost 8 pixels
        sta PPUMASK
        lda #$A5
        sta done
forever:
        jmp forever

nmi:
irq:
        rti

.segment "RODATA"
palette:
        .byte $21, $16, $2A, $30,  $21, $16, $2A, $30,  $21, $16, $2A, $30,  $21, $16, $2A, $30
        .byte $21, $16, $2A, $30,  $21, $16, $2A, $30,  $21, $16, $2A, $30,  $21, $16, $2A, $30

.segment "VECTORS"
        .addr nmi, reset, irq

.segment "CHARS"
        .res 16, 0              ; tile 0: blank
        ; tile 1: colour 0 top left, 1 top right, 2 bottom left, 3 bottom right (4x4 each)
        .byte $0F, $0F, $0F, $0F, $0F, $0F, $0F, $0F    ; bit plane 0: the right half
        .byte $00, $00, $00, $00, $FF, $FF, $FF, $FF    ; bit plane 1: the bottom half
