// Which loader reads an input: by its extension, then by its content (yaml_forms.cpp tells the YAML forms apart).
#include "hcp/error.hpp"
#include "hcp/lint/loaders.hpp"
#include "yaml_forms.hpp"

namespace hcp::lint {

void load_source(const SourceText& source, ConfigTree& tree) {
  InputFormat format = source.format;
  if (format == InputFormat::automatic) format = detect_format(source.name, source.text);
  switch (format) {
    case InputFormat::toml: return load_toml(source, tree);
    case InputFormat::yaml: return load_yaml(source, tree);
    case InputFormat::overrides: return load_overrides_file(source, tree);
    case InputFormat::megatron: return load_megatron_args(source, tree);
    case InputFormat::facts: {
      const LoadedInput in = load_facts_json(source);
      if (!in.variants.empty()) tree = in.variants.front().tree;
      return;
    }
    case InputFormat::python: {
      const LoadedInput in = load_python(source);
      if (!in.variants.empty()) tree = in.variants.front().tree;
      return;
    }
    case InputFormat::automatic: break;
  }
  throw Error(Errc::internal, "unreachable input format");
}

LoadedInput load_input(const SourceText& source) {
  InputFormat format = source.format;
  if (format == InputFormat::automatic) format = detect_format(source.name, source.text);
  if (format == InputFormat::megatron) return load_megatron_script(source);
  if (format == InputFormat::python) return load_python(source);
  if (format == InputFormat::facts) return load_facts_json(source);
  if (format == InputFormat::toml) return load_toml_input(source);
  LoadedInput out;
  if (format == InputFormat::yaml) {
    const YamlClass c = classify_yaml(source.text);
    if (c.form == YamlForm::megatron_functional_test) return load_functional_test(source);
    if (c.form == YamlForm::nemo_launcher) return load_nemo_launcher(source);
    if (c.form == YamlForm::megatron_yaml_cfg) return load_megatron_yaml_cfg(source);
    if (c.form == YamlForm::verl) return load_verl_yaml(source);
    if (c.form == YamlForm::nemo_rl) return load_nemo_rl_yaml(source);
    if (c.form == YamlForm::other) {
      out.skipped = c.taken_for;
      return out;
    }
  }
  SourceText typed = source;
  typed.format = format;
  out.variants.emplace_back();
  load_source(typed, out.variants.back().tree);
  if (format == InputFormat::yaml) out.variants.back().base = "the recipe this Megatron-Bridge YAML overrides";
  if (format == InputFormat::overrides) out.variants.back().base = "the recipe these overrides apply to";
  return out;
}

}  // namespace hcp::lint
