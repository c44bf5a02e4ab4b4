// Hydra-style overrides: key=value, +key=value, ++key=value, ~key. Values: null, booleans, numbers, quoted or
// bare strings, and [lists] of those (nested lists too).
#include <cctype>
#include <string>

#include "hcp/lint/loaders.hpp"

namespace hcp::lint {
namespace {

constexpr int kMaxDepth = 32;

class ValueParser {
 public:
  ValueParser(const std::string& text, Location start) : s_(text), start_(std::move(start)) {}

  Value parse() {
    Value v = value(0, false);
    skip_blanks();
    if (i_ != s_.size()) fail("unexpected '" + std::string(1, s_[i_]) + "' after the value");
    return v;
  }

 private:
  Location here() const { return {start_.file, start_.line, start_.col + static_cast<int>(i_)}; }
  [[noreturn]] void fail(const std::string& message) const { throw_parse_error(here(), "invalid override value: " + message); }
  void skip_blanks() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }

  Value value(int depth, bool in_list) {
    if (depth > kMaxDepth) fail("lists nested deeper than 32 levels");
    skip_blanks();
    const Location loc = here();
    if (i_ < s_.size() && s_[i_] == '[') return list(depth, loc);
    if (i_ < s_.size() && (s_[i_] == '\'' || s_[i_] == '"')) return quoted(loc);
    const size_t begin = i_;
    int braces = 0;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '{') ++braces;
      if (c == '}') --braces;
      if (in_list && braces == 0 && (c == ',' || c == ']')) break;
      ++i_;
    }
    std::string text = s_.substr(begin, i_ - begin);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.pop_back();
    if (in_list && text.empty()) fail("empty list entry");
    bool overflow = false;
    return parse_scalar(text, loc, &overflow);
  }

  Value quoted(const Location& loc) {
    const char q = s_[i_++];
    std::string out;
    while (i_ < s_.size() && s_[i_] != q) {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
      out += s_[i_++];
    }
    if (i_ >= s_.size()) fail(std::string("unterminated ") + q + "quoted string");
    ++i_;
    return Value::make_string(std::move(out), loc);
  }

  Value list(int depth, const Location& loc) {
    ++i_;  // '['
    std::vector<Value> items;
    skip_blanks();
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      return Value::make_list({}, loc);
    }
    for (;;) {
      items.push_back(value(depth + 1, true));
      skip_blanks();
      if (i_ >= s_.size()) fail("missing ']'");
      if (s_[i_] == ']') {
        ++i_;
        return Value::make_list(std::move(items), loc);
      }
      if (s_[i_] != ',') fail("expected ',' or ']'");
      ++i_;
    }
  }

  const std::string& s_;
  Location start_;
  size_t i_ = 0;
};

bool valid_key(const std::string& key) {
  if (key.empty() || key.front() == '.' || key.back() == '.') return false;
  for (char c : key) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '/')) return false;
  }
  return key.find("..") == std::string::npos;
}

void load_one(const std::string& raw, const Location& where, ConfigTree& tree) {
  size_t prefix = 0;
  while (prefix < raw.size() && prefix < 2 && raw[prefix] == '+') ++prefix;
  const bool remove = prefix == 0 && !raw.empty() && raw[0] == '~';
  if (remove) prefix = 1;
  const size_t eq = raw.find('=');
  const std::string key = raw.substr(prefix, eq == std::string::npos ? std::string::npos : eq - prefix);
  const Location key_loc{where.file, where.line, where.col + static_cast<int>(prefix)};
  if (!valid_key(key)) throw_parse_error(key_loc, "invalid override '" + raw + "' (expected key=value)");
  if (remove) {
    tree.remove(key);
    return;
  }
  if (eq == std::string::npos) throw_parse_error(key_loc, "override '" + raw + "' has no '=value'");
  Setting s;
  s.key = key;
  s.spelled = key;
  s.key_loc = key_loc;
  const std::string value_text = raw.substr(eq + 1);
  s.value = ValueParser(value_text, {where.file, where.line, where.col + static_cast<int>(eq) + 1}).parse();
  tree.set(std::move(s));
}

}  // namespace

void load_overrides(const std::vector<std::string>& overrides, const std::vector<Location>& locations,
                    ConfigTree& tree) {
  for (size_t i = 0; i < overrides.size(); ++i) load_one(overrides[i], locations[i], tree);
}

void load_overrides_file(const SourceText& source, ConfigTree& tree) {
  const std::string_view text = source.text;
  size_t pos = 0;
  for (int n = 1; pos <= text.size(); ++n) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string_view::npos || line[b] == '#') continue;
    size_t e = line.find_last_not_of(" \t\r");
    size_t first = b;
    // A line copied from a shell command keeps its quotes: "model.x=[2,2]"
    if (e > b && (line[b] == '"' || line[b] == '\'') && line[e] == line[b]) {
      ++first;
      --e;
    }
    load_one(std::string(line.substr(first, e - first + 1)), {source.name, n, static_cast<int>(first) + 1}, tree);
  }
}

}  // namespace hcp::lint
