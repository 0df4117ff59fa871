; anes demo (mapper 4, MMC3; NES 2.0 header): the program the product runs when given no ROM.
;
; A side-scrolling night landscape under a fixed status bar. It runs forever without input, and its
; state follows the controllers, so two different input streams diverge:
;   pad 1: D-pad moves ship 1 (pushing against the left/right edge changes the scroll speed and
;          direction); A fires (pulse 2 "pew"), B explodes (noise), Select plays the DMC snare,
;          Start switches the song (a PRG bank switch);
;   pad 2: D-pad moves ship 2; Select/Start slow down/speed up the scroll; A plays the DMC kick,
;          B a random pulse 1 blip.
; Hardware it exercises, all per the nesdev wiki:
;   - NMI-driven game loop: OAM DMA, one streamed nametable column, status text, both pads every frame;
;   - status bar split by the sprite 0 hit (the bar stays, the playfield scrolls horizontally over two
;     nametables with vertical mirroring);
;   - up to 22 moving sprites besides sprite 0 (2 ships, 4 shots, 12 birds, 4 balls); the birds fly
;     on the same lines, so the 8-sprite limit drops some and sets the overflow flag; their order is
;     reversed every other frame so that the dropped ones flicker instead of vanishing;
;   - all five APU channels: two-song music (pulses, triangle, noise drums, DMC kick) plus effects;
;     the DMC samples are 1-bit delta streams built by the assembler below;
;   - MMC3: the songs live in PRG banks 0/1 switched into $8000; CHR banks switched for terrain and
;     bird animation; a scanline IRQ at a line that swings up and down switches the terrain CHR bank
;     and wobbles the horizontal scroll below it;
;   - a 16-bit LFSR stirred with the frame counter and a main-loop spin count whenever a button
;     changes, which then picks flock heights, explosion pitch and blips.
; Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"
.include "mmc3.inc"

BTN_A      = $80
BTN_B      = $40
BTN_SELECT = $20
BTN_START  = $10
BTN_UP     = $08
BTN_DOWN   = $04
BTN_LEFT   = $02
BTN_RIGHT  = $01

CTRL_BASE   = %10001000         ; NMI on, sprites at $1000, background at $0000 (MMC3 A12 counting)
MASK_ON     = %00011110
OAM         = $0200
BIRDS       = 12
BALLS       = 4
SHOTS       = 4
TEMPO       = 7                 ; frames per music step
FIELD_TOP   = 4                 ; first nametable row of the playfield
FIELD_ROWS  = 26
WATER_ROW   = 22
TERRAIN_ALT = 10                ; CHR bank (2 KiB pair 10-11) switched in by the IRQ

.segment "HEADER"
        .byte "NES", $1A
        .byte 4                 ; PRG ROM: 4 x 16 KiB
        .byte 2                 ; CHR ROM: 2 x 8 KiB
        .byte $41               ; mapper 4 (low nibble), vertical mirroring (MMC3 sets it anyway)
        .byte $08               ; NES 2.0
        .byte 0, 0              ; mapper high bits / submapper; size high bits
        .byte 0, 0              ; no PRG RAM, no CHR RAM
        .byte 0                 ; NTSC
        .byte 0, 0
        .byte 1                 ; standard controllers

.segment "ZEROPAGE"
nmi_busy:   .res 1              ; set while the NMI's game loop runs (a late frame skips the next NMI)
lag:        .res 1
idle:       .res 1              ; spun by the main loop: how much time the last frame left over
frame:      .res 2
seed:       .res 2
pad1:       .res 1
pad2:       .res 1
prev1:      .res 1
prev2:      .res 1
press1:     .res 1
press2:     .res 1
read1:      .res 1
read2:      .res 1
tmp:        .res 1
tmp2:       .res 1
tmp3:       .res 1
hash_t:     .res 1
ptr:        .res 2
scroll_x:   .res 2              ; world pixel at the left edge of the playfield
speed:      .res 1              ; signed pixels per frame, -4..4
left_col:   .res 2
gcol:       .res 2              ; column being generated
col_addr:   .res 2
col_pending: .res 1
g_h:        .res 1
g_star:     .res 1
g_brick:    .res 1
split_x:    .res 1              ; playfield scroll for this frame, for the IRQ handler
split_nt:   .res 1
irq_tmp:    .res 1
irq_line:   .res 1
mmc3_shadow: .res 1             ; last value written to $8000 outside the IRQ handler
chr_regs:   .res 6              ; R0-R5 for the top of the next frame
phase:      .res 1
anim_t:     .res 1
px:         .res 1
py:         .res 1
qx:         .res 1
qy:         .res 1
fx:         .res 1
fy:         .res 1
ovf:        .res 1
score:      .res 1
song:       .res 1
pattern:    .res 1
step:       .res 1
tick:       .res 1
sfx2_timer: .res 1
sfxn_timer: .res 1

.segment "BSS"
col_buf:    .res FIELD_ROWS
bird_x:     .res BIRDS
bird_y:     .res BIRDS
bird_alive: .res BIRDS
ball_x:     .res BALLS
ball_y:     .res BALLS
ball_vy:    .res BALLS
shot_x:     .res SHOTS
shot_y:     .res SHOTS          ; 0 = no shot

.include "music.inc"

; ---------------------------------------------------------------------------------------------------
; Bank 6 ($C000, fixed): DMC samples and tables.

.segment "DMCDATA"
; Kick: a falling-pitch 1-bit delta wave: runs of up-steps then down-steps growing from 1 to 8 bytes.
dmc_kick:
        .repeat 8, k
            .res k + 1, $FF
            .res k + 1, $00
        .endrepeat
        .align 64
; Snare: pseudo-random bits from a multiplicative hash, so the DAC wanders like noise.
dmc_snare:
        .repeat 64, i
            .byte <((i * 97) ^ (i * i * 13) ^ $5A)
        .endrepeat

.segment "RODATA"
periods_lo:
        .byte 0,$AD,$4D,$F3,$9D,$4C,$00,$B8,$74,$34,$F8,$BF,$89,$56,$26,$F9,$CE,$A6,$80,$5C,$3A,$1A,$FB,$DF
        .byte $C4,$AB,$93,$7C,$67,$52,$3F,$2D,$1C,$0C,$FD,$EF,$E1,$D5,$C9,$BD,$B3,$A9,$9F,$96,$8E,$86,$7E,$77,$70
periods_hi:
        .byte 0,$06,$06,$05,$05,$05,$05,$04,$04,$04,$03,$03,$03,$03,$03,$02,$02,$02,$02,$02,$02,$02,$01,$01
        .byte $01,$01,$01,$01,$01,$01,$01,$01,$01,$01,$00,$00,$00,$00,$00,$00,$00,$00,$00,$00,$00,$00,$00,$00,$00
wave32:                         ; 3 * sin, one period
        .byte 0,1,1,2,2,2,3,3,3,3,3,2,2,2,1,1,0,255,255,254,254,254,253,253,253,253,253,254,254,254,255,255
wave64:                         ; 36 * sin, one period
        .byte 0,4,7,10,14,17,20,23,25,28,30,32,33,34,35,36,36,36,35,34,33,32,30,28,25,23,20,17,14,10,7,4
        .byte 0,252,249,246,242,239,236,233,231,228,226,224,223,222,221,220,220,220,221,222,223,224,226,228
        .byte 231,233,236,239,242,246,249,252
wobble:
        .byte 0, 1, 2, 3, 3, 2, 1, 0
bird_dx:
        .byte 0, 14, 28, 42, 56, 70, 84, 98, 112, 126, 140, 154
palette:
        .byte $01,$30,$16,$28, $01,$2A,$17,$21, $01,$2A,$17,$21, $01,$2A,$17,$21
        .byte $01,$30,$27,$16, $01,$38,$28,$18, $01,$31,$21,$11, $01,$30,$2A,$1A
status_row1:
        .byte "  ANES DEMO    F:0000  R:0000   "
status_row2:
        .byte "  P1:00 P2:00 V:00 O:00 L:00    "
; Status fields: PPU address, zero-page variable.
status_fields:
        .word $2031
        .byte frame+1
        .word $2033
        .byte frame
        .word $2039
        .byte seed+1
        .word $203B
        .byte seed
        .word $2045
        .byte pad1
        .word $204B
        .byte pad2
        .word $2050
        .byte speed
        .word $2055
        .byte ovf
        .word $205A
        .byte irq_line
        .word 0
hex_digits:
        .byte "0123456789ABCDEF"
bank_init:                      ; R0-R7: CHR 0/2 (2 KiB), 12-14 (1 KiB), PRG 0 and 2
        .byte 0, 2, 12, 14, 14, 14, 0, 2

; ---------------------------------------------------------------------------------------------------
; Bank 7 ($E000, fixed): all code.

.segment "CODE"

reset:
        sei
        cld
        ldx #$FF
        txs
        ; Only $E000-$FFFF is known at power-on: fix the MMC3 modes and banks before anything else.
        MMC3_SET_BANKS
        lda #0
        sta mmc3_shadow
        sta MMC3_SELECT
        sta MMC3_MIRROR         ; vertical: two nametables side by side for horizontal scrolling
        sta MMC3_DISABLE
        sta PPUCTRL
        sta PPUMASK
        sta DMC_FREQ
        lda #$40
        sta JOY2                ; no APU frame IRQ: the only IRQ source is the MMC3
        ; Two vblanks before the PPU takes writes; clear RAM in between.
        bit PPUSTATUS
:       bit PPUSTATUS
        bpl :-
        lda #0
        tax
:       sta $00,x
        sta $0100,x
        sta $0300,x
        sta $0400,x
        sta $0500,x
        sta $0600,x
        sta $0700,x
        inx
        bne :-
        jsr hide_sprites
        inc nmi_busy            ; NMIs during the setup (write_column enables them) do nothing
:       bit PPUSTATUS
        bpl :-
        jsr init_screen
        jsr init_game
        jsr init_sound
        lda #0
        sta lag
        sta nmi_busy
        lda #CTRL_BASE
        sta PPUCTRL
        cli
main:
        inc idle                ; everything else happens in the NMI
        jmp main

hide_sprites:
        lda #$FF
        ldx #0
:       sta OAM,x
        inx
        bne :-
        rts

; Palette, status bar, attributes and the first 64 terrain columns, with rendering off.
init_screen:
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
        tax
        ldy #8
:       sta PPUDATA
        inx
        bne :-
        dey
        bne :-
        lda #$20
        sta PPUADDR
        lda #$20
        sta PPUADDR
        ldx #0
:       lda status_row1,x
        sta PPUDATA
        inx
        cpx #64                 ; the two rows are adjacent in ROM and in the nametable
        bne :-
        ; Border row 3 in both nametables (the split happens inside it).
        lda #$20
        jsr border
        lda #$24
        jsr border
        ; Attributes: status rows use palette 0, the playfield palette 1, in both nametables.
        lda #$23
        jsr attributes
        lda #$27
        jsr attributes
        ; World columns -30..33 fill all 64 nametable columns around scroll 0.
        lda #<($2000 - 30)
        sta gcol
        lda #>($2000 - 30)
        sta gcol+1
@cols:  jsr gen_column
        jsr write_column
        inc gcol
        bne :+
        inc gcol+1
:       lda gcol+1
        and #$1F
        sta gcol+1
        lda gcol
        cmp #34
        bne @cols
        lda gcol+1
        bne @cols
        rts

border:
        sta PPUADDR
        lda #$60
        sta PPUADDR
        lda #$01
        ldx #32
:       sta PPUDATA
        dex
        bne :-
        rts

attributes:
        sta PPUADDR
        lda #$C0
        sta PPUADDR
        lda #$00
        ldx #8
:       sta PPUDATA
        dex
        bne :-
        lda #$55
        ldx #56
:       sta PPUDATA
        dex
        bne :-
        rts

; Writes col_buf down the nametable column at col_addr (PPU increment 32).
write_column:
        lda #CTRL_BASE | %00000100
        sta PPUCTRL
        lda col_addr+1
        sta PPUADDR
        lda col_addr
        sta PPUADDR
        ldx #0
:       lda col_buf,x
        sta PPUDATA
        inx
        cpx #FIELD_ROWS
        bne :-
        lda #CTRL_BASE
        sta PPUCTRL
        rts

init_game:
        lda #1
        sta seed
        sta speed
        sta tick
        lda #$A5
        sta seed+1
        lda #60
        sta px
        lda #120
        sta py
        lda #180
        sta qx
        lda #160
        sta qy
        lda #140
        sta irq_line
        lda #10
        sta anim_t
        ldx #5
:       lda bank_init,x
        sta chr_regs,x
        dex
        bpl :-
        jsr new_flock
        ldx #BALLS-1
:       txa
        asl
        asl
        asl
        asl
        asl
        asl
        adc #20
        sta ball_x,x
        lda #200
        sta ball_y,x
        txa
        eor #$FF
        sta ball_vy,x           ; -1..-4: staggered first bounces
        dex
        bpl :-
        rts

new_flock:
        jsr lfsr_step
        and #$7F
        clc
        adc #48
        sta fy
        ldx #BIRDS-1
        lda #1
:       sta bird_alive,x
        dex
        bpl :-
        rts

; ---------------------------------------------------------------------------------------------------
; NMI: the whole frame.

nmi:
        pha
        txa
        pha
        tya
        pha
        lda nmi_busy
        beq :+
        inc lag                 ; last frame's logic is still running: let it finish
        jmp nmi_exit
:       inc nmi_busy
        ; Overflow flag of the frame just drawn (cleared at the pre-render line). The read also resets
        ; the $2005/$2006 toggle, which the IRQ handler leaves set.
        lda PPUSTATUS
        and #$20
        beq :+
        inc ovf
:       lda #0
        sta OAMADDR
        lda #>OAM
        sta OAMDMA
        lda col_pending
        beq :+
        jsr write_column
        lda #0
        sta col_pending
:       jsr show_status
        lda #0
        sta PPUSCROLL
        sta PPUSCROLL
        lda #CTRL_BASE
        sta PPUCTRL
        lda #MASK_ON
        sta PPUMASK
        ; CHR banks for the top of the frame; then arm the scanline IRQ.
        ldx #5
:       stx mmc3_shadow
        stx MMC3_SELECT
        lda chr_regs,x
        sta MMC3_DATA
        dex
        bpl :-
        lda irq_line
        MMC3_ARM_IRQ
        lda scroll_x
        sta split_x
        lda scroll_x+1
        and #1
        sta split_nt
        ; Sprite 0 hit: wait for last frame's flag to clear (pre-render line), read the pads, then
        ; wait for this frame's hit. Both waits give up after a while, so the program still runs on
        ; a console that never reports the hit.
        ldx #0
        ldy #8
:       bit PPUSTATUS
        bvc :+
        dex
        bne :-
        dey
        bne :-
:       jsr read_pads
        ldx #0
        ldy #4
:       bit PPUSTATUS
        bvs :+
        dex
        bne :-
        dey
        bne :-
:       lda split_nt
        ora #CTRL_BASE
        sta PPUCTRL
        lda split_x
        sta PPUSCROLL
        lda #0
        sta PPUSCROLL
        cli                     ; the scanline IRQ may now interrupt the game logic
        jsr sound
        jsr game
        dec nmi_busy
nmi_exit:
        pla
        tay
        pla
        tax
        pla
        rti

; Scanline IRQ: the lower part gets the variant terrain tiles and a wobbling scroll.
irq:
        pha
        txa
        pha
        sta MMC3_DISABLE        ; acknowledge; one IRQ per frame
        lda #1
        sta MMC3_SELECT
        lda #TERRAIN_ALT
        sta MMC3_DATA
        lda mmc3_shadow         ; the interrupted code may be between a $8000 and a $8001 write
        sta MMC3_SELECT
        lda frame
        lsr
        and #7
        tax
        lda split_x
        clc
        adc wobble,x
        sta irq_tmp
        lda split_nt
        adc #0
        and #1
        ora #CTRL_BASE
        bit PPUSTATUS           ; reset the $2005 write toggle
        sta PPUCTRL
        lda irq_tmp
        sta PPUSCROLL           ; fine and coarse X reach v at dot 257
        pla
        tax
        pla
        rti

; Status bar numbers, about 50 cycles per byte.
show_status:
        ldx #0
@next:  lda status_fields+1,x
        beq @done
        sta PPUADDR
        lda status_fields,x
        sta PPUADDR
        ldy status_fields+2,x
        lda $00,y
        lsr
        lsr
        lsr
        lsr
        tay
        lda hex_digits,y
        sta PPUDATA
        ldy status_fields+2,x
        lda $00,y
        and #$0F
        tay
        lda hex_digits,y
        sta PPUDATA
        inx
        inx
        inx
        bne @next
@done:  rts

; Both pads, re-read until two reads agree (a DMC fetch during a $4016/$4017 read can drop a bit).
; A change of any button stirs the LFSR with the frame counter and the main loop's spin count.
read_pads:
:       jsr read_once
        lda read1
        sta pad1
        lda read2
        sta pad2
        jsr read_once
        lda read1
        cmp pad1
        bne :-
        lda read2
        cmp pad2
        bne :-
        lda prev1
        eor #$FF
        and pad1
        sta press1
        lda prev2
        eor #$FF
        and pad2
        sta press2
        lda pad1
        eor prev1
        sta tmp
        lda pad2
        eor prev2
        ora tmp
        beq :+
        lda seed
        eor frame
        sta seed
        lda seed+1
        eor idle
        sta seed+1
        ora seed
        bne :+
        inc seed                ; the LFSR must never be all zero
:       lda pad1
        sta prev1
        lda pad2
        sta prev2
        rts

read_once:
        lda #1
        sta JOY1
        sta read2               ; ring counter: the 1 falls out after eight shifts
        lsr
        sta JOY1
:       lda JOY1
        and #3
        cmp #1
        rol read1
        lda JOY2
        and #3
        cmp #1
        rol read2
        bcc :-
        rts

; One step of the 16-bit Galois LFSR (taps $B400, period 65535). Returns the low byte in A.
lfsr_step:
        lsr seed+1
        ror seed
        bcc :+
        lda seed+1
        eor #$B4
        sta seed+1
:       lda seed
        rts

; Scrambles A (a hash for the terrain: the same column always looks the same).
hash:
        sta hash_t
        asl
        asl
        clc
        adc hash_t
        eor #$5A
        sta hash_t
        lsr
        lsr
        lsr
        eor hash_t
        sta hash_t
        asl
        asl
        asl
        eor hash_t
        rts

; ---------------------------------------------------------------------------------------------------
; Terrain: column gcol (13-bit world column) into col_buf and col_addr.

gen_column:
        lda gcol
        and #31
        ora #FIELD_TOP * 32
        sta col_addr
        lda gcol
        and #32
        beq :+
        lda #$24
        bne :++
:       lda #$20
:       sta col_addr+1
        ; Ground height: a triangle over 32 columns plus a hashed bump.
        lda gcol
        and #31
        cmp #16
        bcc :+
        eor #31
:       lsr
        sta tmp
        lda gcol
        lsr
        lsr
        eor gcol+1
        jsr hash
        and #3
        clc
        adc tmp
        adc #14
        sta g_h
        ; One star in a quarter of the columns.
        lda #0
        sta g_star
        lda gcol
        eor gcol+1
        jsr hash
        sta tmp
        and #3
        bne :+
        lda tmp
        lsr
        lsr
        and #7
        adc #FIELD_TOP + 1
        sta g_star
:       ; Brick pillars on dry land in an eighth of the columns.
        lda #0
        sta g_brick
        lda g_h
        cmp #WATER_ROW
        bcs :+
        lda gcol
        eor #$A5
        jsr hash
        and #7
        bne :+
        lda g_h
        sec
        sbc #2                  ; a two-tile pillar on the grass
        sta g_brick
:       ldx #0
@row:   txa
        clc
        adc #FIELD_TOP
        sta tmp                 ; nametable row
        ldy #$80                ; sky
        cmp g_star
        bne :+
        ldy #$81
:       lda g_h
        cmp #WATER_ROW
        bcc @land
        lda tmp                 ; a water column: surface at WATER_ROW, deep water below
        cmp #WATER_ROW
        bcc @put
        beq @surf
        ldy #$86
        bne @put
@surf:  ldy #$85
        bne @put
@land:  lda tmp
        cmp g_h
        bcc @above
        beq @grass
        ldy #$83
        bne @put
@grass: ldy #$82
        bne @put
@above: lda g_brick
        beq @put
        lda tmp
        cmp g_brick
        bcc @put
        ldy #$84
@put:   tya
        sta col_buf,x
        inx
        cpx #FIELD_ROWS
        bne @row
        rts

; ---------------------------------------------------------------------------------------------------
; Game logic (runs after the split, interruptible by the scanline IRQ).

game:
        jsr handle_input
        jsr move_scroll
        jsr move_flock
        jsr move_balls
        jsr move_shots
        jsr animate
        jsr lfsr_step
        jsr build_oam
        inc frame
        bne :+
        inc frame+1
:       rts

handle_input:
        ; Ship 1
        lda pad1
        ldx #px
        ldy #py
        jsr move_ship
        ; Pushing against an edge changes the scroll speed, once every 16 frames.
        lda frame
        and #15
        bne @p2
        lda pad1
        and #BTN_RIGHT
        beq :+
        lda px
        cmp #232
        bcc :+
        jsr faster
:       lda pad1
        and #BTN_LEFT
        beq @p2
        lda px
        cmp #16
        bcs @p2
        jsr slower
@p2:    lda pad2
        ldx #qx
        ldy #qy
        jsr move_ship
        lda press2
        and #BTN_START
        beq :+
        jsr faster
:       lda press2
        and #BTN_SELECT
        beq :+
        jsr slower
:       ; Buttons
        lda press1
        and #BTN_A
        beq :+
        jsr fire
:       lda press1
        and #BTN_B
        beq :+
        jsr boom
:       lda press1
        and #BTN_SELECT
        beq :+
        ldx #1
        jsr play_dmc
:       lda press1
        and #BTN_START
        beq :+
        lda song
        eor #1
        sta song
        lda #0
        sta pattern
        sta step
        lda #1
        sta tick
:       lda press2
        and #BTN_A
        beq :+
        ldx #0
        jsr play_dmc
:       lda press2
        and #BTN_B
        beq :+
        jsr lfsr_step
        and #31
        adc #12
        jsr play_p1
:       rts

; Moves the ship whose x/y are at zero page X/Y by the D-pad in A, 2 pixels a frame, within bounds.
move_ship:
        sta tmp
        lsr                     ; Right
        bcc :+
        lda $00,x
        cmp #240
        bcs :+
        inc $00,x
        inc $00,x
:       lda tmp
        and #BTN_LEFT
        beq :+
        lda $00,x
        cmp #10
        bcc :+
        dec $00,x
        dec $00,x
:       lda tmp
        and #BTN_UP
        beq :+
        lda $0000,y
        cmp #42
        bcc :+
        sbc #2
        sta $0000,y
:       lda tmp
        and #BTN_DOWN
        beq :+
        lda $0000,y
        cmp #214
        bcs :+
        adc #2
        sta $0000,y
:       rts

faster:
        lda speed
        bmi :+
        cmp #4
        bcs :++
:       inc speed
:       rts

slower:
        lda speed
        bpl :+
        cmp #$FC
        beq :++
:       dec speed
:       rts

fire:
        ldx #SHOTS-1
:       lda shot_y,x
        beq :+
        dex
        bpl :-
        rts                     ; all four in flight
:       lda py
        sta shot_y,x
        lda px
        clc
        adc #8
        sta shot_x,x
        ; Pulse 2 "pew": a constant-volume note with a downward sweep; the music leaves pulse 2 alone
        ; while the effect runs.
        lda #$9F
        sta SQ2_VOL
        lda #%10010010
        sta SQ2_SWEEP
        lda #$50
        sta SQ2_LO
        lda #$08
        sta SQ2_HI
        lda #12
        sta sfx2_timer
        rts

boom:
        lda #$0F                ; slow envelope decay
        sta NOISE_VOL
        jsr lfsr_step
        and #3
        ora #$0C
        sta NOISE_LO
        lda #$18
        sta NOISE_HI
        lda #30
        sta sfxn_timer
        rts

; Scrolls by speed; when the left column changes, generates the column about to come into view
; (the nametables hold columns left-1 .. left+33 correctly at all times).
move_scroll:
        ldx #0
        lda speed
        bpl :+
        dex
:       clc
        adc scroll_x
        sta scroll_x
        txa
        adc scroll_x+1
        sta scroll_x+1
        lda scroll_x+1
        sta tmp2
        lda scroll_x
        lsr tmp2
        ror
        lsr tmp2
        ror
        lsr tmp2
        ror
        cmp left_col
        bne :+
        ldy tmp2
        cpy left_col+1
        beq @done
:       sta left_col
        ldy tmp2
        sty left_col+1
        ldx speed
        bmi @left
        clc
        adc #33
        sta gcol
        tya
        adc #0
        jmp @gen
@left:  sec
        sbc #1
        sta gcol
        tya
        sbc #0
@gen:   and #$1F
        sta gcol+1
        jsr gen_column
        lda #1
        sta col_pending
@done:  rts

; The flock drifts left (and with the world); its height is re-picked from the LFSR every 256 frames
; or when all birds are shot.
move_flock:
        lda fx
        sec
        sbc #1
        sec
        sbc speed
        sta fx
        lda frame
        beq @new
        ldx #BIRDS-1
        lda #0
:       ora bird_alive,x
        dex
        bpl :-
        tax
        bne @place
@new:   jsr new_flock
@place: ldx #BIRDS-1
:       lda fx
        clc
        adc bird_dx,x
        sta bird_x,x
        txa
        asl
        asl
        adc frame
        adc frame
        and #31
        tay
        lda fy
        clc
        adc wave32,y
        sta bird_y,x
        dex
        bpl :-
        rts

; Balls roll left with the world and bounce on the ground line with 1/2 pixel per frame^2 gravity.
move_balls:
        ldx #BALLS-1
@ball:  lda ball_x,x
        sec
        sbc #1
        sec
        sbc speed
        sta ball_x,x
        lda frame
        and #1
        beq :+
        inc ball_vy,x
:       lda ball_y,x
        clc
        adc ball_vy,x
        sta ball_y,x
        cmp #200
        bcc @next
        lda ball_vy,x
        bmi @next
        lda #200
        sta ball_y,x
        jsr lfsr_step
        and #3
        ora #$F8
        sec
        sbc #2                  ; -10..-7
        sta ball_vy,x
@next:  dex
        bpl @ball
        rts

; Shots fly right; a shot within 8 pixels of a live bird removes both.
move_shots:
        ldx #SHOTS-1
@shot:  lda shot_y,x
        beq @next
        lda shot_x,x
        clc
        adc #4
        sta shot_x,x
        cmp #248
        bcc :+
        lda #0
        sta shot_y,x
        beq @next
:       ldy #BIRDS-1
@bird:  lda bird_alive,y
        beq @nob
        lda shot_x,x
        sec
        sbc bird_x,y
        clc
        adc #8
        cmp #16
        bcs @nob
        lda shot_y,x
        sec
        sbc bird_y,y
        clc
        adc #8
        cmp #16
        bcs @nob
        lda #0
        sta bird_alive,y
        sta shot_y,x
        inc score
        txa
        pha
        jsr boom
        pla
        tax
        jmp @next
@nob:   dey
        bpl @bird
@next:  dex
        bpl @shot
        rts

; CHR animation and the IRQ line.
animate:
        lda frame
        and #7
        bne :+
        lda chr_regs+2
        eor #1                  ; sprite banks 12 <-> 13: the birds flap
        sta chr_regs+2
:       dec anim_t
        bne :+
        lda #10
        sta anim_t
        lda phase
        clc
        adc #1
        and #3
        sta phase
        asl
        adc #2
        sta chr_regs+1          ; terrain banks 2, 4, 6, 8
:       lda frame
        lsr
        and #63
        tax
        lda wave64,x
        clc
        adc #110
        sta irq_line
        rts

; Shadow OAM: sprite 0 under the border, the ships, shots, birds (order reversed every other frame,
; so that the birds dropped by the 8-per-line limit change and flicker instead of vanishing), balls.
build_oam:
        lda #23
        sta OAM
        lda #$00
        sta OAM+1
        lda #$20                ; behind the background: invisible, but it still hits
        sta OAM+2
        lda #240
        sta OAM+3
        ldy #4
        lda py
        ldx #1
        jsr put_sprite_tile0
        lda px
        sta OAM-1,y
        lda qy
        ldx #5
        jsr put_sprite_tile3
        lda qx
        sta OAM-1,y
        ldx #SHOTS-1
@shots: lda shot_y,x
        beq :+
        sta OAM,y
        lda #4
        sta OAM+1,y
        lda #0
        sta OAM+2,y
        lda shot_x,x
        sta OAM+3,y
        iny
        iny
        iny
        iny
:       dex
        bpl @shots
        lda frame
        lsr
        bcs @rev
        ldx #0
:       jsr put_bird
        inx
        cpx #BIRDS
        bne :-
        beq @balls
@rev:   ldx #BIRDS-1
:       jsr put_bird
        dex
        bpl :-
@balls: ldx #BALLS-1
:       lda ball_y,x
        sta OAM,y
        lda #3
        sta OAM+1,y
        lda #2
        sta OAM+2,y
        lda ball_x,x
        sta OAM+3,y
        iny
        iny
        iny
        iny
        dex
        bpl :-
        lda #$FF
:       sta OAM,y
        iny
        bne :-
        rts

put_bird:
        lda bird_alive,x
        beq :+
        lda bird_y,x
        sta OAM,y
        lda #2
        sta OAM+1,y
        txa
        and #1                  ; odd birds face the other way
        ror
        ror
        ror
        ora #1
        sta OAM+2,y
        lda bird_x,x
        sta OAM+3,y
        iny
        iny
        iny
        iny
:       rts

; A sprite at OAM,y with Y coordinate A, tile X and palette 0 or 3; leaves y pointing past it.
put_sprite_tile0:
        sta OAM,y
        txa
        sta OAM+1,y
        lda #0
        beq put_attr
put_sprite_tile3:
        sta OAM,y
        txa
        sta OAM+1,y
        lda #3
put_attr:
        sta OAM+2,y
        iny
        iny
        iny
        iny
        rts

; ---------------------------------------------------------------------------------------------------
; Sound: a step sequencer reading the current song from PRG bank 0 or 1 at $8000.

init_sound:
        lda #$0F
        sta SND_CHN
        lda #$08                ; sweep off (negate set, so low notes are not muted)
        sta SQ1_SWEEP
        sta SQ2_SWEEP
        lda #$30
        sta SQ1_VOL
        sta SQ2_VOL
        sta NOISE_VOL
        lda #$80
        sta TRI_LINEAR
        rts

sound:
        lda sfx2_timer
        beq :+
        dec sfx2_timer
:       lda sfxn_timer
        beq :+
        dec sfxn_timer
:       dec tick
        beq :+
        rts
:       lda #TEMPO
        sta tick
        ; Map the song's bank at $8000 (R6). mmc3_shadow first: see the IRQ handler.
        lda #6
        sta mmc3_shadow
        sta MMC3_SELECT
        lda song
        sta MMC3_DATA
        ; ptr = $8000 + pattern * 128 + step * 4
        lda step
        asl
        asl
        sta ptr
        lda pattern
        lsr
        ora #$80
        sta ptr+1
        bcc :+
        lda ptr
        ora #$80
        sta ptr
:       ldy #0
        lda (ptr),y
        beq :+
        jsr play_p1
:       iny
        lda (ptr),y
        beq :+
        ldx sfx2_timer
        bne :+
        jsr play_p2
:       iny
        lda (ptr),y
        beq :+
        jsr play_tri
:       iny
        lda (ptr),y
        sta tmp3
        lsr
        bcc :+
        ldx #0
        jsr play_dmc
:       lda sfxn_timer
        bne @adv
        lda tmp3
        and #4
        beq :+
        lda #$04                ; snare: noise, short decay, mid pitch
        sta NOISE_VOL
        lda #$06
        sta NOISE_LO
        lda #$08
        sta NOISE_HI
        bne @adv
:       lda tmp3
        and #2
        beq @adv
        lda #$01                ; hi-hat: metallic mode, very short decay
        sta NOISE_VOL
        lda #$81
        sta NOISE_LO
        lda #$08
        sta NOISE_HI
@adv:   inc step
        lda step
        cmp #32
        bcc @done
        lda #0
        sta step
        inc pattern
        lda pattern
        cmp #4
        bcc @done
        lda #0
        sta pattern
        lda song                ; alternate the songs: a PRG bank switch even without input
        eor #1
        sta song
@done:  rts

; Notes (index in A, 1-48); Y is preserved.
play_p1:
        tax
        lda #$86                ; duty 1/2, decaying envelope
        sta SQ1_VOL
        lda #$08
        sta SQ1_SWEEP
        lda periods_lo,x
        sta SQ1_LO
        lda periods_hi,x
        ora #$08
        sta SQ1_HI
        rts

play_p2:
        tax
        lda #$44                ; duty 1/4, faster decay
        sta SQ2_VOL
        lda #$08
        sta SQ2_SWEEP
        lda periods_lo,x
        sta SQ2_LO
        lda periods_hi,x
        ora #$08
        sta SQ2_HI
        rts

play_tri:
        tax
        lda #$18                ; linear counter: about 0.1 s
        sta TRI_LINEAR
        lda periods_lo,x
        sta TRI_LO
        lda periods_hi,x
        ora #$08
        sta TRI_HI
        rts

; DMC sample X (0 kick, 1 snare). Clearing bit 4 of $4015 first makes the restart unconditional.
play_dmc:
        lda #$0F
        sta SND_CHN
        lda dmc_rate,x
        sta DMC_FREQ
        lda dmc_addr,x
        sta DMC_START
        lda dmc_len,x
        sta DMC_LEN
        lda #$1F
        sta SND_CHN
        rts

dmc_rate:
        .byte $0C, $0F
dmc_addr:
        .byte <((dmc_kick - $C000) / 64), <((dmc_snare - $C000) / 64)
dmc_len:
        .byte (72 - 1) / 16, (64 - 1) / 16

.segment "VECTORS"
        .word nmi, reset, irq

.segment "CHARS"
        .include "chr.inc"
