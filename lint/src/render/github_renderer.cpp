// GitHub Actions workflow commands: ::error file=...,line=...,col=...,title=HCP001::message
#include <sstream>

#include "hcp/lint/render.hpp"

namespace hcp::lint {
namespace {

std::string escape_data(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string escape_property(const std::string& s) {
  std::string out;
  for (char c : escape_data(s)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

const char* command(Severity s) {
  switch (s) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::info: return "notice";
  }
  return "notice";
}

}  // namespace

std::string render_github(const LintReport& report, const RenderOptions& options) {
  std::ostringstream o;
  for (const UnitReport& u : report.units) {
    if (u.error) o << "::error file=" << escape_property(u.name) << ",title=hcp-lint::" << escape_data(*u.error) << "\n";
    for (const Diagnostic& d : u.diagnostics) {
      if (d.severity == Severity::info && !options.show_info) continue;
      o << "::" << command(d.severity) << " file=" << escape_property(d.loc.file);
      if (d.loc.line > 0) o << ",line=" << d.loc.line;
      if (d.loc.col > 0) o << ",col=" << d.loc.col;
      o << ",title=" << escape_property(d.code + " (" + d.rule + ")") << "::"
        << escape_data(d.hint.empty() ? d.message : d.message + "\nFix: " + d.hint) << "\n";
    }
  }
  return o.str();
}

}  // namespace hcp::lint
