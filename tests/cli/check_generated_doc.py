#!/usr/bin/env python3
"""Checks that a generated document equals what the program prints: `check_generated_doc.py DOC PROGRAM ARGS...`.

docs/rules.md is generated from the rule table by `hcp lint --rules-markdown`. With HCP_UPDATE_GOLDEN=1 the document
is rewritten instead of compared.
"""

import difflib
import os
import pathlib
import subprocess
import sys


def main():
    doc, *command = sys.argv[1:]
    out = subprocess.run(command, capture_output=True, text=True, check=True, timeout=60).stdout
    path = pathlib.Path(doc)
    if os.environ.get("HCP_UPDATE_GOLDEN") == "1":
        path.write_text(out)
        print(f"updated {path}")
        return 0
    current = path.read_text() if path.exists() else ""
    if current != out:
        sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), out.splitlines(True), str(path),
                                                   "generated"))
        print(f"\n{path} is out of date: run HCP_UPDATE_GOLDEN=1 ctest -R docs.rules_md_in_sync")
        return 1
    print(f"{path} matches the rule table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
