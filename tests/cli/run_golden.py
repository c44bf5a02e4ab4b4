#!/usr/bin/env python3
"""Runs one CLI golden case: `run_golden.py HCP_BINARY CASES_FILE NAME`.

The golden file records the exit code, stdout and stderr. With HCP_UPDATE_GOLDEN=1 the file is rewritten from
the current output instead of compared.
"""

import difflib
import os
import pathlib
import subprocess
import sys


def main():
    binary, cases_file, name = sys.argv[1:4]
    binary_dir = pathlib.Path(binary).parent
    cases = {}
    for line in pathlib.Path(cases_file).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            case, args = (part.strip() for part in line.split("|", 1))
            cases[case] = args.split()
    # The first word names the program: `hcp`, or an alias such as `hcp-lint` next to it.
    program, *args = cases.get(name, [None])
    if program is None:
        sys.exit(f"no case {name!r} in {cases_file}")
    # `< FILE` at the end feeds FILE (relative to the repository root) to standard input.
    stdin_file = None
    if len(args) >= 2 and args[-2] == "<":
        stdin_file, args = args[-1], args[:-2]
    # Run from the repository root so the paths in the output are the relative ones of the case.
    root = pathlib.Path(__file__).resolve().parents[2]
    stdin = (root / stdin_file).read_text() if stdin_file else None
    proc = subprocess.run([str(binary_dir / program), *args], capture_output=True, text=True, timeout=120, cwd=root,
                          env={**os.environ, "NO_COLOR": "1"}, input=stdin,
                          stdin=None if stdin_file else subprocess.DEVNULL)
    actual = f"exit: {proc.returncode}\n--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}"
    golden = pathlib.Path(cases_file).parent / "golden" / f"{name}.txt"
    if os.environ.get("HCP_UPDATE_GOLDEN") == "1":
        golden.write_text(actual)
        print(f"updated {golden}")
        return 0
    if not golden.exists():
        sys.exit(f"missing golden file {golden} (run with HCP_UPDATE_GOLDEN=1 to create it)")
    expected = golden.read_text()
    if actual != expected:
        sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                                   str(golden), "actual"))
        return 1
    print(f"{name}: output matches {golden.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
