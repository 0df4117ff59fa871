; smc.nes (NROM): self-modifying code. Every frame a routine is copied from ROM to RAM, its operands
; and opcodes are patched from an LFSR (an 8-slot random one-byte-instruction program, an immediate
; ALU opcode, a store address, a branch offset into an INX sled, a JMP (ind) vector), and it runs;
; inside, it also rewrites the operand of the instruction it executes next. A, X, Y and the stores
; are folded into a checksum on screen, so any stale fetch changes every later frame.
; Licence: MIT OR Apache-2.0 (ours).

.include "nes.inc"

.segment "HEADER"
        .byte "NES", $1A, 1, 1, $00, $00
        .res 8, 0

RAM_CODE = $0300                ; the routine runs here
CELLS    = $0480                ; store targets patched into the routine

.segment "ZEROPAGE"
chk:    .res 2
rnd:    .res 1
runs:   .res 1

.segment "CODE"
.include "stress.inc"

reset:
        BOOT
        jsr init_video
        jsr print
        .word $2064
        .byte "SELF-MODIFYING CODE", 0
        jsr print
        .word $20C4
        .byte "CHK   FRAME RUNS", 0
        lda #%10000000
        sta PPUCTRL
main:
        jsr wait_nmi
        ; Fresh copy of the template every frame.
        ldx #template_end - template - 1
:       lda template,x
        sta RAM_CODE,x
        dex
        bpl :-
        ; Patch eight one-byte instruction slots.
        ldy #7
:       jsr lfsr_step
        and #15
        tax
        lda one_byte_ops,x
        sta RAM_CODE + (slots - template),y
        dey
        bpl :-
        ; Patch the ALU opcode and both immediates.
        jsr lfsr_step
        and #7
        tax
        lda alu_ops,x
        sta RAM_CODE + (alu - template)
        jsr lfsr_step
        sta RAM_CODE + (alu - template) + 1
        lda chk
        sta RAM_CODE + (load - template) + 1
        ; Patch the store address (low byte) and the branch offset into the sled.
        jsr lfsr_step
        and #$0F
        ora #<CELLS
        sta RAM_CODE + (store - template) + 1
        jsr lfsr_step
        and #7
        sta RAM_CODE + (branch - template) + 1
        ; Patch the JMP (ind) vector to one of two RAM tails.
        jsr lfsr_step
        and #1
        tax
        lda tails_lo,x
        sta RAM_CODE + (vector - template)
        lda #>RAM_CODE
        sta RAM_CODE + (vector - template) + 1
        ; Run it.
        lda frame
        ldx chk+1
        ldy seed+1
        jsr RAM_CODE
        ; Fold the results.
        sta rnd
        txa
        eor chk+1
        rol
        adc rnd
        sta chk+1
        tya
        eor chk
        ldx #$0F
:       adc CELLS,x
        dex
        bpl :-
        sta chk
        inc runs
        jmp main

one_byte_ops:                   ; all safe one-byte instructions
        .byte $E8, $CA, $C8, $88, $0A, $2A, $4A, $6A
        .byte $18, $38, $AA, $8A, $A8, $98, $EA, $1A
alu_ops:                        ; immediate forms: ORA AND EOR ADC SBC CMP CPX CPY
        .byte $09, $29, $49, $69, $E9, $C9, $E0, $C0
tails_lo:
        .byte <(RAM_CODE + (tail_a - template)), <(RAM_CODE + (tail_b - template))

; The template: position-independent except for the JMP (ind) vector, which is patched above.
template:
slots:  .byte $EA, $EA, $EA, $EA, $EA, $EA, $EA, $EA
load:   eor #$00
alu:    adc #$00
store:  sta CELLS
        ; Rewrite the operand of the very next instruction, then execute it.
        sta RAM_CODE + (next - template) + 1
next:   adc #$00
        clv
branch: bvc branch+2            ; offset 0-7 into the sled
        inx
        inx
        inx
        inx
        inx
        inx
        inx
        inx
        jmp (RAM_CODE + (vector - template))
vector: .word 0
tail_a: iny
        eor #$A5
        rts
tail_b: dey
        adc #$3C
        rts
template_end:

nmi:
        PUSH_AXY
        jsr show_hex
        SCROLL_CTRL_MASK %10000000, %00001010
        FRAME_DONE
        PULL_AXY
irq:    rti

hex_list:
        .word $20E4
        .byte chk+1
        .word $20E6
        .byte chk
        .word $20EA
        .byte frame+1
        .word $20EC
        .byte frame
        .word $20F0
        .byte runs
        .word 0

.segment "VECTORS"
        .word nmi, reset, irq

.segment "CHARS"
        .include "chr_basic.inc"
        .include "chr_basic.inc"
