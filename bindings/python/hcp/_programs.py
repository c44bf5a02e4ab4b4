"""Console entry points of the release wheel: `hcp`, `hcp-lint` and `hcp-logscan` run the static hcp program
that the wheel carries in hcp/bin (one binary that picks its command from its name, as the installed links do).
Replacing this process keeps the program's exit codes, signals and terminal exactly as when it runs directly."""

import os
import pathlib
import sys

_PROGRAM = pathlib.Path(__file__).resolve().parent / "bin" / "hcp"


def _run(name):
    if not _PROGRAM.is_file():
        sys.stderr.write(f"{name}: error: this hcp Python package has no bundled programs (it was built from "
                         "source); install the release wheel, the hcp-tools package or the release tarball\n")
        sys.exit(2)
    os.execv(_PROGRAM, [name] + sys.argv[1:])


def hcp():
    _run("hcp")


def hcp_lint():
    _run("hcp-lint")


def hcp_logscan():
    _run("hcp-logscan")
