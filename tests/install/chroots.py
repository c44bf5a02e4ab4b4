"""Clean Debian systems for the install tests: a pristine debootstrap tree per suite, made once and kept in
HCP_CHROOT_CACHE (default /var/cache/hcp/chroots; CI runs on the same machine, so later runs reuse it), copied
for each test so that no test sees another's installs. Needs root (chroot) and Debian's mirror the first time."""

import os
import pathlib
import shutil
import subprocess
import tempfile

CACHE = pathlib.Path(os.environ.get("HCP_CHROOT_CACHE", "/var/cache/hcp/chroots"))
MIRROR = os.environ.get("HCP_DEBIAN_MIRROR", "http://deb.debian.org/debian")
# Debian 11 is still served by the main mirror; when it moves to archive.debian.org, point HCP_DEBIAN_MIRROR there.
SUITES = {"bookworm": ["curl", "ca-certificates"], "bullseye": []}
ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8",
       "DEBIAN_FRONTEND": "noninteractive"}


def _pristine(suite):
    tree = CACHE / suite
    if (tree / "etc" / "debian_version").exists() and (tree / ".hcp-complete").exists():
        return tree
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = CACHE / (suite + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    include = ["--include=" + ",".join(SUITES[suite])] if SUITES[suite] else []
    subprocess.run(["debootstrap", "--variant=minbase", *include, suite, str(partial), MIRROR], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    (partial / ".hcp-complete").write_text(suite + "\n")
    shutil.rmtree(tree, ignore_errors=True)
    partial.rename(tree)
    return tree


class Chroot:
    """A fresh copy of a pristine Debian `suite` tree; removed on exit."""

    def __init__(self, suite):
        self.suite = suite

    def __enter__(self):
        pristine = _pristine(self.suite)
        self._tmp = tempfile.mkdtemp(prefix=f"hcp-{self.suite}-")
        self.root = pathlib.Path(self._tmp) / "root"
        subprocess.run(["cp", "-a", "--reflink=auto", str(pristine), str(self.root)], check=True)
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self._tmp, ignore_errors=True)

    def put(self, source, dest):
        """Copies a file or directory of this machine to `dest` (absolute, inside the chroot)."""
        target = self.root / dest.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if pathlib.Path(source).is_dir():
            shutil.copytree(source, target, symlinks=True)
        else:
            shutil.copy2(source, target)
        return target

    def run(self, script, env=None, timeout=600):
        """Runs a bash script inside the chroot with a clean environment; returns the CompletedProcess."""
        return subprocess.run(["chroot", str(self.root), "/bin/bash", "-c", script], env={**ENV, **(env or {})},
                              capture_output=True, text=True, timeout=timeout)


def available():
    """Why the chroot tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "the chroot tests need root"
    if shutil.which("debootstrap") is None and not all((CACHE / s / ".hcp-complete").exists() for s in SUITES):
        return "debootstrap is not installed (scripts/test.sh installs it)"
    return None
