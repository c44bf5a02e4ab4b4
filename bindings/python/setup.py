"""Wheel tags. A wheel with native files inside (hcp/lib, hcp/bin: scripts/package.sh puts them there) is not
pure and must say which Linux systems can load it: HCP_WHEEL_PLATFORM, computed from the files' ELF symbol
versions by scripts/wheel_platform.py, becomes its platform tag (py3-none-<tag>: the files hold no Python
extension, so any Python 3 will do). Without native files the wheel is pure (py3-none-any)."""

import os
import pathlib

from setuptools import Distribution, setup
from wheel.bdist_wheel import bdist_wheel

HERE = pathlib.Path(__file__).resolve().parent


def native_files():
    return sorted(p for d in ("lib", "bin") for p in (HERE / "hcp" / d).glob("*") if p.is_file())


class NativeDistribution(Distribution):
    """Native files make the package platform-specific: installed into platlib, at the wheel's root."""

    def has_ext_modules(self):
        return bool(native_files())


class PlatformWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = not native_files()

    def get_tag(self):
        if not native_files():
            return super().get_tag()
        platform = os.environ.get("HCP_WHEEL_PLATFORM")
        if not platform:
            raise SystemExit("hcp/lib or hcp/bin holds native files: set HCP_WHEEL_PLATFORM to their platform tag "
                             "(scripts/wheel_platform.py), or remove them for a pure wheel")
        return "py3", "none", platform


setup(cmdclass={"bdist_wheel": PlatformWheel}, distclass=NativeDistribution)
