// GitHub Actions annotations: the verdict as one annotation, each failure at its line.
#include <sstream>

#include "hcp/logscan/render.hpp"
#include "hcp/workflow_command.hpp"

namespace hcp::logscan {
namespace {

void location(std::ostringstream& o, const SourceRef& r) {
  if (r.file.empty()) return;
  o << " file=" << workflow_property(r.file);
  if (r.line) o << ",line=" << r.line;
  o << ",";
}

}  // namespace

std::string render_github(const ScanReport& r) {
  std::ostringstream o;
  const bool bad = r.verdict == Verdict::cp_silently_off || r.verdict == Verdict::hcp_not_active;
  const SourceRef where = r.reasons.empty() ? SourceRef{} : r.reasons.front().second;
  std::string message = "verdict " + std::string(verdict_name(r.verdict));
  for (const auto& [text, ref] : r.reasons) message += "\n" + text + (ref.file.empty() ? "" : " (" + ref.text() + ")");
  if (!r.advice.empty()) message += "\n" + r.advice;
  o << "::" << (bad ? "error" : "notice");
  location(o, where);
  if (where.file.empty()) o << " ";
  o << "title=hcp-logscan " << verdict_name(r.verdict) << "::" << workflow_data(message) << "\n";
  for (const Failure& f : r.failures) {
    o << "::error";
    location(o, f.where);
    if (f.where.file.empty()) o << " ";
    o << "title=" << workflow_property(f.kind + (f.lint_code.empty() ? "" : " " + f.lint_code)) << "::" << workflow_data(f.message)
      << "\n";
  }
  for (const FileReport& f : r.files) {
    if (f.damage) o << "::warning file=" << workflow_property(f.path) << ",title=damaged input::" << workflow_data(*f.damage) << "\n";
    if (f.error) o << "::error file=" << workflow_property(f.path) << ",title=unreadable input::" << workflow_data(*f.error) << "\n";
  }
  return o.str();
}

}  // namespace hcp::logscan
