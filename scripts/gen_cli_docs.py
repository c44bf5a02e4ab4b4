#!/usr/bin/env python3
"""Writes the man pages and shell completions from the CLI's own definitions.

    scripts/gen_cli_docs.py HCP_BINARY           # rewrite docs/man/*.1 and completions/*
    scripts/gen_cli_docs.py HCP_BINARY --check   # exit 1 naming each file that differs (ctest cli.docs_generated)

`hcp cli-json` (hidden) prints every command's options - names, value type and fixed values, default, group,
description, positionals, subcommands - and the value hints of cli/src/value_hints.hpp. From it come:

- docs/man/hcp.1, hcp-lint.1, hcp-logscan.1: the prose of docs/man/src/NAME.1.in with each @OPTIONS COMMAND@
  replaced by that command's options;
- completions/hcp.bash (hcp, hcp-lint, hcp-logscan), completions/_hcp (zsh), completions/hcp.fish,
  hcp-lint.fish, hcp-logscan.fish.

A value named FILE or PATH completes file names, CODE rule codes (from `hcp lint --list-rules` at completion
time), CODES a comma list of them, CODE=LEVEL a code then its level; CLI11's fixed values (TEXT:{a,b}) and the
hints complete as words. A build without the attention runtime (HCP_TOOLS_ONLY) defines `hcp attn` without its
options: --check then says so and compares nothing, since the files document the full build.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAN_SOURCES = ROOT / "docs" / "man" / "src"
GENERIC_TYPES = {"", "TEXT", "INT", "UINT", "FLOAT"}
ALIASES = {"hcp-lint": "lint", "hcp-logscan": "logscan"}


class Option:
    def __init__(self, d):
        self.longs = d["long"]
        self.shorts = d["short"]
        self.flag = d["flag"]
        self.positional = d["positional"]
        m = re.match(r"^([^:]*)(?::\{(.*)\})?$", d["type"])
        self.type = m.group(1)
        self.choices = m.group(2).split(",") if m.group(2) else []
        self.default = d["default"]
        self.repeatable = d["repeatable"]
        self.required = d["required"]
        self.group = d["group"]
        self.description = d["description"]
        self.hint = d["hint"]

    @property
    def names(self):
        return self.shorts + self.longs

    @property
    def main(self):
        return (self.longs or self.shorts)[0]

    @property
    def placeholder(self):
        if self.type not in GENERIC_TYPES:
            return self.type
        return self.main.lstrip("-").upper().replace("-", "_")

    @property
    def kind(self):
        """How a value completes: none, words, word_list, files, code, codes, code_level."""
        if self.flag:
            return "flag"
        if self.choices:
            return "words"
        if self.hint:
            return "word_list" if self.hint["comma_list"] else "words"
        return {"FILE": "files", "PATH": "files", "CODE": "code", "CODES": "codes",
                "CODE=LEVEL": "code_level"}.get(self.type, "none")

    @property
    def words(self):
        return self.choices or (self.hint["words"] if self.hint else [])

    def sentence(self):
        d = self.description.strip()
        if d and d[-1] not in ".!?":
            d += "."
        return d


class Command:
    def __init__(self, d, path):
        self.name = d["name"]
        self.path = path  # "hcp", "lint", "logscan diff"
        self.description = d["description"]
        self.stand_in = d["prefix_command"]
        self.options = [Option(o) for o in d["options"]]
        self.positionals = [Option(o) for o in d["positionals"]]
        self.subcommands = [Command(s, s["name"] if path == "hcp" else f"{path} {s['name']}")
                            for s in d["subcommands"]]

    def all(self):
        yield self
        for s in self.subcommands:
            yield from s.all()

    @property
    def function(self):
        return "_hcp" if self.path == "hcp" else "_hcp_" + self.path.replace(" ", "_")

    @property
    def takes_files(self):
        return any(p.kind == "files" for p in self.positionals)

    def groups(self):
        """[(group, [options])] in the order CLI11 shows them."""
        out = []
        for o in self.options:
            if not out or out[-1][0] != o.group:
                found = [g for g in out if g[0] == o.group]
                if found:
                    found[0][1].append(o)
                    continue
                out.append((o.group, []))
            out[-1][1].append(o)
        return out


def wrap_words(words, first_indent, indent, width=116):
    lines, line = [], first_indent
    for w in words:
        if len(line) + len(w) + 1 > width and line.strip():
            lines.append(line.rstrip())
            line = indent
        line += w + " "
    lines.append(line.rstrip())
    return "\n".join(lines)


# ---------------------------------------------------------------- man pages

def roff(text):
    text = text.replace("\\", "\\e").replace("-", "\\-").replace("'", "\\(aq")
    return "\\&" + text if text.startswith(".") else text


def man_option(o):
    names = o.names
    if o.flag:
        head = ".B " + roff(names[0]) if len(names) == 1 else ".BR " + ' ", " '.join(roff(n) for n in names)
    else:
        head = ".BI " + '"' + ", ".join(roff(n) for n in names) + ' " ' + roff(o.placeholder)
    body = [roff(o.sentence())]
    if o.choices:
        body.append("One of: " + roff(", ".join(o.choices)) + ".")
    if o.default and "default" not in o.description.lower():
        body.append("Default: " + roff(o.default) + ".")
    if o.required:
        body.append("Required.")
    if o.repeatable and "repeatable" not in o.description.lower():
        body.append("Repeatable.")
    return [".TP", head] + body


def man_options(cmd, subsections):
    """The options of `cmd` as .TP entries; groups as .SS (a page's own OPTIONS) or a labelled paragraph."""
    out = []
    for group, options in cmd.groups():
        if group != "Options":
            out += [".SS " + roff(group)] if subsections else [".PP", ".I " + roff(group)]
        for o in options:
            out += man_option(o)
    return out


def man_page(name, cli, commands):
    source = (MAN_SOURCES / f"{name}.1.in").read_text()
    lines = source.split("\n")
    while lines and lines[0].startswith('.\\"'):
        lines.pop(0)  # the template's own comment
    out = ['.\\" Generated by scripts/gen_cli_docs.py from docs/man/src/%s.1.in and `hcp cli-json`: edit those.' % name]
    for line in lines:
        m = re.match(r"^@OPTIONS (.+)@$", line)
        if m:
            out += man_options(commands[m.group(1)], subsections=name != "hcp")
        else:
            out.append(line.replace("@VERSION@", cli["version"]))
    return "\n".join(out)


# ---------------------------------------------------------------- bash

BASH_HEAD = r'''# bash completion for hcp, hcp-lint and hcp-logscan                    -*- shell-script -*-
#
# Generated by scripts/gen_cli_docs.py from `hcp cli-json` (cli/src/*_command.cpp): edit those, not this file.
#
# Install as hcp in bash-completion's completions directory (for example
# /usr/share/bash-completion/completions/hcp) with hcp-lint and hcp-logscan as links to it, since bash-completion
# loads a completion by the command's name; or source this file from ~/.bashrc.

# The word being completed ($cur), the word before it ($prev) and what a reply must start with ($pfx) are locals
# of _hcp, seen by the functions it calls.

# _hcp_reply WORDS: the words of WORDS that start with $cur.
_hcp_reply() {
  mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur")
  if [[ -n $pfx ]]; then
    COMPREPLY=("${COMPREPLY[@]/#/$pfx}")
  fi
}

# _hcp_reply_list WORDS: complete the last item of a comma-separated list of WORDS.
_hcp_reply_list() {
  local head=""
  if [[ $cur == *,* ]]; then
    head=${cur%,*},
  fi
  local cur=${cur##*,} pfx=$pfx$head
  _hcp_reply "$1"
  compopt -o nospace 2>/dev/null
}

# _hcp_files: file and directory names.
_hcp_files() {
  compopt -o filenames 2>/dev/null
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  if [[ -n $pfx ]]; then
    COMPREPLY=("${COMPREPLY[@]/#/$pfx}")
  fi
}

# _hcp_rule_codes: the lint rule codes (HCP001, ...), from the program being completed.
_hcp_rule_codes() {
  local prog=${COMP_WORDS[0]}
  local -a args=(lint --list-rules)
  if [[ ${prog##*/} == hcp-lint ]]; then
    args=(--list-rules)
  fi
  command -v "$prog" >/dev/null 2>&1 || return 0
  "$prog" "${args[@]}" 2>/dev/null | awk '$1 ~ /^HCP[0-9]+$/ { print $1 }'
}
'''


def bash_value_cases(cmd):
    actions = {}  # action -> [names], in order
    for o in cmd.options:
        if o.flag:
            continue
        k = o.kind
        if k == "words":
            action = f'_hcp_reply "{" ".join(o.words)}"; return ;;'
        elif k == "word_list":
            action = f'_hcp_reply_list "{" ".join(o.words)}"; return ;;'
        elif k == "files":
            action = "_hcp_files; return ;;"
        elif k == "code":
            action = '_hcp_reply "$(_hcp_rule_codes)"; return ;;'
        elif k == "codes":
            action = '_hcp_reply_list "$(_hcp_rule_codes)"; return ;;'
        elif k == "code_level":
            action = '_hcp_reply "$(_hcp_rule_codes)"; compopt -o nospace 2>/dev/null; return ;;'
        else:
            action = "return ;;"
        actions.setdefault(action, []).extend(o.names)
    lines = []
    # Options with no value to offer last: the words they would take are the user's.
    for action, names in sorted(actions.items(), key=lambda a: a[0] == "return ;;"):
        lines.append(case_arm(names, "    ") + " " + action)
    return lines


def case_arm(names, indent):
    """`a | b | c)`, continued with backslashes past the line width."""
    words = [n + (" |" if i + 1 < len(names) else ")") for i, n in enumerate(names)]
    return wrap_words(words, indent, indent + "  ", width=100).replace("\n", " \\\n")


def bash_reply(names, indent):
    """_hcp_reply "names...": the list goes on inside the quotes on the next lines."""
    return wrap_words(names, indent + '_hcp_reply "', indent + "  ", width=116) + '"'


def bash_function(cmd):
    options = [n for o in cmd.options for n in o.names]
    out = [f"{cmd.function}() {{"]
    if cmd.subcommands:
        # hcp logscan [options] diff ...: the first word that is no option or option value names the subcommand.
        valued = [n for o in cmd.options if not o.flag for n in o.names]
        out += ["  local i word",
                "  for ((i = $1; i < COMP_CWORD; i++)); do",
                "    word=${COMP_WORDS[i]}",
                "    case $word in",
                case_arm(valued, "      "),
                "        ((i++))",
                "        if [[ ${COMP_WORDS[i]} == = ]]; then",
                "          ((i++))",
                "        fi",
                "        ;;"]
        for sub in cmd.subcommands:
            out += [f"      {sub.name})", f"        {sub.function}", "        return", "        ;;"]
        out += ["      -*) ;;", "      *) break ;;", "    esac", "  done"]
    cases = bash_value_cases(cmd)
    if cases:
        out += ["  case $prev in"] + cases + ["  esac"]
    if cmd.takes_files:
        out += ["  if [[ $cur == -* ]]; then", bash_reply(options, "    "), "  else", "    _hcp_files"]
        if cmd.subcommands:
            subs = " ".join(s.name for s in cmd.subcommands)
            out += ["    if ((i == COMP_CWORD)); then",
                    f'      mapfile -t -O "${{#COMPREPLY[@]}}" COMPREPLY < <(compgen -W "{subs}" -- "$cur")',
                    "    fi"]
        out += ["  fi"]
    else:
        out.append(bash_reply(options, "  "))
    out.append("}")
    return "\n".join(out)


def bash_file(root):
    parts = [BASH_HEAD]
    for cmd in root.all():
        if cmd.path != "hcp":
            parts.append(bash_function(cmd) + "\n")
    subs = root.subcommands
    root_options = " ".join(n for o in root.options for n in o.names)
    alias_cases = "\n".join(f"    {alias}) cmd={base} ;;" for alias, base in ALIASES.items())
    first = ' "$first"'  # a command with subcommands scans its words from there
    dispatch = "\n".join(f"    {s.name}) {s.function}{first if s.subcommands else ''} ;;" for s in subs)
    parts.append(f'''# The command itself: hcp (its subcommand is the first word that is not an option), hcp-lint or hcp-logscan.
_hcp() {{
  local cur prev pfx="" cmd="" first=1 i
  COMPREPLY=()
  cur=${{COMP_WORDS[COMP_CWORD]}}
  prev=""
  if ((COMP_CWORD > 0)); then
    prev=${{COMP_WORDS[COMP_CWORD - 1]}}
  fi
  # An option's =VALUE form: split at '=' when COMP_WORDBREAKS has it (the default), one word otherwise.
  if [[ $cur == = ]]; then
    cur=""
  elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
    prev=${{COMP_WORDS[COMP_CWORD - 2]}}
  elif [[ $cur == -?*=* ]]; then
    prev=${{cur%%=*}}
    pfx=$prev=
    cur=${{cur#*=}}
  fi

  case ${{COMP_WORDS[0]##*/}} in
{alias_cases}
    *)
      for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${{COMP_WORDS[i]}} != -* ]]; then
          cmd=${{COMP_WORDS[i]}}
          first=$((i + 1))
          break
        fi
      done
      ;;
  esac

  case $cmd in
{dispatch}
    "")
      if [[ $cur == -* ]]; then
        _hcp_reply "{root_options}"
      else
        _hcp_reply "{" ".join(s.name for s in subs)}"
      fi
      ;;
  esac
  return 0
}}

complete -F _hcp hcp {" ".join(ALIASES)}''')
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------- zsh

def zsh_quote(text):
    return "'" + text.replace("'", "'\\''") + "'"


def zsh_describe(o):
    d = o.description.split(". ")[0].rstrip(".")
    d = re.sub(r"\s*\(repeatable\)", "", d)
    d = d.replace("[", "(").replace("]", ")").replace(":", " -")
    return d[:1].lower() + d[1:]


def zsh_spec(o):
    desc = zsh_describe(o)
    exclusive = "(- *)" if o.main in ("--help", "--version") else ""
    if len(o.names) > 1 and not exclusive:
        exclusive = "(" + " ".join(o.names) + ")"
    star = "*" if o.repeatable else ""
    if o.flag:
        names = [n for n in o.names]
        suffix = f"[{desc}]"
    else:
        names = [n + ("+" if not n.startswith("--") else "=") for n in o.names]
        k = o.kind
        action = {"words": "(" + " ".join(o.words) + ")", "files": "_files", "code": "_hcp_rule_codes",
                  "codes": "_sequence _hcp_rule_codes", "code_level": "_hcp_rule_codes -S =",
                  "word_list": "_values -s , " + o.placeholder.lower() + " " + " ".join(o.words)}.get(k, " ")
        suffix = f"[{desc}]:{o.placeholder.lower()}:{action}"
    if len(names) == 1:
        return zsh_quote(exclusive + star + names[0] + suffix)
    return zsh_quote(exclusive + star) + "{" + ",".join(names) + "}" + zsh_quote(suffix)


def zsh_function(cmd):
    specs = [zsh_spec(o) for o in cmd.options]
    out = [f"{cmd.function}() {{"]
    if cmd.subcommands:
        valued = [n for o in cmd.options if not o.flag for n in o.names]
        out += ["  local i", "  for ((i = 2; i < CURRENT; i++)); do", "    case $words[i] in",
                "      " + " | ".join(valued) + ") ((i++)) ;;"]
        for sub in cmd.subcommands:
            out += [f"      {sub.name})", "        shift $((i - 1)) words", "        ((CURRENT -= i - 1))",
                    f"        curcontext=${{curcontext%:*}}-{sub.name}:", f"        {sub.function}", "        return",
                    "        ;;"]
        out += ["      -*) ;;", "      *) break ;;", "    esac", "  done"]
        first = f"{cmd.function}_first"
        specs.append(zsh_quote(f"1: :{first}"))
    for p in cmd.positionals:
        action = "_files" if p.kind == "files" else " "
        specs.append(zsh_quote(("*" if p.repeatable else "") + f":{p.positional}:{action}"))
    out.append("  _arguments -s -S \\")
    out.append(" \\\n".join("    " + s for s in specs))
    out.append("}")
    text = "\n".join(out)
    if cmd.subcommands:
        # _alternative's ((word\:"description" ...)) form, inside the spec's single quotes.
        alts = " ".join(f'{s.name}\\:"{zsh_describe_text(s.description)}"' for s in cmd.subcommands)
        text += f"""

{cmd.function}_first() {{
  _alternative \\
    'commands:command:(({alts}))' \\
    'files:path:_files'
}}"""
    return text


def zsh_describe_text(d):
    d = d.split(":")[0]
    return d[:1].lower() + d[1:]


def zsh_file(root):
    parts = ["""#compdef hcp hcp-lint hcp-logscan
# zsh completion for hcp, hcp-lint and hcp-logscan.
#
# Generated by scripts/gen_cli_docs.py from `hcp cli-json` (cli/src/*_command.cpp): edit those, not this file.
#
# Install as _hcp in a directory of $fpath (for example /usr/share/zsh/vendor-completions), or source it after
# compinit.

# _hcp_rule_codes [compadd options]: the lint rule codes (HCP001, ...), from the program being completed.
_hcp_rule_codes() {
  local prog=${_hcp_prog:-hcp} expl
  local -a args=(lint --list-rules) codes
  [[ ${prog:t} == hcp-lint ]] && args=(--list-rules)
  codes=(${(f)"$(_call_program rules $prog $args 2>/dev/null)"})
  codes=(${${(M)codes:#HCP[0-9]*}%%[[:space:]]*})
  _wanted codes expl 'rule code' compadd "$@" -a codes
}
"""]
    for cmd in root.all():
        if cmd.path != "hcp":
            parts.append(zsh_function(cmd) + "\n")
    root_specs = " \\\n".join("    " + zsh_spec(o) for o in root.options)
    commands = "\n".join(f"        {zsh_quote(s.name + ':' + zsh_describe_text(s.description))}"
                         for s in root.subcommands)
    aliases = "\n".join(f"    {alias}) _hcp_{base}; return ;;" for alias, base in ALIASES.items())
    dispatch = "\n".join(f"        {s.name}) {s.function} && ret=0 ;;" for s in root.subcommands)
    parts.append(f"""_hcp() {{
  local _hcp_prog=$words[1]
  case $service in
{aliases}
  esac
  local curcontext=$curcontext state line ret=1
  _arguments -C \\
{root_specs} \\
    '1:command:->command' \\
    '*::argument:->argument' && ret=0
  case $state in
    command)
      local -a commands=(
{commands}
      )
      _describe -t commands 'hcp command' commands && ret=0
      ;;
    argument)
      curcontext=${{curcontext%:*:*}}:hcp-$words[1]:
      case $words[1] in
{dispatch}
        *) _message "unknown hcp command: $words[1]" ;;
      esac
      ;;
  esac
  return ret
}}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _hcp "$@"
else
  compdef _hcp hcp {" ".join(ALIASES)}
fi""")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------- fish

def fish_quote(text):
    if "'" not in text and "\\" not in text:
        return "'" + text + "'"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def fish_helpers(top):
    """A function per option under `top` whose value is a comma list of words, for __fish_complete_list."""
    out = []
    for cmd in top.all():
        for o in cmd.options:
            if o.kind == "word_list":
                out.append(f"# {cmd.path} {o.main}: a comma list of these.\nfunction {fish_list_function(cmd, o)}\n"
                           f"    printf '%s\\n' {' '.join(o.words)}\nend\n")
    return out


def fish_list_function(cmd, o):
    return "__hcp_" + cmd.path.replace(" ", "_") + "_" + o.main.lstrip("-").replace("-", "_")


def fish_option(prog, condition, cmd, o):
    words = [f"complete -c {prog}"]
    if condition:
        words.append("-n " + fish_quote(condition))
    for n in o.shorts:
        words.append("-s " + n[1:])
    for n in o.longs:
        words.append("-l " + n[2:])
    k = o.kind
    if k == "files":
        words.append("-r -F")
    elif k in ("words", "none"):
        words.append("-x")
        if k == "words":
            words.append("-a " + fish_quote(" ".join(o.words)))
    elif k == "word_list":
        words.append("-x -a " + fish_quote(f"(__fish_complete_list , {fish_list_function(cmd, o)})"))
    elif k == "code":
        words.append("-x -a '(__hcp_rule_codes)'")
    elif k == "codes":
        words.append("-x -a '(__fish_complete_list , __hcp_rule_codes)'")
    elif k == "code_level":
        words.append("-x -a '(__hcp_rule_codes)'")
    words.append("-d " + fish_quote(o.sentence().rstrip(".")))
    return " ".join(words)


FISH_RULE_CODES = """# The lint rule codes (HCP001, ...) with their names, from the program being completed.
function __hcp_rule_codes
    set -l prog (commandline -opc)[1]
    set -l args lint --list-rules
    if test (string replace -r '.*/' '' -- $prog) = hcp-lint
        set args --list-rules
    end
    command $prog $args 2>/dev/null | string replace -rf '^(HCP[0-9]+)\\s+\\S+\\s+(.*)$' '$1\\t$2'
end
"""


def fish_command_lines(prog, cmd, seen_prefix):
    """The lines of one command; seen_prefix: the fish condition that says we are in it (None: always)."""
    lines = []
    subs = [s.name for s in cmd.subcommands]
    not_sub = f"not __fish_seen_subcommand_from {' '.join(subs)}" if subs else ""
    condition = "; and ".join(c for c in [seen_prefix, not_sub] if c)
    for o in cmd.options:
        lines.append(fish_option(prog, condition, cmd, o))
    for s in cmd.subcommands:
        lines.append(f"complete -c {prog} -n {fish_quote(condition)} -a {s.name} -d "
                     + fish_quote(s.description.split(':')[0]))
    for s in cmd.subcommands:
        sub_condition = "; and ".join(c for c in [seen_prefix, f"__fish_seen_subcommand_from {s.name}"] if c)
        for o in s.options:
            lines.append(fish_option(prog, sub_condition, s, o))
    return lines


def fish_file(root, prog):
    head = [f"# fish completion for {prog}.", "#",
            "# Generated by scripts/gen_cli_docs.py from `hcp cli-json` (cli/src/*_command.cpp): edit those, not this file.",
            "# Install into a directory of $fish_complete_path, for example ~/.config/fish/completions.", ""]
    body = []
    if prog == "hcp":
        commands = [c for c in root.all()]
        uses_codes = any(o.kind.startswith("code") for c in commands for o in c.options)
        if uses_codes:
            body.append(FISH_RULE_CODES)
        body += fish_helpers(root)
        with_files = [s.name for s in root.subcommands if s.takes_files]
        body.append("# hcp itself: its options and subcommands. File names only as the arguments of "
                    + ", ".join(with_files) + ".")
        body.append(f"complete -c hcp -n {fish_quote('not __fish_seen_subcommand_from ' + ' '.join(with_files))} -f")
        for o in root.options:
            body.append(fish_option("hcp", "__fish_use_subcommand", root, o))
        for s in root.subcommands:
            body.append(f"complete -c hcp -n __fish_use_subcommand -a {s.name} -d "
                        + fish_quote(s.description.split(' (')[0]))
        for s in root.subcommands:
            body.append("")
            body.append(f"# hcp {s.name}")
            body += fish_command_lines("hcp", s, f"__fish_seen_subcommand_from {s.name}")
    else:
        cmd = next(s for s in root.subcommands if s.name == ALIASES[prog])
        if any(o.kind.startswith("code") for c in cmd.all() for o in c.options):
            body.append(FISH_RULE_CODES)
        body += fish_helpers(cmd)
        if not cmd.takes_files:
            body.append(f"complete -c {prog} -f")
        body += fish_command_lines(prog, cmd, None)
    return "\n".join(head + body) + "\n"


# ---------------------------------------------------------------- main

def generate(hcp):
    r = subprocess.run([hcp, "cli-json"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit(f"{hcp} cli-json: exit {r.returncode}: {r.stderr}")
    cli = json.loads(r.stdout)
    root = Command(cli["command"], "hcp")
    stand_ins = [c.path for c in root.all() if c.stand_in]
    commands = {c.path: c for c in root.all()}
    files = {
        "completions/hcp.bash": bash_file(root),
        "completions/_hcp": zsh_file(root),
        "completions/hcp.fish": fish_file(root, "hcp"),
        "completions/hcp-lint.fish": fish_file(root, "hcp-lint"),
        "completions/hcp-logscan.fish": fish_file(root, "hcp-logscan"),
    }
    for name in ["hcp", "hcp-lint", "hcp-logscan"]:
        files[f"docs/man/{name}.1"] = man_page(name, cli, commands) + "\n"
    return files, stand_ins


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.exit(__doc__)
    check = "--check" in argv[2:]
    files, stand_ins = generate(argv[1])
    if stand_ins:
        print(f"{argv[1]} is a build without {', '.join(stand_ins)}: the files document the full build; "
              "nothing compared" if check else "nothing written")
        return 0
    differ = []
    for rel, text in files.items():
        path = ROOT / rel
        if check:
            if not path.exists() or path.read_text() != text:
                differ.append(rel)
        else:
            path.write_text(text)
    if differ:
        print("not as generated from `hcp cli-json` (run scripts/gen_cli_docs.py build/cli/hcp): " + ", ".join(differ))
        return 1
    print(("checked " if check else "wrote ") + ", ".join(files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
