#include "toml_guard.hpp"

#include <string>
#include <string_view>
#include <vector>

#include "hcp/lint/loaders.hpp"

namespace hcp::lint {
namespace {

constexpr int kMaxKeyParts = 64;

// Scans for a key of too many parts: in a table header, before `=` at the start of a line, and in an inline table
// after `{` or `,`. Strings (basic, literal, multi-line) are skipped; a line that is the middle of a multi-line
// array never reaches `=` in key position, so its numbers' dots do not count.
void check_key_parts(const SourceText& src) {
  std::string_view t = src.text;
  std::vector<char> open;  // '{' and '[' of the values being read
  bool key = true, header = false;
  int parts = 1, line = 1;
  size_t line_start = 0, key_start = 0;
  auto refuse = [&](size_t at) {
    throw_parse_error({src.name, line, static_cast<int>(at - line_start) + 1},
                      "a key of more than " + std::to_string(kMaxKeyParts) + " dotted parts");
  };
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '\n') {
      ++line, line_start = i + 1;
      if (open.empty()) key = true, header = false, parts = 1, key_start = i + 1;
      continue;
    }
    if (c == '#') {  // a comment, to the end of the line
      while (i + 1 < t.size() && t[i + 1] != '\n') ++i;
      continue;
    }
    if (c == '"' || c == '\'') {
      const bool multi = t.substr(i, 3) == std::string_view(std::string(3, c));
      const std::string_view close = multi ? t.substr(i, 3) : t.substr(i, 1);
      size_t j = i + close.size();
      for (; j < t.size(); ++j) {
        if (c == '"' && t[j] == '\\') { ++j; continue; }
        if (t[j] == '\n') ++line, line_start = j + 1;
        if (t.substr(j, close.size()) == close) break;
      }
      i = j + close.size() - 1;
      continue;
    }
    if (key) {
      if (c == '.') {
        if (++parts > kMaxKeyParts) refuse(key_start);
      } else if (c == '=' && !header) {
        key = false;
      } else if (c == '[' && open.empty() && t.substr(key_start, i - key_start).find_first_not_of(" \t[") == std::string_view::npos) {
        header = true;
      } else if (c == ']' && header) {
        key = false;
      } else if (c == '}' && !open.empty() && open.back() == '{') {  // an empty inline table
        open.pop_back();
        key = false;
      }
      continue;
    }
    if (c == '{' || c == '[') {
      open.push_back(c);
      if (c == '{') key = true, parts = 1, key_start = i;
    } else if ((c == '}' || c == ']') && !open.empty()) {
      open.pop_back();
    } else if (c == ',' && !open.empty() && open.back() == '{') {
      key = true, parts = 1, key_start = i;
    }
  }
}

}  // namespace

toml::table parse_toml(const SourceText& source) {
  check_key_parts(source);
  try {
    return toml::parse(source.text, source.name);
  } catch (const toml::parse_error& e) {
    throw_parse_error({source.name, static_cast<int>(e.source().begin.line), static_cast<int>(e.source().begin.column)},
                      "invalid TOML: " + std::string(e.description()));
  }
}

}  // namespace hcp::lint
