// FlagScale (github.com/FlagOpen/FlagScale, read at da4935e): a Hydra top config (experiment, action) whose
// `defaults:` names a train group, conf/train/NAME.yaml, loaded under `train` (`_self_` first: the group wins;
// last: the top file wins). The runner flattens train.system, train.model and train.data, in that order, into
// Megatron-LM flags named by each leaf key (flagscale/runner/utils.py:271-290; a later duplicate wins, as argparse
// keeps the last). The world size (runner_train.py:496-546): without a hostfile one node running
// min(runner.nproc_per_node, the devices in CUDA_VISIBLE_DEVICES) processes; with one, what the file lists (unknown
// here). Heterogeneous meshes (system.hetero_process_meshes, groups of tp, cp, ep, dp, pp) set each rank's sizes;
// FlagScale asserts one cp for every mesh (flagscale/train/arguments.py:111-113).
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

Setting derived(const Setting& from, const std::string& key, int64_t value) {
  Setting s = from;
  s.key = key;
  s.value = Value::make_int(value, std::to_string(value), from.value.loc);
  s.provenance = Provenance::computed;
  return s;
}

// hetero_process_meshes [tp, cp, ep, dp, pp] x n: each rank's sizes are its mesh's (arguments.py:193-209): a size
// all meshes share is known; the meshes are pipeline stages one after another, so pp is their sum (asserted equal
// to the system's, :121-123); the world is the sum of each mesh's tp * cp * dp * pp;
// expert_tensor_parallel_size_per_process_mesh replaces the expert tensor size the same way.
void hetero(const Setting& meshes, const Setting* etp_per_mesh, ConfigTree& tree) {
  std::vector<int64_t> v;
  for (const Value& item : meshes.value.items) {
    if (item.kind != Value::Kind::integer || item.integer <= 0) return;
    v.push_back(item.integer);
  }
  if (v.empty() || v.size() % 5 != 0) return;
  const std::pair<size_t, const char*> sizes[] = {{0, "model.tensor_model_parallel_size"},
                                                  {1, "model.context_parallel_size"},
                                                  {2, "model.expert_model_parallel_size"}};
  for (const auto& [at, key] : sizes) {
    bool same = true;
    for (size_t m = 5; m < v.size(); m += 5) same = same && v[m + at] == v[at];
    if (same) {
      tree.set(derived(meshes, key, v[at]));
    } else {
      Setting s = meshes;
      s.key = key;
      s.value = Value::make_null(meshes.value.loc);
      s.provenance = Provenance::unknown;
      s.why = "hetero_process_meshes give each mesh its own";
      tree.set(std::move(s));
    }
  }
  int64_t stages = 0;
  for (size_t m = 0; m < v.size(); m += 5) {
    if (__builtin_add_overflow(stages, v[m + 4], &stages)) return;
  }
  tree.set(derived(meshes, "model.pipeline_model_parallel_size", stages));
  if (etp_per_mesh && etp_per_mesh->value.kind == Value::Kind::list && !etp_per_mesh->value.items.empty()) {
    const Value& first = etp_per_mesh->value.items[0];
    bool same = first.kind == Value::Kind::integer;
    for (const Value& item : etp_per_mesh->value.items) same = same && item.kind == first.kind && item.integer == first.integer;
    Setting s = *etp_per_mesh;
    s.key = "model.expert_tensor_parallel_size";
    if (same) {
      s.value = first;
    } else {
      s.value = Value::make_null(s.value.loc);
      s.provenance = Provenance::unknown;
      s.why = "expert_tensor_parallel_size_per_process_mesh gives each mesh its own";
    }
    tree.set(std::move(s));
  }
  int64_t world = 0;
  for (size_t m = 0; m < v.size(); m += 5) {
    int64_t ranks = v[m];
    for (size_t k : {size_t{1}, size_t{3}, size_t{4}}) {
      if (__builtin_mul_overflow(ranks, v[m + k], &ranks)) return;
    }
    if (__builtin_add_overflow(world, ranks, &world)) return;
  }
  tree.set(derived(meshes, "cluster.world_size", world));
  Setting marker = meshes;
  marker.key = "framework.hetero_meshes";
  tree.set(std::move(marker));
}

void world_size(const ConfigTree& raw, ConfigTree& tree, const Location& at) {
  const Setting* type = raw.find("experiment.runner.type");
  const Setting* hostfile = raw.find("experiment.runner.hostfile");
  Setting s;
  s.key = "cluster.world_size";
  s.spelled = "FlagScale's runner";
  s.key_loc = at;
  if ((type && type->value.text == "cloud") || (hostfile && hostfile->value.kind != Value::Kind::null)) {
    s.provenance = Provenance::unknown;
    s.why = type && type->value.text == "cloud" ? "the cloud runner takes the nodes from the environment"
                                                : "the hosts come from experiment.runner.hostfile";
    tree.set(std::move(s));
    return;
  }
  std::optional<int64_t> n;
  if (const Setting* p = raw.find("experiment.runner.nproc_per_node"); p && p->value.kind == Value::Kind::integer) {
    n = p->value.integer;
    s.key_loc = p->key_loc;
  }
  if (const Setting* d = raw.find("experiment.envs.CUDA_VISIBLE_DEVICES"); d && d->value.kind == Value::Kind::string) {
    const int64_t devices = 1 + static_cast<int64_t>(std::count(d->value.text.begin(), d->value.text.end(), ','));
    if (!n || devices < *n) {
      n = devices;
      s.key_loc = d->key_loc;
    }
  }
  if (!n || *n <= 0) return;
  s.value = Value::make_int(*n, std::to_string(*n), s.key_loc);
  s.provenance = Provenance::computed;
  s.spelled = "one node without a hostfile: min(runner.nproc_per_node, CUDA_VISIBLE_DEVICES)";
  tree.set(std::move(s));
}

}  // namespace

LoadedInput load_flagscale_yaml(const SourceText& source) {
  ConfigTree raw;
  load_yaml(source, raw);
  LoadedInput out;
  // The train group named in `defaults:` (its entries are mappings the flat tree does not keep: read the text).
  static const std::regex group(R"(^\s*-\s*train\s*:\s*([A-Za-z0-9_.\-]+)\s*$)");
  static const std::regex self(R"(^\s*-\s*_self_\s*$)");
  std::string name;
  bool self_first = false, seen_self = false;
  size_t pos = 0;
  while (pos < source.text.size()) {
    size_t end = source.text.find('\n', pos);
    if (end == std::string::npos) end = source.text.size();
    const std::string line = source.text.substr(pos, end - pos);
    pos = end + 1;
    std::smatch m;
    if (std::regex_match(line, self)) seen_self = true;
    if (name.empty() && std::regex_match(line, m, group)) {
      name = m[1].str();
      self_first = seen_self;
    }
  }
  ConfigTree merged;
  const auto take = [&](const ConfigTree& t, const std::string& prefix) {
    for (const std::string& k : t.keys_in_order()) {
      Setting s = *t.find(k);
      s.key = prefix + k;
      merged.set(std::move(s));
    }
  };
  ConfigTree train;
  std::string base;
  if (!name.empty()) {
    // Hydra adds the extension only when the name lacks it (`train: train_deepseek_v3.yaml` names that file).
    const bool has_extension = name.size() > 5 && name.compare(name.size() - 5, 5, ".yaml") == 0;
    const std::string path = (fs::path(source.name).parent_path() / "train" / (has_extension ? name : name + ".yaml"))
                                 .lexically_normal()
                                 .string();
    const std::string why = refused_outside_working_directory(path);
    if (!why.empty()) {
      out.unread.push_back({Location{source.name, 1, 1}, "train: " + name + " (" + path + ") is not read: " + why});
      base = "the train group " + name + ", which is not read";
    } else {
      try {
        SourceText text = read_source(path);
        load_yaml(text, train);
        out.sourced.push_back(std::move(text));
      } catch (const Error& e) {
        out.unread.push_back({Location{source.name, 1, 1}, std::string("train: ") + e.what()});
        base = "the train group " + name + ", which is not read";
      }
    }
  }
  // `_self_` first: the group's keys win over the top file's.
  if (self_first) {
    take(raw, "");
    take(train, "train.");
  } else {
    take(train, "train.");
    take(raw, "");
  }
  ConfigVariant v;
  v.role = "FlagScale";
  v.base = base;
  for (const char* section : {"train.system.", "train.model.", "train.data."}) {
    for (const std::string& k : merged.keys_in_order()) {
      if (k.rfind(section, 0) != 0) continue;
      const std::string leaf = k.substr(k.rfind('.') + 1);
      const std::string key = megatron_arg_key(leaf);
      const Setting* s = merged.find(k);
      if (key.empty() || key.rfind("cluster.", 0) == 0 || s->value.kind == Value::Kind::null) continue;
      Setting copy = *s;
      copy.key = key;
      copy.spelled = k;
      v.tree.set(std::move(copy));
    }
  }
  // The runner drops the nesting, so the hetero block counts in any section (llama3's sits under model).
  const auto leaf = [&](const std::string& name) -> const Setting* {
    const Setting* found = nullptr;
    for (const char* section : {"train.system.", "train.model.", "train.data."}) {
      for (const std::string& k : merged.keys_in_order()) {
        if (k.rfind(section, 0) == 0 && k.size() > name.size() && k.compare(k.size() - name.size(), name.size(), name) == 0 &&
            k[k.size() - name.size() - 1] == '.')
          found = merged.find(k);
      }
    }
    return found;
  };
  const Setting* enabled = leaf("enable_hetero");
  const Setting* meshes = leaf("hetero_process_meshes");
  const Setting* action = merged.find("action");
  if (action && action->value.text == "auto_tune") {
    // The auto tuner runs the job over experiment.auto_tuner.space: a size it searches is not one value.
    for (const std::string& k : merged.keys_in_order()) {
      constexpr std::string_view kSpace = "experiment.auto_tuner.space.";
      if (k.rfind(kSpace, 0) != 0) continue;
      const Setting* s = merged.find(k);
      const std::string key = megatron_arg_key(k.substr(kSpace.size()));
      if (key.empty() || s->value.kind != Value::Kind::list || s->value.items.size() < 2) continue;
      Setting searched = *s;
      searched.key = key;
      searched.value = Value::make_null(s->value.loc);
      searched.provenance = Provenance::unknown;
      searched.why = "action auto_tune searches " + s->value.display();
      v.tree.set(std::move(searched));
    }
    Setting world = *action;
    world.key = "cluster.world_size";
    world.value = Value::make_null(action->value.loc);
    world.provenance = Provenance::unknown;
    world.why = "action auto_tune runs the job on the shapes it searches";
    v.tree.set(std::move(world));
  } else if (enabled && ((enabled->value.kind == Value::Kind::boolean && enabled->value.boolean) ||
                         enabled->value.text == "True" || enabled->value.text == "true") && meshes) {
    hetero(*meshes, leaf("expert_tensor_parallel_size_per_process_mesh"), v.tree);
  } else {
    world_size(merged, v.tree, Location{source.name, 1, 1});
  }
  if (const Setting* conn = merged.find("experiment.envs.CUDA_DEVICE_MAX_CONNECTIONS")) {
    Setting s = *conn;
    s.key = "env.CUDA_DEVICE_MAX_CONNECTIONS";
    if (s.value.kind == Value::Kind::integer) s.value = Value::make_string(s.value.text, s.value.loc);
    v.tree.set(std::move(s));
  }
  out.variants.push_back(std::move(v));
  return out;
}

}  // namespace hcp::lint
