// GitHub Actions workflow commands: ::error file=...,line=...,col=...,title=HCP001::message
#include <sstream>

#include "hcp/lint/render.hpp"
#include "hcp/workflow_command.hpp"

namespace hcp::lint {
namespace {

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
    if (u.error) o << "::error file=" << workflow_property(u.name) << ",title=hcp-lint::" << workflow_data(*u.error) << "\n";
    for (const Diagnostic& d : u.diagnostics) {
      if (d.severity == Severity::info && !options.show_info) continue;
      o << "::" << command(d.severity) << " file=" << workflow_property(d.loc.file);
      if (d.loc.line > 0) o << ",line=" << d.loc.line;
      if (d.loc.col > 0) o << ",col=" << d.loc.col;
      o << ",title=" << workflow_property(d.code + " (" + d.rule + ")") << "::"
        << workflow_data(d.hint.empty() ? d.message : d.message + "\nFix: " + d.hint) << "\n";
    }
  }
  return o.str();
}

}  // namespace hcp::lint
