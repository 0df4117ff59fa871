; mmc5_audio.nes: the MMC5's sound (iNES mapper 5; nesdev "MMC5 audio"), NES 2.0 with 32 KiB PRG ROM
; and 8 KiB CHR ROM. Bank 0 (at $8000, $5114 = $80) starts with a 0 byte and then $5A bytes, for the
; PCM read mode; the code lives in the last bank at $E000.
;
; Checks (expected values from the wiki's register descriptions, never from an emulator):
;  0 $5015 length status: pulse 1 enabled and loaded reads bit 0 set; pulse 2, not enabled in
;    $5015, ignores its load (bit 1 clear)
;  1 the length counters run at 240 Hz: a length of 2 (index 3) has run out two frames later
;  2 a halted length counter holds over two frames; writing 0 to $5015 clears it
;  3 PCM write mode: $5011 = 0 with the IRQ enabled trips it ($5010 reads bit 7 set), the read
;    acknowledges (bit 7 clear after)
;  4 PCM read mode: a read of a 0 byte in $8000-$BFFF trips the IRQ ($5010 = $81: IRQ and mode),
;    the /IRQ line reaches the CPU (one IRQ taken), a non-zero read does not trip it
;
; Then the tones, the APU silent: pulse 1 alone (duty 2, constant volume 15, period 253: 440.39 Hz)
; until frame $40, then pulse 2 (duty 1, volume 8, period $17F) and the PCM DAC at $40 too.
;
; Results (CPU RAM, read by tests/boards/mmc5.rs): $0700 $80 while running, then the number of checks
; not passed; $0701 the number of checks; $0710+n check n: 0 passed, 1 failed, $FF not run; $0740+n
; the value read at the first mismatch (or the last one compared). Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

RES_STATUS = $0700
RES_COUNT  = $0701
RES_CODE   = $0710
RES_SEEN   = $0740
CHECKS     = 5
PRG_8K     = 4

.segment "ZEROPAGE"
tmp:     .res 1
irqs:    .res 1
frames:  .res 1

.segment "IMAGE"
        .byte "NES", $1A
        .byte PRG_8K / 2
        .byte 1                         ; 8 KiB CHR ROM
        .byte $50                       ; mapper 5
        .byte $08                       ; NES 2.0
        .byte $00, $00, $00, $00, $00, $00, $00, $00

        .byte $00                       ; bank 0: the PCM terminator, then samples
        .res $1FFF, $5A
.repeat PRG_8K - 2
        .res $2000, $FF
.endrep
        .org $E000

; A compared with `value` for check `num`.
.macro EXPECT num, value
        ldx #num
        ldy #value
        jsr expect
.endmacro

.macro SET reg, value
        lda #value
        sta reg
.endmacro

; Waits for `n` vblank flags (NMI off).
.macro FRAMES n
        ldx #n
:       bit PPUSTATUS
        bpl :-
        dex
        bne :-
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
        stx SND_CHN
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
        SET $5100, 3                    ; PRG mode 3: $5114 at $8000
        SET $5114, $80

        ; 0: $5015 length status.
        SET $5015, $01
        SET $5000, $1F                  ; counting, constant volume 15
        SET $5003, 3 << 3               ; length 2
        SET $5007, 3 << 3               ; pulse 2 disabled: ignored
        lda $5015
        and #$03
        EXPECT 0, $01

        ; 1: two frames later (8 clocks at 240 Hz) the length has run out.
        FRAMES 2
        lda $5015
        and #$03
        EXPECT 1, $00

        ; 2: halted, it holds; $5015 = 0 clears it.
        SET $5000, $3F
        SET $5003, 1 << 3               ; length 254
        FRAMES 2
        lda $5015
        and #$03
        EXPECT 2, $01
        SET $5015, $00
        lda $5015
        and #$03
        EXPECT 2, $00

        ; 3: PCM write mode, IRQ enabled: a 0 trips, the $5010 read acknowledges.
        SET $5010, $80
        SET $5011, $00
        lda $5010
        and #$81
        EXPECT 3, $80
        lda $5010
        and #$81
        EXPECT 3, $00

        ; 4: PCM read mode: reads of $8000-$BFFF feed the DAC; a 0 trips the IRQ.
        SET $5010, $81
        lda $8001                       ; $5A: no IRQ
        lda $5010
        and #$81
        EXPECT 4, $01
        lda #0
        sta irqs
        cli
        lda $8000                       ; 0: /IRQ, taken after this instruction
        nop
        sei
        lda irqs
        EXPECT 4, 1
        SET $5010, $00                  ; write mode, IRQ off

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
        sta PPUADDR
        sta PPUADDR

        ; The tones: pulse 1 at 440.39 Hz until frame $40.
        SET $5015, $03
        SET $5000, $BF                  ; duty 2, halt, constant volume 15
        SET $5002, 253
        SET $5003, $00
        lda #0
        sta frames
        SET PPUCTRL, $80                ; NMI counts frames
:       lda frames
        cmp #$40
        bne :-
        SET $5004, $78                  ; duty 1, halt, constant volume 8
        SET $5006, $7F
        SET $5007, $01
        SET $5011, $40
forever:
        jmp forever

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
        lda $5010                       ; acknowledges
        inc irqs
        pla
        rti

nmi:
        inc frames
        rti

        .res $FFFA - *, $FF
        .word nmi, reset, irq

        .res $2000, $00                 ; CHR
