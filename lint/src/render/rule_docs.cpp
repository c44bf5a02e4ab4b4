// The rule table as --list-rules, --explain and docs/rules.md: one source for all three.
#include <sstream>

#include "hcp/lint/render.hpp"

namespace hcp::lint {

std::string render_rule_list() {
  std::ostringstream o;
  for (const Rule* rule : all_rules()) {
    const RuleInfo& r = rule->info;
    char head[64];
    std::snprintf(head, sizeof head, "%s  %-7s  ", std::string(r.code).c_str(), std::string(severity_name(r.severity)).c_str());
    o << head << r.name << ": " << r.summary << "\n";
  }
  return o.str();
}

std::string render_explain(const Rule& rule) {
  const RuleInfo& r = rule.info;
  std::ostringstream o;
  o << r.code << " " << r.name << " (default severity: " << severity_name(r.severity) << ")\n"
    << r.summary << "\n\n"
    << "What:\n  " << r.doc.what << "\n\n"
    << "Why:\n  " << r.doc.why << "\n\n"
    << "Example:\n";
  std::istringstream example{std::string(r.doc.example)};
  for (std::string line; std::getline(example, line);) o << "  " << line << "\n";
  o << "\nFix:\n  " << r.doc.fix << "\n\n"
    << "References:\n  " << r.doc.references << "\n\n"
    << "Suppress on a line with `# hcp-lint: disable=" << r.code << "`, in a file with `# hcp-lint: disable-file="
    << r.code << "`.\n";
  return o.str();
}

std::string render_rules_markdown() {
  std::ostringstream o;
  o << "# hcp-lint rules\n\n"
    << "Generated from the rule table (`lint/src/rules/`) by `hcp lint --rules-markdown`; a test keeps this file in "
       "sync. Codes are permanent and never reused. Severities are defaults: change them with "
       "`--severity CODE=error|warning|info`.\n\n"
    << "| code | name | severity | summary |\n|---|---|---|---|\n";
  for (const Rule* rule : all_rules()) {
    const RuleInfo& r = rule->info;
    std::string anchor = std::string(r.code);
    for (char& c : anchor) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    o << "| [" << r.code << "](#" << anchor << ") | " << r.name << " | " << severity_name(r.severity) << " | "
      << r.summary << " |\n";
  }
  for (const Rule* rule : all_rules()) {
    const RuleInfo& r = rule->info;
    o << "\n## " << r.code << "\n\n"
      << "**" << r.name << "** (" << severity_name(r.severity) << "): " << r.summary << "\n\n"
      << "**What.** " << r.doc.what << "\n\n"
      << "**Why.** " << r.doc.why << "\n\n"
      << "**Example.**\n\n```toml\n" << r.doc.example << "\n```\n\n"
      << "**Fix.** " << r.doc.fix << "\n\n"
      << "**References.** " << r.doc.references << "\n";
  }
  return o.str();
}

}  // namespace hcp::lint
