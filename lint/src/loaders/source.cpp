#include "hcp/lint/source.hpp"

#include <string>

#include "hcp/error.hpp"

namespace hcp::lint {

std::string_view format_name(InputFormat f) {
  switch (f) {
    case InputFormat::automatic: return "auto";
    case InputFormat::toml: return "toml";
    case InputFormat::yaml: return "yaml";
    case InputFormat::overrides: return "overrides";
    case InputFormat::megatron: return "megatron";
    case InputFormat::python: return "python";
    case InputFormat::facts: return "facts";
  }
  return "auto";
}

InputFormat parse_format_name(std::string_view name) {
  if (name == "auto") return InputFormat::automatic;
  if (name == "toml") return InputFormat::toml;
  if (name == "yaml" || name == "yml") return InputFormat::yaml;
  if (name == "overrides" || name == "hydra") return InputFormat::overrides;
  if (name == "megatron" || name == "args" || name == "sh") return InputFormat::megatron;
  if (name == "python" || name == "py") return InputFormat::python;
  if (name == "facts" || name == "facts-json") return InputFormat::facts;
  throw Error(Errc::invalid_argument, "unknown input format '" + std::string(name) +
                                          "' (expected auto, toml, yaml, overrides, megatron, python or facts)");
}

std::string_view SourceText::line(int n) const {
  if (n <= 0) return {};
  size_t start = 0;
  for (int i = 1; i < n; ++i) {
    start = text.find('\n', start);
    if (start == std::string::npos) return {};
    ++start;
  }
  size_t end = text.find('\n', start);
  if (end == std::string::npos) end = text.size();
  if (end > start && text[end - 1] == '\r') --end;
  return std::string_view(text).substr(start, end - start);
}

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Looks at the first meaningful lines only: enough to tell the formats apart, cheap on big inputs.
InputFormat sniff(std::string_view text) {
  size_t pos = 0;
  int looked = 0;
  bool overrides_like = false;
  while (pos < text.size() && looked < 50) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) continue;
    line = line.substr(b);
    if (line.rfind("#!", 0) == 0) {
      return line.find("python") != std::string_view::npos ? InputFormat::python : InputFormat::megatron;
    }
    if (line[0] == '#') continue;
    ++looked;
    if (line.rfind("import ", 0) == 0 || (line.rfind("from ", 0) == 0 && line.find(" import ") != std::string_view::npos)) {
      return InputFormat::python;
    }
    if (line.find("--") != std::string_view::npos || line.rfind("torchrun", 0) == 0 ||
        line.rfind("export ", 0) == 0) {
      return InputFormat::megatron;
    }
    if (line[0] == '[') return InputFormat::toml;
    const size_t eq = line.find('=');
    const size_t colon = line.find(':');
    if (eq != std::string_view::npos && (colon == std::string_view::npos || eq < colon)) {
      const std::string_view key = line.substr(0, eq);
      if (key.find(' ') != std::string_view::npos || key.find('.') == std::string_view::npos) {
        return InputFormat::toml;
      }
      overrides_like = true;
      continue;
    }
    if (colon != std::string_view::npos || line[0] == '-') return InputFormat::yaml;
  }
  return overrides_like ? InputFormat::overrides : InputFormat::yaml;
}

}  // namespace

InputFormat detect_format(const std::string& name, std::string_view text) {
  for (const char* ext : {".toml"}) if (ends_with(name, ext)) return InputFormat::toml;
  for (const char* ext : {".yaml", ".yml"}) if (ends_with(name, ext)) return InputFormat::yaml;
  for (const char* ext : {".sh", ".bash", ".args", ".slurm", ".sbatch"}) {
    if (ends_with(name, ext)) return InputFormat::megatron;
  }
  for (const char* ext : {".overrides", ".hydra"}) if (ends_with(name, ext)) return InputFormat::overrides;
  if (ends_with(name, ".py")) return InputFormat::python;
  return sniff(text);
}

}  // namespace hcp::lint
