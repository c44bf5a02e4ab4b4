// torchtitan's TOML train configs (pytorch/torchtitan, read at 238fa995, the last commit with TOML configs): its own
// context parallelism, PyTorch's context_parallel over a device mesh [pp, batch, cp, tp] (parallel_dims.py:96-98),
// not Megatron's. Keys (torchtitan/config/job_config.py): [parallelism] data_parallel_replicate_degree (1),
// data_parallel_shard_degree (-1: the ranks left), tensor_parallel_degree, pipeline_parallel_degree,
// context_parallel_degree (1 each), expert_parallel_degree, expert_tensor_parallel_degree (1, not "= tp"),
// context_parallel_rotate_method (allgather, or alltoall: KV passed round the ring), [training] seq_len (2048).
// 2024's schema kept CP and PP under [experimental] and TP under [training]. torchtitan asserts that the degrees
// multiply to WORLD_SIZE (parallel_dims.py:53-56), which only torchrun's --nproc_per_node / NGPU give, and that
// seq_len divides by tp * 2 * cp (parallel_dims.py:365-372).
#include <string>

#include "framework_launches.hpp"
#include "hcp/lint/loaders.hpp"

namespace hcp::lint {
namespace {

// A default torchtitan's job_config.py gives, for what the file does not set.
void titan_default(ConfigTree& tree, const char* key, const char* spelled, Value value) {
  if (tree.find(key)) return;
  Setting s;
  s.key = key;
  s.spelled = spelled;
  s.value = std::move(value);
  s.implied = true;
  s.why = std::string("not set: torchtitan's default ") + spelled + " is " + s.value.display();
  tree.set(std::move(s));
}

}  // namespace

// torchtitan's own top-level tables: [job] beside [training] (and [parallelism] or 2024's [experimental]).
bool is_torchtitan_toml(const std::vector<std::string>& top_level_keys) {
  bool job = false, training = false;
  for (const std::string& k : top_level_keys) {
    job = job || k == "job";
    training = training || k == "training";
  }
  return job && training;
}

LoadedInput load_torchtitan_toml(const SourceText& source) {
  ConfigTree raw;
  load_toml(source, raw);
  std::vector<std::pair<std::string, std::string>> names = {
      {"parallelism.context_parallel_degree", "model.context_parallel_size"},
      {"experimental.context_parallel_degree", "model.context_parallel_size"},
      {"parallelism.tensor_parallel_degree", "model.tensor_model_parallel_size"},
      {"training.tensor_parallel_degree", "model.tensor_model_parallel_size"},
      {"parallelism.pipeline_parallel_degree", "model.pipeline_model_parallel_size"},
      {"experimental.pipeline_parallel_degree", "model.pipeline_model_parallel_size"},
      {"parallelism.expert_parallel_degree", "model.expert_model_parallel_size"},
      {"parallelism.expert_tensor_parallel_degree", "model.expert_tensor_parallel_size"},
      {"training.seq_len", "model.seq_length"},
  };
  ConfigVariant v;
  v.role = "torchtitan";
  v.tree = map_names(raw, names);
  titan_default(v.tree, "model.expert_tensor_parallel_size", "parallelism.expert_tensor_parallel_degree",
                Value::make_int(1, "1", {}));
  titan_default(v.tree, "model.seq_length", "training.seq_len", Value::make_int(2048, "2048", {}));
  // The rotate method: allgather gathers K and V (Megatron's all_gather), alltoall passes them round the ring (p2p).
  const Setting* rotate = raw.find("parallelism.context_parallel_rotate_method");
  if (rotate && rotate->value.kind == Value::Kind::string) {
    Setting s = *rotate;
    s.key = "model.cp_comm_type";
    s.value = Value::make_string(rotate->value.text == "alltoall" ? "p2p" : rotate->value.text == "allgather"
                                                                                ? "all_gather"
                                                                                : rotate->value.text,
                                 rotate->value.loc);
    v.tree.set(std::move(s));
  } else {
    titan_default(v.tree, "model.cp_comm_type", "parallelism.context_parallel_rotate_method",
                  Value::make_string("all_gather", {}));
  }
  // The world size: the product of the degrees when every one is given (data_parallel_shard_degree -1 is "the
  // rest", known only from torchrun's).
  const auto degree = [&](const char* key, int64_t fallback) -> std::optional<int64_t> {
    const Setting* s = raw.find(key);
    if (!s) return fallback;
    if (s->value.kind != Value::Kind::integer || s->value.integer <= 0) return std::nullopt;
    return s->value.integer;
  };
  const Setting* shard = raw.find("parallelism.data_parallel_shard_degree");
  const std::optional<int64_t> shards = shard ? degree("parallelism.data_parallel_shard_degree", 1) : std::nullopt;
  int64_t world = shards.value_or(0);
  bool known = shards.has_value();
  for (const char* key : {"parallelism.data_parallel_replicate_degree", "parallelism.tensor_parallel_degree",
                          "parallelism.pipeline_parallel_degree", "parallelism.context_parallel_degree"}) {
    const auto d = degree(key, 1);
    known = known && d && !__builtin_mul_overflow(world, *d, &world);
  }
  if (known) {
    Setting s = *shard;
    s.key = "cluster.world_size";
    s.spelled = "the product of the [parallelism] degrees";
    s.value = Value::make_int(world, std::to_string(world), shard->value.loc);
    s.provenance = Provenance::computed;
    v.tree.set(std::move(s));
  }
  Setting marker;
  marker.key = "framework.attention";
  marker.spelled = "torchtitan";
  marker.value = Value::make_string("torchtitan", {source.name, 1, 1});
  v.tree.set(std::move(marker));
  LoadedInput out;
  out.variants.push_back(std::move(v));
  return out;
}

}  // namespace hcp::lint
