// Megatron/Bridge progress: iteration lines (hand-parsed: they are most of a log), validation loss, memory, and
// Bridge's MODEL_TFLOP/s/GPU line.
#include <immintrin.h>
#include <re2/re2.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "../match/cpu_avx2.hpp"
#include "../match/triggers.hpp"
#include "scan_state.hpp"

namespace hcp::logscan {
namespace {

// A decimal such as "812.3" or "1.034567E+01" at p (after blanks), or NaN when there is none. The digits are
// gathered as an integer and scaled once by an exact power of ten (correctly rounded up to 15 significant digits
// and exponents within 22, which is every value a training log prints): a short dependency chain, unlike one
// floating-point multiply-add per digit. A plain double comes back in a register, where an optional<double> went
// through the stack with a byte store and a wider load (a store-forwarding stall that cost more than the parse).
double quick_number(const char* p, const char* end) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  while (p < end && *p == ' ') ++p;
  bool negative = false;
  if (p < end && (*p == '-' || *p == '+')) negative = *p++ == '-';
  uint64_t mantissa = 0;
  int scale = 0;  // the value is mantissa * 10^scale
  const char* first = p;
  // Digits past the 17th cannot change a double: they only scale (integer part) or are dropped (fraction).
  for (; p < end && static_cast<unsigned>(*p - '0') < 10; ++p) {
    if (mantissa < 100000000000000000ull) {
      mantissa = mantissa * 10 + static_cast<unsigned>(*p - '0');
    } else {
      ++scale;
    }
  }
  bool any = p != first;
  if (p < end && *p == '.') {
    first = ++p;
    for (; p < end && static_cast<unsigned>(*p - '0') < 10; ++p) {
      if (mantissa < 100000000000000000ull) {
        mantissa = mantissa * 10 + static_cast<unsigned>(*p - '0');
        --scale;
      }
    }
    any = any || p != first;
  }
  if (!any) return NAN;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool neg_exp = false;
    if (p < end && (*p == '-' || *p == '+')) neg_exp = *p++ == '-';
    int e = 0;
    while (p < end && *p >= '0' && *p <= '9') e = std::min(e * 10 + (*p++ - '0'), 1000);
    scale += neg_exp ? -e : e;
  }
  double v = static_cast<double>(mantissa);
  if (scale < 0) {
    v = scale >= -22 ? v / kPow10[-scale] : v / std::pow(10.0, -scale);
  } else if (scale > 0) {
    v = scale <= 22 ? v * kPow10[scale] : v * std::pow(10.0, scale);
  }
  return negative ? -v : v;
}

// total += v for a count v >= 0, saturating instead of overflowing.
void saturating_add(int64_t& total, int64_t v) { total = total > INT64_MAX - v ? INT64_MAX : total + v; }

// Adds a logged count without undefined behaviour: huge, negative or NaN values (a damaged line) are ignored and
// the sum saturates.
void add_count(int64_t& total, double v) {
  if (!(v >= 0) || v > 1e15) return;
  saturating_add(total, static_cast<int64_t>(v));
}

// The training loss of an iteration line: Megatron's "| lm loss:", Megatron-DeepSpeed's "| lm-loss:", NeMo 2's
// "| reduced_train_loss:".
std::optional<double> loss_of(std::string_view t) {
  for (std::string_view key : {"| lm loss:", "| lm-loss:", "| reduced_train_loss:"}) {
    const size_t at = t.find(key);
    if (at == std::string_view::npos) continue;
    const double v = quick_number(t.data() + at + key.size(), t.data() + t.size());
    if (!std::isnan(v)) return v;
  }
  return std::nullopt;
}

// The number after the last ':' before `end`, checking that the field is named `name` (read from the right).
double trailing_field(std::string_view t, size_t& end, std::string_view name) {
  const void* c = memrchr(t.data(), ':', end);
  if (!c) return NAN;
  const auto colon = static_cast<size_t>(static_cast<const char*>(c) - t.data());
  const void* b = memrchr(t.data(), '|', colon);
  end = b ? static_cast<size_t>(static_cast<const char*>(b) - t.data()) : 0;
  if (colon < name.size() || t.compare(colon - name.size(), name.size(), name) != 0) return NAN;
  return quick_number(t.data() + colon + 1, t.data() + t.size());
}

// Whether the literal `lit` starts at p, for p within [begin of the line, end]: a compare of a constant size, which
// the compiler inlines.
template <size_t N>
bool literal_at(const char* p, const char* end, const char (&lit)[N]) {
  return static_cast<size_t>(end - p) >= N - 1 && std::memcmp(p, lit, N - 1) == 0;
}

// "... | number of skipped iterations:   0 | number of nan iterations:   0 |": one count read backwards from
// `end` over " |", digits, blanks, ':' and the field's name, which moves `end` to the name. False when the text
// there has another shape (the caller then reads it the general way).
template <size_t N>
bool count_before(const char* begin, const char*& end, const char (&name)[N], int64_t& total) {
  const char* q = end;
  while (q > begin && (q[-1] == ' ' || q[-1] == '|')) --q;
  const char* const digits_end = q;
  while (q > begin && static_cast<unsigned>(q[-1] - '0') < 10) --q;
  const char* const digits = q;
  if (digits == digits_end || digits_end - digits > 15) return false;  // wider values: add_count's rules
  while (q > begin && q[-1] == ' ') --q;
  if (q == begin || q[-1] != ':') return false;
  --q;
  if (static_cast<size_t>(q - begin) < N - 1 || std::memcmp(q - (N - 1), name, N - 1) != 0) return false;
  int64_t v = 0;
  for (const char* d = digits; d < digits_end; ++d) v = v * 10 + (*d - '0');
  saturating_add(total, v);
  end = q - (N - 1);
  return true;
}

// A count as Megatron's "%3d" prints it below 1000: blanks, then digits to the end of the three bytes. Decided
// with bit operations: a loop over the blanks mispredicted on every line.
bool count3(const char* p, int64_t& v) {
  const unsigned d0 = static_cast<unsigned char>(p[0]) - '0', d1 = static_cast<unsigned char>(p[1]) - '0',
                 d2 = static_cast<unsigned char>(p[2]) - '0';
  const bool digit0 = d0 < 10, digit1 = d1 < 10, blank0 = p[0] == ' ', blank1 = p[1] == ' ';
  const bool ok = (d2 < 10) & ((digit1 & (digit0 | blank0)) | (blank1 & blank0));
  v = (digit0 ? d0 * 100 : 0) + (digit1 ? d1 * 10 : 0) + d2;
  return ok;
}

// The line's end exactly as Megatron prints it ("...: %3d | number of nan iterations: %3d |"): two compares of
// constant text and two three-byte counts, where the general reader below walks the text byte by byte (it was
// two thirds of the work on an iteration line). False, with nothing read, for any other shape.
bool megatron_tail(std::string_view t, int64_t& skipped, int64_t& nan) {
  static constexpr char kSkipped[] = "| number of skipped iterations: ";
  static constexpr char kNan[] = " | number of nan iterations: ";
  constexpr size_t kS = sizeof kSkipped - 1, kN = sizeof kNan - 1, kSize = kS + 3 + kN + 3 + 2;
  if (t.size() < kSize) return false;
  const char* p = t.data() + t.size() - kSize;
  return std::memcmp(p, kSkipped, kS) == 0 && std::memcmp(p + kS + 3, kNan, kN) == 0 &&
         std::memcmp(p + kSize - 2, " |", 2) == 0 && count3(p + kS, skipped) && count3(p + kS + 3 + kN, nan);
}

void add_counts(Progress& pr, int64_t skipped, int64_t nan) {
  saturating_add(pr.skipped_iterations, skipped);
  saturating_add(pr.nan_iterations, nan);
}

// The skipped and nan counts at the right end of an iteration line.
void trailing_counts(Progress& pr, std::string_view t) {
  if (int64_t skipped = 0, nan = 0; megatron_tail(t, skipped, nan)) {
    add_counts(pr, skipped, nan);
    return;
  }
  const char* right = t.data() + t.size();
  if (count_before(t.data(), right, "number of nan iterations", pr.nan_iterations)) {
    if (count_before(t.data(), right, "number of skipped iterations", pr.skipped_iterations)) return;
    // The general reader resumes at the last '|' before the nan field, as it would have itself.
    const void* bar = memrchr(t.data(), '|', static_cast<size_t>(right - t.data()));
    size_t end = bar ? static_cast<size_t>(static_cast<const char*>(bar) - t.data()) : 0;
    add_count(pr.skipped_iterations, trailing_field(t, end, "number of skipped iterations"));
    return;
  }
  size_t end = t.size();
  if (const double nan = trailing_field(t, end, "number of nan iterations"); !std::isnan(nan)) {
    add_count(pr.nan_iterations, nan);
    add_count(pr.skipped_iterations, trailing_field(t, end, "number of skipped iterations"));
  }
}

// What an iteration line adds once its counters are known to end at p, apart from its skipped and nan counts:
// the line kept as the last one, and the timing fields when the samples keep this line. [word, end) is the text
// from its "iteration " word; `stable` as in LineView.
void record_iteration(ScanState& s, const char* word, const char* p, const char* end, bool stable) {
  Progress& pr = s.report.progress;
  // Kept from its "iteration " word, so that the counters are at a known place whatever prefix the line had.
  s.keep_last_iteration_line(std::string_view(word, static_cast<size_t>(end - word)), stable);

  static constexpr char kElapsed[] = "elapsed time per iteration (ms):";
  static constexpr char kThroughput[] = "| throughput per GPU (TFLOP/s/GPU):";
  constexpr size_t kElapsedLen = sizeof kElapsed - 1, kThroughputLen = sizeof kThroughput - 1;
  // Both samples take every iteration line, so they keep the same ones; most lines of a long log are in neither
  // and their timing fields are not even looked for.
  double* elapsed = pr.elapsed_ms.reserve();
  double* tflops = pr.tflops.reserve_as(pr.elapsed_ms);
  double elapsed_value = NAN, tflops_value = NAN;
  if (elapsed || tflops || s.keep_series) {
    const std::string_view rest(p, static_cast<size_t>(end - p));
    const char* field = nullptr;  // just after kElapsed
    // Megatron prints " | consumed samples: %12d | elapsed time per iteration (ms): " after the counters; else
    // the first '(' after them opens "(ms)"; else the field is searched for.
    static constexpr char kConsumed[] = " | consumed samples: ";
    constexpr size_t kElapsedAt = sizeof kConsumed - 1 + 12 + 3;  // " | " before the elapsed field's name
    // The size is checked first: the counters' end may lie anywhere up to the line's end, and a pointer formed
    // past it would already be out of bounds.
    if (rest.size() >= kElapsedAt + kElapsedLen && literal_at(p, end, kConsumed) &&
        literal_at(p + kElapsedAt - 3, end, " | ") && literal_at(p + kElapsedAt, end, kElapsed)) {
      field = p + kElapsedAt + kElapsedLen;
    } else if (const auto* paren = static_cast<const char*>(std::memchr(p, '(', rest.size()));
               paren && paren - p >= 27 && literal_at(paren - 27, end, kElapsed)) {
      field = paren - 27 + kElapsedLen;
    } else if (const size_t e = rest.find(kElapsed); e != std::string_view::npos) {
      field = p + e + kElapsedLen;
    } else if (const size_t n = rest.find("train_step_timing in s:"); n != std::string_view::npos) {
      elapsed_value = quick_number(p + n + 23, end) * 1000;  // NeMo 2 prints seconds
    } else if (const size_t d = rest.find("elapsed time per iteration (s):"); d != std::string_view::npos) {
      elapsed_value = quick_number(p + d + 31, end) * 1000;  // Megatron-DeepSpeed (BLOOM) prints seconds
    }
    if (field) {
      elapsed_value = quick_number(field, end);
      // The throughput field follows the elapsed one: " 812.3 | throughput ...".
      const char* bar = field;
      while (bar < end && *bar != '|') ++bar;
      const char* th = nullptr;
      if (literal_at(bar, end, kThroughput)) {
        th = bar;
      } else if (const size_t f = rest.find(kThroughput, static_cast<size_t>(field - p));
                 f != std::string_view::npos) {
        th = p + f;
      }
      if (th) tflops_value = quick_number(th + kThroughputLen, end);
    }
    // NeMo 2: "| TFLOPS_per_GPU: 85.8"; Megatron-DeepSpeed: "| TFLOPs: 149.10 |"; Primus, which also prints its
    // elapsed time as "instant/average": "| compute per GPU (TFLOP/s/GPU): 633.7 (avg 630.1) |".
    static constexpr char kPrimus[] = "| compute per GPU (TFLOP/s/GPU):";
    if (std::isnan(tflops_value)) {
      if (const size_t f = rest.find("TFLOPS_per_GPU:"); f != std::string_view::npos) {
        tflops_value = quick_number(p + f + 15, end);
      } else if (const size_t g = rest.find("| TFLOPs:"); g != std::string_view::npos) {
        tflops_value = quick_number(p + g + 9, end);
      } else if (const size_t c = rest.find(kPrimus); c != std::string_view::npos) {
        tflops_value = quick_number(p + c + sizeof kPrimus - 1, end);
      }
    }
    if (elapsed) *elapsed = elapsed_value;
    if (tflops) *tflops = tflops_value;
  }
  if (s.keep_series) {
    SeriesPoint point;
    const IterationCounters c = iteration_counters(word + 10, end);
    if (c.after) point.iteration = c.iteration;
    point.loss = loss_of(std::string_view(word, static_cast<size_t>(end - word))).value_or(NAN);
    point.elapsed_ms = elapsed_value, point.tflops = tflops_value;
    point.run = static_cast<int>(s.report.runs.size());
    s.add_point(point);
  }
}

// "... iteration      10/     100 | consumed samples: ... | elapsed time per iteration (ms): 812.3 | ..."
// Most of a log is these lines, so only what is needed is read: the shape of the counters, the two timing fields
// when the sample keeps them, the skipped and nan counts from the right end; the counters and the loss of the last
// line are read when the input ends. Each field is looked for where Megatron puts it and searched for only when it
// is not there.
bool iteration_line(ScanState& s, const LineView& line) {
  const std::string_view t = line.text;
  const char* const end = t.data() + t.size();
  // The counters follow the first "iteration " word; the scanner's key on the line is usually that word.
  const char* word = nullptr;
  const char* p = nullptr;  // after the counters
  if (line.key && literal_at(line.key, end, " iteration ")) {
    word = line.key + 1;
    // The scanner's check, when the counters lie within text, is the one this would repeat.
    p = line.counters_end && line.counters_end <= end ? line.counters_end : skip_iteration_counters(word + 10, end);
  }
  if (!p) {
    const size_t at = t.find("iteration ");
    if (at == std::string_view::npos) return false;
    word = t.data() + at;
    p = skip_iteration_counters(word + 10, end);
    if (!p) return false;
  }
  // NeMo 2 counts validation batches the same way ("Validation: iteration 2/2"): never training.
  const std::string_view before(t.data(), static_cast<size_t>(word - t.data()));
  if (before.find("alidation") != std::string_view::npos) return true;

  Progress& pr = s.report.progress;
  ++pr.iteration_lines;
  pr.format = before.find("Training epoch") != std::string_view::npos ? ProgressFormat::nemo2 : ProgressFormat::megatron;
  if (!pr.first_iteration) {
    pr.first_iteration = line.ref();
    pr.first_lm_loss = loss_of(t);
  }
  record_iteration(s, word, p, end, line.stable);
  trailing_counts(pr, t);
  return true;
}

// "validation loss at iteration 65 | lm loss value: 8.900000E+00 | ...": read by hand (a regex with captures
// cost a microsecond a line, a tenth of the whole scan on a log with frequent evaluations). Blanks are RE2's \s
// ([\t\n\f\r ]).
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }

void validation_line(ScanState& s, const LineView& line) {
  static constexpr char kHead[] = "validation loss at iteration";
  static constexpr char kValue[] = "lm loss value:";
  const std::string_view t = line.text;
  const size_t at = t.find(kHead);
  if (at == std::string_view::npos) return;
  const char* p = t.data() + at + sizeof kHead - 1;
  const char* const end = t.data() + t.size();
  const char* const spaces = p;
  while (p < end && is_space(*p)) ++p;
  if (p == spaces) return;
  const char* const digits = p;
  while (p < end && static_cast<unsigned>(*p - '0') < 10) ++p;
  const auto iteration = to_int(std::string_view(digits, static_cast<size_t>(p - digits)));
  if (!iteration) return;
  while (p < end && is_space(*p)) ++p;
  if (p == end || *p++ != '|') return;
  while (p < end && is_space(*p)) ++p;
  if (!literal_at(p, end, kValue)) return;
  p += sizeof kValue - 1;
  while (p < end && is_space(*p)) ++p;
  const char* const number = p;
  while (p < end && (static_cast<unsigned>(*p - '0') < 10 || *p == '.' || *p == 'e' || *p == 'E' || *p == '-' ||
                     *p == '+')) {
    ++p;
  }
  std::string_view token(number, static_cast<size_t>(p - number));
  // from_chars takes no '+' sign, which strtod (and so the regex this replaced) accepted.
  if (token.size() > 1 && token[0] == '+' && token[1] != '-' && token[1] != '+') token.remove_prefix(1);
  double loss = 0;
  // The whole token must be the number, as a regex capture converted by RE2 would have to be.
  const auto r = std::from_chars(token.data(), token.data() + token.size(), loss);
  if (token.empty() || r.ec != std::errc() || r.ptr != token.data() + token.size()) return;
  auto& v = s.report.progress.validation_losses;
  v.emplace_back(*iteration, loss);
  if (v.size() > 32) v.erase(v.begin());
}

// "memory (MB) | allocated: 20480.5 | max allocated: 30720.1 | reserved: 32768.0 | max reserved: 32768.0"
void memory_line(ScanState& s, const LineView& line) {
  const std::string_view t = line.text;
  if (t.find("memory (MB)") == std::string_view::npos) return;
  const char* end = t.data() + t.size();
  auto after = [&](std::string_view key) {
    const size_t at = t.find(key);
    return at == std::string_view::npos ? NAN : quick_number(t.data() + at + key.size(), end);
  };
  Progress& p = s.report.progress;
  if (const double v = after("| max allocated:"); !std::isnan(v)) {
    p.max_allocated_mb = std::max(p.max_allocated_mb.value_or(0), v);
  }
  if (const double v = after("| max reserved:"); !std::isnan(v)) {
    p.max_reserved_mb = std::max(p.max_reserved_mb.value_or(0), v);
  }
}

void model_tflop_line(ScanState& s, const LineView& line) {
  static const RE2 re(R"(([0-9]+(?:\.[0-9]+)?)\s*MODEL_TFLOP/s/GPU)");
  double v = 0;
  if (RE2::PartialMatch(line.text, re, &v)) s.report.progress.model_tflops.add(v);
}

}  // namespace

bool settled_iteration_line(ScanState& s, const char* word, const char* counters_end, const char* end) {
  Progress& pr = s.report.progress;
  int64_t skipped = 0, nan = 0;
  if (!pr.first_iteration || !literal_at(word - 1, end, " iteration ") ||
      !megatron_tail(std::string_view(word, static_cast<size_t>(end - word)), skipped, nan)) {
    return false;
  }
  ++pr.iteration_lines;
  pr.format = ProgressFormat::megatron;
  record_iteration(s, word, counters_end, end, true);
  add_counts(pr, skipped, nan);
  return true;
}

namespace {

// Up to 18 digits after blanks; null when there is no digit.
const char* read_counter(const char* p, const char* end, int64_t& v) {
  while (p < end && *p == ' ') ++p;
  const char* const first = p;
  const char* const stop = end - p > 18 ? p + 18 : end;
  int64_t x = 0;
  for (; p < stop && static_cast<unsigned>(*p - '0') < 10; ++p) x = x * 10 + (*p - '0');
  v = x;
  return p != first ? p : nullptr;
}

}  // namespace

IterationCounters iteration_counters(const char* p, const char* end) {
  IterationCounters c;
  p = read_counter(p, end, c.iteration);
  if (!p || p >= end || *p != '/') return c;
  c.after = read_counter(p + 1, end, c.total);
  return c;
}

// Blanks, digits, '/', blanks, digits: classified 32 bytes at once, so the check costs no loop exits to
// mispredict; text too short for a vector load, or counters wider than it, take the scalar parse.
__attribute__((target("avx2"))) static const char* skip_counters_avx2(const char* p, const char* end) {
  if (end - p < 32) return iteration_counters(p, end).after;
  const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const auto blank = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(c, _mm256_set1_epi8(' '))));
  const auto slash = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(c, _mm256_set1_epi8('/'))));
  const auto digit = static_cast<uint32_t>(_mm256_movemask_epi8(
      _mm256_and_si256(_mm256_cmpgt_epi8(c, _mm256_set1_epi8('0' - 1)), _mm256_cmpgt_epi8(_mm256_set1_epi8('9' + 1), c))));
  // The first set bit of x at or after k (32 when none; k is at most 33).
  auto first = [](uint32_t x, unsigned k) {
    return static_cast<unsigned>(__builtin_ctzll((((uint64_t{x} | uint64_t{1} << 32) >> k) << k) | uint64_t{1} << 40));
  };
  const unsigned a = first(~blank, 0);
  const unsigned b = first(~digit, a);
  const unsigned d = first(~blank, b + 1);
  const unsigned e = first(~digit, d);
  const bool ok = a < 32 && ((digit >> a) & 1) && b < 32 && ((slash >> b) & 1) && d < 32 && ((digit >> d) & 1) &&
                  e < 32 && e - d <= 18 && b - a <= 18;
  if (!ok) return iteration_counters(p, end).after;  // the rare shapes (wide counters, damage) in full
  return p + e;
}

const char* skip_iteration_counters(const char* p, const char* end) {
  return cpu_has_avx2() ? skip_counters_avx2(p, end) : iteration_counters(p, end).after;
}

void ScanState::add_point(const SeriesPoint& point) {
  std::vector<SeriesPoint>& v = report.series;
  if (series_seen++ % report.series_stride) return;
  if (v.size() == ScanReport::kMaxSeries) {  // full: keep every other point and take every other line from now on
    size_t kept = 0;
    for (size_t i = 0; i < v.size(); i += 2) v[kept++] = v[i];
    v.resize(kept);
    report.series_stride *= 2;
    if ((series_seen - 1) % report.series_stride) return;
  }
  v.push_back(point);
}

void settle_progress(ScanState& s) {
  s.end_region();
  Progress& bar = s.report.progress;
  // A bar that had finished before the first training loss and never moved after it (Hugging Face's data or
  // weight preparation, "100%| 7/7 [00:00<00:00, 1809.09it/s]", then only loss dicts) counted no training step.
  if (bar.format == ProgressFormat::progress_bar && s.loss_dicts > 0 && s.loss_dicts_at_bar == 0 && s.bar_finished) {
    bar.format = ProgressFormat::none;
    bar.iteration_lines = 0;
    bar.last_iteration.reset();
    bar.total_iterations.reset();
    bar.first_iteration.reset();
    bar.step_ms = {};
  }
  const std::string_view t = s.last_iteration;
  if (t.empty()) return;
  Progress& pr = s.report.progress;
  // The Megatron/NeMo 2 lines' values, unless another format reported progress after them.
  if (pr.format == ProgressFormat::megatron || pr.format == ProgressFormat::nemo2) {
    // t starts with "iteration " and its counters were checked when the line was read.
    const IterationCounters c =
        t.size() > 10 ? iteration_counters(t.data() + 10, t.data() + t.size()) : IterationCounters{};
    if (c.after) {
      pr.last_iteration = c.iteration;
      pr.total_iterations = c.total;
    }
    // The loss of the last line that has one: a log cut in its last line still has the one before.
    if (auto loss = loss_of(t)) {
      pr.last_lm_loss = loss;
    } else if (auto before = loss_of(s.previous_iteration)) {
      pr.last_lm_loss = before;
    }
  }
  s.last_iteration = {};
  s.previous_iteration = {};
}

void extract_progress(ScanState& s, const LineView& line, uint32_t triggers) {
  if (triggers & kIteration) {
    if (!iteration_line(s, line) && (line.text.find("validation loss at iteration") != std::string_view::npos ||
                                     line.text.find("valid loss at iteration") != std::string_view::npos)) {
      validation_line(s, line);
    }
  }
  if (triggers & kMemory) memory_line(s, line);
  if (triggers & kModelTflop) model_tflop_line(s, line);
  if (triggers & kOtherProgress) extract_other_progress(s, line);
}

}  // namespace hcp::logscan
