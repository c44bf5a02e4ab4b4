#include "hcp/error.hpp"
#include "hcp/lint/render.hpp"

namespace hcp::lint {

OutputFormat parse_output_format(std::string_view name) {
  if (name == "text") return OutputFormat::text;
  if (name == "json") return OutputFormat::json;
  if (name == "sarif") return OutputFormat::sarif;
  if (name == "github") return OutputFormat::github;
  throw Error(Errc::invalid_argument,
              "unknown output format '" + std::string(name) + "' (expected text, json, sarif or github)");
}

std::string render(const LintReport& report, OutputFormat format, const RenderOptions& options) {
  switch (format) {
    case OutputFormat::text: return render_text(report, options);
    case OutputFormat::json: return render_json(report);
    case OutputFormat::sarif: return render_sarif(report, options);
    case OutputFormat::github: return render_github(report, options);
  }
  return render_text(report, options);
}

}  // namespace hcp::lint
