#include "hcp/lint/linter.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "hcp/error.hpp"
#include "hcp/lint/loaders.hpp"
#include "hcp/lint/rule.hpp"
#include "loaders/text_encoding.hpp"
#include "suppressions.hpp"

namespace hcp::lint {
namespace {

constexpr uintmax_t kMaxInputBytes = 16u << 20;  // a training config is kilobytes; refuse logs and binaries early

bool matches_any(const std::string& code, const std::vector<std::string>& patterns) {
  for (const std::string& p : patterns) {
    if (code.rfind(p, 0) == 0) return true;
  }
  return false;
}

bool selected(const std::string& code, const LintOptions& o) {
  if (!o.select.empty() && !matches_any(code, o.select)) return false;
  return !matches_any(code, o.ignore);
}

void check_pattern(const std::string& pattern, const char* option) {
  for (const Rule* rule : all_rules()) {
    if (std::string(rule->info.code).rfind(pattern, 0) == 0 && !pattern.empty()) return;
  }
  throw Error(Errc::invalid_argument, std::string(option) + ": no rule code matches '" + pattern + "'");
}

SourceText overrides_source(const std::vector<std::string>& overrides) {
  SourceText s;
  s.name = "<overrides>";
  s.format = InputFormat::overrides;
  for (const std::string& o : overrides) s.text += o + "\n";
  return s;
}

// Runs every selected rule on one configuration. A rule that needs a fact the input cannot know is not run (an
// info says so); one that reads a fact given only as a default reports at most warnings, saying so.
// The cluster facts for one input: its [[cluster]] entry of hcp-lint.toml, with the command line's on top.
CommandLineFacts cluster_for(const std::string& name, const LintOptions& o) {
  CommandLineFacts f;
  for (const PathFacts& p : o.path_cluster) {
    if (std::any_of(p.paths.begin(), p.paths.end(), [&](const std::string& g) { return path_matches(g, name, p.config); })) {
      f = p.facts;
      f.config = p.config;
      break;
    }
  }
  const CommandLineFacts& c = o.cluster;
  auto take = [&](auto& mine, const auto& cli, const char* flag) {
    if (cli) {
      mine = cli;
    } else if (mine) {
      f.from_config.emplace_back(flag);
    }
  };
  take(f.world_size, c.world_size, "--world-size");
  take(f.nodes, c.nodes, "--nodes");
  take(f.gpus_per_node, c.gpus_per_node, "--gpus-per-node");
  take(f.te_version, c.te_version, "--te-version");
  take(f.gpu, c.gpu, "--gpu");
  return f;
}

// An input that cannot be read or parsed is an HCP000 error at the place its message names ("file:line:col: ...").
Diagnostic input_error(const std::string& name, const std::string& message) {
  Diagnostic d;
  d.code = "HCP000";
  d.severity = Severity::error;
  d.rule = "input-not-read";
  d.loc.file = name;
  d.message = message;
  if (message.rfind(name + ":", 0) == 0) {
    const char* p = message.c_str() + name.size() + 1;
    char* end = nullptr;
    const long line = std::strtol(p, &end, 10);
    if (end != p && line > 0 && line < INT32_MAX) {
      d.loc.line = static_cast<int>(line);
      if (*end == ':') {
        const char* q = end + 1;
        const long col = std::strtol(q, &end, 10);
        if (end != q && col > 0 && col < INT32_MAX) d.loc.col = static_cast<int>(col);
      }
    }
    const size_t text = message.find(": ", name.size());
    if (text != std::string::npos) d.message = message.substr(text + 2);
  }
  d.hint = "fix the file, or leave it out with --exclude or exclude = [...] in hcp-lint.toml";
  return d;
}

std::vector<Diagnostic> run_rules(const ConfigTree& tree, const Facts& facts, const LintOptions& o,
                                  const std::string& name) {
  std::vector<Diagnostic> out;
  const LintContext ctx{tree, facts, name};
  Reporter reporter(out);
  for (const Rule* rule : all_rules()) {
    if (!rule->check || !selected(std::string(rule->info.code), o)) continue;
    reporter.set_rule(&rule->info);
    const FactOrigin* unknown = nullptr;
    const FactOrigin* defaulted = nullptr;
    std::string_view needs = rule->needs;
    std::string unknown_name;
    while (!needs.empty()) {
      const size_t comma = needs.find(',');
      const std::string_view need = needs.substr(0, comma);
      needs = comma == std::string_view::npos ? std::string_view() : needs.substr(comma + 1);
      const FactOrigin* origin = facts.origin(need);
      if (!origin) continue;
      if (origin->provenance == Provenance::unknown && !unknown) {
        unknown = origin;
        unknown_name = std::string(need);
      }
      if (origin->provenance == Provenance::defaulted && !defaulted) defaulted = origin;
    }
    if (unknown) {
      const std::string spelled = unknown->setting ? unknown->setting->spelled : unknown_name;
      reporter.unknown(ctx.anchor({unknown->setting ? unknown->setting->key_loc : Location{}}),
                       "not checked: " + spelled + " is not known here (" + unknown->why + ")",
                       "give the value in the file, or lint the configuration the job really runs");
      continue;
    }
    const size_t before = out.size();
    rule->check(ctx, reporter);
    if (!defaulted) continue;
    for (size_t i = before; i < out.size(); ++i) {
      Diagnostic& d = out[i];
      if (d.unknown_fact) continue;
      if (d.severity == Severity::error) d.severity = Severity::warning;
      // A Python parameter's default says whose default it is; a script's ${X:-v} is the environment's to change.
      const std::string whose = defaulted->setting && defaulted->setting->why.rfind("the default value of", 0) == 0
                                    ? "with " + defaulted->setting->why + ", which a caller can change"
                                    : "a default the environment can override";
      d.message += " (assuming " + (defaulted->setting ? defaulted->setting->spelled + " = " +
                                                             defaulted->setting->value.display()
                                                       : std::string("a default")) +
                   ", " + whose + ")";
    }
  }
  for (Diagnostic& d : out) {
    const auto it = o.severity.find(d.code);
    if (it != o.severity.end() && !d.unknown_fact) d.severity = it->second;
  }
  return out;
}

// A finding is as certain as the paths it holds on: on every path of the script it keeps its severity; on some
// paths only it is at most a warning that says when. Paths are compared within their unit (a Python file's
// functions each build their own config). Linear in the findings: a file of many functions and paths has
// thousands (a quadratic scan was a sixth of linting Megatron-LM's tests).
std::vector<Diagnostic> merge_paths(const std::vector<ConfigVariant>& variants,
                                    const std::vector<std::vector<Diagnostic>>& found) {
  const auto where = [](const Diagnostic& d) {
    return d.code + '\x1f' + d.loc.file + '\x1f' + std::to_string(d.loc.line) + ':' + std::to_string(d.loc.col);
  };
  // The paths of each unit, and on how many of them each finding (by code and place) holds.
  std::map<int, std::set<int>> paths;
  for (const ConfigVariant& v : variants) paths[v.unit].insert(v.path_index);
  std::map<std::pair<int, std::string>, std::set<int>> holds;  // (unit, finding) -> paths
  for (size_t i = 0; i < found.size(); ++i) {
    for (const Diagnostic& d : found[i]) holds[{variants[i].unit, where(d)}].insert(variants[i].path_index);
  }
  std::vector<Diagnostic> out;
  std::set<std::string> emitted;  // finding and message
  for (size_t i = 0; i < found.size(); ++i) {
    for (const Diagnostic& d : found[i]) {
      const std::string key = where(d);
      if (emitted.count(key + '\x1f' + d.message)) continue;
      Diagnostic copy = d;
      if (holds[{variants[i].unit, key}].size() < paths[variants[i].unit].size() && !d.unknown_fact) {
        if (copy.severity == Severity::error) copy.severity = Severity::warning;
        std::string when;
        for (const std::string& c : variants[i].conditions) when += (when.empty() ? "" : " and ") + c;
        copy.message = "when " + (when.empty() ? std::string("some paths of the script run") : when) + ": " + copy.message;
      }
      if (!emitted.insert(key + '\x1f' + copy.message).second) continue;
      out.push_back(std::move(copy));
    }
  }
  return out;
}

UnitReport lint_unit(const SourceText* input, const LintOptions& o, const SourceText* overrides,
                     std::vector<SourceText>& sourced) {
  UnitReport unit;
  unit.name = input ? input->name : overrides ? overrides->name : o.overrides_file->name;
  LoadedInput loaded;
  try {
    if (input) {
      loaded = load_input(*input);
    } else {
      loaded.variants.emplace_back();
    }
    if (loaded.skipped && (o.overrides_file || overrides)) {
      loaded.variants.emplace_back();  // overrides still apply alone
      loaded.skipped.reset();
    }
    for (ConfigVariant& v : loaded.variants) {
      if (o.overrides_file) load_overrides_file(*o.overrides_file, v.tree);
      if (overrides) load_overrides_file(*overrides, v.tree);
    }
  } catch (const Error& e) {
    unit.error = e.what();
    if (selected("HCP000", o)) unit.diagnostics.push_back(input_error(unit.name, e.what()));
    return unit;
  }
  for (SourceText& s : loaded.sourced) sourced.push_back(std::move(s));
  unit.skipped = loaded.skipped;
  if (input && !unit.skipped && selected("HCP029", o)) {
    const Suppressions directives(*input);
    for (const auto& [where, code] : directives.unknown_codes()) {
      Diagnostic d;
      d.code = "HCP029";
      d.rule = "unknown-suppression-code";
      const auto level = o.severity.find(d.code);
      d.severity = level != o.severity.end() ? level->second : Severity::warning;
      d.message = "the suppression names " + code + ", which is no rule: it silences nothing";
      d.hint = "write a code as --list-rules prints it (or all), or remove it";
      d.loc = where;
      unit.diagnostics.push_back(std::move(d));
    }
  }
  for (const auto& [where, what] : loaded.unread) {
    if (!selected("HCP000", o)) break;
    Diagnostic d;
    d.code = "HCP000";
    d.severity = Severity::info;
    d.rule = "input-not-read";
    d.message = "not followed: " + what + " (the rest of the file is still read)";
    d.loc = where;
    d.unknown_fact = true;
    unit.diagnostics.push_back(std::move(d));
  }
  std::vector<std::vector<Diagnostic>> found;
  for (const ConfigVariant& v : loaded.variants) {
    const Facts facts = resolve_facts(v.tree, cluster_for(unit.name, o));
    found.push_back(run_rules(v.tree, facts, o, unit.name));
    if (o.show_facts) unit.launches.push_back({v.role, v.conditions, shown_facts(facts, v.base)});
  }
  std::vector<Diagnostic> merged = merge_paths(loaded.variants, found);
  unit.diagnostics.insert(unit.diagnostics.end(), merged.begin(), merged.end());
  return unit;
}

}  // namespace

size_t LintReport::count(Severity s) const {
  size_t n = 0;
  for (const UnitReport& u : units) {
    n += static_cast<size_t>(std::count_if(u.diagnostics.begin(), u.diagnostics.end(),
                                           [&](const Diagnostic& d) { return d.severity == s; }));
  }
  return n;
}

bool LintReport::has_input_errors() const {
  return std::any_of(units.begin(), units.end(), [](const UnitReport& u) { return u.error.has_value(); });
}

bool LintReport::fails(Severity threshold) const {
  for (const UnitReport& u : units) {
    for (const Diagnostic& d : u.diagnostics) {
      if (d.severity >= threshold) return true;
    }
  }
  return false;
}

void validate_options(const LintOptions& o) {
  for (const auto& p : o.select) check_pattern(p, "--select");
  for (const auto& p : o.ignore) check_pattern(p, "--ignore");
  for (const auto& [code, severity] : o.severity) {
    if (!find_rule(code)) throw Error(Errc::invalid_argument, "--severity: unknown rule code '" + code + "'");
  }
}

LintReport lint(std::vector<SourceText> inputs, const LintOptions& o) {
  validate_options(o);
  LintReport report;
  report.facts_shown = o.show_facts;
  std::vector<SourceText> sourced;
  std::optional<SourceText> overrides;
  if (!o.overrides.empty()) overrides = overrides_source(o.overrides);
  if (inputs.empty() && (overrides || o.overrides_file)) {
    report.units.push_back(lint_unit(nullptr, o, overrides ? &*overrides : nullptr, sourced));
  }
  for (SourceText& input : inputs) {
    if (o.format != InputFormat::automatic && input.format == InputFormat::automatic) input.format = o.format;
    report.units.push_back(lint_unit(&input, o, overrides ? &*overrides : nullptr, sourced));
  }
  for (SourceText& s : sourced) {
    const std::string name = s.name;
    report.sources.emplace(name, std::move(s));
  }
  for (SourceText& input : inputs) report.sources[input.name] = std::move(input);
  if (overrides) report.sources[overrides->name] = *overrides;
  if (o.overrides_file) report.sources[o.overrides_file->name] = *o.overrides_file;

  for (UnitReport& unit : report.units) {
    std::map<std::string, Suppressions> suppressions;
    auto& ds = unit.diagnostics;
    ds.erase(std::remove_if(ds.begin(), ds.end(),
                            [&](const Diagnostic& d) {
                              const auto src = report.sources.find(d.loc.file);
                              if (src == report.sources.end()) return false;
                              auto [it, fresh] = suppressions.try_emplace(d.loc.file, src->second);
                              return it->second.suppressed(d.code, d.loc.line);
                            }),
             ds.end());
    std::stable_sort(ds.begin(), ds.end(), [](const Diagnostic& a, const Diagnostic& b) {
      return std::tie(a.loc.file, a.loc.line, a.loc.col, a.code) < std::tie(b.loc.file, b.loc.line, b.loc.col, b.code);
    });
  }
  return report;
}

void add_unreadable(LintReport& report, const std::string& path, const std::string& message, const LintOptions& o) {
  UnitReport unit;
  unit.name = path;
  unit.error = message;
  if (selected("HCP000", o)) unit.diagnostics.push_back(input_error(path, message));
  report.units.push_back(std::move(unit));
}

SourceText read_source(const std::string& path) {
  // One open and one fstat: with 10,000 inputs the system calls are a good part of the time.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw Error(Errc::io, path + ": cannot read: " +
                              (err == ENOENT ? std::string("no such file") : std::string(std::strerror(err))));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error(Errc::io, path + ": cannot read: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw Error(Errc::io, path + ": cannot read: is a directory");
  // A FIFO or device could block forever or never end; configs are regular files.
  if (!S_ISREG(st.st_mode)) throw Error(Errc::io, path + ": cannot read: not a regular file");
  const auto size = static_cast<uintmax_t>(st.st_size);
  if (size > kMaxInputBytes) {
    throw Error(Errc::io, path + ": cannot read: " + std::to_string(size) + " bytes is too large for a config (limit " +
                              std::to_string(kMaxInputBytes) + ")");
  }
  SourceText s;
  s.name = path;
  s.text.resize(static_cast<size_t>(size));
  size_t got = 0;
  while (got < s.text.size()) {
    const ssize_t n = ::read(fd, s.text.data() + got, s.text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(Errc::io, path + ": cannot read: " + std::strerror(errno));
    if (n == 0) break;  // the file shrank while we read it
    got += static_cast<size_t>(n);
  }
  s.text.resize(got);
  decode_byte_order_mark(s.name, s.text);
  return s;
}

SourceText read_standard_input() {
  SourceText s;
  s.name = "<stdin>";
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(Errc::io, "<stdin>: cannot read: " + std::string(std::strerror(errno)));
    if (n == 0) {
      decode_byte_order_mark(s.name, s.text);
      return s;
    }
    if (s.text.size() + static_cast<size_t>(n) > kMaxInputBytes) {
      throw Error(Errc::io, "<stdin>: cannot read: more than " + std::to_string(kMaxInputBytes) +
                                " bytes is too large for a config (limit " + std::to_string(kMaxInputBytes) + ")");
    }
    s.text.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace hcp::lint
