// Primus (github.com/AMD-AGI/Primus, read at fd1eeab): an experiment YAML whose `modules.<x>trainer` (pre_trainer,
// post_trainer) names `framework: megatron`, a module preset `config:` (primus/configs/modules/megatron/) and a
// model preset `model:` (primus/configs/models/megatron/; the .yaml optional), and `overrides:`
// (primus/core/config/parser.py:257-328). Presets inherit through `extends:` (yaml_loader.py:134-169, the merge
// NeMo-RL's defaults use). The model preset only adds keys the module preset lacks (merge_namespace with
// allow_override=False, parser.py:320); overrides win (:323). The keys are Megatron-LM's argument dests, copied onto
// Megatron's args (primus/backends/megatron/argument_builder.py:151-156; others are dropped). `${VAR:default}` is an
// environment variable with a default. The world size is torchrun's (argument_builder.py:197-200): unknown here.
#include <filesystem>
#include <regex>
#include <system_error>

#include "framework_launches.hpp"
#include "hcp/error.hpp"
#include "hcp/lint/linter.hpp"
#include "hcp/lint/loaders.hpp"
#include "yaml_inheritance.hpp"

namespace hcp::lint {
namespace {

namespace fs = std::filesystem;

// primus/configs/<kind>/megatron/<name> from the experiment's folder upwards (a Primus checkout), inside the working
// directory; "" when not found.
std::string find_preset(const std::string& experiment, const std::string& kind, std::string name) {
  if (name.find('/') != std::string::npos || name.empty()) return {};
  if (name.size() < 5 || name.substr(name.size() - 5) != ".yaml") name += ".yaml";
  std::error_code ec;
  // A relative experiment path ends its parents at the working directory itself ("" is "."): the Primus checkout's
  // root, where hcp-lint is most naturally run from.
  for (fs::path dir = fs::path(experiment).parent_path();; dir = dir.parent_path()) {
    const fs::path p = (dir.empty() ? fs::path(".") : dir) / "primus" / "configs" / kind / "megatron" / name;
    if (fs::is_regular_file(p, ec)) {
      const std::string path = p.lexically_normal().string();
      return refused_outside_working_directory(path).empty() ? path : std::string();
    }
    if (dir.empty() || dir == dir.parent_path()) break;
  }
  return {};
}

// ${VAR:default} -> the default, as a default the environment may override; ${VAR} alone -> unknown.
void environment_defaults(ConfigTree& raw) {
  static const std::regex env(R"(^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}$)");
  for (const std::string& key : raw.keys_in_order()) {
    const Setting* s = raw.find(key);
    std::smatch m;
    if (s->value.kind != Value::Kind::string || !std::regex_match(s->value.text, m, env)) continue;
    Setting copy = *s;
    if (m[2].matched) {
      copy.value = parse_scalar(m[2].str(), s->value.loc);
      copy.provenance = Provenance::defaulted;
      copy.why = "${" + m[1].str() + ":" + m[2].str() + "}: the environment may set " + m[1].str();
    } else {
      copy.value = Value::make_null(s->value.loc);
      copy.provenance = Provenance::unknown;
      copy.why = "environment variable " + m[1].str();
    }
    raw.set(std::move(copy));
  }
}

// A preset name with ${VAR:default} pieces (`${PRIMUS_MODEL:llama2_7B}.yaml`): the defaults put in; none when a piece
// has no default.
std::optional<std::string> with_env_defaults(const std::string& text) {
  static const std::regex env(R"(\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\})");
  std::string out;
  auto from = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), env), end; it != end; ++it) {
    if (!(*it)[2].matched) return std::nullopt;
    out.append(from, (*it)[0].first);
    out += (*it)[2].str();
    from = (*it)[0].second;
  }
  out.append(from, text.cend());
  return out;
}

}  // namespace

LoadedInput load_primus_yaml(const SourceText& source) {
  ConfigTree top;
  load_yaml(source, top);
  LoadedInput out;
  std::string module;
  for (const std::string& key : top.keys_in_order()) {
    // modules.<name>.framework where the name says trainer (parser.py:330-336).
    constexpr std::string_view kFramework = ".framework";
    if (key.rfind("modules.", 0) != 0 || key.size() <= kFramework.size() ||
        key.compare(key.size() - kFramework.size(), kFramework.size(), kFramework) != 0)
      continue;
    const std::string name = key.substr(8, key.size() - 8 - kFramework.size());
    if (name.find('.') == std::string::npos && name.find("trainer") != std::string::npos && module.empty()) {
      module = name;
    }
  }
  const Setting* framework = module.empty() ? nullptr : top.find("modules." + module + ".framework");
  if (!framework || framework->value.text != "megatron") {
    out.skipped = "a Primus experiment without a Megatron trainer module" +
                  (framework ? " (framework: " + framework->value.display() + ")" : std::string());
    return out;
  }
  const std::string prefix = "modules." + module + ".";
  ConfigTree merged;
  std::string base;
  const auto preset = [&](const char* field, const char* kind, bool fill_only) {
    const Setting* name = top.find(prefix + field);
    if (!name || name->value.kind != Value::Kind::string) return;
    const std::optional<std::string> file = with_env_defaults(name->value.text);
    const std::string path = file ? find_preset(source.name, kind, *file) : std::string();
    if (path.empty()) {
      out.unread.push_back({name->value.loc, std::string(field) + ": " + name->value.text +
                                                 " is not read (no primus/configs/" + kind +
                                                 "/megatron/ inside the working directory above the file)"});
      base = "Primus's presets, which are not read";
      return;
    }
    try {
      SourceText text = read_source(path);
      InheritedYaml yaml = load_yaml_with_defaults(text, "extends");
      for (const std::string& key : yaml.raw.keys_in_order()) {
        if (!fill_only || !merged.find(key)) merged.set(*yaml.raw.find(key));
      }
      for (auto& u : yaml.unread) out.unread.push_back(std::move(u));
      for (SourceText& s : yaml.read) out.sourced.push_back(std::move(s));
      out.sourced.push_back(std::move(text));
    } catch (const Error& e) {
      out.unread.push_back({name->value.loc, std::string(field) + ": " + e.what()});
      base = "Primus's presets, which are not read";
    }
  };
  preset("config", "modules", false);
  preset("model", "models", true);  // only what the module preset does not set
  const std::string overrides = prefix + "overrides.";
  for (const std::string& key : top.keys_in_order()) {
    if (key.rfind(overrides, 0) != 0) continue;
    Setting s = *top.find(key);
    s.key = key.substr(overrides.size());
    merged.set(std::move(s));
  }
  environment_defaults(merged);
  ConfigVariant v;
  v.role = "Primus " + module;
  v.base = base;
  for (const std::string& name : merged.keys_in_order()) {
    const std::string key = megatron_arg_key(name);
    const Setting* s = merged.find(name);
    if (key.empty() || key.rfind("cluster.", 0) == 0 || (s->value.kind == Value::Kind::null && s->provenance != Provenance::unknown))
      continue;
    Setting copy = *s;
    copy.key = key;
    copy.spelled = name;
    v.tree.set(std::move(copy));
  }
  out.variants.push_back(std::move(v));
  return out;
}

}  // namespace hcp::lint
