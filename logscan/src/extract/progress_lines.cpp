// Megatron/Bridge progress: iteration lines (hand-parsed: they are most of a log), validation loss, memory, and
// Bridge's MODEL_TFLOP/s/GPU line.
#include <re2/re2.h>

#include <cmath>
#include <cstring>

#include "../match/triggers.hpp"
#include "scan_state.hpp"

namespace hcp::logscan {
namespace {

// A decimal such as "812.3" or "1.034567E+01" at p (after blanks); not correctly rounded in the last bit, which
// statistics over thousands of lines do not notice, and several times faster than a general parser.
std::optional<double> quick_number(const char* p, const char* end) {
  while (p < end && *p == ' ') ++p;
  bool negative = false;
  if (p < end && (*p == '-' || *p == '+')) negative = *p++ == '-';
  double v = 0;
  int digits = 0;
  while (p < end && *p >= '0' && *p <= '9') {
    v = v * 10 + (*p++ - '0');
    ++digits;
  }
  if (p < end && *p == '.') {
    ++p;
    double scale = 0.1;
    while (p < end && *p >= '0' && *p <= '9') {
      v += (*p++ - '0') * scale;
      scale *= 0.1;
      ++digits;
    }
  }
  if (digits == 0) return std::nullopt;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool neg_exp = false;
    if (p < end && (*p == '-' || *p == '+')) neg_exp = *p++ == '-';
    int e = 0;
    while (p < end && *p >= '0' && *p <= '9' && e < 400) e = e * 10 + (*p++ - '0');
    static constexpr double kPow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16};
    const double f = e <= 16 ? kPow10[e] : std::pow(10.0, e);
    v = neg_exp ? v / f : v * f;
  }
  return negative ? -v : v;
}

bool starts_with(const char* p, const char* end, std::string_view key) {
  return static_cast<size_t>(end - p) >= key.size() && std::memcmp(p, key.data(), key.size()) == 0;
}

// "... iteration      10/     100 | consumed samples: ... | elapsed time per iteration (ms): 812.3 | ..."
bool iteration_line(ScanState& s, const LineView& line) {
  const std::string_view t = line.text;
  const size_t at = t.find("iteration ");
  if (at == std::string_view::npos) return false;
  const char* p = t.data() + at + 10;
  const char* end = t.data() + t.size();
  while (p < end && *p == ' ') ++p;
  int64_t iteration = 0, total = 0;
  const char* digits = p;
  while (p < end && *p >= '0' && *p <= '9' && p - digits < 18) iteration = iteration * 10 + (*p++ - '0');
  if (p == digits || p >= end || *p != '/') return false;
  ++p;
  while (p < end && *p == ' ') ++p;
  digits = p;
  while (p < end && *p >= '0' && *p <= '9' && p - digits < 18) total = total * 10 + (*p++ - '0');
  if (p == digits) return false;

  Progress& pr = s.report.progress;
  ++pr.iteration_lines;
  pr.last_iteration = iteration;
  pr.total_iterations = total;
  if (!pr.first_iteration) pr.first_iteration = line.ref();
  // Fields follow " | "; the first letters tell them apart, the fixed names give where the number starts.
  static constexpr std::string_view kElapsed = "elapsed time per iteration (ms):";
  static constexpr std::string_view kThroughput = "throughput per GPU (TFLOP/s/GPU):";
  static constexpr std::string_view kLoss = "lm loss:";
  static constexpr std::string_view kSkipped = "number of skipped iterations:";
  static constexpr std::string_view kNan = "number of nan iterations:";
  while ((p = static_cast<const char*>(std::memchr(p, '|', static_cast<size_t>(end - p)))) != nullptr) {
    ++p;
    while (p < end && *p == ' ') ++p;
    if (p >= end) break;
    switch (*p) {
      case 'e':
        if (starts_with(p, end, kElapsed)) {
          if (double* slot = pr.elapsed_ms.reserve()) *slot = quick_number(p + kElapsed.size(), end).value_or(NAN);
        }
        break;
      case 't':
        if (starts_with(p, end, kThroughput)) {
          if (double* slot = pr.tflops.reserve()) *slot = quick_number(p + kThroughput.size(), end).value_or(NAN);
        }
        break;
      case 'l':
        if (starts_with(p, end, kLoss)) {
          // Only the first and the last loss are reported: keep the text, parse it when the input ends.
          const char* v = p + kLoss.size();
          const size_t n = std::min<size_t>(static_cast<size_t>(end - v), sizeof s.last_loss_text - 1);
          std::memcpy(s.last_loss_text, v, n);
          s.last_loss_text[n] = '\0';
          if (!pr.first_lm_loss) pr.first_lm_loss = quick_number(v, end);
        }
        break;
      case 'n':
        if (starts_with(p, end, kSkipped)) {
          if (auto v = quick_number(p + kSkipped.size(), end)) pr.skipped_iterations += static_cast<int64_t>(*v);
        } else if (starts_with(p, end, kNan)) {
          if (auto v = quick_number(p + kNan.size(), end)) pr.nan_iterations += static_cast<int64_t>(*v);
        }
        break;
      default:
        break;
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

// "memory (MB) | allocated: 20480.5 | max allocated: 30720.1 | reserved: 32768.0 | max reserved: 32768.0"
void memory_line(ScanState& s, const LineView& line) {
  const std::string_view t = line.text;
  if (t.find("memory (MB)") == std::string_view::npos) return;
  const char* end = t.data() + t.size();
  auto after = [&](std::string_view key) -> std::optional<double> {
    const size_t at = t.find(key);
    return at == std::string_view::npos ? std::nullopt : quick_number(t.data() + at + key.size(), end);
  };
  Progress& p = s.report.progress;
  if (auto v = after("| max allocated:")) p.max_allocated_mb = std::max(p.max_allocated_mb.value_or(0), *v);
  if (auto v = after("| max reserved:")) p.max_reserved_mb = std::max(p.max_reserved_mb.value_or(0), *v);
}

void model_tflop_line(ScanState& s, const LineView& line) {
  static const RE2 re(R"(([0-9]+(?:\.[0-9]+)?)\s*MODEL_TFLOP/s/GPU)");
  double v = 0;
  if (RE2::PartialMatch(line.text, re, &v)) s.report.progress.model_tflops.add(v);
}

}  // namespace

void settle_progress(ScanState& s) {
  if (s.last_loss_text[0] == '\0') return;
  s.report.progress.last_lm_loss = quick_number(s.last_loss_text, s.last_loss_text + std::strlen(s.last_loss_text));
  s.last_loss_text[0] = '\0';
}

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
