"""scripts/gpu-bundle.sh and the bundle path of scripts/gpu-check.sh, on a machine without a GPU - the path a
session takes on a device machine that can install nothing. A bundle made from this build's programs (without the
Debian packages: tests download nothing) holds the three programs and the libraries they need that such a machine
may lack; gpu-check takes the programs from it, runs the GPU tests (which skip here) and stops with exit 2, 'No
usable GPU' (and 'STALE' when the bundle was built from other sources); a bundle whose programs do not start and
that holds no packages fails, saying so, and builds nothing."""

import os
import pathlib
import shutil
import subprocess
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
BUILD = os.environ.get("HCP_BUILD_DIR")


def has_gpu():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=60).returncode == 0
    except OSError:
        return False


def script(name, *args, **env):
    return subprocess.run(["bash", str(ROOT / "scripts" / name), *args], capture_output=True, text=True,
                          timeout=600, env={**os.environ, **env})


@unittest.skipUnless(BUILD, "HCP_BUILD_DIR is not set (ctest sets it)")
@unittest.skipIf(has_gpu(), "a GPU is present: gpu-check would run in full, which is not a unit test")
class Bundle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = pathlib.Path(tempfile.mkdtemp())
        cls.bundle = cls.tmp / "bundle"
        made = script("gpu-bundle.sh", str(cls.bundle), HCP_GPU_BUILD=BUILD, HCP_GPU_BUNDLE_PACKAGES="0")
        if made.returncode != 0:
            raise AssertionError(f"gpu-bundle.sh: exit {made.returncode}: {made.stderr}")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_holds_the_programs_and_only_the_libraries_a_gpu_machine_may_lack(self):
        self.assertEqual(sorted(p.name for p in (self.bundle / "bin").iterdir()),
                         ["attention_cuda_bench", "hcp", "hcp_cuda_tests", "libhcp_cuda.so"])  # the GPU module beside them
        libs = {p.name for p in (self.bundle / "lib").iterdir()}
        self.assertIn("libre2.so.9", libs)
        self.assertIn("libyaml-cpp.so.0.7", libs)
        for provided in ("libc.so.6", "libstdc++.so.6", "libnccl.so.2", "libcublas.so.13"):
            self.assertNotIn(provided, libs)
        self.assertEqual(list((self.bundle / "debs").iterdir()), [])
        self.assertRegex((self.bundle / "manifest").read_text(),
                         r"^commit \w+.*, built \S+ with nvcc [\d.]+ for CUDA architectures \d")

    def test_check_runs_the_prebuilt_programs_and_reports_no_gpu(self):
        report = self.tmp / "report.md"
        p = script("gpu-check.sh", HCP_GPU_BUNDLE=str(self.bundle), HCP_GPU_REPORT=str(report),
                   HCP_GPU_BUILD=str(self.tmp / "no-build"))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        text = report.read_text()
        self.assertIn("- build: prebuilt elsewhere by scripts/gpu-bundle.sh: commit ", text)
        self.assertIn("## hcp_cuda_tests: passed", text)
        self.assertIn("SKIPPED", text)
        self.assertIn("No usable GPU: ", text)
        self.assertFalse((self.tmp / "no-build").exists())
        self.assertNotIn("STALE", text)

    def test_a_bundle_of_other_sources_is_reported_stale(self):
        stale = self.tmp / "stale"
        shutil.copytree(self.bundle, stale)
        (stale / "sources").write_text("0123456789abcdef\n")
        report = self.tmp / "stale.md"
        p = script("gpu-check.sh", HCP_GPU_BUNDLE=str(stale), HCP_GPU_REPORT=str(report))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("**STALE: built from other sources than this tree**", report.read_text())
        self.assertIn("built from other sources", p.stderr)

    def test_programs_that_do_not_start_without_packages_fail_without_building(self):
        broken = self.tmp / "broken"
        shutil.copytree(self.bundle, broken)
        (broken / "bin" / "hcp").write_bytes(b"\x7fELF not a program")
        p = script("gpu-check.sh", HCP_GPU_BUNDLE=str(broken), HCP_GPU_REPORT=str(self.tmp / "r2.md"),
                   HCP_GPU_BUILD=str(self.tmp / "never"))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("do not start here", p.stderr)
        self.assertIn("has no packages to build from", p.stderr)
        self.assertFalse((self.tmp / "never").exists())
        self.assertFalse((self.tmp / "r2.md").exists())


if __name__ == "__main__":
    unittest.main()
