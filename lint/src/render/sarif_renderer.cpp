// SARIF 2.1.0 for GitHub code scanning: rule metadata from the rule table, one result per diagnostic, inputs that
// could not be read as tool execution notifications.
#include <nlohmann/json.hpp>

#include "hcp/hcp_version.hpp"
#include "hcp/lint/render.hpp"

namespace hcp::lint {
namespace {

using Json = nlohmann::ordered_json;

const char* sarif_level(Severity s) {
  switch (s) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::info: return "note";
  }
  return "note";
}

// Artifact URIs are relative paths with the characters URIs reserve escaped.
std::string uri(const std::string& path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::string_view("/._-~").find(static_cast<char>(c)) != std::string_view::npos) {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  if (out.rfind("./", 0) == 0) out = out.substr(2);
  return out;
}

// Code scanning shows the message as prose: a full stop last. The first letter keeps its case: messages start with
// identifiers (`cp_comm_type`, `model.seq_length`) that a capital would misspell.
std::string sentence(std::string s) {
  if (s.empty()) return s;
  const char last = s.back();
  if (last != '.' && last != '!' && last != '?') s += '.';
  return s;
}

Json physical(const Location& l) {
  Json loc;
  loc["artifactLocation"]["uri"] = uri(l.file);
  if (l.line > 0) {
    loc["region"]["startLine"] = l.line;
    if (l.col > 0) loc["region"]["startColumn"] = l.col;
  }
  return loc;
}

Json rule_json(const Rule& rule) {
  const RuleInfo& r = rule.info;
  Json j;
  j["id"] = std::string(r.code);
  j["name"] = std::string(r.name);
  j["shortDescription"]["text"] = std::string(r.summary);
  j["fullDescription"]["text"] = std::string(r.doc.what);
  j["help"]["text"] = std::string(r.doc.why) + "\n\nFix: " + std::string(r.doc.fix);
  j["help"]["markdown"] = "**Why.** " + std::string(r.doc.why) + "\n\n**Example.**\n\n```toml\n" +
                          std::string(r.doc.example) + "\n```\n\n**Fix.** " + std::string(r.doc.fix);
  j["defaultConfiguration"]["level"] = sarif_level(r.severity);
  j["properties"]["tags"] = Json::array({"context-parallel", "megatron"});
  return j;
}

}  // namespace

std::string render_sarif(const LintReport& report, const RenderOptions& options) {
  Json driver;
  driver["name"] = "hcp-lint";
  driver["version"] = hcp::kHcpVersionString;
  driver["semanticVersion"] = hcp::kHcpVersionString;
  Json rules = Json::array();
  std::map<std::string, size_t> index;
  for (const Rule* rule : all_rules()) {
    index[std::string(rule->info.code)] = rules.size();
    rules.push_back(rule_json(*rule));
  }
  driver["rules"] = rules;

  Json results = Json::array();
  Json notifications = Json::array();
  for (const UnitReport& u : report.units) {
    if (u.error) {
      Json n;
      n["level"] = "error";
      n["message"]["text"] = *u.error;
      n["locations"] = Json::array({Json{{"physicalLocation", physical(Location{u.name, 0, 0})}}});
      notifications.push_back(n);
    }
    for (const Diagnostic& d : u.diagnostics) {
      // The same findings as text and github output: infos (unknown facts, parts not read) with --show-info.
      if (d.severity == Severity::info && !options.show_info) continue;
      Json r;
      r["ruleId"] = d.code;
      r["ruleIndex"] = index.at(d.code);
      r["level"] = sarif_level(d.severity);
      r["message"]["text"] = sentence(d.message) + (d.hint.empty() ? "" : " Fix: " + sentence(d.hint));
      r["locations"] = Json::array({Json{{"physicalLocation", physical(d.loc)}}});
      if (!d.related.empty()) {
        Json related = Json::array();
        int id = 1;
        for (const Related& rel : d.related) {
          related.push_back(Json{{"id", id++}, {"message", {{"text", rel.message}}}, {"physicalLocation", physical(rel.loc)}});
        }
        r["relatedLocations"] = related;
      }
      results.push_back(r);
    }
  }
  Json run;
  run["tool"]["driver"] = driver;
  Json invocation;
  invocation["executionSuccessful"] = !report.has_input_errors();
  invocation["toolExecutionNotifications"] = notifications;
  run["invocations"] = Json::array({invocation});
  run["results"] = results;
  Json root;
  root["$schema"] = "https://json.schemastore.org/sarif-2.1.0.json";
  root["version"] = "2.1.0";
  root["runs"] = Json::array({run});
  return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace hcp::lint
