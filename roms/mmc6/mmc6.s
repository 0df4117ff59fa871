; mmc6.nes (mapper 4 submapper 1, MMC6 on HKROM): checks what sets the MMC6 apart from the MMC3,
; then keeps running scanline IRQs and RAM accesses for the determinism and schedule tests. The
; expectations come from the hardware documentation: the nesdev wiki's "MMC6" page for the RAM; for
; the IRQ counter, the old behaviour as nesdev "MMC3" ("IRQ Specifics") defines it, which blargg's
; mmc3_test 6-MMC6 and kevtris's MMC6 notes give the MMC6.
;
; The chip's 1 KiB of RAM sits at $7000-$7FFF in two 512-byte halves ($7000-$71FF, $7200-$73FF),
; mirrored every 1 KiB; $6000-$6FFF is not decoded. $8000 bit 5 enables the RAM; while it is clear
; $A001 is held at 0 and writes to it are ignored. $A001 bits 7/6 enable reading/writing the upper
; half, bits 5/4 the lower half; a write enable counts only with its read enable. With neither half
; readable, $7000-$7FFF is open bus; with one readable, the other reads 0. The IRQ counter, reloaded
; with 0, raises the IRQ only when a $C001 reload was requested, not at every clock like the Sharp
; MMC3's.
;
; Open bus reads use LDA absolute, so they return the address's high byte (the last byte on the
; data bus, nesdev "Open bus behavior"): $70 for $70xx, $60 for $60xx, values the checks never store.
;
; Results (CPU RAM, read by tests/mmc6.rs):
;   $0700  $80 while the checks run, then the number of failed checks (0: all passed)
;   $0701  number of checks
;   $0702  boot count: $7180 (battery-backed) incremented at every power-on or reset
;   $0710+n  check n: 0 passed, 1 failed, $FF not run
;   $0740+n  check n: the value read at the first mismatch (at the last comparison if none)
; The screen shows the same. Checks:
;   0 RAM reads back       1 mirrors read        2 mirrors write       3 $6000-$6FFF open bus
;   4 disabled: open bus   5 disabled: no write  6 $A001 ignored off   7 disable clears $A001
;   8 lower half only      9 upper half only     10 write bits alone   11 write-protected
;   12 lower writable      13 upper writable     14 write needs read   15 IRQ: $C001 reload to 0
;   16 IRQ: no repeat at 0 17 IRQ: latch 1       18 IRQ: decrement to 0, then none
; Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"
.include "mmc3.inc"

MMC6_PROTECT = $A001    ; HhLl xxxx: read/write enables of $7200-$73FF (H/h) and $7000-$71FF (L/l)
RAM_ENABLE   = $20      ; $8000 bit 5

RES_STATUS = $0700
RES_COUNT  = $0701
RES_BOOTS  = $0702
RES_CODE   = $0710
RES_SEEN   = $0740
CHECKS     = 19
BOOTS      = $7180      ; battery-backed boot counter (lower half; the running loop never writes it)

.segment "HEADER"
        .byte "NES", $1A
        .byte 2                 ; 32 KiB PRG ROM
        .byte 1                 ; 8 KiB CHR ROM
        .byte $42               ; mapper 4 (low nibble), battery
        .byte $08               ; NES 2.0
        .byte $10               ; submapper 1 (MMC6)
        .byte $00
        .byte $40               ; PRG-NVRAM 64 << 4 = 1 KiB, no volatile PRG RAM
        .byte $00, $00, $00, $00, $00

.segment "ZEROPAGE"
irq_count: .res 1       ; IRQs taken (the checks reset it)
irq_total: .res 1       ; IRQs taken in the running loop
latch:     .res 1
chk:       .res 1       ; checksum of the running loop's RAM reads
irq_rnd:   .res 1       ; the NMI handler's own generator (the main LFSR is not reentrant)

.segment "CODE"
.include "stress.inc"

; Enables the RAM ($8000 bit 5) and writes `protect` to $A001.
.macro RAM_ON protect
        lda #RAM_ENABLE
        sta MMC3_SELECT
        lda #protect
        sta MMC6_PROTECT
.endmacro

; Clears $8000 bit 5: the RAM is disabled and $A001 held at 0.
.macro RAM_OFF
        lda #0
        sta MMC3_SELECT
.endmacro

; Compares A with `expected` for check `num`.
.macro EXPECT num, expected
        ldx #num
        ldy #expected
        jsr expect
.endmacro

; Writes `value` to each address given.
.macro POKE value, a1, a2
        lda #value
        sta a1
.ifnblank a2
        sta a2
.endif
.endmacro

reset:
        BOOT
        MMC3_SET_BANKS
        lda #0
        sta MMC3_MIRROR         ; vertical
        sta MMC3_DISABLE
        lda #$80
        sta RES_STATUS
        RAM_ON $F0
        inc BOOTS
        lda BOOTS
        sta RES_BOOTS
        jsr run_checks
        jsr show_results
        ; Keep going: scanline IRQs (sprites fetch from $1000, background from $0000: one A12 rise a
        ; line) and RAM accesses under changing enables.
        lda #1
        sta irq_rnd
        lda #0
        sta MMC3_DISABLE
        cli
        lda #%10001000          ; NMI on, sprites at $1000, background at $0000
        sta PPUCTRL
main:
        jsr wait_nmi
        ; A new RAM configuration: enabled in 7 frames of 8, any $A001 value.
        jsr lfsr_step
        and #7
        bne :+
        RAM_OFF
        jmp @access
:       lda #RAM_ENABLE
        sta MMC3_SELECT
        jsr lfsr_step
        sta MMC6_PROTECT
@access:
        ; Eight reads anywhere in $6000-$7FFF, eight writes to the upper half and its mirrors.
        ldy #8
@next:  jsr lfsr_step
        and #$1F
        ora #$60
        sta ptr+1
        jsr lfsr_step
        sta ptr
        ldx #0
        lda (ptr,x)
        clc
        adc chk
        sta chk
        jsr lfsr_step
        and #$0D
        ora #$72                ; $72/$73/$76/$77/$7A/$7B/$7E/$7F: address bit 9 set
        sta ptr+1
        jsr lfsr_step
        sta ptr
        lda frame
        sta (ptr,x)
        dey
        bne @next
        jmp main

bank_init:
        .byte 0, 2, 4, 5, 6, 7, 0, 1

; A = value read, X = check, Y = expected. A mismatch marks the check failed and keeps the value;
; a check stays failed once it has failed.
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

; One rising edge of PPU A12 through PPUADDR (rendering off): $0000, then $1000 after A12 stayed
; low for more than three M2 cycles. The IRQ, if any, is taken before this returns.
clock_a12:
        lda #$00
        sta PPUADDR
        sta PPUADDR
        lda #$10
        sta PPUADDR
        sta PPUADDR
        nop
        nop
        rts

; Clocks the counter X times.
clock_a12_x:
:       jsr clock_a12
        dex
        bne :-
        rts

run_checks:
        lda #$FF
        ldx #CHECKS-1
:       sta RES_CODE,x
        dex
        bpl :-
        lda #CHECKS
        sta RES_COUNT

        ; 0: enabled, all of $A001 set: both halves read back what was written.
        RAM_ON $F0
        POKE $11, $7000
        POKE $22, $7200
        POKE $33, $71FF
        POKE $44, $73FF
        lda $7000
        EXPECT 0, $11
        lda $7200
        EXPECT 0, $22
        lda $71FF
        EXPECT 0, $33
        lda $73FF
        EXPECT 0, $44

        ; 1: the 1 KiB repeats through $7000-$7FFF.
        lda $7400
        EXPECT 1, $11
        lda $7600
        EXPECT 1, $22
        lda $7C00
        EXPECT 1, $11
        lda $7E00
        EXPECT 1, $22
        lda $77FF
        EXPECT 1, $44
        lda $7DFF
        EXPECT 1, $33

        ; 2: a write through a mirror lands in the RAM.
        POKE $55, $7A05
        lda $7205
        EXPECT 2, $55
        lda $7E05
        EXPECT 2, $55

        ; 3: $6000-$6FFF is not decoded: open bus, writes go nowhere.
        lda $6000
        EXPECT 3, $60
        lda $6FFF
        EXPECT 3, $6F
        lda $6200
        EXPECT 3, $62
        POKE $99, $6000, $6200
        lda $7000
        EXPECT 3, $11
        lda $7200
        EXPECT 3, $22

        ; 4: $8000 bit 5 clear disables the RAM: open bus.
        RAM_OFF
        lda $7000
        EXPECT 4, $70
        lda $7200
        EXPECT 4, $72
        lda $7FFF
        EXPECT 4, $7F

        ; 5: writes while disabled are ignored.
        POKE $EE, $7000, $7200
        RAM_ON $F0
        lda $7000
        EXPECT 5, $11
        lda $7200
        EXPECT 5, $22

        ; 6: $A001 is ignored while the RAM is disabled (enabling it again leaves $A001 at 0).
        RAM_OFF
        POKE $F0, MMC6_PROTECT
        POKE RAM_ENABLE, MMC3_SELECT
        lda $7000
        EXPECT 6, $70
        lda $7200
        EXPECT 6, $72

        ; 7: disabling clears $A001: after enabling again nothing is readable or writable.
        RAM_ON $F0
        lda $7000
        EXPECT 7, $11
        RAM_OFF
        POKE RAM_ENABLE, MMC3_SELECT
        lda $7000
        EXPECT 7, $70
        lda $7200
        EXPECT 7, $72
        POKE $EE, $7000, $7200
        RAM_ON $F0
        lda $7000
        EXPECT 7, $11
        lda $7200
        EXPECT 7, $22

        ; 8: only the lower half readable: the upper half reads 0.
        RAM_ON $20
        lda $7000
        EXPECT 8, $11
        lda $7400
        EXPECT 8, $11
        lda $7200
        EXPECT 8, $00
        lda $7600
        EXPECT 8, $00

        ; 9: only the upper half readable: the lower half reads 0.
        RAM_ON $80
        lda $7200
        EXPECT 9, $22
        lda $7E00
        EXPECT 9, $22
        lda $7000
        EXPECT 9, $00
        lda $7C00
        EXPECT 9, $00

        ; 10: write enables without read enables: open bus, and writes are ignored.
        RAM_ON $50
        lda $7000
        EXPECT 10, $70
        lda $7200
        EXPECT 10, $72
        POKE $EE, $7000, $7200
        RAM_ON $F0
        lda $7000
        EXPECT 10, $11
        lda $7200
        EXPECT 10, $22

        ; 11: both readable, neither writable: write-protected.
        RAM_ON $A0
        POKE $EE, $7000, $7200
        lda $7000
        EXPECT 11, $11
        lda $7200
        EXPECT 11, $22

        ; 12: only the lower half writable.
        RAM_ON $B0
        POKE $66, $7000
        POKE $77, $7200
        lda $7000
        EXPECT 12, $66
        lda $7200
        EXPECT 12, $22

        ; 13: only the upper half writable.
        RAM_ON $E0
        POKE $88, $7000
        POKE $99, $7200
        lda $7000
        EXPECT 13, $66
        lda $7200
        EXPECT 13, $99

        ; 14: a write enable needs its read enable: upper read/write, lower write only.
        RAM_ON $D0
        POKE $AB, $7000
        lda $7000
        EXPECT 14, $00
        POKE $CD, $7200
        lda $7200
        EXPECT 14, $CD
        RAM_ON $F0
        lda $7000
        EXPECT 14, $66

        ; The IRQ counter, clocked by hand with rendering off; the handler counts, acknowledges and
        ; re-enables.
        bit PPUSTATUS
        sta MMC3_DISABLE
        ; 15: latch 0 and a $C001 reload: the clock that reloads 0 raises the IRQ.
        lda #0
        sta MMC3_LATCH
        sta MMC3_RELOAD
        sta MMC3_ENABLE
        sta irq_count
        cli
        jsr clock_a12
        lda irq_count
        EXPECT 15, 1
        ; 16: the counter is 0 with latch 0: later clocks reload 0 without a $C001 request, and the
        ; MMC6 raises no IRQ for them (a Sharp MMC3 would raise one every clock).
        ldx #3
        jsr clock_a12_x
        lda irq_count
        EXPECT 16, 1
        ; 17: latch 1: reload to 1, 0 (IRQ), reload to 1, 0 (IRQ).
        lda #1
        sta MMC3_LATCH
        sta MMC3_RELOAD
        lda #0
        sta irq_count
        ldx #4
        jsr clock_a12_x
        lda irq_count
        EXPECT 17, 2
        ; 18: latch 1, reload to 1; latch 0; decrement to 0 (IRQ); two natural reloads to 0 (none).
        lda #1
        sta MMC3_LATCH
        sta MMC3_RELOAD
        lda #0
        sta irq_count
        jsr clock_a12
        lda #0
        sta MMC3_LATCH
        ldx #3
        jsr clock_a12_x
        lda irq_count
        EXPECT 18, 1
        sei
        sta MMC3_DISABLE

        ; The verdict: checks not passed (failed or not run).
        ldy #0
        ldx #CHECKS-1
@count: lda RES_CODE,x
        beq :+
        iny
:       dex
        bpl @count
        sty RES_STATUS
        rts

; The results on screen: a line per check ("NN OK" or "NN FAIL XX" with the value read), the boot
; count and the verdict.
show_results:
        jsr init_video
        jsr print
        .word $2044
        .byte "MMC6 (HKROM) TEST", 0
        lda #$20
        sta ptr+1
        lda #$A4
        sta ptr
        ldx #0
@line:  lda ptr+1
        sta PPUADDR
        lda ptr
        sta PPUADDR
        txa
        jsr put_hex
        lda #' '
        sta PPUDATA
        lda RES_CODE,x
        bne @fail
        lda #'O'
        sta PPUDATA
        lda #'K'
        sta PPUDATA
        jmp @step
@fail:  ldy #0
:       lda fail_text,y
        sta PPUDATA
        iny
        cpy #5
        bne :-
        lda RES_SEEN,x
        jsr put_hex
@step:  lda ptr
        clc
        adc #32
        sta ptr
        bcc :+
        inc ptr+1
:       inx
        cpx #CHECKS
        bne @line
        jsr print
        .word $2304
        .byte "BOOTS ", 0
        lda RES_BOOTS
        jsr put_hex
        lda RES_STATUS
        bne :+
        jsr print
        .word $2324
        .byte "ALL PASSED", 0
        rts
:       jsr print
        .word $2324
        .byte "FAILED", 0
        lda RES_STATUS
        jmp put_hex

fail_text:
        .byte "FAIL "

; A as two hex digits at the PPU address.
put_hex:
        pha
        lsr
        lsr
        lsr
        lsr
        tay
        lda hex_digits,y
        sta PPUDATA
        pla
        and #$0F
        tay
        lda hex_digits,y
        sta PPUDATA
        rts

nmi:
        PUSH_AXY
        OAM_DMA_AND_HEX
        SCROLL_CTRL_MASK %10001000, %00011110
        ; Arm the first IRQ of the frame: latch 0 one frame in four (one IRQ, after the $C001
        ; reload), else 0-63 (repeating every latch + 1 lines).
        IRQ_RANDOM_STEP
        cmp #$40
        bcs :+
        lda #0
:       and #$3F
        sta latch
        MMC3_ARM_IRQ
        FRAME_DONE
        PULL_AXY
        rti

irq:
        pha
        inc irq_count
        inc irq_total
        sta MMC3_DISABLE        ; acknowledge
        sta MMC3_ENABLE
        lda irq_total
        sta $7F00               ; the upper half's $7300, if writable now
        pla
        rti

hex_list:
        .word $2344
        .byte frame+1
        .word $2346
        .byte frame
        .word $2349
        .byte irq_total
        .word $234C
        .byte chk
        .word $234F
        .byte latch
        .word 0

.segment "VECTORS"
        .word nmi, reset, irq

.segment "CHARS"
        .include "chr_basic.inc"
        .include "chr_basic.inc"
