// The JSON report (schema in docs/logscan.md).
#include "hcp/hcp_version.hpp"
#include "hcp/json_writer.hpp"
#include "hcp/logscan/render.hpp"

namespace hcp::logscan {
namespace {

void optional_number(JsonWriter& w, const char* key, std::optional<double> v) {
  w.key(key);
  if (v) w.value(*v); else w.null();
}

void optional_int(JsonWriter& w, const char* key, std::optional<int64_t> v) {
  w.key(key);
  if (v) w.value(*v); else w.null();
}

void where(JsonWriter& w, const SourceRef& r) {
  w.key("where");
  if (r.file.empty()) w.null(); else w.value(r.text());
}

template <typename T, typename Write>
void seen(JsonWriter& w, const char* key, const Seen<T>& s, Write write) {
  w.key(key);
  if (!s.value) {
    w.null();
    return;
  }
  w.begin_object();
  w.key("value");
  write(*s.value);
  where(w, s.where);
  w.end_object();
}

void intent(JsonWriter& w, const Intent& in) {
  auto integer = [&](int64_t v) { w.value(v); };
  w.key("intent");
  w.begin_object();
  seen(w, "world_size", in.world_size, integer);
  seen(w, "tp", in.tp, integer);
  seen(w, "pp", in.pp, integer);
  seen(w, "cp", in.cp, integer);
  seen(w, "dp", in.dp, integer);
  seen(w, "cp_comm_type", in.cp_comm_type, [&](const std::vector<std::string>& v) {
    w.begin_array();
    for (const auto& t : v) w.value(t);
    w.end_array();
  });
  seen(w, "hcp_sizes", in.hcp_sizes, [&](const std::optional<std::vector<int64_t>>& v) {
    if (!v) {
      w.null();
      return;
    }
    w.begin_array();
    for (int64_t x : *v) w.value(x);
    w.end_array();
  });
  seen(w, "use_decentralized_pg", in.use_decentralized_pg, [&](bool b) { w.value(b); });
  seen(w, "dynamic_cp", in.dynamic_cp, [&](bool b) { w.value(b); });
  w.end_object();
}

void optional_ref(JsonWriter& w, const char* key, const std::optional<SourceRef>& where) {
  w.key(key);
  if (where) w.value(where->text()); else w.null();
}

// Transformer Engine's attention records; null when the log has none.
void attention(JsonWriter& w, const AttentionEvidence& a) {
  w.key("attention");
  if (!a.any()) return w.null();
  w.begin_object();
  w.key("cp_on_lines");
  w.value(static_cast<int64_t>(a.cp_on_lines));
  optional_ref(w, "cp_on_first", a.cp_on);
  w.key("cp_off_lines");
  w.value(static_cast<int64_t>(a.cp_off_lines));
  optional_ref(w, "cp_off_first", a.cp_off);
  w.key("cp_comm_types");
  w.begin_array();
  for (const std::string& t : a.comm_types) w.value(t);
  w.end_array();
  w.key("cp_sizes");
  w.begin_array();
  for (int64_t n : a.cp_sizes) w.value(n);
  w.end_array();
  w.key("backends");
  w.begin_object();
  for (const auto& [backend, lines] : a.backends) {
    w.key(backend);
    w.value(static_cast<int64_t>(lines));
  }
  w.end_object();
  w.end_object();
}

void evidence(JsonWriter& w, const Evidence& ev) {
  w.key("evidence");
  w.begin_object();
  w.key("groups");
  w.begin_array();
  for (const auto& [key, g] : ev.groups) {
    w.begin_object();
    w.key("group");
    w.value(g.group);
    w.key("source");
    w.value(g.source);
    w.key("lines");
    w.value(static_cast<int64_t>(g.lines));
    w.key("ranks");
    w.begin_array();
    for (int r : g.ranks) w.value(r);
    w.end_array();
    w.key("sizes");
    w.begin_array();
    for (int64_t s : g.sizes) w.value(s);
    w.end_array();
    w.key("first");
    w.value(g.first.text());
    w.end_object();
  }
  w.end_array();
  w.key("nccl_comm_sizes");
  w.begin_object();
  for (const auto& [size, count] : ev.nccl_comm_sizes) {
    w.key(std::to_string(size));
    w.value(static_cast<int64_t>(count));
  }
  w.end_object();
  w.key("decentralized_process_groups");
  if (ev.hypercommgrid) w.value(ev.hypercommgrid->text()); else w.null();
  attention(w, ev.attention);
  w.key("dynamic_cp");
  if (ev.dynamic_cp.first) {
    w.begin_object();
    w.key("how");
    w.value(ev.dynamic_cp.how);
    w.key("group_sizes");
    w.begin_array();
    for (int64_t n : ev.dynamic_cp.group_sizes) w.value(n);
    w.end_array();
    w.key("first");
    w.value(ev.dynamic_cp.first->text());
    w.end_object();
  } else {
    w.null();
  }
  w.end_object();
}

void progress(JsonWriter& w, const Progress& p) {
  w.key("progress");
  w.begin_object();
  w.key("iteration_lines");
  w.value(static_cast<int64_t>(p.iteration_lines));
  w.key("format");
  if (p.format == ProgressFormat::none) w.null(); else w.value(progress_format_name(p.format));
  w.key("run");
  w.value(static_cast<int64_t>(p.run));
  optional_int(w, "last_iteration", p.last_iteration);
  optional_int(w, "total_iterations", p.total_iterations);
  optional_number(w, "median_iteration_ms", p.iteration_ms());
  optional_number(w, "median_tflops_per_gpu", p.tflops.median());
  optional_number(w, "throughput_tflops_per_gpu", p.reported_tflops());
  optional_number(w, "median_model_tflops_per_gpu", p.model_tflops.median());
  optional_number(w, "first_lm_loss", p.first_lm_loss);
  optional_number(w, "last_lm_loss", p.last_lm_loss);
  w.key("skipped_iterations");
  w.value(p.skipped_iterations);
  w.key("nan_iterations");
  w.value(p.nan_iterations);
  w.key("validation_losses");
  w.begin_array();
  for (const auto& [it, loss] : p.validation_losses) {
    w.begin_object();
    w.key("iteration");
    w.value(it);
    w.key("loss");
    w.value(loss);
    w.end_object();
  }
  w.end_array();
  optional_number(w, "max_allocated_mb", p.max_allocated_mb);
  optional_number(w, "max_reserved_mb", p.max_reserved_mb);
  w.end_object();
}

}  // namespace

std::string render_json(const ScanReport& r) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.key("version");
  // 2: verdict, intent, evidence and progress are the last run's; a failure counts once. 3: verdict dynamic-cp
  // (such runs were flat-cp), Transformer Engine's attention records can decide the verdict, cp-validation.
  w.value(3);
  w.key("tool");
  w.value("hcp-logscan");
  w.key("hcp_version");
  w.value(hcp::kHcpVersionString);
  w.key("verdict");
  w.value(verdict_name(r.verdict));
  w.key("step_completed");
  w.value(r.step_completed);
  w.key("failed");
  w.value(r.failed);
  intent(w, r.intent);
  evidence(w, r.evidence);
  progress(w, r.progress);
  w.key("gpu");
  if (r.gpu) {
    w.begin_object();
    w.key("model");
    w.value(*r.gpu);
    optional_number(w, "peak_bf16_tflops", r.gpu_peak_tflops);
    where(w, r.gpu_where.value_or(SourceRef{}));
    w.end_object();
  } else {
    w.null();
  }
  w.key("failures");
  w.begin_object();
  w.key("count");
  w.value(static_cast<int64_t>(r.failure_count));
  w.key("items");
  w.begin_array();
  for (const Failure& f : r.failures) {
    w.begin_object();
    w.key("kind");
    w.value(f.kind);
    w.key("message");
    w.value(f.message);
    w.key("lint_code");
    if (f.lint_code.empty()) w.null(); else w.value(f.lint_code);
    w.key("group");
    if (f.group.empty()) w.null(); else w.value(f.group);
    w.key("rank");
    if (f.where.rank >= 0) w.value(f.where.rank); else w.null();
    w.key("run");
    w.value(static_cast<int64_t>(f.run));
    where(w, f.where);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.key("runs");
  w.begin_array();
  for (size_t i = 0; i < r.runs.size(); ++i) {
    const RunReport& run = r.runs[i];
    w.begin_object();
    w.key("index");
    w.value(static_cast<int64_t>(i));
    w.key("start");
    if (run.start.file.empty()) w.null(); else w.value(run.start.text());
    w.key("verdict");
    w.value(verdict_name(run.verdict));
    intent(w, run.intent);
    w.key("iteration_lines");
    w.value(static_cast<int64_t>(run.iteration_lines));
    optional_int(w, "last_iteration", run.last_iteration);
    optional_int(w, "total_iterations", run.total_iterations);
    optional_number(w, "last_lm_loss", run.last_lm_loss);
    optional_number(w, "median_iteration_ms", run.iteration_ms);
    optional_number(w, "throughput_tflops_per_gpu", run.tflops);
    w.key("failures");
    w.value(static_cast<int64_t>(run.failure_count));
    w.end_object();
  }
  w.end_array();
  w.key("warnings");
  w.begin_object();
  w.key("count");
  w.value(static_cast<int64_t>(r.warning_count));
  w.key("items");
  w.begin_array();
  for (const Notice& n : r.warnings) {
    w.begin_object();
    w.key("kind");
    w.value(n.kind);
    w.key("message");
    w.value(n.message);
    w.key("rank");
    if (n.where.rank >= 0) w.value(n.where.rank); else w.null();
    where(w, n.where);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.key("files");
  w.begin_array();
  for (const FileReport& f : r.files) {
    w.begin_object();
    w.key("path");
    w.value(f.path);
    w.key("compression");
    w.value(f.compression);
    w.key("rank");
    if (f.rank_from_name >= 0) w.value(f.rank_from_name); else w.null();
    w.key("raw_bytes");
    w.value(static_cast<int64_t>(f.raw_bytes));
    w.key("text_bytes");
    w.value(static_cast<int64_t>(f.text_bytes));
    w.key("lines");
    w.value(static_cast<int64_t>(f.lines));
    w.key("truncated_lines");
    w.value(static_cast<int64_t>(f.truncated_lines));
    w.key("damage");
    if (f.damage) w.value(*f.damage); else w.null();
    w.key("error");
    if (f.error) w.value(*f.error); else w.null();
    w.end_object();
  }
  w.end_array();
  w.key("reasons");
  w.begin_array();
  for (const auto& [text, ref] : r.reasons) {
    w.begin_object();
    w.key("text");
    w.value(text);
    where(w, ref);
    w.end_object();
  }
  w.end_array();
  w.key("advice");
  if (r.advice.empty()) w.null(); else w.value(r.advice);
  w.end_object();
  out += '\n';
  return out;
}

}  // namespace hcp::logscan
