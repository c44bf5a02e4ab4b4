// Megatron/Bridge progress: iteration lines (hand-parsed: they are most of a log), validation loss, memory, and
// Bridge's MODEL_TFLOP/s/GPU line.
#include <re2/re2.h>

#include <cstring>

#include "../match/triggers.hpp"
#include "scan_state.hpp"

namespace hcp::logscan {
namespace {

// The number after "key:" in one " | "-separated field.
std::optional<double> field_number(std::string_view field) {
  const size_t colon = field.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return to_double(field.substr(colon + 1));
}

// "... iteration      10/     100 | consumed samples: ... | elapsed time per iteration (ms): 812.3 | ..."
bool iteration_line(ScanState& s, const LineView& line) {
  const std::string_view t = line.text;
  const size_t at = t.find("iteration ");
  if (at == std::string_view::npos) return false;
  size_t i = at + 10;
  while (i < t.size() && t[i] == ' ') ++i;
  size_t j = i;
  while (j < t.size() && t[j] >= '0' && t[j] <= '9') ++j;
  if (j == i || j >= t.size() || t[j] != '/') return false;
  const auto iteration = to_int(t.substr(i, j - i));
  size_t k = j + 1;
  while (k < t.size() && t[k] == ' ') ++k;
  size_t m = k;
  while (m < t.size() && t[m] >= '0' && t[m] <= '9') ++m;
  const auto total = to_int(t.substr(k, m - k));
  if (!iteration || !total) return false;

  Progress& p = s.report.progress;
  ++p.iteration_lines;
  p.last_iteration = iteration;
  p.total_iterations = total;
  if (!p.first_iteration) p.first_iteration = line.ref();
  p.last_iteration_at = line.ref();
  // Walk the fields; the first letters tell them apart without comparing every name.
  size_t pos = m;
  while (pos < t.size()) {
    const void* bar = std::memchr(t.data() + pos, '|', t.size() - pos);
    if (!bar) break;
    size_t start = static_cast<size_t>(static_cast<const char*>(bar) - t.data()) + 1;
    while (start < t.size() && t[start] == ' ') ++start;
    const void* next = std::memchr(t.data() + start, '|', t.size() - start);
    const size_t end = next ? static_cast<size_t>(static_cast<const char*>(next) - t.data()) : t.size();
    const std::string_view field = t.substr(start, end - start);
    pos = end;
    if (field.size() < 8) continue;
    if (field.rfind("elapsed time per iteration", 0) == 0) {
      if (auto v = field_number(field)) p.elapsed_ms.add(*v);
    } else if (field.rfind("throughput per GPU", 0) == 0) {
      if (auto v = field_number(field)) p.tflops.add(*v);
    } else if (field.rfind("lm loss:", 0) == 0) {
      if (auto v = field_number(field)) {
        if (!p.first_lm_loss) p.first_lm_loss = v;
        p.last_lm_loss = v;
      }
    } else if (field.rfind("number of skipped iterations", 0) == 0) {
      if (auto v = field_number(field)) p.skipped_iterations += static_cast<int64_t>(*v);
    } else if (field.rfind("number of nan iterations", 0) == 0) {
      if (auto v = field_number(field)) p.nan_iterations += static_cast<int64_t>(*v);
    }
  }
  return true;
}

void validation_line(ScanState& s, const LineView& line) {
  static const RE2 re(R"(validation loss at iteration\s+(\d+)\s*\|\s*lm loss value:\s*([-+0-9.eE]+))");
  int64_t iteration = 0;
  double loss = 0;
  if (!RE2::PartialMatch(line.text, re, &iteration, &loss)) return;
  auto& v = s.report.progress.validation_losses;
  v.emplace_back(iteration, loss);
  if (v.size() > 32) v.erase(v.begin());
}

void memory_line(ScanState& s, const LineView& line) {
  static const RE2 re(
      R"(memory \(MB\)\s*\|\s*allocated:\s*([0-9.]+)\s*\|\s*max allocated:\s*([0-9.]+)\s*\|\s*reserved:\s*([0-9.]+)\s*\|\s*max reserved:\s*([0-9.]+))");
  double alloc = 0, max_alloc = 0, reserved = 0, max_reserved = 0;
  if (!RE2::PartialMatch(line.text, re, &alloc, &max_alloc, &reserved, &max_reserved)) return;
  Progress& p = s.report.progress;
  p.max_allocated_mb = std::max(p.max_allocated_mb.value_or(0), max_alloc);
  p.max_reserved_mb = std::max(p.max_reserved_mb.value_or(0), max_reserved);
}

void model_tflop_line(ScanState& s, const LineView& line) {
  static const RE2 re(R"(([0-9]+(?:\.[0-9]+)?)\s*MODEL_TFLOP/s/GPU)");
  double v = 0;
  if (RE2::PartialMatch(line.text, re, &v)) s.report.progress.model_tflops.add(v);
}

}  // namespace

void extract_progress(ScanState& s, const LineView& line, uint32_t triggers) {
  if (triggers & kIteration) {
    if (!iteration_line(s, line) && line.text.find("validation loss at iteration") != std::string_view::npos) {
      validation_line(s, line);
    }
  }
  if (triggers & kMemory) memory_line(s, line);
  if (triggers & kModelTflop) model_tflop_line(s, line);
}

}  // namespace hcp::logscan
