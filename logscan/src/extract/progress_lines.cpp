// Megatron/Bridge progress: iteration lines (hand-parsed: they are most of a log), validation loss, memory, and
// Bridge's MODEL_TFLOP/s/GPU line.
#include <re2/re2.h>

#include <cmath>
#include <cstdint>
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

// Adds a logged count without undefined behaviour: huge, negative or NaN values (a damaged line) are ignored and
// the sum saturates.
void add_count(int64_t& total, std::optional<double> v) {
  if (!v || !(*v >= 0) || *v > 1e15) return;
  const auto n = static_cast<int64_t>(*v);
  total = total > INT64_MAX - n ? INT64_MAX : total + n;
}

std::optional<double> loss_of(std::string_view t) {
  const size_t at = t.find("| lm loss:");
  if (at == std::string_view::npos) return std::nullopt;
  return quick_number(t.data() + at + 10, t.data() + t.size());
}

// The number after the last ':' before `end`, checking that the field is named `name` (read from the right).
std::optional<double> trailing_field(std::string_view t, size_t& end, std::string_view name) {
  const void* c = memrchr(t.data(), ':', end);
  if (!c) return std::nullopt;
  const auto colon = static_cast<size_t>(static_cast<const char*>(c) - t.data());
  const void* b = memrchr(t.data(), '|', colon);
  end = b ? static_cast<size_t>(static_cast<const char*>(b) - t.data()) : 0;
  if (colon < name.size() || t.compare(colon - name.size(), name.size(), name) != 0) return std::nullopt;
  return quick_number(t.data() + colon + 1, t.data() + t.size());
}

// "... iteration      10/     100 | consumed samples: ... | elapsed time per iteration (ms): 812.3 | ..."
// Most of a log is these lines, so only what is needed is read: the counters, the two timing fields when the
// sample keeps them, the skipped and nan counts from the right end; the loss of the last line is read at the end.
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
  if (!pr.first_iteration) {
    pr.first_iteration = line.ref();
    pr.first_lm_loss = loss_of(t);
  }
  s.last_iteration_line.assign(t.data(), std::min<size_t>(t.size(), 1024));

  static constexpr std::string_view kElapsed = "elapsed time per iteration (ms):";
  static constexpr std::string_view kThroughput = "| throughput per GPU (TFLOP/s/GPU):";
  double* elapsed = pr.elapsed_ms.reserve();
  double* tflops = nullptr;
  // The first '(' after the counters opens "(ms)": memchr gets there faster than a substring search.
  const void* paren = std::memchr(p, '(', static_cast<size_t>(end - p));
  const size_t e = paren && static_cast<const char*>(paren) - t.data() >= 27 &&
                           t.compare(static_cast<size_t>(static_cast<const char*>(paren) - t.data()) - 27, kElapsed.size(),
                                     kElapsed) == 0
                       ? static_cast<size_t>(static_cast<const char*>(paren) - t.data()) - 27
                       : t.find(kElapsed, static_cast<size_t>(p - t.data()));
  if (e != std::string_view::npos) {
    const char* v = t.data() + e + kElapsed.size();
    if (elapsed) *elapsed = quick_number(v, end).value_or(NAN);
    const size_t th = t.find(kThroughput, e + kElapsed.size());
    if (th != std::string_view::npos && (tflops = pr.tflops.reserve()) != nullptr) {
      *tflops = quick_number(t.data() + th + kThroughput.size(), end).value_or(NAN);
    }
  } else if (elapsed) {
    *elapsed = NAN;
  }
  size_t right = t.size();
  if (auto nan = trailing_field(t, right, "number of nan iterations")) {
    add_count(pr.nan_iterations, nan);
    add_count(pr.skipped_iterations, trailing_field(t, right, "number of skipped iterations"));
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
  if (s.last_iteration_line.empty()) return;
  if (auto loss = loss_of(s.last_iteration_line)) s.report.progress.last_lm_loss = loss;
  s.last_iteration_line.clear();
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
