// The JSON report (schema in docs/lint.md): version, tool, summary, and per input its diagnostics.
#include <nlohmann/json.hpp>

#include "hcp/hcp_version.hpp"
#include "hcp/lint/render.hpp"

namespace hcp::lint {
namespace {

using Json = nlohmann::ordered_json;

Json location_json(const Location& l) {
  Json j;
  j["file"] = l.file;
  j["line"] = l.line > 0 ? Json(l.line) : Json(nullptr);
  j["col"] = l.col > 0 ? Json(l.col) : Json(nullptr);
  return j;
}

}  // namespace

std::string render_json(const LintReport& report) {
  Json root;
  root["version"] = 1;
  root["tool"] = "hcp-lint";
  root["hcp_version"] = hcp::kHcpVersionString;
  Json summary;
  summary["inputs"] = report.units.size();
  summary["errors"] = report.count(Severity::error);
  summary["warnings"] = report.count(Severity::warning);
  summary["infos"] = report.count(Severity::info);
  size_t input_errors = 0;
  for (const UnitReport& u : report.units) input_errors += u.error ? 1 : 0;
  summary["input_errors"] = input_errors;
  root["summary"] = summary;
  Json inputs = Json::array();
  for (const UnitReport& u : report.units) {
    Json unit;
    unit["path"] = u.name;
    unit["error"] = u.error ? Json(*u.error) : Json(nullptr);
    Json diags = Json::array();
    for (const Diagnostic& d : u.diagnostics) {
      Json j;
      j["code"] = d.code;
      j["severity"] = std::string(severity_name(d.severity));
      j["rule"] = d.rule;
      j["message"] = d.message;
      j.update(location_json(d.loc));
      j["hint"] = d.hint;
      Json related = Json::array();
      for (const Related& r : d.related) {
        Json rj = location_json(r.loc);
        rj["message"] = r.message;
        related.push_back(rj);
      }
      j["related"] = related;
      diags.push_back(j);
    }
    unit["diagnostics"] = diags;
    inputs.push_back(unit);
  }
  root["inputs"] = inputs;
  return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace hcp::lint
