// path:line:col: error[HCP001]: message, the source line with a caret, help and notes, then a summary line.
#include <algorithm>
#include <sstream>

#include "hcp/lint/render.hpp"
#include "hcp/printable.hpp"

namespace hcp::lint {
namespace {

struct Paint {
  bool on;
  std::string operator()(const char* code, const std::string& s) const {
    return on ? std::string("\x1b[") + code + "m" + s + "\x1b[0m" : s;
  }
};

const char* severity_color(Severity s) {
  switch (s) {
    case Severity::error: return "1;31";
    case Severity::warning: return "1;33";
    case Severity::info: return "1;36";
  }
  return "0";
}

void source_excerpt(std::ostringstream& o, const LintReport& report, const Location& loc, const Paint& paint) {
  const auto it = report.sources.find(loc.file);
  if (it == report.sources.end() || !loc.known()) return;
  const std::string_view line = it->second.line(loc.line);
  if (line.empty()) return;
  const std::string number = std::to_string(loc.line);
  const std::string pad(number.size(), ' ');
  constexpr size_t kMaxShown = 200;
  o << paint("1;34", pad + " |") << "\n";
  o << paint("1;34", number + " |") << " " << printable_aligned(line.substr(0, kMaxShown)) << (line.size() > kMaxShown ? "..." : "")
    << "\n";
  const size_t col = loc.col > 0 ? static_cast<size_t>(loc.col - 1) : 0;
  if (col <= kMaxShown) o << paint("1;34", pad + " |") << " " << std::string(col, ' ') << paint("1;31", "^") << "\n";
}

// --show-facts: per launch a table of name, value, state and where it came from (or why it is a default or unknown).
void facts_table(std::ostringstream& o, const UnitReport& unit, const Paint& paint) {
  for (size_t i = 0; i < unit.launches.size(); ++i) {
    const LaunchFacts& launch = unit.launches[i];
    std::string when;
    for (const std::string& c : launch.conditions) when += (when.empty() ? " when " : " and ") + c;
    o << paint("1", printable_line(unit.name)) << ": facts of launch " << i + 1 << " of " << unit.launches.size()
      << (launch.role.empty() ? "" : " (" + printable_line(launch.role) + ")") << printable_line(when) << "\n";
    for (const ShownFact& f : launch.facts) {
      std::string value = f.state == ShownFact::State::unknown       ? "?"
                          : f.value.kind == Value::Kind::null ? "None"
                                                              : f.value.display();
      if (value.size() > 24) value = value.substr(0, 21) + "...";
      std::string where = f.at.known() ? f.at.text() : f.why;
      if (f.at.known() && f.state != ShownFact::State::known && !f.why.empty()) where += " (" + f.why + ")";
      o << "  " << f.name << std::string(f.name.size() < 37 ? 37 - f.name.size() : 1, ' ') << printable_line(value)
        << std::string(value.size() < 26 ? 26 - value.size() : 1, ' ') << fact_state_name(f.state)
        << std::string(9 - fact_state_name(f.state).size(), ' ') << printable_line(where) << "\n";
    }
  }
  if (unit.launches.empty() && !unit.error) {
    o << paint("1", printable_line(unit.name)) << ": no launch to show facts of"
      << (unit.skipped ? " (skipped: " + printable_line(*unit.skipped) + ")" : std::string()) << "\n";
  }
}

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

std::string render_text(const LintReport& report, const RenderOptions& options) {
  const Paint paint{options.color};
  std::ostringstream o;
  size_t skipped = 0;
  for (const UnitReport& unit : report.units) {
    // An input error is shown as its HCP000 finding when there is one (not when --ignore HCP000 drops it).
    const bool as_finding = std::any_of(unit.diagnostics.begin(), unit.diagnostics.end(),
                                        [](const Diagnostic& d) { return d.code == "HCP000" && d.severity == Severity::error; });
    // Everything that comes from an input - names, values in messages - through printable_line: control
    // characters shown as escapes, never passed to the terminal.
    if (unit.error && !as_finding) o << paint("1;31", "error") << ": " << printable_line(*unit.error) << "\n";
    if (unit.skipped) {
      ++skipped;
      if (options.verbose) o << paint("1", printable_line(unit.name)) << ": skipped: " << printable_line(*unit.skipped) << "\n";
    }
    for (const Diagnostic& d : unit.diagnostics) {
      if (d.severity == Severity::info && !options.show_info) continue;
      o << paint("1", printable_line(d.loc.text())) << ": "
        << paint(severity_color(d.severity), std::string(severity_name(d.severity)) + "[" + d.code + "]") << ": "
        << printable_line(d.message) << "\n";
      source_excerpt(o, report, d.loc, paint);
      if (!d.hint.empty()) o << "  = " << paint("1", "help") << ": " << printable_line(d.hint) << "\n";
      for (const Related& r : d.related)
        o << "  = " << paint("1", "note") << ": " << printable_line(r.loc.text()) << ": " << printable_line(r.message) << "\n";
    }
    if (report.facts_shown) facts_table(o, unit, paint);
  }
  size_t input_errors = 0;
  for (const UnitReport& u : report.units) input_errors += u.error ? 1 : 0;
  const size_t errors = report.count(Severity::error), warnings = report.count(Severity::warning),
               infos = report.count(Severity::info);
  o << (errors + warnings + infos == 0 ? "No findings" : "Found " + plural(errors, "error") + ", " +
                                                            plural(warnings, "warning") + ", " + plural(infos, "info"))
    << " in " << plural(report.units.size(), "input");
  if (input_errors) o << "; " << plural(input_errors, "input") << " could not be read or parsed";
  if (skipped) o << "; " << plural(skipped, "input") << " skipped as no training config" << (options.verbose ? "" : " (--verbose lists them)");
  if (infos && !options.show_info) o << " (--show-info shows the infos)";
  o << ".\n";
  return o.str();
}

}  // namespace hcp::lint
