; timing.nes (NROM, iNES 1.0, so the console's region is whatever the emulator is told): measures the
; console's timing with the CPU alone and checks it against the nesdev wiki's figures for the region
; it recognizes by its frame length.
;
; Measurements (each a count of turns of a loop of known length, between events of a known handler
; length, over EVENTS events; so a count is (EVENTS x period - EVENTS x handler) / loop, within a
; few turns for the jitter of the starts and ends):
;   frame length   NMI to NMI, rendering off (no odd-frame skip): nesdev "Cycle reference chart":
;                  NTSC 341 x 262 dots at 3 dots per CPU cycle, PAL 341 x 312 at 3.2, Dendy
;                  341 x 312 at 3
;   NMI line       from the NMI to the end of VBlank (the sprite 0 hit flag's clear on the pre-render
;                  line), rendering on: NTSC and Dendy 20 lines (NMI at line 241 of 262, 291 of 312),
;                  PAL 70 lines (241 of 312): nesdev "PPU frame timing", "Dendy"
;   frame IRQ      APU frame IRQ to frame IRQ, 4-step mode: nesdev "APU Frame Counter": 14915 APU
;                  cycles NTSC and Dendy (29830 CPU cycles), 16627 PAL (33254)
;   OAM refresh    rendering off, OAM loaded by DMA right after an NMI with a pattern that names
;                  each byte's address in the bits an OAMDATA read keeps (0, 1, 5-7: the address / 8),
;                  then two OAMDATA reads OAM_GAP CPU cycles apart, ~45 lines after the NMI: the
;                  count is how far OAMADDR moved between them, in steps of 8. The 2C07 refreshes
;                  OAM 24 lines after VBlank starts, to the pre-render line (nesdev wiki), by counting
;                  OAMADDR up on every even dot (nesdev-org/MesenCE#137): PAL OAM_GAP x 3.2 dots / 2
;                  / 8; NTSC (in its next picture by then) and Dendy (no refresh) 0
;   DMC rate       DMC IRQ to DMC IRQ, 17-byte samples (length $01) restarted by the IRQ handler,
;                  at rate 15 and rate 0: the sample's bytes are fetched every 8 x the rate's period,
;                  so an IRQ comes every 136 periods: nesdev "APU DMC": NTSC and Dendy 54 and 428 CPU
;                  cycles, PAL 50 and 398; each of the 17 fetches stalls the count loop ~4 cycles
;                  (nesdev "DMA"), hence a wider tolerance (DMC_TOLERANCE turns: neighbouring rates
;                  and the other region are over 70 turns away)
;
; Results (CPU RAM, the check ROMs' table, read by tests/regions.rs):
;   $0700  $80 while measuring, then the number of failed checks (0: all passed)
;   $0701  number of checks (6)
;   $0710+n  check n: 0 passed, 1 failed, $FF not run
;   $0740+n  check n: check 0 the region recognized (0 NTSC, 1 PAL, 2 Dendy; the count's low byte
;            when none), the others the count's low byte
;   $0760    the six counts, 16 bits each, little-endian
; Checks: 0 frame length is a region's, 1 NMI line (VBlank after NMI), 2 frame IRQ period, 3 OAM
; refresh, 4 DMC rate 15, 5 DMC rate 0.
; Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

RES_STATUS = $0700
RES_COUNT  = $0701
RES_CODE   = $0710
RES_SEEN   = $0740
RES_RAW    = $0760
CHECKS     = 6
EVENTS     = 4          ; events per measurement
TOLERANCE  = 3          ; loop turns either way
DMC_TOLERANCE = 12      ; loop turns either way, for the DMC counts (the fetches' stalls vary)

COUNT_LOOP = 27         ; CPU cycles per turn of `count_events`
POLL_LOOP  = 25         ; CPU cycles per turn of `count_vblank`
NMI_COST   = 18         ; NMI sequence 7, inc zp 5, rti 6
IRQ_COST   = 27         ; IRQ sequence 7, jmp (ind) 5, bit abs 4, inc zp 5, rti 6
DMC_COST   = 36         ; IRQ sequence 7, jmp (ind) 5, pha 3, lda # 2, sta abs 4, pla 4, inc zp 5, rti 6
DMC_STALL  = 4          ; CPU cycles a DMC fetch takes from the loop

; Frame lengths in dots: 341 per line, 262 lines (NTSC), 312 (PAL, Dendy). CPU cycles = dots / 3
; (NTSC, Dendy) or dots x 5 / 16 (PAL).
FRAME_NTSC  = (EVENTS * 341 * 262 - 3 * EVENTS * NMI_COST) / (3 * COUNT_LOOP)
FRAME_PAL   = (EVENTS * 341 * 312 * 5 - 16 * EVENTS * NMI_COST) / (16 * COUNT_LOOP)
FRAME_DENDY = (EVENTS * 341 * 312 - 3 * EVENTS * NMI_COST) / (3 * COUNT_LOOP)
; VBlank after NMI: lines from the NMI line to the pre-render line.
VBLANK_NTSC  = (20 * 341 - 3 * NMI_COST) / (3 * POLL_LOOP)
VBLANK_PAL   = (70 * 341 * 5 - 16 * NMI_COST) / (16 * POLL_LOOP)
VBLANK_DENDY = VBLANK_NTSC
; 4-step frame IRQ period in CPU cycles.
IRQ_NTSC  = (EVENTS * 29830 - EVENTS * IRQ_COST) / COUNT_LOOP
IRQ_PAL   = (EVENTS * 33254 - EVENTS * IRQ_COST) / COUNT_LOOP
IRQ_DENDY = IRQ_NTSC
; OAMADDR steps of 8 between the two OAMDATA reads: one step per 16 dots on PAL, rounded.
OAM_GAP       = 98      ; CPU cycles from the first read's access to the second's
OAM_NTSC      = 0
OAM_PAL       = (OAM_GAP * 16 / 5 + 8) / 16
OAM_DENDY     = 0
OAM_PAGE      = $0200
; DMC: EVENTS IRQs, 17 fetches each, 136 rate periods apart.
.define DMC_TURNS(period) (EVENTS * 136 * period - EVENTS * DMC_COST - EVENTS * 17 * DMC_STALL) / COUNT_LOOP
DMC15_NTSC  = DMC_TURNS 54
DMC15_PAL   = DMC_TURNS 50
DMC15_DENDY = DMC15_NTSC
DMC0_NTSC   = DMC_TURNS 428
DMC0_PAL    = DMC_TURNS 398
DMC0_DENDY  = DMC0_NTSC

.segment "HEADER"
        .byte "NES", $1A, 1, 1, $00, $00    ; mapper 0, 16 KiB PRG, 8 KiB CHR, iNES 1.0
        .res 8, 0

.segment "ZEROPAGE"
events:  .res 1         ; NMIs or IRQs taken (one source at a time)
target:  .res 1
count:   .res 2
region:  .res 1         ; 0 NTSC, 1 PAL, 2 Dendy, $FF none
check:   .res 1
failed:  .res 1
want:    .res 2
; After the bytes above, whose addresses tests read ($14: region).
oam_first: .res 1
irq_handler: .res 2     ; where `irq` jumps: the frame IRQ's or the DMC IRQ's handler
tolerance: .res 1       ; loop turns either way that `near` accepts

.segment "CODE"
.include "stress.inc"

reset:
        BOOT
        lda #<frame_irq
        sta irq_handler
        lda #>frame_irq
        sta irq_handler + 1
        jsr init_video
        lda #$80
        sta RES_STATUS
        ldx #CHECKS - 1
        lda #$FF
:       sta RES_CODE,x
        dex
        bpl :-
        jsr fill_nametable

        ; Frame length: NMI to NMI, rendering off.
        lda #$80
        sta PPUCTRL
        jsr count_events
        lda count
        sta RES_RAW
        lda count + 1
        sta RES_RAW + 1

        ; NMI line: in VBlank, sprite 0 (solid) over the solid background at (100, 100), rendering on.
        jsr wait_event
        lda #0
        sta OAMADDR
        lda #99                 ; Y (the sprite shows from line 100)
        sta OAMDATA
        lda #$01                ; the solid tile
        sta OAMDATA
        lda #0
        sta OAMDATA
        lda #100
        sta OAMDATA
        lda #0
        sta PPUSCROLL
        sta PPUSCROLL
        lda #$1E
        sta PPUMASK
        jsr wait_event          ; a rendered frame: the hit flag is set
        jsr wait_event
        jsr count_vblank
        lda count
        sta RES_RAW + 2
        lda count + 1
        sta RES_RAW + 3
        lda #0
        sta PPUCTRL
        sta PPUMASK

        ; Frame IRQ: 4-step mode, interrupt enabled.
        lda #$00
        sta JOY2
        cli
        jsr count_events
        sei
        lda #$40
        sta JOY2
        lda count
        sta RES_RAW + 4
        lda count + 1
        sta RES_RAW + 5

        jsr measure_oam_refresh

        ; DMC rates: IRQs at the end of 17-byte samples, restarted by `dmc_irq`.
        lda #<dmc_irq
        sta irq_handler
        lda #>dmc_irq
        sta irq_handler + 1
        lda #15
        jsr measure_dmc
        sta RES_RAW + 8
        stx RES_RAW + 9
        lda #0
        jsr measure_dmc
        sta RES_RAW + 10
        stx RES_RAW + 11
        jsr evaluate
done:   jmp done

; The OAM refresh measurement (see the header) into RES_RAW + 6.
measure_oam_refresh:
        ldx #0
:       lda oam_pattern,x
        sta OAM_PAGE,x
        inx
        bne :-
        lda #$80
        sta PPUCTRL
        jsr wait_event
        lda #0
        sta OAMADDR
        lda #>OAM_PAGE
        sta OAMDMA
        ; ~5,000 cycles: PAL line ~290 (of the refresh's 265-310).
        ldx #4
@outer: ldy #250
@inner: dey
        bne @inner
        dex
        bne @outer
        lda OAMDATA             ; access on its last cycle
        sta oam_first           ; 3
        ldy #18                 ; 2
@gap:   dey                     ; 18 x 5 - 1
        bne @gap
        lda OAMDATA             ; 4: 98 cycles after the first access
@gap_end:
        jsr oam_step            ; the second read's address / 8
        sta count
        lda oam_first
        jsr oam_step
        eor #$FF
        sec
        adc count
        and #$1F
        sta RES_RAW + 6
        lda #0
        sta RES_RAW + 7
        sta PPUCTRL
        rts
.assert >@gap = >(@gap_end - 1), lderror, "the OAMDATA read gap crosses a page"

; The DMC IRQ period at rate A (see the header): the count in A (low) and X (high).
measure_dmc:
        ora #$80                ; IRQ on, no loop
        sta DMC_FREQ
        lda #0
        sta DMC_START           ; $C000 (the PRG's second mirror: any bytes will do)
        lda #1
        sta DMC_LEN             ; 17 bytes
        lda #$10
        sta SND_CHN
        cli
        jsr count_events
        sei
        lda #0
        sta SND_CHN
        sta DMC_FREQ            ; IRQ off: clears the flag
        lda count
        ldx count + 1
        rts

; The OAM address / 8 that the pattern byte in A names (bits 0-1 and 5-7).
oam_step:
        pha
        and #$03
        sta want
        pla
        lsr
        lsr
        lsr
        and #$1C
        ora want
        rts

; Counts turns of a 27-cycle loop from one event to the EVENTS-th after it, into `count`.
count_events:
        jsr wait_event
        lda events
        clc
        adc #EVENTS
        sta target
        lda #0
        sta count
        sta count + 1
count_loop:
        clc                     ; 2
        lda count               ; 3
        adc #1                  ; 2
        sta count               ; 3
        lda count + 1           ; 3
        adc #0                  ; 2
        sta count + 1           ; 3
        lda events              ; 3
        cmp target              ; 3
        bne count_loop          ; 3
count_loop_end:
        rts
.assert >count_loop = >(count_loop_end - 1), lderror, "count_loop crosses a page"

; Counts turns of a 25-cycle loop from the NMI until the sprite 0 hit flag clears, into `count`.
count_vblank:
        jsr wait_event
        lda #0
        sta count
        sta count + 1
poll_loop:
        clc                     ; 2
        lda count               ; 3
        adc #1                  ; 2
        sta count               ; 3
        lda count + 1           ; 3
        adc #0                  ; 2
        sta count + 1           ; 3
        bit PPUSTATUS           ; 4
        bvs poll_loop           ; 3
poll_loop_end:
        rts
.assert >poll_loop = >(poll_loop_end - 1), lderror, "poll_loop crosses a page"

; Waits for the next event.
wait_event:
        lda events
:       cmp events
        beq :-
        rts

; Tile $01 (solid colour 1) everywhere in the first nametable, attributes 0.
fill_nametable:
        lda #$20
        sta PPUADDR
        lda #$00
        sta PPUADDR
        ldy #4
        ldx #0
        lda #$01
:       sta PPUDATA
        inx
        bne :-
        dey
        bne :-
        lda #$23
        sta PPUADDR
        lda #$C0
        sta PPUADDR
        lda #0
        ldx #64
:       sta PPUDATA
        dex
        bne :-
        rts

; Checks the counts against the region's figures; check 0 picks the region.
evaluate:
        lda #TOLERANCE
        sta tolerance
        lda #0
        sta failed
        lda #$FF
        sta region
        ldx #2
@find:  lda frame_lo,x
        sta want
        lda frame_hi,x
        sta want + 1
        ldy #0
        jsr near
        bcc @found
        dex
        bpl @find
        lda #0
        sta check
        lda RES_RAW
        jsr fail
        jmp @finish
@found: stx region
        ldy #0
        sty check
        txa
        jsr pass
        ldx region
        lda vblank_lo,x
        sta want
        lda vblank_hi,x
        sta want + 1
        ldy #2
        lda #1
        sta check
        jsr judge
        ldx region
        lda irq_lo,x
        sta want
        lda irq_hi,x
        sta want + 1
        ldy #4
        lda #2
        sta check
        jsr judge
        ldx region
        lda oam_want,x
        sta want
        lda #0
        sta want + 1
        ldy #6
        lda #3
        sta check
        jsr judge
        lda #DMC_TOLERANCE
        sta tolerance
        ldx region
        lda dmc15_lo,x
        sta want
        lda dmc15_hi,x
        sta want + 1
        ldy #8
        lda #4
        sta check
        jsr judge
        ldx region
        lda dmc0_lo,x
        sta want
        lda dmc0_hi,x
        sta want + 1
        ldy #10
        lda #5
        sta check
        jsr judge
@finish:
        lda #CHECKS
        sta RES_COUNT
        lda failed
        sta RES_STATUS
        rts

; Check `check`: the count at RES_RAW+Y against `want`.
judge:
        jsr near
        lda RES_RAW,y
        bcc pass
        ; fall through
; Records check `check` as failed, A seen.
fail:
        ldx check
        sta RES_SEEN,x
        lda #1
        sta RES_CODE,x
        inc failed
        rts
; Records check `check` as passed, A seen.
pass:
        ldx check
        sta RES_SEEN,x
        lda #0
        sta RES_CODE,x
        rts

; Carry clear when the count at RES_RAW+Y is within TOLERANCE of `want`. Keeps X and Y.
near:
        lda RES_RAW,y
        sec
        sbc want
        sta count
        lda RES_RAW + 1,y
        sbc want + 1
        sta count + 1
        ; count + tolerance < 2 x tolerance + 1, unsigned 16-bit
        lda count
        clc
        adc tolerance
        sta count
        lda count + 1
        adc #0
        bne @far
        lda tolerance
        asl
        sec
        adc #0                  ; 2 x tolerance + 1 (`want` is spent)
        sta want
        lda count
        cmp want
        rts                     ; carry clear when below
@far:   sec
        rts

; No hex display (stress.inc's show_hex wants a list): the results are in RAM.
hex_list:  .word 0

frame_lo:  .byte <FRAME_NTSC, <FRAME_PAL, <FRAME_DENDY
frame_hi:  .byte >FRAME_NTSC, >FRAME_PAL, >FRAME_DENDY
vblank_lo: .byte <VBLANK_NTSC, <VBLANK_PAL, <VBLANK_DENDY
vblank_hi: .byte >VBLANK_NTSC, >VBLANK_PAL, >VBLANK_DENDY
irq_lo:    .byte <IRQ_NTSC, <IRQ_PAL, <IRQ_DENDY
irq_hi:    .byte >IRQ_NTSC, >IRQ_PAL, >IRQ_DENDY
oam_want:  .byte OAM_NTSC, OAM_PAL, OAM_DENDY
dmc15_lo:  .byte <DMC15_NTSC, <DMC15_PAL, <DMC15_DENDY
dmc15_hi:  .byte >DMC15_NTSC, >DMC15_PAL, >DMC15_DENDY
dmc0_lo:   .byte <DMC0_NTSC, <DMC0_PAL, <DMC0_DENDY
dmc0_hi:   .byte >DMC0_NTSC, >DMC0_PAL, >DMC0_DENDY
; OAM byte n holds n / 8 in the bits an OAMDATA read keeps of every byte (0, 1 and 5-7; an
; attribute byte reads without bits 2-4).
oam_pattern:
.repeat 256, n
        .byte ((n >> 3) & 3) | ((n >> 5) << 5)
.endrepeat

nmi:
        inc events              ; 5
        rti                     ; 6

irq:
        jmp (irq_handler)       ; 5

frame_irq:
        bit SND_CHN             ; 4: acknowledges the frame IRQ (flags only: the loop keeps A)
        inc events              ; 5
        rti                     ; 6

; Acknowledges the DMC IRQ and restarts the sample: the buffer still holds the last byte, so the
; next fetch comes 8 periods after the last one, as if the sample had looped.
dmc_irq:
        pha                     ; 3
        lda #$10                ; 2
        sta SND_CHN             ; 4: clears the DMC IRQ flag, restarts the sample
        pla                     ; 4
        inc events              ; 5
        rti                     ; 6

.segment "VECTORS"
        .word nmi, reset, irq

.segment "CHARS"
        .include "chr_basic.inc"
        .include "chr_basic.inc"
