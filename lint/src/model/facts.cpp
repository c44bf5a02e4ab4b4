#include "hcp/lint/facts.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace hcp::lint {
namespace {

class Resolver {
 public:
  Resolver(const ConfigTree& tree, Facts& facts) : tree_(tree), facts_(facts) {}

  // Sizes, counts and lengths: a zero or negative one is as wrong as a string, and would make the other rules
  // divide by it.
  void integer(const char* key, Fact<int64_t>& fact) {
    const Setting* s = tree_.find(key);
    if (!s || s->value.kind == Value::Kind::null) return;
    const auto v = as_int(s->value);
    if (v && *v > 0) {
      fact.value = *v;
      fact.setting = s;
    } else {
      problem(s, "a positive integer");
    }
  }

  void boolean(const char* key, Fact<bool>& fact) {
    const Setting* s = tree_.find(key);
    if (!s || s->value.kind == Value::Kind::null) return;
    const Value& v = s->value;
    std::string lower = v.text;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (v.kind == Value::Kind::boolean) {
      fact.value = v.boolean;
    } else if (v.kind == Value::Kind::string && (lower == "true" || lower == "false")) {
      fact.value = lower == "true";
    } else {
      return problem(s, "a boolean");
    }
    fact.setting = s;
  }

  void string(const char* key, Fact<std::string>& fact) {
    const Setting* s = tree_.find(key);
    if (!s || s->value.kind == Value::Kind::null) return;
    if (s->value.kind == Value::Kind::list || s->value.kind == Value::Kind::table) return problem(s, "a string");
    fact.value = s->value.text;
    fact.setting = s;
  }

  void comm_types() {
    const Setting* s = tree_.find("model.cp_comm_type");
    if (!s || s->value.kind == Value::Kind::null) return;
    std::vector<std::string> types;
    if (s->value.kind == Value::Kind::string) {
      types.push_back(s->value.text);
    } else if (s->value.kind == Value::Kind::list) {
      for (const Value& item : s->value.items) {
        if (item.kind != Value::Kind::string) return problem(s, "a string or a list of strings");
        types.push_back(item.text);
      }
      facts_.cp_comm_type_is_list = true;
    } else {
      return problem(s, "a string or a list of strings");
    }
    facts_.cp_comm_type.value = std::move(types);
    facts_.cp_comm_type.setting = s;
  }

  void hcp_sizes() {
    const Setting* s = tree_.find("model.hierarchical_context_parallel_sizes");
    if (!s || s->value.kind == Value::Kind::null) return;
    if (s->value.kind != Value::Kind::list) return problem(s, "a list of integers");
    std::vector<int64_t> sizes;
    for (const Value& item : s->value.items) {
      const auto v = as_int(item);
      if (!v || *v <= 0) return problem(s, "a list of positive integers");
      sizes.push_back(*v);
    }
    if (sizes.empty()) return problem(s, "a list of positive integers");
    facts_.hcp_sizes.value = std::move(sizes);
    facts_.hcp_sizes.setting = s;
  }

  // TE window_size (left, right): -1 means unbounded; (-1, -1) and (-1, 0) are full (causal) attention.
  void sliding_window() {
    const Setting* s = tree_.find("model.window_size");
    if (!s || s->value.kind == Value::Kind::null) return;
    std::vector<int64_t> w;
    if (s->value.kind == Value::Kind::list) {
      for (const Value& item : s->value.items) {
        const auto v = as_int(item);
        if (!v) return problem(s, "a [left, right] pair of integers");
        w.push_back(*v);
      }
    } else if (const auto v = as_int(s->value)) {
      w = {*v, 0};
    } else {
      return problem(s, "a [left, right] pair of integers");
    }
    if (w.empty()) return;
    facts_.sliding_window.value = w[0] >= 0 || (w.size() > 1 && w[1] > 0);
    facts_.sliding_window.setting = s;
  }

  void attention_bias() {
    Fact<std::string> bias;
    string("model.core_attention_bias_type", bias);
    if (bias.known() && *bias.value != "no_bias") facts_.attention_bias = bias;
  }

  void packed_sequences() {
    Fact<std::string> format;
    string("model.qkv_format", format);
    if (format.known() && *format.value == "thd") {
      facts_.packed_sequences = {true, format.setting, {}};
      return;
    }
    // Bridge writes 0 or -1 here for "not packed": any integer is fine, only a positive one means packing.
    const Setting* packed = tree_.find("dataset.packed_sequence_specs.packed_sequence_size");
    const auto size = packed ? as_int(packed->value) : std::nullopt;
    if (size && *size > 0) facts_.packed_sequences = {true, packed, {}};
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
  void problem(const Setting* s, const char* expected) { facts_.type_problems.push_back({s, expected}); }

  const ConfigTree& tree_;
  Facts& facts_;
};

template <typename T>
void from_command_line(Fact<T>& fact, const std::optional<T>& value, const char* flag) {
  if (!value) return;
  fact.value = value;
  fact.setting = nullptr;
  fact.flag_loc = Location{std::string("<command line ") + flag + ">", 0, 0};
}

}  // namespace

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
  r.sliding_window();
  r.attention_bias();
  r.packed_sequences();
  r.integer("cluster.world_size", f.world_size);
  r.integer("cluster.nodes", f.nodes);
  r.integer("cluster.gpus_per_node", f.gpus_per_node);
  r.string("cluster.gpu", f.gpu);
  r.string("env.transformer_engine", f.te_version);
  r.string("env.CUDA_DEVICE_MAX_CONNECTIONS", f.cuda_device_max_connections);

  from_command_line(f.nodes, cli.nodes, "--nodes");
  from_command_line(f.gpus_per_node, cli.gpus_per_node, "--gpus-per-node");
  from_command_line(f.te_version, cli.te_version, "--te-version");
  from_command_line(f.gpu, cli.gpu, "--gpu");
  if (cli.world_size) {
    from_command_line(f.world_size, cli.world_size, "--world-size");
  } else if ((cli.nodes || cli.gpus_per_node || !f.world_size.known()) && f.nodes.known() && f.gpus_per_node.known()) {
    int64_t product = 0;
    if (!__builtin_mul_overflow(*f.nodes.value, *f.gpus_per_node.value, &product)) {
      f.world_size.value = product;
      f.world_size.setting = f.nodes.setting;
      f.world_size.flag_loc = f.nodes.flag_loc;
    }
  }
  return f;
}

}  // namespace hcp::lint
