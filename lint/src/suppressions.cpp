#include "suppressions.hpp"

#include <cctype>

namespace hcp::lint {
namespace {

std::set<std::string> codes_after(std::string_view line, size_t pos) {
  std::set<std::string> codes;
  std::string current;
  for (; pos <= line.size(); ++pos) {
    const char c = pos < line.size() ? line[pos] : ' ';
    if (std::isalnum(static_cast<unsigned char>(c))) {
      current += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (c == ',' || c == ' ') {
      if (!current.empty()) codes.insert(current);
      current.clear();
      if (c == ' ' && !codes.empty()) break;
    } else {
      break;
    }
  }
  if (!current.empty()) codes.insert(current);
  return codes;
}

}  // namespace

Suppressions::Suppressions(const SourceText& source) {
  const std::string_view text = source.text;
  constexpr std::string_view kMarker = "hcp-lint:";
  size_t pos = 0;
  while ((pos = text.find(kMarker, pos)) != std::string_view::npos) {
    const size_t line_start = text.rfind('\n', pos) == std::string_view::npos ? 0 : text.rfind('\n', pos) + 1;
    size_t line_end = text.find('\n', pos);
    if (line_end == std::string_view::npos) line_end = text.size();
    const std::string_view line = text.substr(line_start, line_end - line_start);
    size_t p = pos - line_start + kMarker.size();
    while (p < line.size() && line[p] == ' ') ++p;
    int line_no = 1;
    for (size_t i = 0; i < line_start; ++i) line_no += text[i] == '\n';
    if (line.substr(p).rfind("disable-file=", 0) == 0) {
      for (const auto& c : codes_after(line, p + 13)) file_.insert(c);
    } else if (line.substr(p).rfind("disable=", 0) == 0) {
      for (const auto& c : codes_after(line, p + 8)) by_line_[line_no].insert(c);
    }
    pos = line_end;
  }
}

bool Suppressions::suppressed(const std::string& code, int line) const {
  if (file_.count(code) || file_.count("ALL")) return true;
  const auto it = by_line_.find(line);
  return it != by_line_.end() && (it->second.count(code) || it->second.count("ALL"));
}

}  // namespace hcp::lint
