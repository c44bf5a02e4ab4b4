// What the run was configured to do: Megatron's "using world size:" line and argument dump, Bridge's
// "Final configuration:" YAML (including a block list under hierarchical_context_parallel_sizes), and the runtime's
// own group lines when nothing else says.
#include <re2/re2.h>

#include "../match/triggers.hpp"
#include "scan_state.hpp"

namespace hcp::logscan {
namespace {

// The first value a run's inputs give is its configuration (rank 0 prints it first; later copies add nothing).
// Another input of the same run that prints a different value is reported: per-rank files that disagree were
// not one run, or were not launched alike.
template <typename T>
void first(ScanState& s, const char* name, Seen<T>& seen, T value, const LineView& line) {
  if (!seen.value) {
    seen.value = std::move(value);
    seen.where = line.ref();
    return;
  }
  if (*seen.value == value || seen.where.file == *line.file) return;
  if (!s.disagreements.insert(name).second) return;
  s.add_warning("inputs-differ", std::string("inputs of one run disagree on ") + name + ": " + seen.where.text() +
                                     " and " + line.ref().text() + " give different values",
                line.ref());
}

std::optional<std::vector<std::string>> comm_types(std::string_view v) {
  v = trim(v);
  std::vector<std::string> out;
  if (!v.empty() && v.front() == '[') v = v.substr(1, v.size() >= 2 && v.back() == ']' ? v.size() - 2 : v.size() - 1);
  size_t i = 0;
  while (i < v.size()) {
    size_t j = v.find(',', i);
    if (j == std::string_view::npos) j = v.size();
    std::string_view item = trim(v.substr(i, j - i));
    if (item.size() >= 2 && (item.front() == '\'' || item.front() == '"')) item = item.substr(1, item.size() - 2);
    if (!item.empty()) out.emplace_back(item);
    i = j + 1;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

bool is_none(std::string_view v) {
  v = trim(v);
  return v == "None" || v == "null" || v == "~" || v == "[]";
}

std::optional<bool> to_bool(std::string_view v) {
  v = trim(v);
  if (v == "True" || v == "true") return true;
  if (v == "False" || v == "false") return false;
  return std::nullopt;
}

void world_size_line(ScanState& s, const LineView& line) {
  Intent& in = s.report.intent;
  static const RE2 world(R"(using world size:\s*(\d+))");
  static const RE2 dp(R"(data-parallel size:\s*(\d+))");
  static const RE2 cp(R"(context-parallel size:\s*(\d+))");
  static const RE2 sizes(R"(hierarchical context-parallel sizes:\s*(None|\[[0-9, ]*\]))");
  static const RE2 tp(R"(tensor-model-parallel size:\s*(\d+))");
  static const RE2 pp(R"(pipeline-model-parallel size:\s*(\d+))");
  int64_t v = 0;
  std::string text;
  if (RE2::PartialMatch(line.text, world, &v)) first(s, "world_size", in.world_size, v, line);
  if (RE2::PartialMatch(line.text, dp, &v)) first(s, "data_parallel_size", in.dp, v, line);
  if (RE2::PartialMatch(line.text, cp, &v)) first(s, "context_parallel_size", in.cp, v, line);
  if (RE2::PartialMatch(line.text, tp, &v)) first(s, "tensor_model_parallel_size", in.tp, v, line);
  if (RE2::PartialMatch(line.text, pp, &v)) first(s, "pipeline_model_parallel_size", in.pp, v, line);
  if (RE2::PartialMatch(line.text, sizes, &text)) {
    first(s, "hierarchical_context_parallel_sizes", in.hcp_sizes, text == "None" ? std::optional<std::vector<int64_t>>() : to_int_list(text), line);
  }
}

// torchtitan: "--parallelism.context_parallel_degree 2" on the launch command a log shows, "context_parallel_degree
// = 2" in its TOML, "'context_parallel_degree': 2" in a printed job config.
void torchtitan_degree(ScanState& s, const LineView& line) {
  static const RE2 re(R"(context_parallel_degree['"]?\s*(?:=|:|\s)\s*(\d{1,9})\b)");
  int64_t v = 0;
  if (RE2::PartialMatch(line.text, re, &v)) first(s, "context_parallel_size", s.report.intent.cp, v, line);
}

// One configuration key and its printed value, from any of the forms below.
void config_value(ScanState& s, const LineView& line, const std::string& key, std::string_view value) {
  Intent& in = s.report.intent;
  if (key == "hierarchical_context_parallel_sizes") {
    if (is_none(value)) {
      first(s, "hierarchical_context_parallel_sizes", in.hcp_sizes, std::optional<std::vector<int64_t>>(), line);
    } else if (value.empty()) {
      s.list = ListCapture{true, {}, line.ref(), 0};  // a YAML block list follows
    } else if (auto sizes = to_int_list(value)) {
      first(s, "hierarchical_context_parallel_sizes", in.hcp_sizes, std::optional<std::vector<int64_t>>(*sizes), line);
    }
  } else if (key == "cp_comm_type") {
    if (auto types = comm_types(value)) first(s, "cp_comm_type", in.cp_comm_type, *types, line);
  } else if (key == "use_decentralized_pg") {
    if (auto b = to_bool(value)) first(s, "use_decentralized_pg", in.use_decentralized_pg, *b, line);
  } else if (key == "hybrid_context_parallel" || key == "dynamic_context_parallel") {
    // Megatron dev prints both, the one not given False: a True from either says what the run does.
    const auto b = to_bool(value);
    if (!b || (!*b && in.dynamic_cp.value)) return;
    if (*b && in.dynamic_cp.value == false) in.dynamic_cp = {};
    first(s, "dynamic_context_parallel", in.dynamic_cp, *b, line);
  } else if (auto v = to_int(value)) {
    // cp_size, tp_size, pp_size: NeMo Automodel's "distributed:" block.
    if (key == "context_parallel_size" || key == "cp_size") first(s, "context_parallel_size", in.cp, *v, line);
    if (key == "tensor_model_parallel_size" || key == "tp_size") first(s, "tensor_model_parallel_size", in.tp, *v, line);
    if (key == "pipeline_model_parallel_size" || key == "pp_size") first(s, "pipeline_model_parallel_size", in.pp, *v, line);
    if (key == "world_size") first(s, "world_size", in.world_size, *v, line);
  }
}

// A printed Python dict or JSON object of a framework's Megatron settings, such as verl's "Overridden TF init
// config: {..., 'tensor_model_parallel_size': 4, ..., 'context_parallel_size': 1, ...}": each known key quoted,
// a colon, and a scalar value (a list value is read up to its ']').
void dict_keys(ScanState& s, const LineView& line) {
  // Transformer Engine's attention record prints its 'cp_comm_type' default ('p2p') with CP off: that record is
  // evidence (attention_lines.cpp), not configuration.
  if (line.text.find("'context_parallel': ") != std::string_view::npos) return;
  static const RE2 re(
      R"(['"](context_parallel_size|cp_comm_type|hierarchical_context_parallel_sizes|tensor_model_parallel_size|pipeline_model_parallel_size|hybrid_context_parallel|dynamic_context_parallel|use_decentralized_pg)['"]:\s*(\[[^\]]{0,200}\]|'[^']{0,40}'|"[^"]{0,40}"|[A-Za-z0-9_+.-]{1,40}))");
  re2::StringPiece input(line.text.data(), line.text.size());
  std::string key, value;
  while (RE2::FindAndConsume(&input, re, &key, &value)) config_value(s, line, key, value);
}

// torchtitan's device mesh, which has a dimension only for a degree above 1 (ParallelDims, up to 2025: "Building
// 1-D device mesh with ['dp_shard'], [24]", so no 'cp' is CP 1), or since its DeviceMesh rewrite every degree:
// "Building device mesh with parallelism: pp=1, dp_replicate=1, dp_shard=8, cp=2, tp=1, ep=1".
void torchtitan_mesh(ScanState& s, const LineView& line) {
  static const RE2 dims(R"(Building \d{1,2}-D device mesh with \[([^\]]{0,200})\], \[([0-9, ]{0,100})\])");
  static const RE2 degrees(
      R"(Building device mesh with parallelism: pp=(\d{1,9}), dp_replicate=\d{1,9}, dp_shard=\d{1,9}, cp=(\d{1,9}), tp=(\d{1,9}))");
  Intent& in = s.report.intent;
  int64_t pp = 1, cp = 1, tp = 1;
  std::string names, values;
  if (RE2::PartialMatch(line.text, degrees, &pp, &cp, &tp)) {
  } else if (RE2::PartialMatch(line.text, dims, &names, &values)) {
    const auto sizes = to_int_list(values);
    const auto list = comm_types(names);  // a list of quoted names
    if (!sizes || !list || sizes->size() != list->size()) return;
    for (size_t i = 0; i < list->size(); ++i) {
      if ((*list)[i] == "cp") cp = (*sizes)[i];
      if ((*list)[i] == "tp") tp = (*sizes)[i];
      if ((*list)[i] == "pp") pp = (*sizes)[i];
    }
  } else {
    return;
  }
  first(s, "context_parallel_size", in.cp, cp, line);
  first(s, "tensor_model_parallel_size", in.tp, tp, line);
  first(s, "pipeline_model_parallel_size", in.pp, pp, line);
}

void config_key_line(ScanState& s, const LineView& line) {
  if (line.text.find("context_parallel_degree") != std::string_view::npos) return torchtitan_degree(s, line);
  if (line.text.find("device mesh with") != std::string_view::npos) return torchtitan_mesh(s, line);
  // "  context_parallel_size ..... 16" (argument dump) or "  context_parallel_size: 16" (YAML).
  static const RE2 re(
      R"(^\s*(context_parallel_size|cp_comm_type|hierarchical_context_parallel_sizes|tensor_model_parallel_size|pipeline_model_parallel_size|world_size|use_decentralized_pg|hybrid_context_parallel|dynamic_context_parallel|cp_size|tp_size|pp_size)\s*(?:\.{2,}|:)\s*(.*?)\s*$)");
  std::string key, value;
  if (RE2::FullMatch(line.text, re, &key, &value)) return config_value(s, line, key, value);
  dict_keys(s, line);
}

}  // namespace

void extract_intent(ScanState& s, const LineView& line, uint32_t triggers) {
  if (triggers & kWorldSize) world_size_line(s, line);
  if (triggers & kConfigKey) config_key_line(s, line);
}

void follow_list(ScanState& s, const LineView& line) {
  ListCapture& l = s.list;
  if (!l.active) return;
  const std::string_view t = trim(line.text);
  if (t.size() >= 2 && t[0] == '-' && t[1] == ' ') {
    if (auto v = to_int(t.substr(2))) {
      l.items.push_back(*v);
      return;
    }
  }
  Intent& in = s.report.intent;
  if (!in.hcp_sizes.value) {
    in.hcp_sizes.value = l.items.empty() ? std::optional<std::vector<int64_t>>() : std::optional(l.items);
    in.hcp_sizes.where = l.where;
  }
  l = {};
}

}  // namespace hcp::logscan
