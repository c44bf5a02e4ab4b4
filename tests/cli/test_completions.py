"""The man pages (docs/man) and shell completions (completions/) against the CLI itself.

Every command's options come from its --help (`hcp --help`, `hcp SUB --help`, `hcp logscan diff --help`, and the
same through the hcp-lint / hcp-logscan names), so the files cannot drift from cli/src/*_command.cpp:

- each completion file and man page lists every long option of each command it covers, in that command's part of
  the file, and no long option that the command's --help does not list; an option's fixed values (CLI11's
  `TEXT:{a,b}`) are offered, and the man page names them and the default;
- bash and fish completions are run: what they offer after `--` and after each option with fixed values is exactly
  what --help lists;
- bash -n (and shellcheck), zsh -n and fish -n accept the scripts, where those programs exist;
- man -l / groff render each page without a warning.

Environment: HCP_CLI, the hcp binary (ctest sets it). Without it only the syntax and rendering checks run.
"""
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMPLETIONS = ROOT / "completions"
MAN = ROOT / "docs" / "man"
HCP = os.environ.get("HCP_CLI")

BASH_FILE = COMPLETIONS / "hcp.bash"
ZSH_FILE = COMPLETIONS / "_hcp"
FISH_FILES = {"hcp": COMPLETIONS / "hcp.fish", "hcp-lint": COMPLETIONS / "hcp-lint.fish",
              "hcp-logscan": COMPLETIONS / "hcp-logscan.fish"}
MAN_PAGES = {"hcp": MAN / "hcp.1", "hcp-lint": MAN / "hcp-lint.1", "hcp-logscan": MAN / "hcp-logscan.1"}
# The commands each installed name covers (a command is "hcp", a subcommand, or "logscan diff").
ALIASES = {"hcp-lint": "lint", "hcp-logscan": "logscan"}

LONG_OPTION = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")
HELP_OPTION_LINE = re.compile(r"^  (-[^\s]+)(.*)$")
HELP_CHOICES = re.compile(r":\{([^}]*)\}")
HELP_DEFAULT = re.compile(r"^\S*=(\S+)")
WORD_SPLIT = re.compile(r"[\s,.;:()\[\]{}\"'|=]+")


def long_options(text):
    return {"--" + m for m in LONG_OPTION.findall(text)}


def words(text):
    return set(WORD_SPLIT.split(text))


class Help:
    """One command's --help: its long options, their fixed values and defaults, its subcommands."""

    def __init__(self, text):
        self.text = text
        self.options = set()
        self.choices = {}   # --option -> [values]
        self.defaults = {}  # --option -> default
        self.subcommands = []
        section = None
        for line in text.splitlines():
            if re.match(r"^\S.*:$", line):
                section = line[:-1]
                continue
            if section == "Subcommands":
                m = re.match(r"^  (\S+)", line)
                if m:
                    self.subcommands.append(m.group(1))
                continue
            m = HELP_OPTION_LINE.match(line)
            if not m:
                continue
            names = [n for n in m.group(1).split(",") if n.startswith("--")]
            rest = m.group(2).strip()
            choices = HELP_CHOICES.search(rest.split(" ")[0] if rest else "")
            default = HELP_DEFAULT.match(rest)
            for name in names:
                self.options.add(name)
                if choices:
                    self.choices[name] = choices.group(1).split(",")
                if default:
                    self.defaults[name] = default.group(1)


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, **kw)


class CliHelp:
    """--help of every command, read once."""

    commands = None  # command -> Help
    alias_help = None  # (alias, command) -> Help
    stand_in = set()  # commands that are stand-ins in this build (tools-only `hcp attn`)
    version = None
    _tmp = None

    @classmethod
    def load(cls):
        if cls.commands is not None:
            return
        hcp = str(Path(HCP).resolve())
        # hcp, hcp-lint and hcp-logscan by those names in one folder, for the shells' PATH (fish completes a
        # command only when it finds it); hcp dispatches on argv[0]'s name.
        cls._tmp = tempfile.TemporaryDirectory()
        cls.bin_dir = cls._tmp.name
        for name in ["hcp"] + list(ALIASES):
            (Path(cls.bin_dir) / name).symlink_to(hcp)

        def alias_path(name):
            beside = Path(HCP).parent / name
            return str(beside if beside.exists() else Path(cls.bin_dir) / name)

        def help_of(argv):
            r = run(argv + ["--help"])
            if r.returncode != 0:
                raise AssertionError(f"{' '.join(argv)} --help: exit {r.returncode}: {r.stderr}")
            return Help(r.stdout)

        commands = {"hcp": help_of([hcp])}
        todo = [[sub] for sub in commands["hcp"].subcommands]
        while todo:
            path = todo.pop(0)
            h = help_of([hcp] + path)
            commands[" ".join(path)] = h
            todo += [path + [sub] for sub in h.subcommands]
        cls.commands = commands
        cls.alias_help = {}
        for alias, command in ALIASES.items():
            for key in [k for k in commands if k == command or k.startswith(command + " ")]:
                rest = key.split(" ")[1:]
                cls.alias_help[(alias, key)] = help_of([alias_path(alias)] + rest)
        cls.stand_in = {k for k, h in commands.items()
                        if "not part of this" in h.text.splitlines()[0] and h.options <= {"--help"}}
        cls.version = run([hcp, "--version"]).stdout.split()[-1]
        cls.alias_paths = {alias: alias_path(alias) for alias in ALIASES}
        cls.hcp = hcp

    @classmethod
    def covered(cls, name):
        """The commands an installed name covers: hcp all, hcp-lint lint, hcp-logscan logscan and logscan diff."""
        if name == "hcp":
            return list(cls.commands)
        base = ALIASES[name]
        return [k for k in cls.commands if k == base or k.startswith(base + " ")]

    @classmethod
    def union(cls, keys):
        out = set()
        for k in keys:
            out |= cls.commands[k].options
        return out


def shell_functions(text):
    """name -> body of each `name() {` ... `}` function defined at the start of a line (bash and zsh files)."""
    out = {}
    for m in re.finditer(r"^([A-Za-z_][\w-]*)\s*\(\)\s*\{\n(.*?)^\}", text, re.M | re.S):
        out[m.group(1)] = m.group(2)
    return out


def function_command(name):
    """_hcp -> hcp, _hcp_groups -> groups, _hcp_logscan_diff -> logscan diff."""
    if name == "_hcp":
        return "hcp"
    return name[len("_hcp_"):].replace("_", " ") if name.startswith("_hcp_") else None


def fish_lines(path, default):
    """command -> (long options completed, text of descriptions, values and conditions) of a fish file's `complete`
    lines; the command comes from the line's __fish_seen_subcommand_from conditions (not negated)."""
    out = {}
    for line in path.read_text().splitlines():
        if not line.startswith("complete "):
            continue
        tokens = shlex.split(line)
        opts, text, condition = set(), "", ""
        for prev, tok in zip(tokens, tokens[1:]):
            if prev in ("-l", "--long", "--long-option"):
                opts.add("--" + tok)
            elif prev in ("-n", "--condition"):
                condition = tok
                text += " " + tok
            elif prev in ("-d", "--description", "-a", "--arguments"):
                text += " " + tok
        seen = set()
        for part in re.split(r";|\band\b|\bor\b", condition):
            m = re.match(r"\s*__fish_seen_subcommand_from\s+(.*)", part)
            if m:
                seen.update(m.group(1).split())
        if "__fish_use_subcommand" in condition:
            command = "hcp"
        elif seen:
            command = " ".join(sorted(seen, key=lambda s: s == "diff"))  # "logscan diff"
            if default == "logscan" and command == "diff":
                command = "logscan diff"
        else:
            command = default
        o, t = out.setdefault(command, (set(), []))
        o |= opts
        t.append(text)
    return {k: (o, " ".join(t)) for k, (o, t) in out.items()}


def roff_text(source):
    """The words of a roff page: comments dropped, \\- as -, font and other escapes removed."""
    lines = [l for l in source.splitlines() if not l.startswith('.\\"')]
    text = "\n".join(lines)
    text = text.replace("\\-", "-").replace("\\(aq", "'").replace("\\&", "").replace("\\e", "\\")
    text = re.sub(r"\\f(\[[^\]]*\]|\(..|.)", "", text)
    return text


def man_sections(source):
    """[(SH title, SS title or None, body)] of a roff page, after roff_text."""
    out, sh, ss, body = [], None, None, []
    for line in roff_text(source).splitlines():
        m = re.match(r'^\.(SH|SS)\s+"?(.*?)"?\s*$', line)
        if m:
            out.append((sh, ss, "\n".join(body)))
            body = []
            if m.group(1) == "SH":
                sh, ss = m.group(2), None
            else:
                ss = m.group(2)
            continue
        body.append(line)
    out.append((sh, ss, "\n".join(body)))
    return out


def man_commands(name, source):
    """command -> text of the part of a man page that documents that command's options."""
    out = {}
    for sh, ss, body in man_sections(source):
        key = None
        if name == "hcp":
            if sh == "OPTIONS":
                key = "hcp"
            elif sh == "COMMANDS" and ss and ss.startswith("hcp "):
                key = ss[len("hcp "):]
        elif sh == "OPTIONS":
            key = ALIASES[name]
            if ss and re.search(r"\bdiff\b", ss):
                key += " diff"
        if key:
            out[key] = out.get(key, "") + "\n" + body
    return out


@unittest.skipUnless(HCP, "HCP_CLI is not set (ctest sets it)")
class TestAgainstHelp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        CliHelp.load()
        cls.h = CliHelp

    def expect(self, command):
        if command in self.h.stand_in:
            self.skipTest(f"hcp {command} is a stand-in in this build (tools-only): its options are not known here")
        return self.h.commands[command].options

    def check_parts(self, what, parts, commands, whole_text):
        """parts: command -> (options, text). Each command's part lists exactly its --help options and names the
        fixed values; the whole file names no option outside the commands it covers."""
        for command in commands:
            with self.subTest(file=what, command=command):
                self.assertIn(command, parts, f"{what}: no part for `{command}`")
                expected = self.expect(command)
                found, text = parts[command]
                self.assertEqual(sorted(expected - found), [], f"{what}: `{command}` options missing")
                self.assertEqual(sorted(found - expected), [], f"{what}: `{command}` options that --help lacks")
                self.assertEqual(sorted(long_options(text) - expected), [],
                                 f"{what}: `{command}` part mentions options that --help lacks")
                for option, values in self.h.commands[command].choices.items():
                    self.assertEqual(sorted(set(values) - words(text)), [],
                                     f"{what}: `{command} {option}` values missing")
        with self.subTest(file=what, command="(whole file)"):
            extra = set(parts) - set(commands)
            self.assertEqual(sorted(extra), [], f"{what}: parts for commands that do not exist")
            allowed = self.h.union(commands)
            if any(c in self.h.stand_in for c in commands):
                allowed |= set().union(*(parts[c][0] for c in commands if c in self.h.stand_in and c in parts))
            self.assertEqual(sorted(long_options(whole_text) - allowed), [],
                             f"{what}: options that no covered command's --help lists")

    def test_help_of_aliases_is_the_subcommands(self):
        for (alias, command), h in self.h.alias_help.items():
            with self.subTest(alias=alias, command=command):
                self.assertEqual(h.options, self.h.commands[command].options)
                self.assertEqual(h.choices, self.h.commands[command].choices)

    def check_shell_functions(self, path):
        """bash and zsh: each command's options are in its function (_hcp, _hcp_groups, ..., _hcp_logscan_diff);
        helpers may name options too (the whole-file check), but only real ones."""
        text = path.read_text()
        parts = {}
        for name, body in shell_functions(text).items():
            command = function_command(name)
            if command in self.h.commands:
                parts[command] = (long_options(body), body)
        self.check_parts(f"completions/{path.name}", parts, list(self.h.commands), text)

    def test_bash_file(self):
        self.check_shell_functions(BASH_FILE)

    def test_zsh_file(self):
        self.check_shell_functions(ZSH_FILE)

    def test_fish_files(self):
        fish_own = {"--condition", "--description", "--arguments", "--long", "--long-option", "--short-option",
                    "--exclusive", "--no-files", "--force-files", "--require-parameter", "--keep-order", "--wraps",
                    "--command", "--regex", "--filter", "--argument-names"}
        for name, path in FISH_FILES.items():
            default = "hcp" if name == "hcp" else ALIASES[name]
            text = path.read_text()
            not_fish_flags = " ".join(o for o in sorted(long_options(text)) if o not in fish_own)
            self.check_parts(f"completions/{path.name}", fish_lines(path, default), self.h.covered(name),
                             not_fish_flags)

    def test_man_pages(self):
        for name, path in MAN_PAGES.items():
            source = path.read_text()
            covered = self.h.covered(name)
            sections = man_commands(name, source)
            parts = {k: (long_options(v), v) for k, v in sections.items()}
            self.check_parts(f"docs/man/{path.name}", parts, covered, roff_text(source))
            for command in covered:
                if command in self.h.stand_in or command not in sections:
                    continue
                for option, default in self.h.commands[command].defaults.items():
                    with self.subTest(page=path.name, command=command, option=option):
                        self.assertIn(default, words(sections[command]),
                                      f"{path.name}: `{command} {option}` default {default} not named")
            with self.subTest(page=path.name, what="version"):
                m = re.search(r'^\.TH\s+\S+\s+1\s+"[^"]*"\s+"hcp ([^"]+)"', source, re.M)
                self.assertIsNotNone(m, f"{path.name}: .TH without \"hcp VERSION\"")
                self.assertEqual(m.group(1), self.h.version, f"{path.name}: version differs from hcp --version")

    def test_bash_offers_what_help_lists(self):
        queries = []
        for command in self.h.commands:
            if command in self.h.stand_in:
                continue
            prefixes = [["hcp"] + ([] if command == "hcp" else command.split())]
            for alias, base in ALIASES.items():
                if command == base or command.startswith(base + " "):
                    prefixes.append([alias] + command.split()[1:])
            for prefix in prefixes:
                queries.append((prefix, "--", self.h.commands[command].options))
                for option, values in self.h.commands[command].choices.items():
                    queries.append((prefix + [option], "", set(values)))
        script = [f"source {shlex.quote(str(BASH_FILE))}",
                  "q() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _hcp;"
                  " echo '@@'; printf '%s\\n' \"${COMPREPLY[@]}\"; }"]
        for prefix, cur, _ in queries:
            script.append("q " + " ".join(shlex.quote(w) for w in prefix + [cur]))
        r = run(["bash", "--norc", "--noprofile", "-c", "\n".join(script)])
        self.assertEqual(r.returncode, 0, r.stderr)
        replies = r.stdout.split("@@\n")[1:]
        self.assertEqual(len(replies), len(queries))
        for (prefix, cur, expected), reply in zip(queries, replies):
            with self.subTest(shell="bash", words=" ".join(prefix + [cur])):
                got = {w for w in reply.splitlines() if w}
                if cur == "--":
                    got = {w for w in got if w.startswith("--")}
                self.assertEqual(got, expected)

    @unittest.skipUnless(shutil.which("fish"), "fish is not installed")
    def test_fish_offers_what_help_lists(self):
        queries = []
        for command in self.h.commands:
            if command in self.h.stand_in:
                continue
            prefixes = [["hcp"] + ([] if command == "hcp" else command.split())]
            for alias, base in ALIASES.items():
                if command == base or command.startswith(base + " "):
                    prefixes.append([alias] + command.split()[1:])
            for prefix in prefixes:
                queries.append((prefix, "--", self.h.commands[command].options))
                for option, values in self.h.commands[command].choices.items():
                    queries.append((prefix + [option], "", set(values)))
        script = [f"set -p fish_complete_path '{COMPLETIONS}'"]
        for prefix, cur, _ in queries:
            line = " ".join(prefix + [cur]) if cur else " ".join(prefix) + " "
            script.append("echo '@@'; complete -C '" + line.replace("\\", "\\\\").replace("'", "\\'") + "'")
        with tempfile.TemporaryDirectory() as home:
            env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home, XDG_DATA_HOME=home, XDG_CACHE_HOME=home,
                       PATH=self.h.bin_dir + os.pathsep + os.environ.get("PATH", ""))
            r = run(["fish", "-c", "\n".join(script)], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        replies = r.stdout.split("@@\n")[1:]
        self.assertEqual(len(replies), len(queries))
        for (prefix, cur, expected), reply in zip(queries, replies):
            with self.subTest(shell="fish", words=" ".join(prefix + [cur])):
                got = {l.split("\t")[0] for l in reply.splitlines() if l}
                if cur == "--":
                    got = {w for w in got if w.startswith("--")}
                self.assertEqual(got, expected)


class TestSyntax(unittest.TestCase):
    def test_bash(self):
        r = run(["bash", "-n", str(BASH_FILE)])
        self.assertEqual((r.returncode, r.stderr), (0, ""))

    @unittest.skipUnless(shutil.which("shellcheck"), "shellcheck is not installed")
    def test_shellcheck(self):
        r = run(["shellcheck", "-s", "bash", str(BASH_FILE)])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    @unittest.skipUnless(shutil.which("zsh"), "zsh is not installed")
    def test_zsh(self):
        r = run(["zsh", "-n", str(ZSH_FILE)])
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertTrue(ZSH_FILE.read_text().startswith("#compdef hcp hcp-lint hcp-logscan\n"))

    @unittest.skipUnless(shutil.which("fish"), "fish is not installed")
    def test_fish(self):
        for path in FISH_FILES.values():
            with self.subTest(file=path.name):
                r = run(["fish", "-n", str(path)])
                self.assertEqual((r.returncode, r.stderr), (0, ""))

    def test_bash_registers_every_name(self):
        self.assertRegex(BASH_FILE.read_text(), r"(?m)^complete -F _hcp hcp hcp-lint hcp-logscan$")


class TestManRendering(unittest.TestCase):
    def render(self, argv, path):
        env = dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat")
        r = run(argv + [str(path)], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "", f"{' '.join(argv)} {path.name}: warnings")
        # Some groff setups render - as a hyphen (U+2010) and \- as a minus sign (U+2212).
        return re.sub("[\u2010\u2011\u2212]", "-", r.stdout)

    @unittest.skipUnless(shutil.which("man"), "man is not installed")
    def test_man(self):
        for name, path in MAN_PAGES.items():
            with self.subTest(page=path.name):
                text = self.render(["man", "--warnings", "-l", "-Tutf8"], path)
                self.assertTrue(text)
                plain = self.render(["man", "-l"], path)
                self.assertIn(name, plain)
                self.assertIn("EXIT STATUS", plain)

    @unittest.skipUnless(shutil.which("groff"), "groff is not installed")
    def test_groff(self):
        for path in MAN_PAGES.values():
            with self.subTest(page=path.name):
                self.render(["groff", "-man", "-ww", "-z"], path)

    def test_sections(self):
        for name, path in MAN_PAGES.items():
            source = path.read_text()
            with self.subTest(page=path.name):
                titles = [sh for sh, ss, _ in man_sections(source) if ss is None and sh]
                for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES", "SEE ALSO"):
                    self.assertIn(section, titles)
                # Options are written with escaped hyphens (\-), so that they render as ASCII and can be searched.
                bare = [l for l in source.splitlines() if not l.startswith('.\\"') and re.search(r"(?<!\\)--", l)]
                self.assertEqual(bare, [], f"{path.name}: unescaped --")


if __name__ == "__main__":
    unittest.main()
