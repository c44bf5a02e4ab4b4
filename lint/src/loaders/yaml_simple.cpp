#include "yaml_simple.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace hcp::lint {
namespace {

constexpr int kMaxDepth = 64;  // as the full loader

struct Line {
  int number;
  int indent;
  std::string_view body;  // without indent, comment and trailing blanks
};

// Splits the text into meaningful lines; false when a construct outside the subset shows up at this level.
bool split_lines(std::string_view text, std::vector<Line>& out) {
  int number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t indent = 0;
    while (indent < line.size() && line[indent] == ' ') ++indent;
    if (indent < line.size() && line[indent] == '\t') return false;
    std::string_view body = line.substr(indent);
    // Cut a comment: '#' at the start or after a blank, outside quotes.
    char quote = 0;
    for (size_t i = 0; i < body.size(); ++i) {
      const char c = body[i];
      if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '\'' || c == '"') {
        if (i == 0 || body[i - 1] == ' ' || body[i - 1] == '[' || body[i - 1] == ',' || body[i - 1] == ':') quote = c;
      } else if (c == '#' && (i == 0 || body[i - 1] == ' ')) {
        body = body.substr(0, i);
        break;
      }
    }
    while (!body.empty() && body.back() == ' ') body.remove_suffix(1);
    if (body.empty()) continue;
    if (body == "---" && out.empty()) continue;
    if (body.rfind("---", 0) == 0 || body.rfind("...", 0) == 0 || body[0] == '%') return false;
    out.push_back({number, static_cast<int>(indent), body});
  }
  return true;
}

class Parser {
 public:
  Parser(const SourceText& src, std::vector<Line> lines) : src_(src), lines_(std::move(lines)) {}

  bool run(ConfigTree& tree) {
    if (lines_.empty()) return true;
    if (lines_[0].indent != 0) return false;
    if (!mapping(0, "", 0)) return false;
    if (i_ != lines_.size()) return false;
    for (Setting& s : out_) tree.set(std::move(s));
    return true;
  }

 private:
  Location at(const Line& l, size_t offset) const {
    return {src_.name, l.number, l.indent + static_cast<int>(offset) + 1};
  }

  // A block mapping whose keys sit at `indent`.
  bool mapping(int indent, const std::string& prefix, int depth) {
    if (depth > kMaxDepth) return false;  // let yaml-cpp's loader report it
    while (i_ < lines_.size() && lines_[i_].indent == indent) {
      const Line& l = lines_[i_];
      if (l.body[0] == '-' && (l.body.size() == 1 || l.body[1] == ' ')) return false;
      const size_t colon = key_end(l.body);
      if (colon == std::string_view::npos) return false;
      const std::string_view key = l.body.substr(0, colon);
      if (!plain_key(key)) return false;
      const std::string dotted = prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
      size_t v = colon + 1;
      while (v < l.body.size() && l.body[v] == ' ') ++v;
      ++i_;
      Setting s;
      s.key = dotted;
      s.spelled = dotted;
      s.key_loc = at(l, 0);
      if (v < l.body.size()) {
        if (!scalar_or_flow(l.body.substr(v), at(l, v), s.value)) return false;
        if (s.value.kind == Value::Kind::null) s.value.loc = s.key_loc;  // as the full loader
        out_.push_back(std::move(s));
        continue;
      }
      // "key:" then a nested block: more indented mapping, or a sequence at the same or deeper indent.
      if (i_ < lines_.size() && is_item(lines_[i_]) && lines_[i_].indent >= indent) {
        if (!sequence(lines_[i_].indent, at(lines_[i_], 0), s.value)) return false;
        out_.push_back(std::move(s));
        continue;
      }
      if (i_ < lines_.size() && lines_[i_].indent > indent) {
        if (!mapping(lines_[i_].indent, dotted, depth + 1)) return false;
        continue;
      }
      s.value = Value::make_null(s.key_loc);  // "key:" with nothing after it: the key is the place to point at
      out_.push_back(std::move(s));
    }
    return i_ == lines_.size() || lines_[i_].indent < indent;
  }

  static bool is_item(const Line& l) { return l.body[0] == '-' && (l.body.size() == 1 || l.body[1] == ' '); }

  // "- scalar" items at `indent`.
  bool sequence(int indent, const Location& loc, Value& out) {
    std::vector<Value> items;
    while (i_ < lines_.size() && lines_[i_].indent == indent && is_item(lines_[i_])) {
      const Line& l = lines_[i_];
      size_t v = 1;
      while (v < l.body.size() && l.body[v] == ' ') ++v;
      if (v >= l.body.size()) return false;  // nested block under an item
      const std::string_view item = l.body.substr(v);
      if (key_end(item) != std::string_view::npos || item[0] == '-') return false;  // mapping or nested item
      Value value;
      if (!scalar_or_flow(item, at(l, v), value)) return false;
      items.push_back(std::move(value));
      ++i_;
    }
    if (i_ < lines_.size() && lines_[i_].indent > indent) return false;
    out = Value::make_list(std::move(items), loc);
    return true;
  }

  // The ':' that ends a plain key ("key: v" or "key:" at the end), or npos.
  static size_t key_end(std::string_view body) {
    if (body[0] == '"' || body[0] == '\'' || body[0] == '[' || body[0] == '{' || body[0] == '?') return std::string_view::npos;
    for (size_t i = 0; i < body.size(); ++i) {
      if (body[i] == ':' && (i + 1 == body.size() || body[i + 1] == ' ')) return i;
    }
    return std::string_view::npos;
  }

  static bool plain_key(std::string_view key) {
    if (key.empty() || key.back() == ' ') return false;
    for (char c : key) {
      if (c == '&' || c == '*' || c == '!' || c == '|' || c == '>' || c == '{' || c == '}' || c == '[' || c == ']' ||
          c == ',' || c == '#' || c == '"' || c == '\'' || c == '<') {
        return false;
      }
    }
    return true;
  }

  bool scalar_or_flow(std::string_view text, const Location& loc, Value& out) const {
    if (text[0] == '[') return flow_sequence(text, loc, out);
    size_t used = 0;
    if (!scalar(text, loc, out, used, false)) return false;
    return used == text.size();
  }

  bool flow_sequence(std::string_view text, const Location& loc, Value& out) const {
    std::vector<Value> items;
    size_t i = 1;
    auto blanks = [&] {
      while (i < text.size() && text[i] == ' ') ++i;
    };
    blanks();
    if (i < text.size() && text[i] == ']') {
      ++i;
    } else {
      for (;;) {
        blanks();
        if (i >= text.size() || text[i] == '[' || text[i] == '{') return false;
        Value v;
        size_t used = 0;
        Location item_loc = loc;
        item_loc.col += static_cast<int>(i);
        if (!scalar(text.substr(i), item_loc, v, used, true)) return false;
        items.push_back(std::move(v));
        i += used;
        blanks();
        if (i >= text.size()) return false;
        if (text[i] == ']') {
          ++i;
          break;
        }
        if (text[i] != ',') return false;
        ++i;
      }
    }
    if (i != text.size()) return false;
    out = Value::make_list(std::move(items), loc);
    return true;
  }

  // A plain or quoted scalar at the start of `text`; `used` is how much it took. In a flow sequence a plain
  // scalar ends at ',' or ']'.
  static bool scalar(std::string_view text, const Location& loc, Value& out, size_t& used, bool in_flow) {
    const char first = text[0];
    if (first == '&' || first == '*' || first == '!' || first == '|' || first == '>' || first == '{' || first == '@' ||
        first == '`' || first == '%') {
      return false;
    }
    if (first == '\'' || first == '"') {
      std::string s;
      size_t i = 1;
      for (;; ++i) {
        if (i >= text.size()) return false;  // continues on the next line: not in the subset
        const char c = text[i];
        if (first == '\'' && c == '\'') {
          if (i + 1 < text.size() && text[i + 1] == '\'') {
            s += '\'';
            ++i;
            continue;
          }
          break;
        }
        if (first == '"' && c == '\\') {
          if (i + 1 >= text.size()) return false;
          const char e = text[++i];
          if (e == '"' || e == '\\' || e == '/') s += e;
          else if (e == 'n') s += '\n';
          else if (e == 't') s += '\t';
          else return false;
          continue;
        }
        if (first == '"' && c == '"') break;
        s += c;
      }
      used = i + 1;
      out = Value::make_string(std::move(s), loc);
      return true;
    }
    size_t end = 0;
    while (end < text.size()) {
      const char c = text[end];
      if (in_flow && (c == ',' || c == ']' || c == '[' || c == '{' || c == '}')) break;
      if (c == ':' && (end + 1 == text.size() || text[end + 1] == ' ')) return false;  // a nested mapping
      ++end;
    }
    std::string_view plain = text.substr(0, end);
    while (!plain.empty() && plain.back() == ' ') plain.remove_suffix(1);
    if (plain.empty()) return false;
    used = end;
    out = parse_scalar(std::string(plain), loc);
    return true;
  }

  const SourceText& src_;
  std::vector<Line> lines_;
  size_t i_ = 0;
  std::vector<Setting> out_;
};

}  // namespace

bool load_simple_yaml(const SourceText& source, ConfigTree& tree) {
  std::vector<Line> lines;
  if (!split_lines(source.text, lines)) return false;
  return Parser(source, std::move(lines)).run(tree);
}

}  // namespace hcp::lint
