#!/usr/bin/env python3
"""Runs every example of the exit-code table in docs/logscan.md in tests/logscan/fixtures and checks its exit code,
whether stdout has output, and the number of stderr lines: the documented behaviour is the behaviour.

    exit_codes_test.py HCP_BINARY
"""
import os
import re
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(HERE, "..", "..", "docs", "logscan.md")
FIXTURES = os.path.join(HERE, "fixtures")


def table_rows():
    text = open(DOC, encoding="utf-8").read()
    section = text[text.index("## Exit codes\n"):]
    section = section[:section.index("\n## ", 1)]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) != 6 or cells[0] in ("mode", "---") or set(cells[0]) <= {"-"}:
            continue
        rows.append(cells)
    return rows


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    hcp = os.path.abspath(sys.argv[1])
    command = [hcp, "logscan"] if os.path.basename(hcp) == "hcp" else [hcp]
    rows = table_rows()
    if len(rows) < 16:
        print(f"only {len(rows)} rows found in the table of {DOC}")
        return 1
    failures = 0
    for mode, case, code, stdout, stderr, example in rows:
        argv = shlex.split(example.strip("`"))
        assert argv[0] == "hcp-logscan", example
        r = subprocess.run(command + argv[1:], cwd=FIXTURES, capture_output=True, text=True, timeout=60)
        codes = [int(c) for c in re.findall(r"\d+", code)]
        err_lines = [l for l in r.stderr.splitlines() if l.strip()]
        want_err = 0 if stderr == "-" else (1 if stderr == "one line" else None)  # None: one per input or path
        problems = []
        if r.returncode not in codes:
            problems.append(f"exit {r.returncode}, documented {code}")
        if (stdout == "-") != (r.stdout.strip() == ""):
            problems.append(f"stdout {'empty' if not r.stdout.strip() else 'not empty'}, documented {stdout!r}")
        if want_err is not None and len(err_lines) != want_err:
            problems.append(f"{len(err_lines)} stderr lines, documented {stderr!r}: {r.stderr.strip()[:200]}")
        if want_err is None and not err_lines:
            problems.append(f"no stderr line, documented {stderr!r}")
        if want_err is None and any(": error: " not in l for l in err_lines):
            problems.append(f"stderr lines are not errors naming the input: {r.stderr.strip()[:200]}")
        status = "ok" if not problems else "FAIL: " + "; ".join(problems)
        failures += bool(problems)
        print(f"{mode} | {case} | {example}: {status}")
    print(f"{len(rows) - failures}/{len(rows)} rows behave as documented")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
