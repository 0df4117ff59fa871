; m111_gtrom.nes: GTROM / Cheapocabra (iNES mapper 111; nesdev "GTROM"): one register at $5000-$5FFF
; and $7000-$7FFF, `grnc pppp`: the 32 KiB PRG bank (pppp), the 8 KiB CHR RAM bank (c), the 8 KiB
; nametable RAM page (n: four screens of the board's RAM, no CIRAM); LEDs (g, r) not observable.
; 128 KiB of PRG here; the probe that switches PRG runs from CPU RAM.
; Checks: 0 pppp selects each 32 KiB bank; 1 $7FFF is the register too, $6000 and $4FFF are not;
; 2 c selects one of two CHR RAM banks; 3 four distinct screens per page, n selects the page; 4 the
; pattern and nametable RAM are apart (bank 1 of CHR keeps its byte over nametable writes). The
; flash (the SST39SF0x0 datasheet's command sequences; the wiki: every write to $8000-$FFFF goes to
; the flash, its $5555 at $D555 and $2AAA at $AAAA in any bank), run from CPU RAM, as programs must:
; 5 software ID: $BF, and $B5 for this image's 128 KiB (SST39SF010A), at even and odd addresses of
; every window, memory again after $F0; 6 byte program of $FF to $A5, read twice alike (complete at
; once: no toggling status), then $5A over it reads $00 (programming clears bits only); 7 sector
; erase: the 4 KiB sector reads $FF, the next sector keeps its tag, and the erased byte programs
; to $3C; 8 programming through the banking: bank 2's $E400 takes $C3, bank 1's stays $FF.
; Licence: MIT OR Apache-2.0 (ours).
MAPPER = 111
SUBMAPPER = 0
PRG_8K = 16
CHR_1K = 0
PRG_RAM_SHIFT = 0
CHR_RAM_SHIFT = 9               ; 32 KiB: the board's RAM
MIRROR_V = $08                  ; four-screen
CHECKS = 9
HOME_ADDR = $5000
HOME_VALUE = PRG_8K / 4 - 1     ; the last 32 KiB bank, where the code is
.include "checks.inc"

RAM_CODE = $0300
; The probe's argument and results (zero page below the linker's ZP, which starts at $10).
value = $00
addr  = $01                     ; 2 bytes
seen  = $03                     ; 4 bytes: the tags at $8000, $A000, $C000, $E000
; The flash routines' (run from FLASH_CODE).
FLASH_CODE = $0500
fbank = $07                     ; the 32 KiB bank for the program, erase or read
fdata = $08                     ; the byte to program
faddr = $09                     ; 2 bytes: the CPU address
fread = $0B                     ; 5 bytes: what the routine read back

; Writes `v` to the register address `target` and reads the four PRG tags into `seen` (from RAM).
.macro PROBE target, v
        lda #<(target)
        sta addr
        lda #>(target)
        sta addr+1
        lda #v
        sta value
        jsr RAM_CODE
.endmacro

; Checks `num`: the tags of 32 KiB bank `bank`.
.macro EXPECT_BANK num, bank
        lda seen
        EXPECT num, bank * 4
        lda seen+1
        EXPECT num, bank * 4 + 1
        lda seen+2
        EXPECT num, bank * 4 + 2
        lda seen+3
        EXPECT num, bank * 4 + 3
.endmacro

run_checks:
        ldx #probe_end - RAM_CODE - 1
:       lda probe_image,x
        sta RAM_CODE,x
        dex
        bpl :-

        PROBE $5000, $00
        EXPECT_BANK 0, 0
        PROBE $5FFF, $F1
        EXPECT_BANK 0, 1
        PROBE $5000, $02
        EXPECT_BANK 0, 2
        PROBE $7FFF, $01
        EXPECT_BANK 1, 1
        PROBE $6000, $01
        EXPECT_BANK 1, 3
        PROBE $4FFF, $01
        EXPECT_BANK 1, 3

        lda #$13
        sta $5000
        lda #$A1
        WRITE_PPU $1000
        lda #$03
        sta $5000
        lda #$A0
        WRITE_PPU $1000
        lda #$13
        sta $5000
        READ_PPU $1000
        EXPECT 2, $A1
        lda #$03
        sta $5000
        READ_PPU $1000
        EXPECT 2, $A0

        lda #$B0
        WRITE_PPU $2000
        lda #$B1
        WRITE_PPU $2400
        lda #$B2
        WRITE_PPU $2800
        lda #$B3
        WRITE_PPU $2C00
        lda #$23
        sta $5000
        lda #$C0
        WRITE_PPU $2000
        lda #$C3
        WRITE_PPU $2C00
        lda #$03
        sta $5000
        READ_PPU $2000
        EXPECT 3, $B0
        READ_PPU $2400
        EXPECT 3, $B1
        READ_PPU $2800
        EXPECT 3, $B2
        READ_PPU $2C00
        EXPECT 3, $B3
        lda #$23
        sta $5000
        READ_PPU $2000
        EXPECT 3, $C0
        READ_PPU $2C00
        EXPECT 3, $C3
        lda #$13
        sta $5000
        READ_PPU $1000
        EXPECT 4, $A1

        ldx #0                  ; more than 128 bytes: count up
:       lda flash_image,x
        sta FLASH_CODE,x
        inx
        cpx #flash_end - FLASH_CODE
        bne :-
        jsr flash_identify
        lda fread
        EXPECT 5, $BF
        lda fread+1
        EXPECT 5, $B5
        lda fread+2
        EXPECT 5, $BF
        lda fread+3
        EXPECT 5, $B5
        lda fread+4
        EXPECT 5, 12            ; bank 3's first tag: memory again
        ; 32 KiB bank 0: $8200 is flash $0200, $FF in the image.
        lda #0
        sta fbank
        lda #<$8200
        sta faddr
        lda #>$8200
        sta faddr+1
        lda #$A5
        sta fdata
        jsr flash_program
        lda fread
        EXPECT 6, $A5
        lda fread+1
        EXPECT 6, $A5
        lda #$5A
        sta fdata
        jsr flash_program
        lda fread
        EXPECT 6, $00
        jsr flash_erase
        lda fread
        EXPECT 7, $FF           ; $8200
        lda fread+1
        EXPECT 7, $FF           ; $8000: bank 0's tag, in the sector
        lda fread+2
        EXPECT 7, 1             ; $A000: 8 KiB bank 1's tag, another sector
        lda #$3C
        sta fdata
        jsr flash_program
        lda fread
        EXPECT 7, $3C
        ; Bank 2's $E400 (flash $16400), then bank 1's (flash $E400), untouched.
        lda #2
        sta fbank
        lda #<$E400
        sta faddr
        lda #>$E400
        sta faddr+1
        lda #$C3
        sta fdata
        jsr flash_program
        lda fread
        EXPECT 8, $C3
        lda #1
        sta fbank
        jsr flash_read
        lda fread
        EXPECT 8, $FF
        lda #2
        sta fbank
        jsr flash_read
        lda fread
        EXPECT 8, $C3
        rts

; Copied to RAM_CODE: writes `value` to (addr), reads the tags, maps the code's bank back.
probe_image:
        .org RAM_CODE
        ldy #0
        lda value
        sta (addr),y
        lda $8000
        sta seen
        lda $A000
        sta seen+1
        lda $C000
        sta seen+2
        lda $E000
        sta seen+3
        lda #HOME_VALUE
        sta HOME_ADDR
        rts
probe_end:
        .org probe_image + (probe_end - RAM_CODE)

; Copied to FLASH_CODE: the command sequences, with the code's bank mapped back before returning.
flash_image:
        .org FLASH_CODE
; $5555:AA, $2AAA:55, then A at $5555.
flash_command:
        ldx #$AA
        stx $D555
        ldx #$55
        stx $AAAA
        sta $D555
        rts
; Programs fdata at faddr in bank fbank; reads it back twice into fread, fread+1.
flash_program:
        lda #$A0
        jsr flash_command
        lda fbank
        sta HOME_ADDR
        ldy #0
        lda fdata
        sta (faddr),y
        lda (faddr),y
        sta fread
        lda (faddr),y
        sta fread+1
        jmp flash_home
; Erases the sector of faddr in bank fbank; reads back faddr, $8000, $A000.
flash_erase:
        lda #$80
        jsr flash_command
        lda #$AA
        sta $D555
        lda #$55
        sta $AAAA
        lda fbank
        sta HOME_ADDR
        ldy #0
        lda #$30
        sta (faddr),y
        lda (faddr),y
        sta fread
        lda $8000
        sta fread+1
        lda $A000
        sta fread+2
        jmp flash_home
; Reads faddr in bank fbank into fread.
flash_read:
        lda fbank
        sta HOME_ADDR
        ldy #0
        lda (faddr),y
        sta fread
        jmp flash_home
; Software ID: reads $8000, $8001, $C000, $FFFF, leaves with $F0, reads $8000 again.
flash_identify:
        lda #$90
        jsr flash_command
        lda $8000
        sta fread
        lda $8001
        sta fread+1
        lda $C000
        sta fread+2
        lda $FFFF
        sta fread+3
        lda #$F0
        sta $9234
        lda $8000
        sta fread+4
flash_home:
        lda #HOME_VALUE
        sta HOME_ADDR
        rts
flash_end:
        .org flash_image + (flash_end - FLASH_CODE)

        IMAGE_END
