// GitHub Actions annotations: the verdict as one annotation, each failure at its line.
#include <sstream>

#include "hcp/logscan/render.hpp"

namespace hcp::logscan {
namespace {

std::string escape(const std::string& s, bool property) {
  std::string out;
  for (char c : s) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else if (property && c == ':') out += "%3A";
    else if (property && c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

void location(std::ostringstream& o, const SourceRef& r) {
  if (r.file.empty()) return;
  o << " file=" << escape(r.file, true);
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
  o << "title=hcp-logscan " << verdict_name(r.verdict) << "::" << escape(message, false) << "\n";
  for (const Failure& f : r.failures) {
    o << "::error";
    location(o, f.where);
    if (f.where.file.empty()) o << " ";
    o << "title=" << escape(f.kind + (f.lint_code.empty() ? "" : " " + f.lint_code), true) << "::" << escape(f.message, false)
      << "\n";
  }
  for (const FileReport& f : r.files) {
    if (f.damage) o << "::warning file=" << escape(f.path, true) << ",title=damaged input::" << escape(*f.damage, false) << "\n";
    if (f.error) o << "::error file=" << escape(f.path, true) << ",title=unreadable input::" << escape(*f.error, false) << "\n";
  }
  return o.str();
}

}  // namespace hcp::logscan
