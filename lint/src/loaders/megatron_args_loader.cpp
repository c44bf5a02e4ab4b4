// Megatron-LM launch scripts and argument files, read through the shell model: every path through the script,
// every training launch on it (a Python program given Megatron's training flags) becomes one configuration,
// with the launcher's cluster size and the environment the launch runs in.
#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <string>

#include "hcp/error.hpp"
#include "hcp/lint/linter.hpp"
#include "hcp/lint/loaders.hpp"
#include "framework_launches.hpp"
#include "launchers.hpp"
#include "megatron_flag_reader.hpp"
#include "megatron_flags.hpp"
#include "mindspeed_cp.hpp"
#include "source_sandbox.hpp"
#include "yaml_forms.hpp"

namespace hcp::lint {
namespace {

bool is_negative_number(const std::string& w) {
  return w.size() > 1 && w[0] == '-' && std::isdigit(static_cast<unsigned char>(w[1]));
}

bool looks_like_flag(const ShellWord& w) {
  return w.known_prefix > 1 && w.text[0] == '-' && !is_negative_number(w.text);
}

// Flags that only a Megatron training program takes: a Python command with one of them is a training launch.
bool is_training_flag(std::string_view flag) {
  static constexpr std::string_view kMarkers[] = {"--micro-batch-size", "--global-batch-size", "--hidden-size",
                                                   "--train-iters",      "--train-samples",     "--ffn-hidden-size"};
  for (std::string_view m : kMarkers) {
    if (m == flag) return true;
  }
  const FlagSpec* spec = find_flag(flag);
  return spec && (std::string_view(spec->key).rfind("cluster.", 0) != 0 || flag == "--num_gpus" || flag == "-ng");
}

Setting from_words(const FlagSpec& spec, const std::string& flag, const ShellWord& at,
                   const std::vector<ShellWord>& values) {
  Setting s;
  s.key = std::string(spec.key);
  s.spelled = flag;
  s.key_loc = at.loc;
  for (const ShellWord& v : values) {
    if (v.provenance > s.provenance) {
      s.provenance = v.provenance;
      s.why = v.why;
    }
  }
  if (s.provenance == Provenance::unknown) return s;  // value stays null: unknown here
  if (spec.arity == FlagSpec::Arity::store_true) {
    s.value = Value::make_bool(true, at.loc);
  } else if (values.size() == 1 && !spec.always_list) {
    s.value = parse_scalar(values[0].text, values[0].loc);
  } else {
    std::vector<Value> items;
    for (const ShellWord& v : values) {
      // Megatron's tuple form `--window-size 127,0` is one word that argparse splits at the comma.
      size_t b = 0;
      while (true) {
        const size_t comma = spec.comma_list ? v.text.find(',', b) : std::string::npos;
        Location l = v.loc;
        if (l.col > 0) l.col += static_cast<int>(b);
        items.push_back(parse_scalar(v.text.substr(b, comma == std::string::npos ? std::string::npos : comma - b), l));
        if (comma == std::string::npos) break;
        b = comma + 1;
      }
    }
    s.value = Value::make_list(std::move(items), values.empty() ? at.loc : values[0].loc);
  }
  return s;
}

}  // namespace

bool read_megatron_flags(const std::vector<ShellWord>& words, size_t from, ConfigTree& tree) {
  // Underscore and one-dash flags are Megatron-Bridge's performance scripts' (scripts/performance/*.py); in any
  // other program they mean something else.
  const std::string& program = from > 0 ? words[from - 1].text : std::string();
  const bool bridge_performance = program.find("performance/") != std::string::npos ||
                                  program.find("setup_experiment") != std::string::npos;
  // ms-swift's Megatron CLI spells Megatron's flags with underscores.
  const bool ms_swift = is_ms_swift_megatron(words, from);
  bool training = false, group_query_attention = false;
  std::optional<Setting> query_groups;
  for (size_t i = from; i < words.size(); ++i) {
    const ShellWord& w = words[i];
    if (w.known_prefix < 3 || w.text[0] != '-') continue;
    const size_t eq = w.text.find('=');
    std::string flag = w.text.substr(0, eq);
    if (eq != std::string::npos && eq > w.known_prefix) continue;  // the flag's own name is not known
    if (ms_swift) std::replace(flag.begin() + 2, flag.end(), '_', '-');
    if (!bridge_performance && (flag[1] != '-' || flag.find('_') != std::string::npos)) continue;
    training |= is_training_flag(flag);
    const FlagSpec* spec = find_flag(flag);
    if (spec == nullptr) continue;
    std::vector<ShellWord> values;
    if (eq != std::string::npos) {
      ShellWord v = w;
      v.text = w.text.substr(eq + 1);
      v.known_prefix = w.known_prefix - (eq + 1);
      if (v.loc.col > 0) v.loc.col += static_cast<int>(eq) + 1;
      values.push_back(v);
    } else if (spec->arity != FlagSpec::Arity::store_true) {
      for (size_t j = i + 1; j < words.size() && !looks_like_flag(words[j]); ++j) {
        values.push_back(words[j]);
        if (spec->arity == FlagSpec::Arity::one) break;
      }
      if (values.empty()) continue;  // a flag without its value: argparse would refuse; nothing to lint
    } else if (ms_swift && i + 1 < words.size() && (words[i + 1].text == "false" || words[i + 1].text == "true")) {
      if (words[i + 1].text == "false") continue;  // ms-swift's booleans take a value
    }
    Setting s = from_words(*spec, flag, w, values);
    if (s.key == "model.group_query_attention") group_query_attention = true;
    if (s.key == "model.num_query_groups") {
      query_groups = std::move(s);  // Megatron ignores it without --group-query-attention
      continue;
    }
    tree.set(std::move(s));
  }
  if (query_groups && group_query_attention) tree.set(std::move(*query_groups));
  apply_mindspeed_cp(tree);
  return training;
}

// NeMo 2 overrides (`nemo llm pretrain ... trainer.strategy.context_parallel_size=2`) name the same facts under
// the trainer's strategy and the model's config; other trainer.* keys are NeMo's own and are not read.
static std::optional<std::string> canonical_override_key(const std::string& key) {
  static constexpr std::pair<std::string_view, std::string_view> kNemo2[] = {
      {"trainer.strategy.tensor_model_parallel_size", "model.tensor_model_parallel_size"},
      {"trainer.strategy.pipeline_model_parallel_size", "model.pipeline_model_parallel_size"},
      {"trainer.strategy.context_parallel_size", "model.context_parallel_size"},
      {"trainer.strategy.expert_model_parallel_size", "model.expert_model_parallel_size"},
      {"trainer.strategy.expert_tensor_parallel_size", "model.expert_tensor_parallel_size"},
      {"trainer.strategy.sequence_parallel", "model.sequence_parallel"},
      {"trainer.num_nodes", "cluster.nodes"},
      {"trainer.devices", "cluster.gpus_per_node"},
  };
  for (const auto& [nemo, bridge] : kNemo2) {
    if (key == nemo) return std::string(bridge);
  }
  if (key.rfind("trainer.", 0) == 0) return std::nullopt;
  if (key.rfind("model.config.", 0) == 0) return "model." + key.substr(13);
  static constexpr std::string_view kSections[] = {"model.", "dataset.", "train.", "dist.", "optimizer.",
                                                    "scheduler.", "checkpoint.", "logger.", "ddp.", "peft.",
                                                    "tokenizer.", "mixed_precision.", "comm_overlap."};
  for (std::string_view sec : kSections) {
    if (key.rfind(sec, 0) == 0) return key;
  }
  return std::nullopt;
}

// The sections a Bridge or NeMo 2 program's overrides may name: ConfigContainer's (Megatron-Bridge
// src/megatron/bridge/training/config.py; OmegaConf refuses any other key of the structured config) and NeMo 2's
// `nemo llm` task arguments (trainer, log, optim, resume, data). hcp's own cluster / env are not overrides.
static bool bridge_or_nemo2_section(std::string_view section) {
  static constexpr std::string_view kNemo2[] = {"trainer", "log", "optim", "resume", "data"};
  if (section == "cluster" || section == "env") return false;
  return is_bridge_section(section) || std::find(std::begin(kNemo2), std::end(kNemo2), section) != std::end(kNemo2);
}

// Dotted override keys (`policy.megatron_cfg.x=1`) whose section no Bridge or NeMo 2 program takes: the program
// is another framework's (NeMo-RL's policy / grpo, verl's actor_rollout_ref), and its logger.* keys are not
// Bridge's logger. The sections, comma-separated; empty when there are none.
static std::string foreign_override_sections(const std::vector<ShellWord>& words, size_t from) {
  std::vector<std::string_view> foreign;
  for (size_t i = from; i < words.size(); ++i) {
    std::string_view text = words[i].text;
    while (!text.empty() && (text.front() == '+' || text.front() == '~')) text.remove_prefix(1);
    const size_t eq = text.find('='), dot = text.find('.');
    if (text.rfind("-", 0) == 0 || eq == std::string_view::npos || dot == std::string_view::npos || dot > eq ||
        eq > words[i].known_prefix)
      continue;
    const std::string_view section = text.substr(0, dot);
    if (section.find_first_of(" \t$\"'/") != std::string_view::npos || bridge_or_nemo2_section(section)) continue;
    if (std::find(foreign.begin(), foreign.end(), section) == foreign.end()) foreign.push_back(section);
  }
  std::string listed;
  for (std::string_view section : foreign) listed.append(listed.empty() ? "" : ", ").append(section);
  return listed;
}

// Megatron-Bridge launch scripts: Hydra overrides (`model.context_parallel_size=4`, `+x.y=z`) among a Python
// program's arguments (scripts/training/run_recipe.py and the like), and NeMo 2's. True when one sets a
// ConfigContainer section. Only for a program whose overrides all name Bridge or NeMo 2 sections (positive
// evidence: NeMo-RL's `logger.wandb_enabled=True` was read as Bridge's logger); `foreign` gets the others.
bool read_bridge_overrides(const std::vector<ShellWord>& words, size_t from, ConfigTree& tree, std::string* foreign) {
  if (std::string others = foreign_override_sections(words, from); !others.empty()) {
    if (foreign) *foreign = std::move(others);
    return false;
  }
  return read_override_words(words, from, tree, canonical_override_key);
}

bool read_override_words(const std::vector<ShellWord>& words, size_t from, ConfigTree& tree,
                         const std::function<std::optional<std::string>(const std::string&)>& key_of) {
  bool any = false;
  for (size_t i = from; i < words.size(); ++i) {
    const ShellWord& w = words[i];
    size_t b = 0;
    while (b < w.text.size() && b < 2 && (w.text[b] == '+' || w.text[b] == '~')) ++b;
    const size_t eq = w.text.find('=');
    const bool removal = b < w.text.size() && w.text[0] == '~';
    if ((eq == std::string::npos && !removal) || (eq != std::string::npos && eq > w.known_prefix)) continue;
    const std::string written = w.text.substr(b, eq == std::string::npos ? std::string::npos : eq - b);
    if (written.find_first_of(" \t$\"'") != std::string::npos) continue;
    const std::optional<std::string> key = key_of(written);
    if (!key) continue;
    any = true;
    if (w.provenance == Provenance::unknown) {  // the value is not known here: the key is
      Setting s;
      s.key = *key;
      s.spelled = written;
      s.key_loc = w.loc;
      s.provenance = Provenance::unknown;
      s.why = w.why;
      tree.set(std::move(s));
      continue;
    }
    const std::string text = w.text.substr(0, b) + *key + (eq == std::string::npos ? "" : w.text.substr(eq));
    try {
      load_overrides({text}, {w.loc}, tree);
    } catch (const Error& e) {  // a malformed override in a script: that value is not read, the rest is
      Setting s;
      s.key = *key;
      s.spelled = written;
      s.key_loc = w.loc;
      s.provenance = Provenance::unknown;
      s.why = e.what();
      tree.set(std::move(s));
      continue;
    }
    if (const Setting* set = tree.find(*key); set && (w.provenance == Provenance::defaulted || *key != written)) {
      Setting copy = *set;
      copy.spelled = written;
      if (w.provenance == Provenance::defaulted) {
        copy.provenance = Provenance::defaulted;
        copy.why = w.why;
      }
      tree.set(std::move(copy));
    }
  }
  return any;
}


namespace {

// slime's and miles's defaults for the actor's shape when a script gives one of --actor-num-nodes (1) and
// --actor-num-gpus-per-node (8) (slime utils/arguments.py, miles utils/arguments.py:107-110).
void slime_actor_defaults(ConfigTree& tree, const Location& at) {
  const Setting* nodes = tree.find("cluster.nodes");
  const Setting* gpus = tree.find("cluster.gpus_per_node");
  const bool actor = (nodes && nodes->spelled == "--actor-num-nodes") || (gpus && gpus->spelled == "--actor-num-gpus-per-node");
  if (!actor || (nodes && gpus)) return;
  Setting s;
  s.key = nodes ? "cluster.gpus_per_node" : "cluster.nodes";
  s.spelled = nodes ? "--actor-num-gpus-per-node" : "--actor-num-nodes";
  const int64_t value = nodes ? 8 : 1;
  s.key_loc = at;
  s.value = Value::make_int(value, std::to_string(value), at);
  s.implied = true;
  s.why = "not set: slime's and miles's default " + s.spelled + " is " + std::to_string(value);
  tree.set(std::move(s));
}

void read_environment(const ShellCommand& c, ConfigTree& tree) {
  for (const ShellEnv& e : c.env) {
    Setting s;
    s.key = "env." + e.name;
    s.spelled = e.name;
    s.key_loc = e.value.loc;
    s.provenance = e.value.provenance;
    s.why = e.value.why;
    if (e.value.known() || e.value.provenance == Provenance::defaulted) s.value = Value::make_string(e.value.text, e.value.loc);
    if (!tree.find(s.key)) tree.set(std::move(s));  // what the launcher sets (ray env_vars) wins
  }
}

std::optional<SourceText> read_neighbour(const std::string& path) {
  try {
    return read_source(path);
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

LoadedInput load_megatron_script(const SourceText& source) {
  LoadedInput out;
  ShellOptions options;
  options.read_sourced = read_neighbour;
  options.may_source = source_sandbox(source.name);
  options.keep = [](const std::vector<ShellWord>& words) { return training_arguments_start(words) < words.size(); };
  ShellRun run = run_shell(source, options);
  std::string program;  // a Python program it launches without flags or overrides that say anything here
  std::string foreign;  // the sections of its overrides that are another framework's
  std::string framework_skip;  // a framework program that makes no Megatron launch, and why
  std::vector<std::string> roles;  // a framework's workers, each its own unit
  std::vector<SourceText> framework_read;  // the config files a framework's launch read
  for (const ShellPath& path : run.paths) {
    for (const ShellCommand& c : path.commands) {
      const size_t start = training_arguments_start(c.words);
      if (start >= c.words.size()) continue;
      if (program.empty() && start > 0) program = c.words[start - 1].text;
      if (std::optional<FrameworkLaunches> framework = read_framework_launch(c, start, source.name)) {
        if (framework->variants.empty() && framework_skip.empty()) framework_skip = framework->skipped;
        // Each path of the script launches it again: say once what it does not read.
        for (auto& u : framework->unread) {
          const bool said = std::any_of(out.unread.begin(), out.unread.end(), [&](const auto& o) {
            return o.first.file == u.first.file && o.first.line == u.first.line && o.first.col == u.first.col &&
                   o.second == u.second;
          });
          if (!said) out.unread.push_back(std::move(u));
        }
        for (SourceText& s : framework->read) framework_read.push_back(std::move(s));
        for (ConfigVariant& v : framework->variants) {
          read_environment(c, v.tree);
          v.conditions = path.conditions;
          v.path_index = static_cast<int>(&path - run.paths.data());
          // Each worker is weighed against the same worker on the script's other paths.
          auto role = std::find(roles.begin(), roles.end(), v.role);
          if (role == roles.end()) role = roles.insert(roles.end(), v.role);
          v.unit = static_cast<int>(role - roles.begin());
          out.variants.push_back(std::move(v));
        }
        continue;
      }
      ConfigVariant v;
      const bool megatron = read_megatron_flags(c.words, start, v.tree);
      const bool bridge = read_bridge_overrides(c.words, start, v.tree, foreign.empty() ? &foreign : nullptr);
      if (!megatron && !bridge) continue;
      read_launcher(c, start, run, v.tree);
      slime_actor_defaults(v.tree, c.words[start > 0 ? start - 1 : 0].loc);  // start is 0 for an argument file
      read_environment(c, v.tree);
      // Bridge programs (overrides, or the performance scripts' own flags) start from a recipe, not from
      // Megatron-LM's defaults.
      const std::string launched = start > 0 ? c.words[start - 1].text : std::string("the program");
      if (!megatron || launched.find("performance/") != std::string::npos) v.base = "the recipe " + launched + " builds";
      v.conditions = path.conditions;
      v.path_index = static_cast<int>(&path - run.paths.data());
      out.variants.push_back(std::move(v));
    }
  }
  for (const ShellSkip& s : run.skipped) out.unread.push_back({s.loc, s.what});
  out.sourced = std::move(run.sourced);
  for (SourceText& s : framework_read) out.sourced.push_back(std::move(s));
  const bool all_exit = !run.paths.empty() && std::all_of(run.paths.begin(), run.paths.end(),
                                                          [](const ShellPath& p) { return p.exits; });
  if (out.variants.empty() && !framework_skip.empty()) {
    out.skipped = "a shell script that runs " + framework_skip;
  } else if (out.variants.empty() && all_exit) {
    out.skipped = "a shell script that exits on every path before it launches training (as written; a value it "
                  "tests may be meant to be edited)";
  } else if (out.variants.empty() && !foreign.empty()) {
    out.skipped = "a shell script whose Python programs (" + program + ") take overrides of sections that are not "
                  "Megatron-Bridge's or NeMo 2's (" + foreign + "): another framework's configuration";
  } else if (out.variants.empty() && !program.empty()) {
    out.skipped = "a shell script whose Python programs (" + program + ") get no Megatron-LM training flags or "
                  "Megatron-Bridge overrides here: their configuration is in Python or in files they load";
  } else if (out.variants.empty()) {
    out.skipped = "a shell script that launches no Megatron training (no Python program given Megatron-LM training "
                  "flags or Megatron-Bridge overrides)";
  }
  return out;
}

void load_megatron_args(const SourceText& source, ConfigTree& tree) {
  LoadedInput in = load_megatron_script(source);
  if (!in.variants.empty()) tree = std::move(in.variants.front().tree);
}

}  // namespace hcp::lint
