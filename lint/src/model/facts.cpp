#include "hcp/lint/facts.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace hcp::lint {
namespace {

// Records where a fact came from; true when its value is unknown (the caller then leaves the value unset).
bool origin_of(const Setting* s, FactOrigin& fact) {
  fact.setting = s;
  fact.provenance = s->provenance;
  fact.why = s->why;
  return s->provenance == Provenance::unknown;
}

class Resolver {
 public:
  Resolver(const ConfigTree& tree, Facts& facts) : tree_(tree), facts_(facts) {}

  // Sizes, counts and lengths: a zero or negative one is as wrong as a string, and would make the other rules
  // divide by it.
  void integer(const char* key, Fact<int64_t>& fact) {
    const Setting* s = tree_.find(key);
    if (!s || (s->value.kind == Value::Kind::null && !origin_of(s, fact))) return;
    if (fact.unknown()) return;
    const auto v = as_int(s->value);
    if (v && *v > 0) {
      fact.value = *v;
      origin_of(s, fact);
    } else {
      problem(s, fact, "a positive integer");
    }
  }

  void boolean(const char* key, Fact<bool>& fact) {
    const Setting* s = tree_.find(key);
    if (!s || (s->value.kind == Value::Kind::null && !origin_of(s, fact))) return;
    if (fact.unknown()) return;
    const Value& v = s->value;
    std::string lower = v.text;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (v.kind == Value::Kind::boolean) {
      fact.value = v.boolean;
    } else if (v.kind == Value::Kind::string && (lower == "true" || lower == "false")) {
      fact.value = lower == "true";
    } else {
      return problem(s, fact, "a boolean");
    }
    origin_of(s, fact);
  }

  void string(const char* key, Fact<std::string>& fact) {
    const Setting* s = tree_.find(key);
    if (!s || (s->value.kind == Value::Kind::null && !origin_of(s, fact))) return;
    if (fact.unknown()) return;
    if (s->value.kind == Value::Kind::list || s->value.kind == Value::Kind::table) return problem(s, fact, "a string");
    fact.value = s->value.text;
    origin_of(s, fact);
  }

  void comm_types() {
    const Setting* s = tree_.find("model.cp_comm_type");
    if (!s || (s->value.kind == Value::Kind::null && !origin_of(s, facts_.cp_comm_type))) return;
    if (facts_.cp_comm_type.unknown()) return;
    std::vector<std::string> types;
    if (s->value.kind == Value::Kind::string) {
      types.push_back(s->value.text);
    } else if (s->value.kind == Value::Kind::list) {
      for (const Value& item : s->value.items) {
        if (item.kind != Value::Kind::string) return problem(s, facts_.cp_comm_type, "a string or a list of strings");
        types.push_back(item.text);
      }
      facts_.cp_comm_type_is_list = true;
    } else {
      return problem(s, facts_.cp_comm_type, "a string or a list of strings");
    }
    facts_.cp_comm_type.value = std::move(types);
    origin_of(s, facts_.cp_comm_type);
  }

  void hcp_sizes() {
    const Setting* s = tree_.find("model.hierarchical_context_parallel_sizes");
    if (!s || (s->value.kind == Value::Kind::null && !origin_of(s, facts_.hcp_sizes))) return;
    if (facts_.hcp_sizes.unknown()) return;
    if (s->value.kind != Value::Kind::list) return problem(s, facts_.hcp_sizes, "a list of integers");
    std::vector<int64_t> sizes;
    for (const Value& item : s->value.items) {
      const auto v = as_int(item);
      if (!v || *v <= 0) return problem(s, facts_.hcp_sizes, "a list of positive integers");
      sizes.push_back(*v);
    }
    if (sizes.empty()) return problem(s, facts_.hcp_sizes, "a list of positive integers");
    facts_.hcp_sizes.value = std::move(sizes);
    origin_of(s, facts_.hcp_sizes);
  }

  // TE window_size (left, right): -1 means unbounded; (-1, -1) and (-1, 0) are full (causal) attention.
  void sliding_window() {
    const Setting* s = tree_.find("model.window_size");
    if (!s || (s->value.kind == Value::Kind::null && !origin_of(s, facts_.sliding_window))) return;
    if (facts_.sliding_window.unknown()) return;
    std::vector<int64_t> w;
    if (s->value.kind == Value::Kind::list) {
      for (const Value& item : s->value.items) {
        const auto v = as_int(item);
        if (!v) return problem(s, facts_.sliding_window, "a [left, right] pair of integers");
        w.push_back(*v);
      }
    } else if (const auto v = as_int(s->value)) {
      w = {*v, 0};
    } else {
      return problem(s, facts_.sliding_window, "a [left, right] pair of integers");
    }
    if (w.empty()) return;
    facts_.sliding_window.value = w[0] >= 0 || (w.size() > 1 && w[1] > 0);
    origin_of(s, facts_.sliding_window);
  }

  void attention_bias() {
    Fact<std::string> bias;
    string("model.core_attention_bias_type", bias);
    if (bias.unknown() || (bias.known() && *bias.value != "no_bias")) facts_.attention_bias = bias;
  }

  void packed_sequences() {
    Fact<std::string> format;
    string("model.qkv_format", format);
    if (format.unknown()) {
      static_cast<FactOrigin&>(facts_.packed_sequences) = format;
      return;
    }
    if (format.known() && *format.value == "thd") {
      static_cast<FactOrigin&>(facts_.packed_sequences) = format;
      facts_.packed_sequences.value = true;
      return;
    }
    // Bridge writes 0 or -1 here for "not packed": any integer is fine, only a positive one means packing.
    for (const char* key : {"dataset.packed_sequence_specs.packed_sequence_size",
                            "dataset.offline_packing_specs.packed_sequence_size"}) {
      const Setting* packed = tree_.find(key);
      if (!packed) continue;
      if (origin_of(packed, facts_.packed_sequences)) return;
      const auto size = as_int(packed->value);
      if (size && *size > 0) {
        facts_.packed_sequences.value = true;
        return;
      }
      facts_.packed_sequences = {};
    }
  }

  static std::optional<int64_t> as_int(const Value& v) {
    if (v.kind == Value::Kind::integer) return v.integer;
    if (v.kind == Value::Kind::string) {  // "4" from a quoted YAML scalar or an environment variable
      int64_t i = 0;
      const auto r = std::from_chars(v.text.data(), v.text.data() + v.text.size(), i);
      if (!v.text.empty() && r.ec == std::errc() && r.ptr == v.text.data() + v.text.size()) return i;
    }
    return std::nullopt;
  }

 private:
  // A value of the wrong type is reported by the type rule; for every other rule the fact is unknown.
  void problem(const Setting* s, FactOrigin& fact, const char* expected) {
    facts_.type_problems.push_back({s, expected});
    fact.setting = s;
    fact.provenance = Provenance::unknown;
    fact.why = std::string("not ") + expected + ", see HCP023";
  }

  const ConfigTree& tree_;
  Facts& facts_;
};

template <typename T>
void from_command_line(Fact<T>& fact, const std::optional<T>& value, const char* flag, const CommandLineFacts& cli) {
  if (!value) return;
  fact.value = value;
  fact.setting = nullptr;
  fact.provenance = Provenance::literal;
  fact.why.clear();
  const bool config = std::find(cli.from_config.begin(), cli.from_config.end(), flag) != cli.from_config.end();
  fact.flag_loc = Location{config ? cli.config + " [[cluster]]" : std::string("<command line ") + flag + ">", 0, 0};
}

}  // namespace

const FactOrigin* Facts::origin(std::string_view name) const {
  struct Entry {
    std::string_view name;
    const FactOrigin* (*get)(const Facts&);
  };
#define HCP_FACT(x) {#x, [](const Facts& f) -> const FactOrigin* { return &f.x; }}
  static constexpr Entry kFacts[] = {
      HCP_FACT(cp),
      HCP_FACT(tp),
      HCP_FACT(pp),
      HCP_FACT(cp_comm_type),
      HCP_FACT(hcp_sizes),
      HCP_FACT(num_layers),
      HCP_FACT(num_attention_heads),
      HCP_FACT(num_query_groups),
      HCP_FACT(model_seq_length),
      HCP_FACT(dataset_seq_length),
      HCP_FACT(use_decentralized_pg),
      HCP_FACT(use_tp_pp_dp_mapping),
      HCP_FACT(ep),
      HCP_FACT(etp),
      HCP_FACT(fsdp),
      HCP_FACT(overlap_moe_expert_parallel_comm),
      HCP_FACT(sliding_window),
      HCP_FACT(attention_bias),
      HCP_FACT(packed_sequences),
      HCP_FACT(world_size),
      HCP_FACT(nodes),
      HCP_FACT(gpus_per_node),
      HCP_FACT(te_version),
      HCP_FACT(gpu),
      HCP_FACT(cuda_device_max_connections),
      HCP_FACT(softmax_type),
      HCP_FACT(mamba_num_heads),
      HCP_FACT(mamba_num_groups),
      HCP_FACT(teacher_tp),
      HCP_FACT(teacher_pp),
      HCP_FACT(teacher_cp),
      HCP_FACT(teacher_seq_length),
  };
#undef HCP_FACT
  for (const Entry& e : kFacts) {
    if (e.name == name) return e.get(*this);
  }
  return nullptr;
}

bool Facts::uses_comm(const std::string& type) const {
  const auto types = comm_types();
  return std::find(types.begin(), types.end(), type) != types.end();
}

Facts resolve_facts(const ConfigTree& tree, const CommandLineFacts& cli) {
  Facts f;
  Resolver r(tree, f);
  r.integer("model.context_parallel_size", f.cp);
  r.integer("model.tensor_model_parallel_size", f.tp);
  r.integer("model.pipeline_model_parallel_size", f.pp);
  r.comm_types();
  r.hcp_sizes();
  r.integer("model.num_layers", f.num_layers);
  r.integer("model.num_attention_heads", f.num_attention_heads);
  r.integer("model.num_query_groups", f.num_query_groups);
  r.integer("model.seq_length", f.model_seq_length);
  r.integer("dataset.seq_length", f.dataset_seq_length);
  r.boolean("dist.use_decentralized_pg", f.use_decentralized_pg);
  r.boolean("dist.use_tp_pp_dp_mapping", f.use_tp_pp_dp_mapping);
  r.integer("model.expert_model_parallel_size", f.ep);
  r.integer("model.expert_tensor_parallel_size", f.etp);
  r.boolean("dist.use_megatron_fsdp", f.fsdp);
  if (!f.fsdp.known() || !*f.fsdp.value) r.boolean("dist.use_torch_fsdp2", f.fsdp);
  r.boolean("model.overlap_moe_expert_parallel_comm", f.overlap_moe_expert_parallel_comm);
  r.string("model.softmax_type", f.softmax_type);
  r.integer("model.mamba_num_heads", f.mamba_num_heads);
  r.integer("model.mamba_num_groups", f.mamba_num_groups);
  r.integer("model.teacher.tensor_model_parallel_size", f.teacher_tp);
  r.integer("model.teacher.pipeline_model_parallel_size", f.teacher_pp);
  r.integer("model.teacher.context_parallel_size", f.teacher_cp);
  r.integer("model.teacher.seq_length", f.teacher_seq_length);
  r.sliding_window();
  r.attention_bias();
  r.packed_sequences();
  r.integer("cluster.world_size", f.world_size);
  r.integer("cluster.nodes", f.nodes);
  r.integer("cluster.gpus_per_node", f.gpus_per_node);
  r.string("cluster.gpu", f.gpu);
  r.string("env.transformer_engine", f.te_version);
  r.string("env.CUDA_DEVICE_MAX_CONNECTIONS", f.cuda_device_max_connections);
  f.hetero_meshes = tree.find("framework.hetero_meshes") != nullptr;
  if (const Setting* s = tree.find("framework.attention"); s && s->value.kind == Value::Kind::string) {
    f.own_attention = s->value.text;
  }

  from_command_line(f.nodes, cli.nodes, "--nodes", cli);
  from_command_line(f.gpus_per_node, cli.gpus_per_node, "--gpus-per-node", cli);
  from_command_line(f.te_version, cli.te_version, "--te-version", cli);
  from_command_line(f.gpu, cli.gpu, "--gpu", cli);
  if (cli.world_size) {
    from_command_line(f.world_size, cli.world_size, "--world-size", cli);
  } else if ((cli.nodes || cli.gpus_per_node || (!f.world_size.known() && !f.world_size.unknown())) &&
             f.nodes.known() && f.gpus_per_node.known()) {
    int64_t product = 0;
    if (!__builtin_mul_overflow(*f.nodes.value, *f.gpus_per_node.value, &product)) {
      f.world_size.value = product;
      static_cast<FactOrigin&>(f.world_size) = f.nodes;
      f.world_size.provenance = std::max(f.nodes.provenance, f.gpus_per_node.provenance);
      if (f.world_size.why.empty()) f.world_size.why = f.gpus_per_node.why;
    }
  } else if (!f.world_size.known() && (f.nodes.unknown() || f.gpus_per_node.unknown())) {
    static_cast<FactOrigin&>(f.world_size) = f.nodes.unknown() ? f.nodes : f.gpus_per_node;
  }
  return f;
}

}  // namespace hcp::lint
