#!/usr/bin/env python3
"""Prints the platform tag a wheel holding the given ELF files may honestly carry, as auditwheel decides it: the
oldest manylinux_2_N_x86_64 whose glibc provides every versioned symbol the files need (N the highest GLIBC_2.N
they reference, and at least 17, manylinux2014's), provided they need no shared library outside the set every
manylinux system has and no other symbol versions; otherwise linux_x86_64 (a wheel for systems like the one it
was built on), with the reason on stderr. Exit 1 for a file that is not x86-64 ELF.

Usage: wheel_platform.py FILE...   (readelf from binutils reads the files)"""

import re
import subprocess
import sys

# The libraries of the manylinux policies' whitelist that hcp's files may need (PEP 600: the system's glibc).
ALLOWED_NEEDED = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
                  "ld-linux-x86-64.so.2"}


def requirements(path):
    out = subprocess.run(["readelf", "-W", "--dynamic", "--version-info", path], check=True,
                         capture_output=True, text=True).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out))
    versions = set(re.findall(r"Name: ([A-Z_]+_[0-9.]+)\s+Flags", out))
    machine = subprocess.run(["readelf", "-h", path], check=True, capture_output=True, text=True).stdout
    return needed, versions, "X86-64" in machine


def main(paths):
    if not paths:
        sys.exit(__doc__)
    newest, why_not = 17, []
    for path in paths:
        needed, versions, x86_64 = requirements(path)
        if not x86_64:
            sys.exit(f"{path}: not an x86-64 ELF file")
        extra = sorted(needed - ALLOWED_NEEDED)
        if extra:
            why_not.append(f"{path} needs {', '.join(extra)}, which a manylinux system need not have")
        for v in sorted(versions):
            m = re.fullmatch(r"GLIBC_2\.([0-9]+)(?:\.[0-9]+)?", v)
            if m:
                newest = max(newest, int(m.group(1)))
            elif not why_not or not why_not[-1].startswith(f"{path} needs symbol"):
                why_not.append(f"{path} needs symbol version {v}: only public glibc versions are portable")
    if why_not:
        sys.stderr.write("wheel_platform: not manylinux: " + "; ".join(why_not) + "\n")
        print("linux_x86_64")
    else:
        print(f"manylinux_2_{newest}_x86_64")


if __name__ == "__main__":
    main(sys.argv[1:])
