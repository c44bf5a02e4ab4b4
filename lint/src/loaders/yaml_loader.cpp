// YAML (yaml-cpp): mappings become dotted key prefixes; yaml-cpp marks are 0-based.
#include <yaml-cpp/yaml.h>

#include "hcp/lint/loaders.hpp"
#include "yaml_simple.hpp"

namespace hcp::lint {
namespace {

constexpr int kMaxDepth = 64;
// Values one file may expand to. yaml-cpp keeps an alias as the node it names, so a file is small, but reading
// it visits every alias again: ten levels of aliases of aliases in 400 bytes are 10^10 values (an "alias bomb").
// Real training configs hold a few thousand; the budget stops such a file with HCP000 long before memory matters.
constexpr size_t kMaxValues = 200000;

// Counts the values read from one file and refuses the one past the budget.
struct Budget {
  size_t used = 0;
  void take(const Location& loc) {
    if (++used > kMaxValues)
      throw_parse_error(loc, "the YAML expands to more than " + std::to_string(kMaxValues) +
                                 " values (aliases of aliases?): not read further");
  }
};

// What yaml-cpp would build, bounded before it builds it: it keeps a node of a hundred bytes and more for every
// value, and recurses into every flow collection, so a 16 MB `[[[[...]]]]` took 2 GB. Flow collections nested
// deeper than the tree's limit, and more entries than the value budget (counted as separators: ", ", "- ", ": ",
// and the flow brackets), are HCP000 at the place they pass the limit.
void check_size(const SourceText& src) {
  std::string_view t = src.text;
  int depth = 0, line = 1;
  size_t entries = 0, line_start = 0;
  auto refuse = [&](size_t at, const std::string& what) {
    throw_parse_error({src.name, line, static_cast<int>(at - line_start) + 1}, what + ": not read");
  };
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    const char before = i > line_start ? t[i - 1] : ' ';
    if (c == '\n') {
      ++line, line_start = i + 1;
    } else if (c == '#' && (before == ' ' || before == '\t' || i == line_start)) {
      while (i + 1 < t.size() && t[i + 1] != '\n') ++i;
    } else if ((c == '"' || c == '\'') && (before == ' ' || before == '\t' || before == ',' || before == '[' ||
                                          before == '{' || before == ':' || i == line_start)) {
      // A quoted scalar (only where one can start: an apostrophe inside a plain word opens nothing).
      for (++i; i < t.size() && t[i] != c; ++i) {
        if (c == '"' && t[i] == '\\') ++i;
        if (i < t.size() && t[i] == '\n') ++line, line_start = i + 1;
      }
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) refuse(i, "flow collections nested deeper than " + std::to_string(kMaxDepth) + " levels");
      ++entries;
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    } else if (c == ',' || ((c == '-' || c == ':') && i + 1 < t.size() && (t[i + 1] == ' ' || t[i + 1] == '\n'))) {
      ++entries;
    }
    if (entries > kMaxValues) refuse(i, "more than " + std::to_string(kMaxValues) + " values in the YAML");
  }
}

// yaml-cpp marks count from the start of the document being loaded; `line_offset` is where that document starts.
thread_local int line_offset = 0;

Location at(const SourceText& src, const YAML::Mark& m) {
  if (m.line < 0) return {src.name, 0, 0};
  return {src.name, m.line + 1 + line_offset, m.column + 1};
}

// The documents of a stream, split at "---" lines, with the line each starts on. yaml-cpp 0.7's LoadAll can loop
// forever on some malformed streams (found by fuzzing); loading one document at a time cannot.
std::vector<std::pair<std::string_view, int>> documents_of(std::string_view text) {
  std::vector<std::pair<std::string_view, int>> docs;
  size_t start = 0, pos = 0;
  int line = 0, start_line = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    if (text.compare(pos, 3, "---") == 0 && (pos + 3 == end || text[pos + 3] == ' ' || text[pos + 3] == '\r') &&
        pos > start) {
      docs.emplace_back(text.substr(start, pos - start), start_line);
      start = pos;
      start_line = line;
    }
    pos = end + 1;
    ++line;
  }
  docs.emplace_back(text.substr(start), start_line);
  return docs;
}

Value to_value(const SourceText& src, const YAML::Node& node, int depth, Budget& budget) {
  const Location loc = at(src, node.Mark());
  budget.take(loc);
  if (depth > kMaxDepth) throw_parse_error(loc, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return Value::make_null(loc);
    case YAML::NodeType::Scalar:
      // A quoted scalar ("4", 'a2a+p2p') has the non-specific tag "!" and is always a string.
      if (node.Tag() == "!") return Value::make_string(node.Scalar(), loc);
      return parse_scalar(node.Scalar(), loc);
    case YAML::NodeType::Sequence: {
      std::vector<Value> items;
      for (const YAML::Node& item : node) items.push_back(to_value(src, item, depth + 1, budget));
      return Value::make_list(std::move(items), loc);
    }
    case YAML::NodeType::Map: {
      Value v;
      v.kind = Value::Kind::table;
      v.loc = loc;
      return v;
    }
  }
  return Value::make_null(loc);
}

void walk(const SourceText& src, const YAML::Node& map, const std::string& prefix, ConfigTree& tree, int depth,
          Budget& budget) {
  for (const auto& entry : map) {
    const YAML::Node& key = entry.first;
    const YAML::Node& value = entry.second;
    budget.take(at(src, key.Mark()));
    if (!key.IsScalar()) throw_parse_error(at(src, key.Mark()), "mapping keys must be plain scalars");
    const std::string dotted = prefix.empty() ? key.Scalar() : prefix + "." + key.Scalar();
    if (value.IsMap()) {
      if (depth >= kMaxDepth) throw_parse_error(at(src, value.Mark()), "mappings nested deeper than 64 levels");
      walk(src, value, dotted, tree, depth + 1, budget);
      continue;
    }
    Setting s;
    s.key = dotted;
    s.spelled = dotted;
    s.key_loc = at(src, key.Mark());
    s.value = to_value(src, value, depth, budget);
    if (s.value.kind == Value::Kind::null) s.value.loc = s.key_loc;  // "key:", "key: ~": point at the key
    tree.set(std::move(s));
  }
}

void load_checked_yaml(const SourceText& source, ConfigTree& tree) {
  struct ResetOffset {
    ~ResetOffset() { line_offset = 0; }
  } reset;
  Budget budget;  // for the whole file: many small documents add up
  for (const auto& [text, first_line] : documents_of(source.text)) {
    line_offset = first_line;
    try {
      const YAML::Node doc = YAML::Load(std::string(text));
      if (doc.IsNull()) continue;
      if (!doc.IsMap()) throw_parse_error(at(source, doc.Mark()), "a config document must be a mapping");
      walk(source, doc, "", tree, 0, budget);
    } catch (const YAML::Exception& e) {
      throw_parse_error(at(source, e.mark), "invalid YAML: " + e.msg);
    }
  }
}

}  // namespace

void load_yaml(const SourceText& source, ConfigTree& tree) {
  check_size(source);
  if (load_simple_yaml(source, tree)) return;
  load_checked_yaml(source, tree);
}

void load_yaml_full(const SourceText& source, ConfigTree& tree) {
  check_size(source);
  load_checked_yaml(source, tree);
}

}  // namespace hcp::lint
