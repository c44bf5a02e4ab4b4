// Megatron-LM functional tests (tests/functional_tests/test_cases/**/model_config.yaml): MODEL_ARGS become the
// training program's words the way the test harness builds them (tests/functional_tests/shell_test_utils/
// _run_training.sh): `true` is the bare flag, a value in [ ] is split into words, a value with spaces or ( ) | is
// one word, anything else is the flag and its value; `false` and empty values pass nothing. MODEL_ARGS_2, ... are
// the arguments of the resumed run, which the same test also runs. ENV_VARS are the environment. The node and GPU
// counts come from the CI recipe, outside the file.
#include <sstream>

#include "hcp/lint/loaders.hpp"
#include "megatron_flag_reader.hpp"

namespace hcp::lint {
namespace {

ShellWord word(std::string text, Location loc) {
  ShellWord w;
  w.text = std::move(text);
  w.known_prefix = w.text.size();
  w.loc = std::move(loc);
  return w;
}

void harness_words(const std::string& flag, const Setting& s, std::vector<ShellWord>& out) {
  const Value& v = s.value;
  switch (v.kind) {
    case Value::Kind::null:
    case Value::Kind::table: return;
    case Value::Kind::boolean:
      if (v.boolean) out.push_back(word(flag, s.key_loc));
      return;
    case Value::Kind::list:
      out.push_back(word(flag, s.key_loc));
      for (const Value& item : v.items) out.push_back(word(item.kind == Value::Kind::string ? item.text : item.display(), item.loc));
      return;
    default: break;
  }
  const std::string text = v.text;
  if (text.empty()) return;
  out.push_back(word(flag, s.key_loc));
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    std::istringstream parts(text.substr(1, text.size() - 2));
    for (std::string p; parts >> p;) out.push_back(word(p, v.loc));
    return;
  }
  out.push_back(word(text, v.loc));
}

}  // namespace

LoadedInput load_functional_test(const SourceText& source) {
  ConfigTree yaml;
  load_yaml(source, yaml);
  LoadedInput out;
  std::map<std::string, std::vector<ShellWord>> runs;  // "MODEL_ARGS", "MODEL_ARGS_2", ...
  ConfigTree env;
  std::vector<ShellWord> overrides;
  for (const std::string& key : yaml.keys_in_order()) {
    const Setting& s = *yaml.find(key);
    const size_t dot = key.find('.');
    if (dot == std::string::npos) continue;
    const std::string section = key.substr(0, dot), name = key.substr(dot + 1);
    if (section == "ENV_VARS") {
      Setting e;
      e.key = "env." + name;
      e.spelled = name;
      e.key_loc = s.key_loc;
      e.value = Value::make_string(s.value.text, s.value.loc);
      env.set(std::move(e));
    } else if ((section == "MODEL_ARGS" || section.rfind("MODEL_ARGS_", 0) == 0) && name.rfind("--", 0) == 0) {
      harness_words(name, s, runs[section]);
    } else if (section == "MODEL_ARGS" && s.value.kind != Value::Kind::table && s.value.kind != Value::Kind::null) {
      // NeMo tests (IS_NEMO_TEST): the harness passes `key=value` overrides to the NeMo 2 script.
      const std::string value = s.value.kind == Value::Kind::string ? s.value.text : s.value.display();
      overrides.push_back(word(name + "=" + value, s.key_loc));
    }
  }
  if (runs.empty() && !overrides.empty()) runs["MODEL_ARGS"];
  for (auto& [section, words] : runs) {
    ConfigVariant v;
    read_megatron_flags(words, 0, v.tree);
    if (section == "MODEL_ARGS") read_bridge_overrides(overrides, 0, v.tree);
    for (const std::string& key : env.keys_in_order()) v.tree.set(*env.find(key));
    Setting world;
    world.key = "cluster.world_size";
    world.spelled = "the test's GPUs";
    world.key_loc = {source.name, 0, 0};
    world.provenance = Provenance::unknown;
    world.why = "the CI recipe gives the nodes and GPUs (GPUS_PER_NODE, NUM_NODES), not model_config.yaml";
    v.tree.set(std::move(world));
    v.path_index = 0;  // a resumed run is run by the same test: findings of either are certain
    out.variants.push_back(std::move(v));
  }
  if (out.variants.empty()) out.skipped = "a Megatron-LM functional test without Megatron flags in MODEL_ARGS";
  return out;
}

}  // namespace hcp::lint
