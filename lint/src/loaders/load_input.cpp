// Which loader reads an input: by its extension, then by its content (yaml_forms.cpp tells the YAML forms apart).
#include <optional>
#include <string_view>
#include <utility>

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

// Documents that quote configs are never configs themselves (a README's YAML snippet is not the job's file).
std::optional<std::string> document_kind(const std::string& name) {
  static constexpr std::pair<std::string_view, std::string_view> kDocuments[] = {
      {".md", "a Markdown document"}, {".markdown", "a Markdown document"}, {".rst", "a reStructuredText document"},
      {".html", "an HTML document"},  {".ipynb", "a Jupyter notebook"},
  };
  for (const auto& [ext, kind] : kDocuments) {
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0) {
      return std::string(kind) + ", not a training config (lint the files it describes)";
    }
  }
  return std::nullopt;
}

LoadedInput load_input(const SourceText& source) {
  if (source.format == InputFormat::automatic) {
    if (std::optional<std::string> kind = document_kind(source.name)) {
      LoadedInput out;
      out.skipped = std::move(kind);
      return out;
    }
  }
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
    if (c.form == YamlForm::roll) return load_roll_yaml(source);
    if (c.form == YamlForm::areal) return load_areal_yaml(source);
    if (c.form == YamlForm::primus) return load_primus_yaml(source);
    if (c.form == YamlForm::flagscale) return load_flagscale_yaml(source);
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
