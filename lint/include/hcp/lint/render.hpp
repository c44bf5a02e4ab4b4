// One renderer per output format (render/*.cpp), plus the rule documentation views.
#pragma once

#include <string>
#include <string_view>

#include "hcp/lint/linter.hpp"
#include "hcp/lint/rule.hpp"

namespace hcp::lint {

enum class OutputFormat { text, json, sarif, github };

OutputFormat parse_output_format(std::string_view name);  // throws Error{invalid_argument}

// For the formats people read (text, github): infos are counted but shown only on request, and inputs that are
// none of the linted forms are listed only when verbose. JSON and SARIF always carry everything.
struct RenderOptions {
  bool color = false;
  bool show_info = false;
  bool verbose = false;
};

std::string render_text(const LintReport& report, const RenderOptions& options);
std::string render_json(const LintReport& report);
std::string render_sarif(const LintReport& report, const RenderOptions& options);
std::string render_github(const LintReport& report, const RenderOptions& options);
std::string render(const LintReport& report, OutputFormat format, const RenderOptions& options);

std::string render_rule_list();                // --list-rules
std::string render_explain(const Rule& rule);  // --explain CODE
std::string render_rules_markdown();           // docs/rules.md

}  // namespace hcp::lint
