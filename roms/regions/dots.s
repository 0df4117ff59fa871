; dots.nes (NROM, iNES 1.0, so the console's region is whatever the emulator is told): the CPU/PPU dot
; pattern across frames, measured from software to the CPU cycle.
;
; A frame is 341 x 262 dots on NTSC (89342; with rendering on, odd frames skip a dot: 89341), 341 x
; 312 on PAL and Dendy (106392), at 3 dots per CPU cycle on NTSC and Dendy and 3.2 on PAL (nesdev
; "Cycle reference chart", "PPU frame timing"; "Consistent frame synchronization": on PAL "there are
; no short frames, and rendering being enabled or disabled has no effect on frame length"). So a
; frame is 29780 2/3 CPU cycles on NTSC with rendering off (29780 1/3 or 29780 2/3 with it on),
; 33247.5 on PAL and 35464 on Dendy, and the VBlank flag is set at a point of the CPU cycle that
; walks by a third of a cycle per frame (NTSC), alternates between two halves (PAL) or stays (Dendy).
;
; Sync (nesdev "PPU frame timing", "Synchronizing the CPU and PPU clocks"): with NMIs and rendering
; off, the CPU polls $2002 until the flag is set (a 7-cycle loop), then reads it once per frame every
; SYNC_PERIOD cycles, starting 8 cycles early. SYNC_PERIOD is the frame plus the region's step (1/3
; cycle NTSC: 29781; 1/2 PAL: 33248; 1 Dendy: 35465), so the read moves later by that step per frame
; and the first read that sees the flag is less than a step after the flag's first visible point:
; the flag is first visible in that very cycle, and where it falls in the cycle is known to a step.
; From there the cycle of the first read that sees the flag in each of the next frames follows
; from the frame lengths alone (E_k: the cycle count from the sync read; Δk = E_k - E_k-1):
;   NTSC, rendering off   Δ 29781, 29781, 29780, repeating (three frames are 89342 cycles)
;   NTSC, rendering on    Δ 29781, 29780, repeating (two frames are 178683 dots = 59561 cycles,
;                         whichever of the two frames skips the dot)
;   PAL, either           Δ 33248, 33247, repeating (two frames are 66495 cycles)
;   Dendy, either         Δ 35464
; The ROM reads $2002 once per frame for 12 frames after the sync: at E_k in frames 1-6 (the flag
; must be seen) and at E_k - 1 in frames 7-12 (it must not be: a cycle earlier), so every frame of
; each pattern's period is checked on both sides. A read that misses leaves the flag alone (or, one
; dot before it is set, suppresses it for the frame: nesdev "PPU frame timing"), so each frame's
; read stands alone. The first read of a frame that sees the flag is the only read near it.
;
; Region: NMI to NMI twice, counted in turns of a 27-cycle loop (as timing.nes), nearest of the three.
;
; Results (CPU RAM, the check ROMs' table, read by tests/regions.rs):
;   $0700  $80 while measuring, then the number of failed checks (0: all passed)
;   $0701  number of checks (5)
;   $0710+n  check n: 0 passed, 1 failed, $FF not run
;   $0740+n  check 0: the region recognized (0 NTSC, 1 PAL, 2 Dendy; $FF none); checks 1 and 3: the
;            frames 1-6 bits of the run's mask (frame 1 in bit 5; $3F expected), checks 2 and 4: its
;            frames 7-12 bits (frame 7 in bit 5; $00 expected)
;   $0760    the NMI-to-NMI count, then the rendering-off and rendering-on masks (16 bits each,
;            little-endian): frame k's read in bit 12 - k (1: the flag was seen); $F000 when the sync
;            found no flag within SYNC_TRIES frames
;   $10      (zero page) 0 while measuring, 1 when every check passed, else 1 + the failed checks
;            as bits (check n in bit n): the conformance runner's screen protocol reads it
; Checks: 0 frame length is a region's, 1 rendering off: flag seen at E_k (frames 1-6), 2 rendering
; off: not seen at E_k - 1 (frames 7-12), 3 and 4 the same with rendering on.
; Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

RES_STATUS = $0700
RES_COUNT  = $0701
RES_CODE   = $0710
RES_SEEN   = $0740
RES_RAW    = $0760
CHECKS     = 5
FRAMES     = 12         ; reads after a sync: 6 at E_k, 6 at E_k - 1
SYNC_TRIES = 40         ; frames the sync may take (NTSC needs at most 8 / (1/3) = 24)
MASK_ON    = $08        ; background on: rendering
PAD_NTSC   = 2
PAD_PAL    = 0
PAD_DENDY  = 0

COUNT_LOOP = 27         ; CPU cycles per turn of `count_events`
NMI_COST   = 18         ; NMI sequence 7, inc zp 5, rti 6
EVENTS     = 2
; NMI to NMI, rendering off, twice: 341 x 262 dots at 3 per cycle (NTSC), 341 x 312 at 3.2 (PAL),
; 341 x 312 at 3 (Dendy).
FRAME_NTSC  = (EVENTS * 341 * 262 - 3 * EVENTS * NMI_COST) / (3 * COUNT_LOOP)
FRAME_PAL   = (EVENTS * 341 * 312 * 5 - 16 * EVENTS * NMI_COST) / (16 * COUNT_LOOP)
FRAME_DENDY = (EVENTS * 341 * 312 - 3 * EVENTS * NMI_COST) / (3 * COUNT_LOOP)
; The count's bounds: halfway between neighbours, as far again outside.
BOUND_LOW   = FRAME_NTSC - (FRAME_PAL - FRAME_NTSC) / 2
BOUND_NP    = (FRAME_NTSC + FRAME_PAL) / 2
BOUND_PD    = (FRAME_PAL + FRAME_DENDY) / 2
BOUND_HIGH  = FRAME_DENDY + (FRAME_DENDY - FRAME_PAL) / 2

; Each region's sync period and the shortest read-to-read period of its run (BASE = the shortest
; Δ - 1; a frame adds 0-2 cycles to it, see `run_frame`).
SYNC_NTSC  = 29781
SYNC_PAL   = 33248
SYNC_DENDY = 35465
BASE_NTSC  = 29779
BASE_PAL   = 33246
BASE_DENDY = 35463

; Frame k's cycles beyond BASE (k = 1-12): Δk - BASE, one less in frame 7 (the first read a cycle
; early), as two bit patterns added (frame k in bit k - 1): EXTRA = P1 + P2, P1 = (EXTRA >= 1),
; P2 = (EXTRA = 2).
.macro PATTERNS name, base, delta_expr
        .local extra
        .repeat FRAMES, i
                extra .set (delta_expr) - base - ((i + 1) = 7)
                .if extra < 0 || extra > 2
                        .error "a frame's extra cycles are out of 0-2"
                .endif
                .if i = 0
                        .ident(.concat(name, "_P1")) .set 0
                        .ident(.concat(name, "_P2")) .set 0
                .endif
                .ident(.concat(name, "_P1")) .set .ident(.concat(name, "_P1")) | ((extra >= 1) << i)
                .ident(.concat(name, "_P2")) .set .ident(.concat(name, "_P2")) | ((extra = 2) << i)
        .endrepeat
.endmacro

; k = i + 1. NTSC off: 29781, 29781, 29780; NTSC on: 29781, 29780; PAL: 33248, 33247; Dendy: 35464.
PATTERNS "NTSC_OFF", BASE_NTSC, 29781 - (((i + 1) .mod 3) = 0)
PATTERNS "NTSC_ON", BASE_NTSC, 29780 + ((i + 1) & 1)
PATTERNS "PAL", BASE_PAL, 33247 + ((i + 1) & 1)
PATTERNS "DENDY", BASE_DENDY, 35464

.segment "HEADER"
        .byte "NES", $1A, 1, 1, $00, $00    ; mapper 0, 16 KiB PRG, 8 KiB CHR, iNES 1.0
        .res 8, 0

.segment "ZEROPAGE"
verdict: .res 1         ; $10: 0 measuring, 1 passed, 1 + failed checks as bits
events:  .res 1         ; NMIs taken
target:  .res 1
count:   .res 2
region:  .res 1         ; 0 NTSC, 1 PAL, 2 Dendy, $FF none
tries:   .res 1         ; sync frames left
frames_left: .res 1
pat1:    .res 2         ; `run_frame`'s extra cycles, shifted out a bit per frame
pat2:    .res 2
seen:    .res 2         ; the flag as read, a bit per frame
mask:    .res 1         ; PPUMASK during the run
failed:  .res 1
failed_bits: .res 1
check:   .res 1
want_byte: .res 1

.segment "CODE"
.include "stress.inc"

; Exactly `cycles` CPU cycles (0 or at least 2). Clobbers X, Y and N, Z; keeps A and C.
.macro DELAY cycles
        .local outer, inner, short, rest, left
        .if cycles = 1 || cycles < 0
                .error "DELAY needs 0 or at least 2 cycles"
        .endif
        ; Whole turns of a 1286-cycle outer loop (ldy 2, each turn ldx 2 + 256 x 5 - 1 + dey 2 +
        ; bne 3, the last bne 2: 1286 x n + 1), leaving at least 8 for the inner loop.
        .if cycles >= 1295
                ldy #(cycles - 9) / 1286
outer:          ldx #0
inner:          dex
                bne inner
                .assert >inner = >*, lderror, "DELAY's inner loop crosses a page"
                dey
                bne outer
                .assert >outer = >*, lderror, "DELAY's outer loop crosses a page"
                rest .set cycles - 1286 * ((cycles - 9) / 1286) - 1
        .else
                rest .set cycles
        .endif
        ; An inner loop of n turns: ldx 2 + 5 n - 1; at most 256 turns.
        .if rest >= 8
                .if (rest - 3) / 5 >= 256
                        ldx #0
short:                  dex
                        bne short
                        .assert >short = >*, lderror, "DELAY's loop crosses a page"
                        left .set rest - 1281
                .else
                        ldx #(rest - 3) / 5
short:                  dex
                        bne short
                        .assert >short = >*, lderror, "DELAY's loop crosses a page"
                        left .set rest - 1 - 5 * ((rest - 3) / 5)
                .endif
        .else
                left .set rest
        .endif
        .if left .mod 2 = 1
                jmp :+                  ; 3
:
                left .set left - 3
        .endif
        .repeat left / 2
                nop
        .endrepeat
.endmacro

; A sync (rendering off) then FRAMES reads, at the region's sync period and base (see the header);
; `pat1`, `pat2`, `mask`, `frames_left`, `tries` and `seen` set beforehand. Ends in VBlank.
.macro DOT_RUN period, base
        .local coarse, fine, read, synced, frame, extra1, extra2, timeout, done
        lda #0
        sta PPUMASK
        bit PPUSTATUS
coarse: bit PPUSTATUS           ; 4: the read is its last cycle
        bpl coarse              ; 3 (2 out): the flag seen less than 7 cycles after it became visible
        .assert >coarse = >*, lderror, "the coarse loop crosses a page"
        DELAY period - 17       ; the first fine read period - 8 cycles after the coarse one: early
        jmp read                ; 3
fine:   DELAY period - 14
read:   bit PPUSTATUS           ; 4: period cycles after the previous read
        bmi synced              ; 2 (3 out)
        dec tries               ; 5
        bne fine                ; 3
        .assert >fine = >*, lderror, "the fine loop crosses a page"
        jmp timeout
synced: ; The read that saw the flag is cycle 0; frame 1's read is at base + extras (see below).
        lda mask                ; 3
        sta PPUMASK             ; 4: rendering on or off from this VBlank on
        DELAY 10
frame:  lsr pat1 + 1            ; 5
        ror pat1                ; 5
        bcs extra1              ; 3 when set, else 2
extra1: lsr pat2 + 1            ; 5
        ror pat2                ; 5
        bcs extra2              ; 3 when set, else 2
extra2: DELAY base - 48
        lda PPUSTATUS           ; 4: read on its last cycle
        asl a                   ; 2: the flag into carry
        rol seen                ; 5
        rol seen + 1            ; 5
        dec frames_left         ; 5
        bne frame               ; 3
        .assert >frame = >*, lderror, "the frame loop crosses a page"
        .assert >extra1 = >(extra1 - 1), lderror, "bcs extra1 crosses a page"
        .assert >extra2 = >(extra2 - 1), lderror, "bcs extra2 crosses a page"
        ; Read to read: asl 2 + rol 5 + rol 5 + dec 5 + bne 3 + lsr 5 + ror 5 + bcs 2 + lsr 5 +
        ; ror 5 + bcs 2 + (base - 48) + lda 4 = base, plus a cycle for each set pattern bit. From the
        ; sync read to the first: bmi 3 + lda 3 + sta 4 + 10 + 24 + (base - 48) + lda 4 = base, the same.
        jmp done
timeout:
        lda #$F0
        sta seen + 1
done:   lda #0
        sta PPUMASK
.endmacro

reset:
        BOOT
        jsr init_video
        lda #$80
        sta RES_STATUS
        ldx #CHECKS - 1
        lda #$FF
:       sta RES_CODE,x
        dex
        bpl :-

        ; Region: NMI to NMI, rendering off.
        lda #$80
        sta PPUCTRL
        jsr count_events
        lda #0
        sta PPUCTRL
        lda count
        sta RES_RAW
        lda count + 1
        sta RES_RAW + 1
        jsr find_region

        lda #0
        jsr dot_run
        lda seen
        sta RES_RAW + 2
        lda seen + 1
        sta RES_RAW + 3
        lda #MASK_ON
        jsr dot_run
        lda seen
        sta RES_RAW + 4
        lda seen + 1
        sta RES_RAW + 5
        jsr evaluate
done:   jmp done

; The region's run with PPUMASK = A during its frames (the sync is always with rendering off).
dot_run:
        sta mask
        lda #FRAMES
        sta frames_left
        lda #SYNC_TRIES
        sta tries
        lda #0
        sta seen
        sta seen + 1
        ldx region
        bne @not_ntsc
        lda mask
        bne @ntsc_on
        lda #<NTSC_OFF_P1
        sta pat1
        lda #>NTSC_OFF_P1
        sta pat1 + 1
        lda #<NTSC_OFF_P2
        sta pat2
        lda #>NTSC_OFF_P2
        sta pat2 + 1
        jmp run_ntsc
@ntsc_on:
        lda #<NTSC_ON_P1
        sta pat1
        lda #>NTSC_ON_P1
        sta pat1 + 1
        lda #<NTSC_ON_P2
        sta pat2
        lda #>NTSC_ON_P2
        sta pat2 + 1
        jmp run_ntsc
@not_ntsc:
        dex
        bne @not_pal
        lda #<PAL_P1
        sta pat1
        lda #>PAL_P1
        sta pat1 + 1
        lda #<PAL_P2
        sta pat2
        lda #>PAL_P2
        sta pat2 + 1
        jmp run_pal
@not_pal:
        dex
        bne @none
        lda #<DENDY_P1
        sta pat1
        lda #>DENDY_P1
        sta pat1 + 1
        lda #<DENDY_P2
        sta pat2
        lda #>DENDY_P2
        sta pat2 + 1
        jmp run_dendy
@none:  lda #$F0                ; no region: as a failed sync
        sta seen + 1
        rts

; Padding so that no branch of a run's timed loops crosses a page (the asserts check it).
        .res PAD_NTSC, $EA
run_ntsc:
        DOT_RUN SYNC_NTSC, BASE_NTSC
        rts
        .res PAD_PAL, $EA
run_pal:
        DOT_RUN SYNC_PAL, BASE_PAL
        rts
        .res PAD_DENDY, $EA
run_dendy:
        DOT_RUN SYNC_DENDY, BASE_DENDY
        rts

; Counts turns of a 27-cycle loop from one NMI to the EVENTS-th after it, into `count`.
count_events:
        lda events
:       cmp events
        beq :-
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

; `region` from `count`: the nearest region's figure, $FF outside them all.
find_region:
        ldx #$FF
        ldy #0
@next:  lda count
        cmp bounds_lo,y
        lda count + 1
        sbc bounds_hi,y
        bcc @found              ; count < bounds[y]
        inx
        iny
        cpy #4
        bne @next
        ldx #$FF                ; at or above the highest bound
@found: stx region              ; $FF too when below the lowest
        rts

; Checks 0-4 from the counts (see the header).
evaluate:
        lda #0
        sta failed
        sta failed_bits
        sta check
        lda region
        cmp #3
        jsr verdict_carry       ; carry clear (a region) passes
        ; Rendering off, then on.
        ldy #2
        jsr judge_mask
        ldy #4
        jsr judge_mask
        lda #CHECKS
        sta RES_COUNT
        lda failed
        sta RES_STATUS
        lda failed_bits
        clc
        adc #1
        sta verdict
        rts

; Checks `check` and `check` + 1 from the mask at RES_RAW + Y: frames 1-6 all seen (and the top
; four bits clear: the sync found the flag), frames 7-12 none seen.
judge_mask:
        lda RES_RAW,y           ; frames 5-12 in bits 7-0
        sta count
        lda RES_RAW + 1,y       ; frames 1-4 in bits 3-0, the timeout's bits 7-4
        sta count + 1
        ; Frames 1-6: bits 11-6 of the mask, with bits 13-12 (the timeout's) above them.
        lda count + 1
        sta want_byte
        lda count
        rol a
        rol want_byte
        rol a
        rol want_byte
        lda want_byte
        eor #$3F
        cmp #1                  ; carry clear when it was $3F
        lda want_byte
        and #$3F
        jsr verdict_carry
        ; Frames 7-12: bits 5-0, none seen, and no timeout (bits 15-12).
        lda count + 1
        and #$F0
        sta want_byte
        lda count
        and #$3F
        ora want_byte
        cmp #1                  ; carry clear when 0
        lda count
        and #$3F
        ; fall through
; Records check `check` (then moves to the next) as passed (carry clear) or failed, A seen.
verdict_carry:
        ldx check
        sta RES_SEEN,x
        lda #0
        bcc :+
        lda failed_bits
        ora bit_of,x
        sta failed_bits
        inc failed
        lda #1
:       sta RES_CODE,x
        inc check
        rts

bit_of:    .byte $01, $02, $04, $08, $10
bounds_lo: .byte <BOUND_LOW, <BOUND_NP, <BOUND_PD, <BOUND_HIGH
bounds_hi: .byte >BOUND_LOW, >BOUND_NP, >BOUND_PD, >BOUND_HIGH

; No hex display (stress.inc's show_hex wants a list): the results are in RAM.
hex_list:  .word 0

nmi:
        inc events              ; 5
        rti                     ; 6

irq:
        rti

.segment "VECTORS"
        .word nmi, reset, irq

.segment "CHARS"
        .include "chr_basic.inc"
        .include "chr_basic.inc"
