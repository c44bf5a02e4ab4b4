// TOML (toml++): tables become dotted key prefixes; positions come from toml++'s source regions.
#include <toml++/toml.h>

#include <sstream>

#include "hcp/lint/loaders.hpp"
#include "toml_guard.hpp"
#include "yaml_forms.hpp"

namespace hcp::lint {
namespace {

constexpr int kMaxDepth = 64;  // deeper nesting is not a training config; refuse instead of recursing on

Location at(const SourceText& src, const toml::source_region& r) {
  return {src.name, static_cast<int>(r.begin.line), static_cast<int>(r.begin.column)};
}

Value to_value(const SourceText& src, const toml::node& node, int depth) {
  const Location loc = at(src, node.source());
  if (depth > kMaxDepth) throw_parse_error(loc, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  if (auto v = node.as_boolean()) return Value::make_bool(v->get(), loc);
  if (auto v = node.as_integer()) return Value::make_int(v->get(), std::to_string(v->get()), loc);
  if (auto v = node.as_floating_point()) {
    std::ostringstream o;
    o << v->get();
    return Value::make_real(v->get(), o.str(), loc);
  }
  if (auto v = node.as_string()) return Value::make_string(v->get(), loc);
  if (auto v = node.as_array()) {
    std::vector<Value> items;
    for (const toml::node& item : *v) items.push_back(to_value(src, item, depth + 1));
    return Value::make_list(std::move(items), loc);
  }
  if (node.is_table()) {
    Value v;
    v.kind = Value::Kind::table;
    v.loc = loc;
    return v;
  }
  std::ostringstream o;  // dates and times: kept as text
  if (auto d = node.as_date()) o << d->get();
  else if (auto t = node.as_time()) o << t->get();
  else if (auto dt = node.as_date_time()) o << dt->get();
  return Value::make_string(o.str(), loc);
}

void walk(const SourceText& src, const toml::table& table, const std::string& prefix, ConfigTree& tree, int depth) {
  for (const auto& [key, node] : table) {
    const std::string dotted = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const toml::table* sub = node.as_table()) {
      if (depth >= kMaxDepth) throw_parse_error(at(src, node.source()), "tables nested deeper than 64 levels");
      walk(src, *sub, dotted, tree, depth + 1);
      continue;
    }
    Setting s;
    s.key = dotted;
    s.spelled = dotted;
    s.key_loc = at(src, key.source());
    if (!s.key_loc.known()) s.key_loc = at(src, node.source());
    s.value = to_value(src, node, depth);
    tree.set(std::move(s));
  }
}

}  // namespace

void load_toml(const SourceText& source, ConfigTree& tree) { walk(source, parse_toml(source), "", tree, 0); }

// Claimed only by positive evidence, as YAML is: every top-level key a section of Bridge's ConfigContainer (or
// hcp's own cluster / env). torchtitan's [job] / [training] / [parallelism], pyproject.toml and the linter's own
// hcp-lint.toml are other tools' TOML, skipped with their keys (torchtitan's was linted as Bridge: 84 false HCP022).
LoadedInput load_toml_input(const SourceText& source) {
  LoadedInput out;
  const toml::table table = parse_toml(source);
  std::vector<std::string> keys;
  bool foreign = false;
  for (const auto& [key, node] : table) {
    keys.emplace_back(key.str());
    foreign = foreign || !is_bridge_section(key.str());
  }
  if (foreign && is_torchtitan_toml(keys)) return load_torchtitan_toml(source);
  if (foreign) {
    out.skipped = unknown_form_reason("TOML", keys);
    return out;
  }
  walk(source, table, "", out.variants.emplace_back().tree, 0);
  out.variants.back().base = "the recipe this Megatron-Bridge TOML overrides";
  return out;
}

}  // namespace hcp::lint
