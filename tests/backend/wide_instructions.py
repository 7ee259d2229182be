#!/usr/bin/env python3
"""Fails when a binary's globally visible code uses AVX or AVX-512 instructions outside the
packed path's wide builds.

The portable code of steer is compiled for plain x86-64 (SSE2). Only the packed path's AVX2 and
AVX-512 builds (src/backend/cpu_packed_isa.cpp) may contain VEX/EVEX instructions, and every
function they define but their entry points steer::avx2::* / steer::avx512::* must be local
to them (src/CMakeLists.txt). A function with a global (or weak) symbol and a wide instruction
is code the linker could hand to the portable path: a binary built on an AVX machine would
then stop with SIGILL on an older CPU.

usage: wide_instructions.py BINARY [--nm nm] [--objdump objdump]
exit 0: clean; 1: offending functions listed; 2: usage or tool error
"""
import re
import subprocess
import sys


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = argv[1]
    nm = argv[argv.index("--nm") + 1] if "--nm" in argv else "nm"
    objdump = argv[argv.index("--objdump") + 1] if "--objdump" in argv else "objdump"
    try:
        syms = subprocess.run([nm, "--defined-only", binary], check=True, capture_output=True, text=True).stdout
        dis = subprocess.run([objdump, "-d", "--no-show-raw-insn", binary], check=True, capture_output=True,
                             text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"wide_instructions.py: {e}", file=sys.stderr)
        return 2
    # addresses that carry a global or weak code symbol (nm types T, W, i; lowercase = local)
    global_at = {}
    for line in syms.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in ("T", "W", "i"):
            global_at.setdefault(int(parts[0], 16), []).append(parts[2])
    entry = re.compile(r"^_ZN5steer(4avx2|6avx512)")
    # a VEX/EVEX instruction: a v-prefixed mnemonic on vector registers, or an AVX-512 mask op
    wide = re.compile(r"\t(v[a-z0-9]+\s.*%[xyz]mm|k[a-z]+\s.*%k[0-7])")
    header = re.compile(r"^([0-9a-f]+) <(.+)>:$")
    offending, func_addr, func_wide = [], None, False

    def close():
        if func_addr is not None and func_wide:
            names = global_at.get(func_addr, [])
            if names and not all(entry.match(n) for n in names):
                offending.extend(names)

    for line in dis.splitlines():
        m = header.match(line)
        if m:
            close()
            func_addr, func_wide = int(m.group(1), 16), False
        elif func_addr is not None and not func_wide and wide.search(line):
            func_wide = True
    close()
    if offending:
        print(f"{binary}: {len(offending)} global functions use AVX/AVX-512 instructions:")
        for n in sorted(set(offending))[:40]:
            print("  " + n)
        return 1
    print(f"{binary}: no global function outside steer::avx2/avx512 uses AVX or AVX-512 instructions")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
