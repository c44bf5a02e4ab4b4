// Primus launches (github.com/AMD-AGI/Primus at fd1eeab): `primus-cli direct|slurm|container [opts] -- train
// pretrain --config EXP.yaml [overrides]` (runner/primus-cli, primus/cli/subcommands/train.py) and the examples'
// `EXP=EXP.yaml bash examples/run_pretrain.sh|run_slurm_pretrain.sh|run_local_pretrain.sh [overrides]`. The
// experiment is read as a Primus YAML (primus_loader.cpp), relative to the Primus checkout the script is in; the
// overrides (`--key value`, `--key=value`, `key=value`: primus/core/utils/arg_utils.py parse_cli_overrides) win
// over it. The world is NNODES x GPUS_PER_NODE where the launcher says so: run_pretrain.sh defaults them to 1 and 8
// (examples/run_pretrain.sh:73-75), primus-cli direct to 8 GPUs a node (runner/primus-cli-direct.sh:471); under
// Slurm (run_slurm_pretrain.sh, primus-cli slurm) they come from the allocation and stay unknown.
#include <filesystem>

#include "framework_launches.hpp"
#include "hcp/error.hpp"
#include "hcp/lint/linter.hpp"
#include "megatron_flag_reader.hpp"
#include "yaml_inheritance.hpp"

namespace hcp::lint {
namespace {

namespace fs = std::filesystem;

enum class Launcher { none, examples, examples_slurm, cli_direct, cli_slurm };

Launcher launcher_of(const std::vector<ShellWord>& words, size_t from) {
  if (from == 0 || from > words.size()) return Launcher::none;
  const std::string program = fs::path(words[from - 1].text).filename().string();
  if (program == "run_pretrain.sh" || program == "run_local_pretrain.sh") return Launcher::examples;
  if (program == "run_slurm_pretrain.sh") return Launcher::examples_slurm;
  if (program != "pretrain") return Launcher::none;
  // primus-cli MODE ... -- train pretrain: training_arguments_start stops after "pretrain".
  for (size_t i = 0; i + 1 < from; ++i) {
    if (fs::path(words[i].text).filename() != "primus-cli") continue;
    const std::string mode = i + 1 < words.size() ? words[i + 1].text : "";
    return mode == "slurm" ? Launcher::cli_slurm : Launcher::cli_direct;
  }
  return Launcher::none;
}

const ShellWord* env(const ShellCommand& c, const std::string& name) {
  for (auto it = c.env.rbegin(); it != c.env.rend(); ++it)
    if (it->name == name) return &it->value;
  return nullptr;
}

// Primus's override words as Hydra `key=value` words, for read_override_words: `--key value` and `--key=value`.
std::vector<ShellWord> override_words(const std::vector<ShellWord>& words, size_t from, const ShellWord** config) {
  std::vector<ShellWord> out;
  for (size_t i = from; i < words.size(); ++i) {
    const ShellWord& w = words[i];
    if (w.text == "--config" && i + 1 < words.size()) {
      *config = &words[++i];
      continue;
    }
    if (w.text.rfind("--", 0) != 0) {
      if (w.text.find('=') != std::string::npos) out.push_back(w);
      continue;
    }
    ShellWord kv = w;
    kv.text = w.text.substr(2);
    kv.known_prefix = w.known_prefix >= 2 ? w.known_prefix - 2 : 0;
    if (kv.text.find('=') == std::string::npos) {
      if (i + 1 >= words.size() || words[i + 1].text.rfind("--", 0) == 0) continue;  // a bare flag: nothing Primus reads
      const ShellWord& value = words[++i];
      const size_t key_size = kv.text.size() + 1;
      kv.text += "=" + value.text;
      kv.provenance = w.known() ? value.provenance : w.provenance;
      if (kv.why.empty()) kv.why = value.why;
      kv.known_prefix = w.known() ? key_size + value.known_prefix : kv.known_prefix;
    }
    out.push_back(std::move(kv));
  }
  return out;
}

void set_world(const ShellCommand& c, Launcher launcher, const Location& at, ConfigTree& tree) {
  if (launcher == Launcher::examples_slurm || launcher == Launcher::cli_slurm) return;  // Slurm's allocation
  const auto count = [&](const char* name, int64_t fallback, const char* key) {
    Setting s;
    s.key = key;
    s.spelled = name;
    s.key_loc = at;
    const ShellWord* w = env(c, name);
    if (w && !w->known()) {
      s.provenance = Provenance::unknown;
      s.why = w->why;
    } else if (w) {
      s.value = parse_scalar(w->text, w->loc);
      s.key_loc = w->loc;
      s.provenance = w->provenance;
      s.why = w->why;
    } else {
      s.spelled = std::string(name) + " (Primus's default)";
      s.value = Value::make_int(fallback, std::to_string(fallback), at);
      s.implied = true;
      s.why = std::string("not set: the Primus launcher's default ") + name + " is " + std::to_string(fallback);
    }
    tree.set(std::move(s));
  };
  count("NNODES", 1, "cluster.nodes");
  count("GPUS_PER_NODE", 8, "cluster.gpus_per_node");
}

}  // namespace

std::optional<FrameworkLaunches> read_primus_launch(const ShellCommand& c, size_t from, const std::string& script) {
  const Launcher launcher = launcher_of(c.words, from);
  if (launcher == Launcher::none) return std::nullopt;
  const ShellWord* config = nullptr;
  const std::vector<ShellWord> overrides = override_words(c.words, from, &config);
  if (!config) config = env(c, "EXP");  // the examples' scripts take the experiment from EXP
  FrameworkLaunches out;
  LoadedInput experiment;
  std::string base;
  if (!config || !config->known()) {
    base = "the Primus experiment" + std::string(config ? " (" + config->why + ")" : " (no --config or EXP)");
  } else {
    const std::string path = find_launch_config(config->text, script);
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
      out.unread.push_back({config->loc, "the experiment " + config->text + " is not read: no such file"});
      base = "the Primus experiment, which is not read";
    } else if (const std::string why = refused_outside_working_directory(path); !why.empty()) {
      out.unread.push_back({config->loc, "the experiment " + config->text + " is not read: " + why});
      base = "the Primus experiment, which is not read";
    } else {
      try {
        SourceText text = read_source(path);
        experiment = load_primus_yaml(text);
        for (auto& u : experiment.unread) out.unread.push_back(std::move(u));
        for (SourceText& s : experiment.sourced) out.read.push_back(std::move(s));
        out.read.push_back(std::move(text));
      } catch (const Error& e) {
        out.unread.push_back({config->loc, "the experiment " + config->text + " is not read: " + e.what()});
        base = "the Primus experiment, which is not read";
      }
    }
  }
  if (experiment.skipped) {
    out.skipped = *experiment.skipped;
    return out;
  }
  ConfigVariant v;
  if (!experiment.variants.empty()) {
    v = std::move(experiment.variants.front());
  } else {
    v.role = "Primus pre_trainer";
    v.base = base;
  }
  if (!base.empty()) v.base = base;
  read_override_words(overrides, 0, v.tree, [](const std::string& key) -> std::optional<std::string> {
    const std::string mapped = megatron_arg_key(key);
    if (mapped.empty() || mapped.rfind("cluster.", 0) == 0) return std::nullopt;
    return mapped;
  });
  set_world(c, launcher, c.loc, v.tree);
  out.variants.push_back(std::move(v));
  return out;
}

}  // namespace hcp::lint
