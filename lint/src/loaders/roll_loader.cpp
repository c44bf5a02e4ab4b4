// ROLL (github.com/alibaba/ROLL, read at 8eb27cc): a pipeline YAML whose workers (actor_train, reference, ...) name
// a strategy in `<worker>.strategy_args.strategy_name`; megatron_train and megatron_infer are Megatron launches of
// their own (roll/configs/worker_config.py:22-41), each on the GPUs of its `device_mapping` (its world size:
// roll/distributed/executor/cluster.py:58, 127-129). `strategy_config`'s parallel sizes become
// mcore_adapter.TrainingArguments (roll/distributed/strategy/megatron_strategy.py:106-113) and reach
// mpu.initialize_model_parallel (mcore_adapter initialize.py:62-70) - never with hierarchical sizes;
// `strategy_config.additional_configs` sets TransformerConfig fields (mcore_adapter models/model_config.py:137-143).
// The sequence length is `sequence_length`, else prompt_length + response_length (roll/configs/base_config.py:274),
// passed as Megatron's seq_length (megatron_strategy.py:1135). Sizes left unset come from the model config built
// from the Hugging Face checkpoint (model_config.py:145-158).
#include <filesystem>
#include <regex>

#include "framework_launches.hpp"
#include "hcp/error.hpp"
#include "hcp/lint/linter.hpp"
#include "megatron_flag_reader.hpp"

namespace hcp::lint {
namespace {

namespace fs = std::filesystem;

// The main training worker first: its facts are the ones a user asks about.
constexpr std::string_view kWorkerOrder[] = {"actor_train", "sft_train", "student_train", "student", "critic",
                                             "reference", "teacher"};

// How many GPUs a device_mapping names: a list, or the string "list(range(a, b[, step]))".
std::optional<int64_t> devices(const Value& v) {
  if (v.kind == Value::Kind::list) return static_cast<int64_t>(v.items.size());
  if (v.kind != Value::Kind::string) return std::nullopt;
  static const std::regex range(R"(^\s*list\(\s*range\(\s*(\d+)\s*,\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)\s*\)\s*$)");
  std::smatch m;
  if (!std::regex_match(v.text, m, range)) return std::nullopt;
  const int64_t a = std::stoll(m[1]), b = std::stoll(m[2]), step = m[3].matched ? std::stoll(m[3]) : 1;
  if (step <= 0 || b < a || b - a > (int64_t{1} << 40)) return std::nullopt;
  return (b - a + step - 1) / step;
}

void world_from_mapping(const ConfigTree& raw, const std::string& worker, ConfigVariant& v) {
  const Setting* mapping = raw.find(worker + ".device_mapping");
  if (!mapping) return;
  Setting world;
  world.key = "cluster.world_size";
  world.spelled = worker + ".device_mapping";
  world.key_loc = mapping->key_loc;
  if (const auto n = devices(mapping->value); n && *n > 0) {
    world.value = Value::make_int(*n, std::to_string(*n), mapping->value.loc);
    world.provenance = Provenance::computed;
  } else {
    world.provenance = Provenance::unknown;
    world.why = "device_mapping " + mapping->value.display() + " is not a list or list(range(...))";
  }
  v.tree.set(std::move(world));
}

// sequence_length, else prompt_length + response_length.
void sequence_length(const ConfigTree& raw, ConfigVariant& v) {
  ConfigTree direct = map_names(raw, {{"sequence_length", "model.seq_length"}});
  if (const Setting* s = direct.find("model.seq_length")) return v.tree.set(*s);
  ConfigTree parts = map_names(raw, {{"prompt_length", "p"}, {"response_length", "r"}});
  const Setting* p = parts.find("p");
  const Setting* r = parts.find("r");
  if (!p || !r || p->value.kind != Value::Kind::integer || r->value.kind != Value::Kind::integer) return;
  int64_t sum = 0;
  if (__builtin_add_overflow(p->value.integer, r->value.integer, &sum)) return;
  Setting s = *p;
  s.key = "model.seq_length";
  s.spelled = "prompt_length + response_length";
  s.value = Value::make_int(sum, std::to_string(sum), p->value.loc);
  s.provenance = Provenance::computed;
  v.tree.set(std::move(s));
}

FrameworkLaunches roll_launches(const ConfigTree& raw) {
  std::vector<std::string> workers;
  for (const std::string& key : raw.keys_in_order()) {
    constexpr std::string_view kName = ".strategy_args.strategy_name";
    if (key.size() <= kName.size() || key.compare(key.size() - kName.size(), kName.size(), kName) != 0) continue;
    const Setting* s = raw.find(key);
    if (s->value.text != "megatron_train" && s->value.text != "megatron_infer") continue;
    const std::string worker = key.substr(0, key.size() - kName.size());
    if (worker.find('.') == std::string::npos) workers.push_back(worker);
  }
  std::stable_sort(workers.begin(), workers.end(), [](const std::string& a, const std::string& b) {
    const auto rank = [](const std::string& w) {
      const auto* it = std::find(std::begin(kWorkerOrder), std::end(kWorkerOrder), w);
      return it - std::begin(kWorkerOrder);
    };
    return rank(a) < rank(b);
  });
  FrameworkLaunches out;
  for (const std::string& worker : workers) {
    const std::string config = worker + ".strategy_args.strategy_config.";
    std::vector<std::pair<std::string, std::string>> names;
    add_megatron_names(names, config, config + "additional_configs.");
    names.emplace_back(config + "additional_configs.hierarchical_context_parallel_sizes",
                       "ignored.model.hierarchical_context_parallel_sizes");
    ConfigVariant v;
    v.role = "ROLL " + worker;
    v.tree = map_names(raw, names);
    hierarchical_sizes_not_passed(v.tree, "ROLL's mcore_adapter", "mcore_adapter initialize.py");
    if (!v.tree.find("model.context_parallel_size")) {
      // mcore_adapter passes `context_parallel_size if not None else 1` (initialize.py:66).
      Setting cp;
      cp.key = "model.context_parallel_size";
      cp.spelled = worker + ".strategy_args.strategy_config.context_parallel_size (mcore_adapter's default)";
      cp.key_loc = raw.find(worker + ".strategy_args.strategy_name") ? raw.find(worker + ".strategy_args.strategy_name")->key_loc
                                                                     : Location{};
      cp.value = Value::make_int(1, "1", cp.key_loc);
      cp.implied = true;
      cp.why = "not set: mcore_adapter passes 1 for an unset context_parallel_size (initialize.py:66)";
      v.tree.set(std::move(cp));
    }
    world_from_mapping(raw, worker, v);
    sequence_length(raw, v);
    v.base = "the model config mcore_adapter builds from the Hugging Face checkpoint";
    v.unit = static_cast<int>(out.variants.size());
    out.variants.push_back(std::move(v));
  }
  if (out.variants.empty()) out.skipped = "a ROLL pipeline without a Megatron worker (strategy_name megatron_train/megatron_infer)";
  return out;
}

// `--config_name X` / `--config_name=X`.
std::string option(const std::vector<ShellWord>& words, size_t from, const std::string& name) {
  for (size_t i = from; i < words.size(); ++i) {
    if (words[i].text == name && i + 1 < words.size()) return words[i + 1].known() ? words[i + 1].text : "";
    if (words[i].text.rfind(name + "=", 0) == 0) return words[i].known() ? words[i].text.substr(name.size() + 1) : "";
  }
  return {};
}

}  // namespace

LoadedInput load_roll_yaml(const SourceText& source) {
  ConfigTree raw;
  load_yaml(source, raw);
  return as_input(roll_launches(raw));
}

// ROLL's examples/<dir>/run_*.sh: `python examples/start_<kind>_pipeline.py --config_path $(basename of the script's
// folder) --config_name NAME`; Hydra takes config_path relative to examples/start_*.py, so the YAML is NAME.yaml in
// the script's own folder.
std::optional<FrameworkLaunches> read_roll_launch(const std::vector<ShellWord>& words, size_t from,
                                                  const std::string& script) {
  if (from == 0 || from > words.size()) return std::nullopt;
  const std::string program = fs::path(words[from - 1].text).filename().string();
  if (program.rfind("start_", 0) != 0 || program.find("_pipeline.py") == std::string::npos) return std::nullopt;
  FrameworkLaunches out;
  const std::string name = option(words, from, "--config_name");
  const fs::path yaml = fs::path(script).parent_path() / (name + ".yaml");
  std::error_code ec;
  // Only a file in the script's own folder: a name with a path in it is not followed.
  if (name.empty() || name.find('/') != std::string::npos || !fs::is_regular_file(yaml, ec)) {
    out.skipped = "a ROLL pipeline whose config (--config_name " + (name.empty() ? std::string("?") : name) +
                  ") is not next to the script";
    return out;
  }
  SourceText text;
  try {
    text = read_source(yaml.lexically_normal().string());
  } catch (const Error& e) {
    out.skipped = std::string("a ROLL pipeline whose config is not read: ") + e.what();
    return out;
  }
  LoadedInput in = load_roll_yaml(text);
  out.variants = std::move(in.variants);
  if (out.variants.empty() && in.skipped) out.skipped = *in.skipped;
  out.read.push_back(std::move(text));
  return out;
}

}  // namespace hcp::lint
