// Transformer Engine's attention debug lines (NVTE_DEBUG=1 NVTE_DEBUG_LEVEL=2), behind either of its prefixes:
// "DEBUG:DotProductAttention:" when the host (Megatron) set up Python logging, "[DEBUG    | DotProductAttention]: "
// when TE's own handler prints them. What they prove is what the attention really ran with:
// - "Running with config={...}" holds 'context_parallel': True/False, computed by TE from the CP group it was given
//   (cp_size > 1), then 'cp_comm_type' (TE >= 2.8; 'p2p' by default even without CP) and 'cp_size' (TE >= 2.15).
//   A record longer than a collector's line limit arrives wrapped, so the 'context_parallel' key may lie on a
//   continuation; the keys around it identify the record.
// - "Disabling <backend> ... context parallelism ..." is printed only while context_parallel is True.
// - "Running with FusedAttention backend (sub-backend 1)" and "Selected backend = ..." name the backend.
#include <re2/re2.h>

#include "scan_state.hpp"

namespace hcp::logscan {
namespace {

bool has(std::string_view t, std::string_view what) { return t.find(what) != std::string_view::npos; }

// A key TE's config record has next to 'context_parallel' in every version that prints it (v1.9+), so that another
// program's dict with a key of that name is not taken for TE's.
bool te_config_record(std::string_view t) {
  return has(t, "Running with config=") || has(t, "'attention_dropout': ") || has(t, "'cp_comm_type': ") ||
         has(t, "'deterministic': ");
}

void cp_on(AttentionEvidence& a, const LineView& line) {
  ++a.cp_on_lines;
  if (!a.cp_on) a.cp_on = line.ref();
}

void config_record(ScanState& s, const LineView& line) {
  static const RE2 flag(R"('context_parallel': (True|False)\b)");
  static const RE2 comm(R"('cp_comm_type': '([a-z0-9+_]{1,16})')");
  static const RE2 size(R"('cp_size': (\d{1,9})\b)");
  std::string value;
  if (!te_config_record(line.text) || !RE2::PartialMatch(line.text, flag, &value)) return;
  AttentionEvidence& a = s.report.evidence.attention;
  if (value == "False") {
    ++a.cp_off_lines;
    if (!a.cp_off) a.cp_off = line.ref();
    return;
  }
  cp_on(a, line);
  std::string type;
  if (RE2::PartialMatch(line.text, comm, &type)) a.comm_types.insert(type);
  int64_t n = 0;
  if (RE2::PartialMatch(line.text, size, &n)) a.cp_sizes.insert(n);
}

// Every "Disabling ..." line of TE's backend selection that concerns CP, in all versions: "... as it does not
// support context parallelism ...", "... for context parallelism with softmax_type = ...", "... for KV caching
// with context parallelism", "... as cp_comm_type = a2a requires num_heads and num_gqa_groups divisible by 2 ...",
// "... because context parallelism is enabled". TE 1.8/1.9's "requires flash-attn 2.3+ and no context
// parallelism" was printed without CP too.
void disabling_line(ScanState& s, const LineView& line) {
  const std::string_view t = line.text;
  const size_t at = t.find("Disabling ");
  if (at == std::string_view::npos) return;
  const std::string_view rest = t.substr(at);
  if (!has(rest, "Attention") && !has(rest, "all backends")) return;
  const bool about_cp = (has(rest, "context parallel") && !has(rest, "no context parallel")) ||
                        has(rest, "cp_comm_type = ");
  if (!about_cp) return;
  AttentionEvidence& a = s.report.evidence.attention;
  cp_on(a, line);
  static const RE2 comm(R"(cp_comm_type = ([a-z0-9+_]{1,16}))");
  std::string type;
  if (RE2::PartialMatch(rest, comm, &type)) a.comm_types.insert(type);
}

// "Running with FusedAttention backend (sub-backend 1)", "Running with FlashAttention backend (version 2.7.4)",
// "Running with UnfusedDotProductAttention backend"; "Selected backend = FlashAttention (2.7.4)."
void backend_line(ScanState& s, const LineView& line) {
  static const RE2 running(
      R"(Running with (FlashAttention|FusedAttention|UnfusedDotProductAttention) backend ?(?:\((?:version )?([^)]{1,64})\))?)");
  static const RE2 selected(R"(Selected backend = ([A-Za-z]{1,40})(?: \(([^)]{1,64})\))?)");
  std::string name, detail;
  if (!RE2::PartialMatch(line.text, running, &name, &detail) &&
      !RE2::PartialMatch(line.text, selected, &name, &detail)) {
    return;
  }
  ++s.report.evidence.attention.backends[detail.empty() ? name : name + " (" + detail + ")"];
}

}  // namespace

void extract_attention(ScanState& s, const LineView& line) {
  const std::string_view t = line.text;
  if (has(t, "'context_parallel': ")) return config_record(s, line);
  if (has(t, "Disabling ")) return disabling_line(s, line);
  if (has(t, "Running with ") || has(t, "Selected backend")) backend_line(s, line);
}

}  // namespace hcp::logscan
