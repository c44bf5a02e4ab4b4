// An input's text, kept for carets under the offending line and for inline suppressions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hcp::lint {

// `facts`: the live configuration a job built, as JSON (never detected: --facts-json, --input-format facts,
// Python's hcp.check).
enum class InputFormat { automatic, toml, yaml, overrides, megatron, python, facts };

std::string_view format_name(InputFormat f);
// "toml", "yaml", "overrides", "megatron" (also "args", "sh"), "python" (also "py"), "facts"; throws
// Error{invalid_argument}.
InputFormat parse_format_name(std::string_view name);

struct SourceText {
  std::string name;  // the path as given, or "<stdin>", "<overrides>"
  std::string text;
  InputFormat format = InputFormat::automatic;

  // Line n (1-based) without its newline; empty when out of range.
  std::string_view line(int n) const;
};

// The format from the file extension, else from the content.
InputFormat detect_format(const std::string& name, std::string_view text);

}  // namespace hcp::lint
