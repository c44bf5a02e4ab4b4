// Megatron-LM launch scripts and argument files: flags (with --flag value, --flag=value and nargs='+'), torchrun's
// cluster size, and exported environment variables.
#include <cctype>
#include <string>

#include "hcp/lint/loaders.hpp"
#include "megatron_flags.hpp"
#include "shell_words.hpp"

namespace hcp::lint {
namespace {

bool is_negative_number(const std::string& w) {
  return w.size() > 1 && w[0] == '-' && std::isdigit(static_cast<unsigned char>(w[1]));
}

bool looks_like_flag(const std::string& w) { return w.size() > 1 && w[0] == '-' && !is_negative_number(w); }

Value value_of(const ShellWord& w) {
  bool overflow = false;
  return parse_scalar(w.text, w.loc, &overflow);
}

}  // namespace

void load_megatron_args(const SourceText& source, ConfigTree& tree) {
  const ShellScan scan = scan_shell(source);
  const auto& words = scan.words;
  bool group_query_attention = false;
  std::optional<Setting> query_groups;
  for (size_t i = 0; i < words.size(); ++i) {
    const ShellWord& w = words[i];
    if (w.text.size() < 3 || w.text.rfind("--", 0) != 0) continue;
    const size_t eq = w.text.find('=');
    const std::string flag = w.text.substr(0, eq);
    const FlagSpec* spec = find_flag(flag);
    Setting s;
    s.spelled = flag;
    s.key_loc = w.loc;
    if (spec == nullptr) {
      // Kept under its own spelling so the did-you-mean rule can compare it with the known flags.
      s.key = flag;
      s.value = Value::make_null(w.loc);
      tree.set(std::move(s));
      continue;
    }
    s.key = std::string(spec->key);
    std::vector<ShellWord> values;
    if (eq != std::string::npos) {
      ShellWord inline_value = w;
      inline_value.text = w.text.substr(eq + 1);
      inline_value.loc.col += static_cast<int>(eq) + 1;
      values.push_back(inline_value);
    } else if (spec->arity != FlagSpec::Arity::store_true) {
      for (size_t j = i + 1; j < words.size() && words[j].command == w.command && !looks_like_flag(words[j].text);
           ++j) {
        values.push_back(words[j]);
        if (spec->arity == FlagSpec::Arity::one) break;
      }
    }
    bool unresolved = false;
    for (const ShellWord& v : values) unresolved |= v.unresolved;
    if (unresolved) continue;  // set from outside the script ($1, an undefined variable): unknown here
    if (spec->arity == FlagSpec::Arity::store_true) {
      s.value = Value::make_bool(true, w.loc);
    } else if (values.empty()) {
      throw_parse_error(w.loc, flag + " expects a value");
    } else if (values.size() == 1 && !spec->always_list) {
      s.value = value_of(values[0]);
    } else {
      std::vector<Value> items;
      for (const ShellWord& v : values) items.push_back(value_of(v));
      s.value = Value::make_list(std::move(items), values[0].loc);
    }
    if (s.key == "model.group_query_attention") group_query_attention = true;
    if (s.key == "model.num_query_groups") {
      query_groups = std::move(s);  // Megatron ignores it without --group-query-attention
      continue;
    }
    tree.set(std::move(s));
  }
  if (query_groups && group_query_attention) tree.set(std::move(*query_groups));
  for (const ShellExport& e : scan.exports) {
    Setting s;
    s.key = "env." + e.name;
    s.spelled = e.name;
    s.key_loc = e.loc;
    s.value = Value::make_string(e.value, e.loc);
    tree.set(std::move(s));
  }
}

}  // namespace hcp::lint
