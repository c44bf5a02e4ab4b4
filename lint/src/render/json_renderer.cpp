// The JSON report (schema in docs/lint.md): version, tool, summary, and per input its diagnostics.
#include <algorithm>
#include "hcp/hcp_version.hpp"
#include "hcp/lint/render.hpp"
#include "hcp/json_writer.hpp"

namespace hcp::lint {
namespace {

using hcp::JsonWriter;

void location_fields(JsonWriter& w, const Location& l) {
  w.key("file");
  w.value(l.file);
  w.key("line");
  if (l.line > 0) w.value(l.line); else w.null();
  w.key("col");
  if (l.col > 0) w.value(l.col); else w.null();
}

void diagnostic(JsonWriter& w, const Diagnostic& d) {
  w.begin_object();
  w.key("code");
  w.value(d.code);
  w.key("severity");
  w.value(severity_name(d.severity));
  w.key("rule");
  w.value(d.rule);
  w.key("message");
  w.value(d.message);
  location_fields(w, d.loc);
  w.key("hint");
  w.value(d.hint);
  w.key("related");
  w.begin_array();
  for (const Related& r : d.related) {
    w.begin_object();
    location_fields(w, r.loc);
    w.key("message");
    w.value(r.message);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

void config_value(JsonWriter& w, const Value& v) {
  switch (v.kind) {
    case Value::Kind::null: return w.null();
    case Value::Kind::boolean: return w.value(v.boolean);
    case Value::Kind::integer: return w.value(v.integer);
    case Value::Kind::real: return w.value(v.real);
    case Value::Kind::string: return w.value(v.text);
    case Value::Kind::list:
    case Value::Kind::table:
      w.begin_array();
      for (const Value& item : v.items) config_value(w, item);
      w.end_array();
      return;
  }
}

// --show-facts: what the linter believes each launch of the input runs, by Megatron-LM argument name.
void launches(JsonWriter& w, const UnitReport& u) {
  w.key("launches");
  w.begin_array();
  for (const LaunchFacts& launch : u.launches) {
    w.begin_object();
    w.key("role");
    if (launch.role.empty()) w.null(); else w.value(launch.role);
    w.key("conditions");
    w.begin_array();
    for (const std::string& c : launch.conditions) w.value(c);
    w.end_array();
    w.key("facts");
    w.begin_object();
    for (const ShownFact& f : launch.facts) {
      w.key(f.name);
      w.begin_object();
      w.key("value");
      config_value(w, f.value);
      w.key("state");
      w.value(fact_state_name(f.state));
      w.key("at");
      if (f.at.known()) w.value(f.at.file + ":" + std::to_string(f.at.line)); else if (!f.at.file.empty()) w.value(f.at.file); else w.null();
      w.key("why");
      if (f.why.empty()) w.null(); else w.value(f.why);
      w.end_object();
    }
    w.end_object();
    w.end_object();
  }
  w.end_array();
}

}  // namespace

std::string render_json(const LintReport& report) {
  std::string out;
  JsonWriter w(out);
  size_t input_errors = 0;
  for (const UnitReport& u : report.units) input_errors += u.error ? 1 : 0;
  w.begin_object();
  w.key("version");
  w.value(1);
  w.key("tool");
  w.value("hcp-lint");
  w.key("hcp_version");
  w.value(hcp::kHcpVersionString);
  w.key("summary");
  w.begin_object();
  w.key("inputs");
  w.value(report.units.size());
  w.key("errors");
  w.value(report.count(Severity::error));
  w.key("warnings");
  w.value(report.count(Severity::warning));
  w.key("infos");
  w.value(report.count(Severity::info));
  w.key("input_errors");
  w.value(input_errors);
  w.key("skipped");
  w.value(static_cast<size_t>(std::count_if(report.units.begin(), report.units.end(),
                                            [](const UnitReport& u) { return u.skipped.has_value(); })));
  w.end_object();
  w.key("inputs");
  w.begin_array();
  for (const UnitReport& u : report.units) {
    w.begin_object();
    w.key("path");
    w.value(u.name);
    w.key("error");
    if (u.error) w.value(*u.error); else w.null();
    w.key("skipped");  // what an input of none of the linted forms was taken for
    if (u.skipped) w.value(*u.skipped); else w.null();
    w.key("diagnostics");
    w.begin_array();
    for (const Diagnostic& d : u.diagnostics) diagnostic(w, d);
    w.end_array();
    if (report.facts_shown) launches(w, u);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  out += '\n';
  return out;
}

}  // namespace hcp::lint
