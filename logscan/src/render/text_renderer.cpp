// A short human summary: the verdict and why, then intent, evidence, progress, failures and inputs.
#include <sstream>

#include "hcp/logscan/render.hpp"
#include "hcp/printable.hpp"

namespace hcp::logscan {
namespace {

std::string num(double v, int precision = 1) {
  std::ostringstream o;
  o.precision(precision);
  o << std::fixed << v;
  return o.str();
}

std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string bytes(uint64_t n) {
  if (n >= (1ull << 30)) return num(static_cast<double>(n) / (1ull << 30)) + " GiB";
  if (n >= (1ull << 20)) return num(static_cast<double>(n) / (1ull << 20)) + " MiB";
  return std::to_string(n) + " bytes";
}

void intent_line(std::ostringstream& o, const Intent& in) {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (in.cp.value) add("cp " + std::to_string(*in.cp.value));
  if (in.cp_comm_type.value) {
    std::string t;
    for (const auto& x : *in.cp_comm_type.value) t += (t.empty() ? "" : ",") + x;
    add("cp_comm_type " + t);
  }
  if (in.hcp_sizes.value) add("hierarchical sizes " + (*in.hcp_sizes.value ? list(**in.hcp_sizes.value) : "None"));
  if (in.tp.value) add("tp " + std::to_string(*in.tp.value));
  if (in.pp.value) add("pp " + std::to_string(*in.pp.value));
  if (in.world_size.value) add("world size " + std::to_string(*in.world_size.value));
  if (in.dynamic_cp.value) add(std::string("dynamic CP ") + (*in.dynamic_cp.value ? "true" : "false"));
  if (in.use_decentralized_pg.value) add(std::string("use_decentralized_pg ") + (*in.use_decentralized_pg.value ? "true" : "false"));
  o << "intent:    " << (s.empty() ? "not found in the log" : s);
  const SourceRef& w = in.cp.value ? in.cp.where : in.cp_comm_type.where;
  if (!w.file.empty()) o << "  (" << w.text() << ")";
  o << "\n";
}

// Transformer Engine's attention lines: "CP on in 12 lines (cp_comm_type p2p; cp_size 2), CP off in 4 lines,
// FusedAttention (sub-backend 1) (x3)".
void attention_line(std::ostringstream& o, const AttentionEvidence& a) {
  if (!a.any()) return;
  o << "evidence:  Transformer Engine attention:";
  std::string sep = " ";
  if (a.cp_on) {
    o << sep << "CP on in " << a.cp_on_lines << " line" << (a.cp_on_lines == 1 ? "" : "s");
    std::string detail;
    for (const std::string& t : a.comm_types) detail += (detail.empty() ? "cp_comm_type " : ", ") + t;
    if (!a.cp_sizes.empty()) {
      detail += std::string(detail.empty() ? "" : "; ") + "cp_size " +
                list(std::vector<int64_t>(a.cp_sizes.begin(), a.cp_sizes.end()));
    }
    if (!detail.empty()) o << " (" << detail << ")";
    sep = ", ";
  }
  if (a.cp_off) {
    o << sep << "CP off in " << a.cp_off_lines << " line" << (a.cp_off_lines == 1 ? "" : "s");
    sep = ", ";
  }
  for (const auto& [backend, lines] : a.backends) {
    o << sep << backend << " (x" << lines << ")";
    sep = ", ";
  }
  const std::optional<SourceRef>& first = a.cp_on ? a.cp_on : a.cp_off;
  if (first) o << " first at " << first->text();
  o << "\n";
}

void evidence_lines(std::ostringstream& o, const Evidence& ev) {
  attention_line(o, ev.attention);
  if (ev.dynamic_cp.first) {
    o << "evidence:  dynamic CP: " << ev.dynamic_cp.how;
    if (!ev.dynamic_cp.group_sizes.empty()) {
      o << ", group sizes "
        << list(std::vector<int64_t>(ev.dynamic_cp.group_sizes.begin(), ev.dynamic_cp.group_sizes.end()));
    }
    o << " first at " << ev.dynamic_cp.first->text() << "\n";
  }
  if (ev.groups.empty() && ev.nccl_comm_sizes.empty() && !ev.hypercommgrid) {
    o << "evidence:  no process-group lines\n";
    return;
  }
  for (const auto& [key, g] : ev.groups) {
    o << "evidence:  " << g.group << " (" << g.source << ", " << g.lines << " line" << (g.lines == 1 ? "" : "s");
    if (!g.ranks.empty()) o << ", " << g.ranks.size() << " rank" << (g.ranks.size() == 1 ? "" : "s");
    if (!g.sizes.empty()) {
      std::vector<int64_t> sizes(g.sizes.begin(), g.sizes.end());
      o << ", sizes " << list(sizes);
    }
    o << ") first at " << g.first.text() << "\n";
  }
  if (!ev.nccl_comm_sizes.empty()) {
    o << "evidence:  NCCL communicators by size:";
    for (const auto& [size, count] : ev.nccl_comm_sizes) o << " " << size << " (x" << count << ")";
    o << " (weak evidence)\n";
  }
  if (ev.hypercommgrid) o << "evidence:  decentralized process groups (HyperCommGrid) at " << ev.hypercommgrid->text() << "\n";
}

void progress_line(std::ostringstream& o, const Progress& p) {
  if (!p.any()) {
    o << "progress:  no training iteration logged\n";
    return;
  }
  o << "progress:  " << p.iteration_lines << " iteration lines";
  if (p.last_iteration) o << ", last " << *p.last_iteration << "/" << p.total_iterations.value_or(0);
  if (auto v = p.iteration_ms()) o << ", median " << num(*v) << " ms/iteration";
  if (auto v = p.tflops.median()) o << ", " << num(*v) << " TFLOP/s/GPU";
  if (auto v = p.model_tflops.median()) o << ", " << num(*v) << " MODEL_TFLOP/s/GPU";
  if (p.first_lm_loss && p.last_lm_loss) o << ", lm loss " << num(*p.first_lm_loss, 4) << " -> " << num(*p.last_lm_loss, 4);
  if (p.skipped_iterations || p.nan_iterations) o << ", skipped " << p.skipped_iterations << ", nan " << p.nan_iterations;
  if (!p.validation_losses.empty()) o << ", last validation loss " << num(p.validation_losses.back().second, 4);
  if (p.max_reserved_mb) o << ", max reserved " << num(*p.max_reserved_mb) << " MB";
  o << "\n";
}

}  // namespace

std::string render_text(const ScanReport& r) {
  std::ostringstream o;
  o << "verdict:   " << verdict_name(r.verdict) << "\n";
  for (const auto& [text, where] : r.reasons) {
    o << "  because: " << text;
    if (!where.file.empty()) o << " (" << where.text() << ")";
    o << "\n";
  }
  if (!r.advice.empty()) o << "  advice:  " << r.advice << "\n";
  if (r.runs.size() > 1) {
    o << "runs:      " << r.runs.size() << " (the verdict and what follows are the last run's)\n";
    for (size_t i = 0; i < r.runs.size(); ++i) {
      const RunReport& run = r.runs[i];
      o << "  run " << i + 1 << ": " << verdict_name(run.verdict);
      if (!run.start.file.empty()) o << " from " << run.start.text();
      o << ", " << run.iteration_lines << " progress lines";
      if (run.last_iteration) o << " to " << *run.last_iteration;
      if (run.failure_count) o << ", " << run.failure_count << " failures";
      o << "\n";
    }
  }
  intent_line(o, r.intent);
  evidence_lines(o, r.evidence);
  progress_line(o, r.progress);
  if (r.gpu) {
    o << "gpu:       " << *r.gpu;
    if (r.gpu_peak_tflops) o << " (dense bf16 peak " << num(*r.gpu_peak_tflops, 0) << " TFLOP/s)";
    o << "\n";
  }
  if (r.failure_count == 0) {
    o << "failures:  none\n";
  } else {
    o << "failures:  " << r.failure_count << "\n";
    size_t shown = 0;
    for (const Failure& f : r.failures) {
      if (++shown > 10) {
        o << "  ... " << r.failure_count - 10 << " more (see --format json)\n";
        break;
      }
      o << "  " << f.kind;
      if (!f.lint_code.empty()) o << " [" << f.lint_code << "]";
      if (!f.group.empty()) o << " (" << f.group << ")";
      o << " at " << f.where.text() << ": " << f.message << "\n";
    }
  }  if (r.warning_count > 0) {
    o << "warnings:  " << r.warning_count << "\n";
    size_t shown = 0;
    for (const Notice& n : r.warnings) {
      if (++shown > 5) {
        o << "  ... " << r.warning_count - 5 << " more (see --format json)\n";
        break;
      }
      o << "  " << n.kind << " at " << n.where.text() << ": " << n.message << "\n";
    }
  }

  uint64_t text = 0, truncated = 0;
  size_t compressed = 0;
  for (const FileReport& f : r.files) {
    text += f.text_bytes;
    truncated += f.truncated_lines;
    compressed += f.compression != "plain";
  }
  o << "inputs:    " << r.files.size() << " (" << compressed << " compressed), " << bytes(text) << " of text";
  if (truncated) o << ", " << truncated << " over-long line" << (truncated == 1 ? "" : "s") << " truncated";
  o << "\n";
  for (const FileReport& f : r.files) {
    if (f.damage) o << "  damaged: " << f.path << " at " << *f.damage << " (the text before it was scanned)\n";
    if (f.error) o << "  unreadable: " << f.path << ": " << *f.error << "\n";
  }
  o << "step completed: " << (r.step_completed ? "yes" : "no") << "; failed: " << (r.failed ? "yes" : "no") << "\n";
  return printable(o.str());  // control characters from the logs shown as escapes
}

}  // namespace hcp::logscan
