// The facts users see with --show-facts, named as Megatron-LM's arguments (megatron/training/arguments.py) so a
// verl, NeMo-RL or Bridge user reads the same names whatever their framework calls them. Defaults are Megatron-LM's:
// a parallel size that nothing sets is 1, cp_comm_type is "p2p", num_query_groups is num_attention_heads.
#include <string>

#include "hcp/lint/facts.hpp"

namespace hcp::lint {
namespace {

using State = ShownFact::State;

State state_of(const FactOrigin& o) {
  switch (o.provenance) {
    case Provenance::literal:
    case Provenance::computed: return State::known;
    case Provenance::defaulted: return State::defaulted;
    case Provenance::unknown: return State::unknown;
  }
  return State::unknown;
}

// A fact the input wrote (or left unknown), or, when nothing wrote it, `fallback` with `fallback_why`.
template <typename T, typename ToValue>
ShownFact show(const char* name, const Fact<T>& fact, ToValue to_value, std::optional<Value> fallback,
               const char* fallback_why) {
  ShownFact s;
  s.name = name;
  if (fact.setting && fact.setting->implied) {  // a framework's default: nothing in the input says it
    s.state = fact.known() ? State::defaulted : State::unknown;
    if (fact.known()) s.value = to_value(*fact.value);
    s.why = fact.setting->why;
    s.implied = true;
    return s;
  }
  if (fact.known() || fact.unknown() || fact.setting) {
    s.state = state_of(fact);
    s.at = fact.loc();
    s.why = fact.why;
    if (fact.known() && s.state != State::unknown) s.value = to_value(*fact.value);
    if (s.state == State::unknown && s.why.empty()) s.why = "its value cannot be known from the input";
    if (s.state == State::defaulted && s.why.empty()) s.why = "the input's default, which the environment may change";
    return s;
  }
  if (fallback) {
    s.state = State::defaulted;
    s.value = *fallback;
  }
  s.why = fallback_why;
  return s;
}

Value integer(int64_t v) { return Value::make_int(v, std::to_string(v), {}); }
Value text(const std::string& v) { return Value::make_string(v, {}); }
Value integers(const std::vector<int64_t>& v) {
  std::vector<Value> items;
  for (int64_t i : v) items.push_back(integer(i));
  return Value::make_list(std::move(items), {});
}

}  // namespace

// The facts with Megatron-LM's defaults for what nothing sets.
std::vector<ShownFact> megatron_view(const Facts& f);

std::string_view fact_state_name(ShownFact::State state) {
  switch (state) {
    case State::known: return "known";
    case State::defaulted: return "default";
    case State::unknown: return "unknown";
  }
  return "unknown";
}

std::vector<ShownFact> shown_facts(const Facts& f, const std::string& base) {
  std::vector<ShownFact> out = megatron_view(f);
  if (base.empty()) return out;
  for (ShownFact& s : out) {
    // World size is the launcher's or the cluster's, never the recipe's.
    if (s.name == "world_size" || s.at.known() || s.state == State::known || s.implied) continue;
    s.state = State::unknown;
    s.value = Value{};
    s.why = "not set here: taken from " + base;
  }
  return out;
}

std::vector<ShownFact> megatron_view(const Facts& f) {
  std::vector<ShownFact> out;
  const auto size = [&](const char* name, const Fact<int64_t>& fact) {
    out.push_back(show(name, fact, integer, integer(1), "not set: Megatron-LM's default is 1"));
  };
  size("context_parallel_size", f.cp);
  const auto comm = [&](const std::vector<std::string>& types) {
    if (!f.cp_comm_type_is_list) return text(types.empty() ? std::string() : types.front());
    std::vector<Value> items;
    for (const std::string& t : types) items.push_back(text(t));
    return Value::make_list(std::move(items), {});
  };
  out.push_back(show("cp_comm_type", f.cp_comm_type, comm, text("p2p"), "not set: Megatron-LM's default is \"p2p\""));
  out.push_back(show("hierarchical_context_parallel_sizes", f.hcp_sizes, integers, Value{},
                     "not set: Megatron-LM's default is None"));
  size("tensor_model_parallel_size", f.tp);
  size("pipeline_model_parallel_size", f.pp);
  // Megatron-LM has one --seq-length; Bridge keeps the model's and the dataset's, which its validation makes equal.
  const Fact<int64_t>& seq = f.model_seq_length.known() || f.model_seq_length.unknown() || f.model_seq_length.setting
                                 ? f.model_seq_length
                                 : f.dataset_seq_length;
  out.push_back(show("seq_length", seq, integer, std::nullopt, "not set in the input (the framework or model may set it)"));
  out.push_back(show("num_layers", f.num_layers, integer, std::nullopt,
                     "not set in the input (the framework or model may set it)"));
  out.push_back(show("num_attention_heads", f.num_attention_heads, integer, std::nullopt,
                     "not set in the input (the framework or model may set it)"));
  ShownFact groups = show("num_query_groups", f.num_query_groups, integer, std::nullopt, "");
  if (groups.state == State::unknown && !f.num_query_groups.setting) {
    const ShownFact& heads = out.back();
    groups.state = heads.state == State::unknown ? State::unknown : State::defaulted;
    groups.value = heads.value;
    groups.why = "not set: Megatron-LM's default is num_attention_heads";
  }
  out.push_back(std::move(groups));
  size("expert_model_parallel_size", f.ep);
  // Megatron-LM: expert_tensor_parallel_size None becomes tensor_model_parallel_size.
  ShownFact etp = show("expert_tensor_parallel_size", f.etp, integer, std::nullopt, "");
  if (etp.state == State::unknown && !f.etp.setting) {
    const ShownFact& tp = out[3];
    etp.state = tp.state == State::unknown ? State::unknown : State::defaulted;
    etp.value = tp.value;
    etp.why = "not set: Megatron-LM's default is tensor_model_parallel_size";
  }
  out.push_back(std::move(etp));
  out.push_back(show("world_size", f.world_size, integer, std::nullopt,
                     "not set: give --world-size, or --nodes and --gpus-per-node"));
  return out;
}

}  // namespace hcp::lint
