// The typed facts the rules reason about, resolved from a ConfigTree plus command-line cluster facts, with where
// each was written. A fact no input provides is unknown (no value): rules that need it say so instead of guessing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hcp/lint/config_tree.hpp"

namespace hcp::lint {

// Where a fact came from, whatever its type.
struct FactOrigin {
  const Setting* setting = nullptr;  // where it was written; null for defaults and command-line facts
  Location flag_loc;                 // for command-line facts
  Provenance provenance = Provenance::literal;
  std::string why;                   // for defaulted and unknown facts

  bool unknown() const { return provenance == Provenance::unknown; }
};

template <typename T>
struct Fact : FactOrigin {
  std::optional<T> value;

  bool known() const { return value.has_value(); }
  Location loc() const { return setting ? setting->key_loc : flag_loc; }
  std::string spelled(const std::string& fallback) const { return setting ? setting->spelled : fallback; }
};

// A known key whose value has the wrong type (reported by the type rule, ignored by the others).
struct TypeProblem {
  const Setting* setting;
  std::string expected;
};

// Cluster and environment facts given on the command line (or through the C ABI); they win over the files.
struct CommandLineFacts {
  std::optional<int64_t> world_size, nodes, gpus_per_node;
  std::optional<std::string> te_version, gpu;
  // Facts that came from a [[cluster]] entry of this hcp-lint.toml rather than the command line, by flag name
  // ("--nodes"): findings then point there.
  std::string config;
  std::vector<std::string> from_config;
};

struct Facts {
  Fact<int64_t> cp, tp, pp;
  Fact<std::vector<std::string>> cp_comm_type;  // one entry for a single type; per-layer entries for a list
  bool cp_comm_type_is_list = false;
  Fact<std::vector<int64_t>> hcp_sizes;         // unset (no value) when absent or null
  Fact<int64_t> num_layers, num_attention_heads, num_query_groups;
  Fact<int64_t> model_seq_length, dataset_seq_length;
  Fact<bool> use_decentralized_pg, use_tp_pp_dp_mapping;
  Fact<int64_t> ep, etp;                        // expert model / expert tensor parallel sizes
  Fact<bool> fsdp, overlap_moe_expert_parallel_comm;
  Fact<std::string> softmax_type;               // TransformerConfig.softmax_type: vanilla, off-by-one, learnable
  Fact<int64_t> mamba_num_heads, mamba_num_groups;
  Fact<int64_t> teacher_tp, teacher_pp, teacher_cp, teacher_seq_length;  // Bridge distillation: model.teacher.*
  Fact<bool> sliding_window;                    // model.window_size set to a real window
  Fact<std::string> attention_bias;             // TE core_attention_bias_type other than no_bias
  Fact<bool> packed_sequences;                  // qkv_format thd or packed_sequence_specs
  Fact<int64_t> world_size, nodes, gpus_per_node;
  Fact<std::string> te_version, gpu, cuda_device_max_connections;
  // A framework that runs CP attention with kernels of its own, not Transformer Engine's ("MindSpeed" on Ascend,
  // "torchtitan" with PyTorch's context_parallel): the rules that encode TE's behaviour do not apply. Empty: TE.
  std::string own_attention;
  // FlagScale's heterogeneous meshes: each rank has its mesh's sizes, and Megatron's world-size check is skipped
  // (FlagScale's arguments.py patch); the sizes shown are what every mesh shares.
  bool hetero_meshes = false;
  std::vector<TypeProblem> type_problems;

  int64_t cp_size() const { return cp.value.value_or(1); }
  int64_t tp_size() const { return tp.value.value_or(1); }
  int64_t pp_size() const { return pp.value.value_or(1); }
  // Megatron's default for num_query_groups is num_attention_heads.
  std::optional<int64_t> query_groups() const {
    return num_query_groups.known() ? num_query_groups.value : num_attention_heads.value;
  }
  // The comm types in use (the default is p2p).
  std::vector<std::string> comm_types() const {
    return cp_comm_type.value.value_or(std::vector<std::string>{"p2p"});
  }
  bool uses_comm(const std::string& type) const;
  // The origin of a fact by its name in rule `needs` lists ("cp", "world_size", ...); null for unknown names.
  const FactOrigin* origin(std::string_view name) const;
};

Facts resolve_facts(const ConfigTree& tree, const CommandLineFacts& cli);

// What --show-facts reports: a fact under its Megatron-LM argument name, whatever the input called it. `known`: the
// input sets it; `defaulted`: the input gives only a default the environment may change, or Megatron-LM's own
// default applies because nothing sets it; `unknown`: the input cannot know it (value null, `why` says why).
struct ShownFact {
  enum class State { known, defaulted, unknown };
  std::string name;
  Value value;
  State state = State::unknown;
  Location at;      // where it was written (or the command-line flag); unknown location for Megatron defaults
  std::string why;  // for defaulted and unknown facts
  bool implied = false;  // a framework's own default (Setting::implied): not the recipe's, so it stays
};

std::string_view fact_state_name(ShownFact::State state);  // "known", "default", "unknown"
// `base`: where unset values come from when not from Megatron-LM's defaults (ConfigVariant::base); those are then
// unknown.
std::vector<ShownFact> shown_facts(const Facts& facts, const std::string& base);

}  // namespace hcp::lint
