// Which attribute paths and classes of Megatron-Bridge and NeMo 2 config code are which Bridge keys. Bridge's
// ConfigContainer sections are the keys themselves (training/config.py); NeMo 2 spreads the same settings over
// the recipe's trainer strategy (nemo/lightning/pytorch/strategies/megatron_strategy.py: the parallel sizes), the
// model's config (nemo/collections/llm/gpt/model/base.py GPTConfig, a TransformerConfig: cp_comm_type,
// seq_length, heads) and the data module (seq_length).
#include <algorithm>
#include <string_view>

#include "../loaders/yaml_forms.hpp"
#include "python_model.hpp"

namespace hcp::lint {
namespace {

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// MegatronStrategy's arguments that are model-parallel settings (the rest - DDP, checkpointing - are not read).
constexpr std::string_view kStrategyModelKeys[] = {
    "tensor_model_parallel_size", "pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size",
    "context_parallel_size",      "sequence_parallel",            "expert_model_parallel_size",
    "expert_tensor_parallel_size", "use_tp_pp_dp_mapping",
};

bool strategy_model_key(std::string_view k) {
  return std::find(std::begin(kStrategyModelKeys), std::end(kStrategyModelKeys), k) != std::end(kStrategyModelKeys);
}

}  // namespace

std::string python_config_key(const std::string& object_path, const std::string& attribute) {
  const std::string full = object_path.empty() ? attribute : object_path + "." + attribute;
  if (full.rfind("@nemo", 0) != 0) {
    const std::string section = full.substr(0, full.find('.'));
    // A whole section replaced (cfg.model = ...) is no key; neither is anything outside ConfigContainer.
    return full.find('.') != std::string::npos && is_bridge_section(section) ? full : std::string();
  }
  const std::string_view nemo = std::string_view(full).substr(5);
  if (nemo.rfind(".trainer.strategy.", 0) == 0) {
    const std::string_view k = nemo.substr(18);
    return strategy_model_key(k) ? "model." + std::string(k) : std::string();
  }
  if (nemo.rfind(".model.config.", 0) == 0) return "model." + std::string(nemo.substr(14));
  if (nemo == ".data.seq_length") return "dataset.seq_length";
  if (nemo == ".trainer.num_nodes") return "cluster.nodes";
  if (nemo == ".trainer.devices") return "cluster.gpus_per_node";
  return {};
}

std::string python_class_section(const std::string& name) {
  // Bridge (models/*_provider.py, training/config.py; data/builders)
  if (name == "ConfigContainer") return "";
  if (ends_with(name, "Provider") || name.find("ModelProvider") != std::string::npos) return "model";
  if (ends_with(name, "DatasetConfig") || name == "DatasetBuildConfig") return "dataset";
  if (name == "DistributedInitConfig") return "dist";
  if (name == "DistributedDataParallelConfig") return "ddp";
  if (name == "TrainingConfig") return "train";
  if (name == "CommOverlapConfig") return "comm_overlap";
  if (name == "TokenizerConfig") return "tokenizer";
  // NeMo 2 (nemo.lightning / nemo.collections.llm)
  if (name == "MegatronStrategy") return "@nemo.trainer.strategy";
  if (name == "Trainer") return "@nemo.trainer";
  if (ends_with(name, "DataModule")) return "@nemo.data";
  return "none";
}

bool python_recipe_call(const std::string& name, std::string* root) {
  // Bridge recipes: llama3_8b_pretrain_config(), qwen3_30b_a3b_finetune_config(), pretrain_config() in a recipe
  // module; NeMo 2: llm.llama3_8b.pretrain_recipe(), finetune_recipe().
  if (ends_with(name, "pretrain_config") || ends_with(name, "finetune_config") || ends_with(name, "sft_config") ||
      ends_with(name, "peft_config")) {
    *root = "";
    return true;
  }
  if (ends_with(name, "pretrain_recipe") || ends_with(name, "finetune_recipe")) {
    *root = "@nemo";
    return true;
  }
  return false;
}

}  // namespace hcp::lint
