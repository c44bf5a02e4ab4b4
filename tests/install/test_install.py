"""Each release artefact of scripts/package.sh (dist/) gives a working hcp-lint on a clean machine, as README
"Install" promises: the .debs in a clean Debian 12, the static tarball in a clean Debian 11, the wheel in a fresh
virtual environment (entry points and `import hcp`), the GitHub Action's steps in a clean Debian 12 with the
release served from a local folder, and the pre-commit hook from a sample repository, offline."""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import chroots  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
DIST = pathlib.Path(os.environ.get("HCP_DIST", ROOT / "dist"))
BROKEN = ROOT / "examples" / "configs" / "broken"
GOOD = ROOT / "examples" / "configs" / "good"
LOG = ROOT / "tests" / "logscan" / "fixtures" / "flat_cp_slurm.log"
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, with venv and pip (python3-venv)


def header_version():
    text = (ROOT / "capi" / "include" / "hcp" / "hcp.h").read_text()
    return ".".join(re.search(rf"^#define HCP_VERSION_{p} (\d+)$", text, re.M).group(1)
                    for p in ("MAJOR", "MINOR", "PATCH"))


VERSION = header_version()
MAJOR, MINOR = VERSION.split(".")[:2]
SOVERSION = f"{MAJOR}.{MINOR}" if MAJOR == "0" else MAJOR


def artefact(pattern):
    found = sorted(DIST.glob(pattern))
    if len(found) != 1:
        raise AssertionError(f"expected one {pattern} in {DIST} (run scripts/package.sh), found {found}")
    return found[0]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)


def checkout_files():
    """The files of this checkout as a clone would have them, plus those not yet committed (the tree under test)."""
    listed = run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT).stdout.split("\n")
    return [rel for rel in listed if rel and (ROOT / rel).is_file()]


class Artefacts(unittest.TestCase):
    """What dist/ holds, before anything is installed."""

    def test_versions_agree_with_the_header(self):
        python = (ROOT / "bindings" / "python" / "hcp" / "_version.py").read_text()
        self.assertIn(f'VERSION = "{VERSION}"', python)
        native = (ROOT / "bindings" / "python" / "hcp" / "_native.py").read_text()
        self.assertIn(f"EXPECTED_VERSION = ({MAJOR}, {MINOR})", native)
        hook_env = (ROOT / "pyproject.toml").read_text()
        self.assertIn(f'version = "{VERSION}"', hook_env)
        self.assertIn(f'dependencies = ["hcp=={VERSION}"]', hook_env)

    def test_names_and_checksums(self):
        names = {p.name for p in DIST.iterdir()}
        for name in (f"hcp-tools_{VERSION}_amd64.deb", f"libhcp{SOVERSION}_{VERSION}_amd64.deb",
                     f"libhcp-dev_{VERSION}_amd64.deb", f"python3-hcp_{VERSION}_all.deb",
                     f"hcp-{VERSION}-linux-x86_64.tar.gz", "SHA256SUMS"):
            self.assertIn(name, names)
        sums = run(["sha256sum", "-c", "SHA256SUMS"], cwd=DIST)
        self.assertEqual(sums.returncode, 0, sums.stdout + sums.stderr)
        listed = {line.split()[1] for line in (DIST / "SHA256SUMS").read_text().splitlines()}
        self.assertEqual(listed, names - {"SHA256SUMS"})

    def test_debian_control(self):
        def field(deb, name):
            return run(["dpkg-deb", "-f", str(deb), name]).stdout.strip()
        lib = artefact(f"libhcp{SOVERSION}_*.deb")
        self.assertEqual(field(lib, "Package"), f"libhcp{SOVERSION}")
        # dpkg-shlibdeps: a package for every library libhcp.so links.
        for dep in ("libc6 (>=", "libre2-9 (>=", "libyaml-cpp0.7 (>=", "libzstd1 (>=", "libstdc++6 (>="):
            self.assertIn(dep, field(lib, "Depends"))
        files = run(["dpkg-deb", "-c", str(lib)]).stdout
        self.assertIn(f"./usr/lib/libhcp.so.{SOVERSION}", files.replace("x86_64-linux-gnu/", ""))
        self.assertNotIn("include/hcp/hcp.h", files)
        dev = artefact("libhcp-dev_*.deb")
        self.assertEqual(field(dev, "Depends"), f"libhcp{SOVERSION} (= {VERSION})")
        dev_files = run(["dpkg-deb", "-c", str(dev)]).stdout
        for path in ("include/hcp/hcp.h", "cmake/hcp/hcpConfig.cmake", "pkgconfig/hcp.pc", "libhcp.so ->"):
            self.assertIn(path, dev_files)
        py = artefact("python3-hcp_*_all.deb")
        self.assertEqual(field(py, "Architecture"), "all")
        self.assertEqual(field(py, "Depends"), f"python3 (>= 3.9), libhcp{SOVERSION} (= {VERSION})")
        self.assertIn("./usr/lib/python3/dist-packages/hcp/_native.py", run(["dpkg-deb", "-c", str(py)]).stdout)
        tools = artefact("hcp-tools_*_amd64.deb")
        for dep in ("libc6 (>=", "libre2-9 (>=", "libyaml-cpp0.7 (>=", "libtomlplusplus3 (>=", "zlib1g (>="):
            self.assertIn(dep, field(tools, "Depends"))
        self.assertNotIn("libhcp", field(tools, "Depends"))  # the programs link the libraries statically
        tool_files = run(["dpkg-deb", "-c", str(tools)]).stdout
        for path in ("./usr/bin/hcp", "./usr/bin/hcp-lint -> hcp", "./usr/bin/hcp-logscan -> hcp",
                     "man1/hcp-lint.1", "bash-completion/completions/hcp-lint", "zsh/vendor-completions/_hcp",
                     "fish/vendor_completions.d/hcp-lint.fish"):
            self.assertIn(path, tool_files)

    def test_tarball_is_static(self):
        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(artefact("hcp-*-linux-x86_64.tar.gz")) as tar:
                tar.extractall(tmp)
            top = pathlib.Path(tmp) / f"hcp-{VERSION}-linux-x86_64"
            program = top / "bin" / "hcp"
            headers = run(["readelf", "-l", str(program)]).stdout
            self.assertNotIn("INTERP", headers)
            self.assertNotIn("DYNAMIC", headers)
            self.assertEqual(os.readlink(top / "bin" / "hcp-lint"), "hcp")
            self.assertTrue((top / "share" / "man" / "man1" / "hcp-logscan.1").is_file())

    def test_wheel_tag_is_what_its_files_need(self):
        wheel = artefact("hcp-*.whl")
        m = re.fullmatch(rf"hcp-{re.escape(VERSION)}-py3-none-(manylinux_2_\d+_x86_64)\.whl", wheel.name)
        self.assertIsNotNone(m, wheel.name)
        with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as z:
            names = z.namelist()
            self.assertIn(f"hcp/lib/libhcp.so.{SOVERSION}", names)
            self.assertIn("hcp/bin/hcp", names)
            mode = z.getinfo("hcp/bin/hcp").external_attr >> 16
            self.assertTrue(mode & 0o111, "hcp/bin/hcp is not executable in the wheel")
            z.extractall(tmp)
            tag = run([sys.executable, str(ROOT / "scripts" / "wheel_platform.py"),
                       f"{tmp}/hcp/lib/libhcp.so.{SOVERSION}", f"{tmp}/hcp/bin/hcp"])
            self.assertEqual(tag.returncode, 0, tag.stderr)
            self.assertEqual(tag.stdout.strip(), m.group(1))
            wheel_meta = pathlib.Path(tmp) / f"hcp-{VERSION}.dist-info" / "WHEEL"
            self.assertIn("Root-Is-Purelib: false", wheel_meta.read_text())


class WheelInVenv(unittest.TestCase):
    def test_entry_points_and_import(self):
        with tempfile.TemporaryDirectory() as tmp:
            venv = pathlib.Path(tmp) / "venv"
            self.assertEqual(run([SYSTEM_PYTHON, "-m", "venv", str(venv)]).returncode, 0)
            pip = run([str(venv / "bin" / "pip"), "install", "--no-index", str(artefact("hcp-*.whl"))])
            self.assertEqual(pip.returncode, 0, pip.stdout + pip.stderr)
            env = {"PATH": f"{venv}/bin:/usr/bin:/bin", "HOME": tmp}  # no HCP_LIBRARY, no build tree
            version = run(["hcp-lint", "--version"], env=env)
            self.assertEqual((version.returncode, version.stdout.strip()), (0, f"hcp-lint {VERSION}"))
            lint = run(["hcp-lint", str(BROKEN)], env=env)
            self.assertEqual(lint.returncode, 1, lint.stdout + lint.stderr)
            self.assertIn("HCP001", lint.stdout)
            self.assertEqual(run(["hcp-lint", str(GOOD)], env=env).returncode, 0)
            scan = run(["hcp-logscan", "--format", "json", str(LOG)], env=env)
            self.assertIn(scan.returncode, (0, 1), scan.stderr)
            self.assertIn("verdict", json.loads(scan.stdout))
            code = ("import hcp, pathlib; print(hcp.__version__); "
                    "print(pathlib.Path(hcp._native.__file__).parent in pathlib.Path(hcp._native.lib._name).parents)")
            imp = run([str(venv / "bin" / "python"), "-c", code], env=env, cwd=tmp)
            self.assertEqual(imp.returncode, 0, imp.stderr)
            self.assertEqual(imp.stdout.split(), [VERSION, "True"])  # the wheel's own libhcp.so


class CleanDebian(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = chroots.available()
        if why:
            raise AssertionError(why)

    def test_debs_in_debian12(self):
        with chroots.Chroot("bookworm") as c:
            for deb in DIST.glob("*.deb"):
                c.put(deb, f"/debs/{deb.name}")
            c.put(BROKEN, "/configs/broken")
            c.put(GOOD, "/configs/good")
            # As on any clean Debian: the packages' Depends come from the archive.
            r = c.run("apt-get update -qq && "
                      f"apt-get install -y -qq --no-install-recommends ./debs/hcp-tools_{VERSION}_amd64.deb "
                      f"./debs/libhcp{SOVERSION}_{VERSION}_amd64.deb ./debs/libhcp-dev_{VERSION}_amd64.deb && "
                      "hcp-lint --version && ldconfig -p | grep -c libhcp.so && "
                      "{ hcp-lint /configs/broken; echo lint-exit=$?; } && hcp-lint /configs/good && "
                      "hcp-logscan --version && man -w hcp-lint 2>/dev/null; "
                      "ls /usr/share/man/man1/hcp-lint.1*")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn(f"hcp-lint {VERSION}", r.stdout)
            self.assertIn("lint-exit=1", r.stdout)
            self.assertIn("HCP001", r.stdout)

    def test_tarball_in_debian11(self):
        tarball = artefact("hcp-*-linux-x86_64.tar.gz")
        with chroots.Chroot("bullseye") as c:
            c.put(tarball, f"/tmp/{tarball.name}")
            c.put(BROKEN, "/configs/broken")
            c.put(LOG, "/logs/job.log")
            r = c.run(f"cat /etc/debian_version && tar -xzf /tmp/{tarball.name} -C /opt && "
                      f"export PATH=/opt/hcp-{VERSION}-linux-x86_64/bin:$PATH && "
                      "hcp --version && hcp-lint --version && { hcp-lint /configs/broken; echo lint-exit=$?; } && "
                      "{ hcp-logscan /logs/job.log; echo scan-exit=$?; }")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertRegex(r.stdout, r"^11\.")
            self.assertIn("lint-exit=1", r.stdout)
            self.assertIn("HCP001", r.stdout)
            self.assertRegex(r.stdout, r"scan-exit=[01]\n")

    def test_action_steps_in_debian12(self):
        """action.yml's steps as GitHub runs them: ${{ }} expressions filled in, each `run` in bash with its env."""
        import yaml  # Debian's python3-yaml, with the system Python that runs this suite
        action = yaml.safe_load((ROOT / "action.yml").read_text())
        self.assertEqual(action["runs"]["using"], "composite")
        with chroots.Chroot("bookworm") as c:
            for rel in checkout_files():
                c.put(ROOT / rel, f"/action/{rel}")
            c.put(DIST, "/release")
            c.put(BROKEN, "/work/configs")

            def steps(inputs, release="/release"):
                ctx = {"inputs." + k: str(v) for k, v in inputs.items()}
                ctx.update({"github.action_path": "/action", "github.action_repository": "example/hcp"})
                for k, spec in action["inputs"].items():
                    ctx.setdefault("inputs." + k, str(spec.get("default", "")))
                fill = lambda s: re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", lambda m: ctx[m.group(1)], str(s))
                out = []
                for step in action["runs"]["steps"]:
                    env = {k: fill(v) for k, v in step.get("env", {}).items()}
                    env.update({"GITHUB_PATH": "/runner/path", "GITHUB_OUTPUT": "/runner/output",
                                "RUNNER_TEMP": "/runner/temp", "HCP_RELEASE_BASE": f"file://{release}"})
                    exports = " ".join(f"{k}={json.dumps(v)}" for k, v in env.items())
                    # A later step sees what earlier ones added to GITHUB_PATH, as on a runner.
                    out.append(f"mkdir -p /runner/temp && touch /runner/path /runner/output && "
                               f"export PATH=$(tac /runner/path | paste -sd:):$PATH && cd /work && "
                               f"env {exports} {step['shell']} -e -c {json.dumps(fill(step['run']))}")
                return out

            install, lint = steps({"paths": "configs", "format": "github"})
            r = c.run(install)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn(f"hcp-lint {VERSION}", r.stdout)
            r = c.run(lint)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # findings fail the job
            self.assertRegex(r.stdout, r"(?m)^::error file=configs/.*HCP001")
            _, sarif = steps({"paths": "configs", "format": "sarif", "sarif-file": "out.sarif"})
            r = c.run(sarif)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            report = json.loads((c.root / "work" / "out.sarif").read_text())
            self.assertEqual(report["version"], "2.1.0")
            self.assertIn("sarif-file=out.sarif", (c.root / "runner" / "output").read_text())
            # A tarball that does not match the release's checksums is refused.
            bad = c.root / "badrelease"
            shutil.copytree(DIST, bad)
            (bad / f"hcp-{VERSION}-linux-x86_64.tar.gz").write_bytes(b"not the release")
            r = c.run("rm -rf /runner && " + steps({}, release="/badrelease")[0])
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("does not match the release's SHA256SUMS", r.stderr)


class PreCommitHook(unittest.TestCase):
    """The `hcp-lint` hook (language: python) from a sample repository with Debian's pre-commit, offline: pip
    finds the hcp wheel in dist/ and the build backend among Debian's wheels."""

    def git(self, cwd, *args):
        r = run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=cwd)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r.stdout.strip()

    def test_hook_fails_on_finding_and_passes_after_fix(self):
        if shutil.which("pre-commit") is None:
            raise AssertionError("pre-commit is not installed (scripts/test.sh installs Debian's)")
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            # The hook repository: this checkout's files as one commit (the tree under test, committed or not).
            hooks = tmp / "hcp"
            hooks.mkdir()
            for rel in checkout_files():
                (hooks / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / rel, hooks / rel)
            self.git(hooks, "init", "-q")
            self.git(hooks, "add", "-A")
            self.git(hooks, "commit", "-q", "-m", "hooks")
            rev = self.git(hooks, "rev-parse", "HEAD")
            sample = tmp / "sample"
            sample.mkdir()
            (sample / ".pre-commit-config.yaml").write_text(
                f"repos:\n  - repo: {hooks}\n    rev: {rev}\n    hooks:\n      - id: hcp-lint\n")
            (sample / "train.toml").write_text((BROKEN / "many_pitfalls.toml").read_text())
            (sample / "notes.md").write_text("# not a config\n")
            self.git(sample, "init", "-q")
            self.git(sample, "add", "-A")
            env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "PRE_COMMIT_HOME": str(tmp / "cache"),
                   "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": f"{DIST} /usr/share/python-wheels",
                   "LANG": "C.UTF-8"}
            r = run(["pre-commit", "run", "--all-files"], cwd=sample, env=env)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("Failed", r.stdout)
            self.assertIn("HCP002", r.stdout)  # many_pitfalls.toml's sizes that do not multiply to cp
            (sample / "train.toml").write_text((GOOD / "hcp_bridge.toml").read_text())
            self.git(sample, "add", "-A")
            r = run(["pre-commit", "run", "--all-files"], cwd=sample, env=env)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("Passed", r.stdout)


if __name__ == "__main__":
    unittest.main()
