#!/usr/bin/env python3
"""The anes-versus-Nestopia table of docs/LIBRETRO.md from scripts/versus-nestopia.sh's output.

    python3 scripts/versus-table.py OUT.tsv [MORE.tsv ...]   (a later file's row replaces an earlier one's)

Each row's class follows mechanically from the measurements (the every-frame comparison, the
sampling offset, the comparison at the end); rows whose end differs, or that need a word more,
take their reason from NOTES below, each checked by hand against the ROM's own screen or source
and the nesdev wiki (docs/LIBRETRO.md says how).
"""
import re
import sys

FRAME = 29781  # CPU cycles per NTSC frame, rounded

NOTES = {
    "blargg_ppu_tests_2005.09.15b_power_up_palette":
        "power-on palette (unspecified, wiki PPU power up state): Nestopia has blargg's console's "
        "(the ROM prints $01), anes zeros ($02); manifest: info",
    "cpu_interrupts_v2_cpu_interrupts": "**Nestopia fails** test 4 of 5, 4-irq_and_dma (below)",
    "cpu_interrupts_v2_rom_singles_4-irq_and_dma":
        "**Nestopia fails** (its screen: B33211E9 Failed), anes passes",
    "cpu_interrupts_v2_rom_singles_5-branch_delays_irq":
        "**Nestopia fails** (CA0FBC6A Failed): a taken branch that crosses no page delays an IRQ "
        "by one instruction (wiki CPU interrupts)",
    "mmc3_test_2_rom_singles_6-MMC3_alt":
        "MMC3 revision: anes is rev B and fails #2 as expected (manifest: fail-ok); Nestopia "
        "passes 5 and 6 (iNES 1.0 header, no submapper)",
    "instr_test-v5_all_instrs":
        "same verdict; $0200 = Y OR $2002, read 23,112 cycles after $FF went to $2007 (only $2002 "
        "reads between): bit 3, PPU open bus, is clear in **Nestopia** (wiki PPU registers)",
    "instr_test-v5_official_only": "as all_instrs",
    "instr_timing_instr_timing":
        "same verdict; $000A is a count that also changes with anes's own power-on phase (2-3 match)",
    "instr_timing_rom_singles_1-instr_timing":
        "same verdict; $0400 counts the timed ISB/DCP repetitions: one more in Nestopia (timing loop)",
    "AccuracyCoin_AccuracyCoin":
        "power-on VRAM and palette copied to $0320-$035F (unspecified: Nestopia $FF and blargg's "
        "palette, anes zeros); $0012=2: **Nestopia fails** the DMC-DMA open-bus pre-test (wiki "
        "Open bus behavior); $0020-21: code bytes where the NMI landed",
    "cpu_reset_ram_after_reset": "both wait for the reset press (none in this comparison)",
    "cpu_reset_registers": "both wait for the reset press (none in this comparison)",
}


def first_difference(text):
    """`16: $01F5` or `2: pixel(0, 147)` from the every-frame column."""
    m = re.match(r"frame (\d+): (.*?)(; anes's RAM|$)", text)
    if not m:
        return text, None
    fields = re.findall(r"ram\[(\$[0-9A-F]{4})\]|(pixel\(\d+, \d+\))", m.group(2))
    shown = [a or b for a, b in fields][:2]
    return f"{m.group(1)}: {', '.join(shown)}", text


def offset(text):
    """The sampling offset column and its class."""
    m = re.search(r"at ([-+]\d+) CPU cycles", text)
    if m:
        o = int(m.group(1))
        if abs(o) <= 1000:
            return f"{o:+}", "sampling point"
        frames = round(o / FRAME)
        if frames != 0 and abs(o - frames * FRAME) <= 100:
            word = "behind" if frames < 0 else "ahead"
            n = "a frame" if abs(frames) == 1 else f"{abs(frames)} frames"
            return f"{o:+}", f"program {n} {word} in Nestopia"
        return f"{o:+}", "another instant"
    m = re.search(r"the closest, at ([-+]\d+) cycles, differs in (\d+) bytes: (.*)", text)
    if m:
        addrs = re.findall(r"ram\[\$([0-9A-F]{4})\]", m.group(3))
        stack_only = all(a.startswith("01") for a in addrs) and int(m.group(2)) <= len(addrs)
        frames = round(int(m.group(1)) / FRAME)
        near = f"{frames:+} frames" if frames else f"{int(m.group(1)):+}"
        label = f"none; closest {near}: {m.group(2)} B"
        return label, ("stack bytes only" if stack_only else "no instant")
    return "-", None


def at_end(text):
    status = re.search(r'\$6000 (\$[0-9A-F]{2})', text)
    picture = "agree" in (re.search(r"picture ([^;]*)", text) or [None, ""])[1]
    ram = re.search(r"ram (\d+) bytes differ: ([^;]*)", text)
    agree = text.endswith("AGREE")
    parts = []
    if status:
        parts.append(status.group(1))
    if agree:
        parts.append("same")
    else:
        if not picture:
            parts.append("picture")
        if ram:
            addrs = re.findall(r"ram\[(\$[0-9A-F]{4})\]", ram.group(2))
            more = int(ram.group(1)) - len(addrs[:2])
            parts.append("RAM " + ", ".join(addrs[:2]) + (f" +{more}" if more > 0 else ""))
    return " ".join(parts), agree


def main():
    rows = {}
    for path in sys.argv[1:]:
        for line in open(path):
            cols = line.rstrip("\n").split("\t")
            rows[cols[0]] = cols
    print("| program | phase (agreeing 0-3) | every frame: first difference | sampling offset | at the end | why |")
    print("|---|---|---|---|---|---|")
    for name, cols in rows.items():
        _, _, phase, every, end = cols[:5]
        phase = phase.replace(" ", "").replace("(", " (")
        end_text, end_agree = at_end(end)
        if every == "agree":
            first, off, why = "agree", "-", "agree"
        else:
            first, _ = first_difference(every)
            off, why = offset(every)
            if first.split(": ", 1)[-1].startswith("pixel") and off == "+0":
                why = "picture only: a write in the frame lands on another dot (e.g. palette in forced blanking, wiki PPU palettes)"
            if why is None:
                why = "unexplained"
            if end_agree:
                why = f"{why}; same end"
        why = NOTES.get(name, why) if not end_agree or name in NOTES else why
        print(f"| {name} | {phase} | {first} | {off} | {end_text} | {why} |")


if __name__ == "__main__":
    main()
