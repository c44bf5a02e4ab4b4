#include "hcp/logscan/report.hpp"

#include <algorithm>
#include <cmath>

namespace hcp::logscan {

std::string SourceRef::text() const {
  return line ? file + ":" + std::to_string(line) : file;
}

bool Intent::hierarchical() const {
  if (cp_comm_type.value) {
    for (const std::string& t : *cp_comm_type.value) {
      if (t == "a2a+p2p") return true;
    }
  }
  return hcp_sizes.value && hcp_sizes.value->has_value() && !(*hcp_sizes.value)->empty();
}

bool Intent::a2a_p2p_without_sizes() const {
  if (!cp_comm_type.value) return false;
  const auto& t = *cp_comm_type.value;
  const bool a2a_p2p = std::find(t.begin(), t.end(), "a2a+p2p") != t.end();
  return a2a_p2p && hcp_sizes.value && !hcp_sizes.value->has_value();
}

bool Evidence::hierarchical_groups() const {
  for (const auto& [key, g] : groups) {
    if (g.source == "mention") continue;
    if (g.group.rfind("HIERARCHICAL_CONTEXT_PARALLEL_GROUP", 0) == 0) return true;
  }
  return false;
}

bool Evidence::flat_cp_groups() const {
  for (const auto& [key, g] : groups) {
    if (g.source != "mention" && g.group == "CONTEXT_PARALLEL_GROUP") return true;
  }
  return false;
}

uint64_t Reservoir::random() {
  rng_ ^= rng_ << 13;  // xorshift64
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  return rng_;
}

double Reservoir::uniform() { return (static_cast<double>(random() >> 11) + 0.5) * 0x1p-53; }

void Reservoir::draw_next() {
  constexpr double k = kCapacity;
  // w_ *= u^(1/k), as exp(x) with x = log(u) / k: |x| < 6e-4 for every u the generator gives, where three terms of
  // the series are exact to 1e-14 (a library exp per kept line was a fifth of the time spent keeping it).
  const double x = std::log(uniform()) / k;
  w_ *= 1 + x * (1 + x / 2 * (1 + x / 3));
  // Lines passed over before the next kept one: geometric with success probability w_ (capped: a sample of a
  // log with 10^18 lines is not needed, and the cast must not overflow).
  const double skip = std::floor(std::log(uniform()) / std::log1p(-w_));
  next_ = count_ + 1 + (skip < 1e18 ? static_cast<uint64_t>(skip) : uint64_t{1000000000000000000});
}

double* Reservoir::keep() {
  kept_at_ = count_;
  if (sample_.size() < kCapacity) {
    kept_slot_ = sample_.size();
    sample_.push_back(0);
    next_ = count_ + 1;
    if (sample_.size() == kCapacity) draw_next();
    return &sample_.back();
  }
  // A uniform slot by multiply-high (Lemire), not a division.
  __extension__ using Wide = unsigned __int128;
  kept_slot_ = static_cast<size_t>((static_cast<Wide>(random()) * kCapacity) >> 64);
  draw_next();
  return &sample_[kept_slot_];
}

double* Reservoir::slot_like(const Reservoir& leader) {
  kept_at_ = count_;
  kept_slot_ = leader.kept_slot_;
  if (sample_.size() <= kept_slot_) sample_.resize(kept_slot_ + 1, NAN);
  return &sample_[kept_slot_];
}

std::optional<double> Progress::reported_tflops() const {
  if (auto v = tflops.median()) return v;
  if (auto v = model_tflops.median()) return v;
  return step_tflops.median();
}

std::optional<double> Progress::iteration_ms() const {
  if (auto v = elapsed_ms.median()) return v;
  return step_ms.median();
}

std::string_view progress_format_name(ProgressFormat f) {
  switch (f) {
    case ProgressFormat::none: return "none";
    case ProgressFormat::megatron: return "megatron";
    case ProgressFormat::nemo2: return "nemo2";
    case ProgressFormat::progress_bar: return "progress-bar";
    case ProgressFormat::torchtitan: return "torchtitan";
    case ProgressFormat::bridge_step_time: return "bridge-step-time";
    case ProgressFormat::nanotron: return "nanotron";
    case ProgressFormat::megatron_deepspeed_kv: return "megatron-deepspeed-kv";
    case ProgressFormat::automodel: return "automodel";
    case ProgressFormat::nanochat: return "nanochat";
    case ProgressFormat::llmc: return "llm.c";
    case ProgressFormat::verl: return "verl";
    case ProgressFormat::slime: return "slime";
    case ProgressFormat::nemo_rl: return "nemo-rl";
  }
  return "none";
}

std::optional<double> Reservoir::median() const {
  std::vector<double> v;
  v.reserve(sample_.size());
  for (double x : sample_) {
    if (!std::isnan(x)) v.push_back(x);
  }
  if (v.empty()) return std::nullopt;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (v.size() % 2) return v[mid];
  const double upper = v[mid];
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::cp_silently_off: return "cp-silently-off";
    case Verdict::hcp_active: return "hcp-active";
    case Verdict::hcp_not_active: return "hcp-not-active";
    case Verdict::dynamic_cp: return "dynamic-cp";
    case Verdict::flat_cp: return "flat-cp";
    case Verdict::no_cp: return "no-cp";
    case Verdict::unknown: return "unknown";
  }
  return "unknown";
}

// A compressed input of which nothing could be decoded (a window too large, a stream cut in its header) was not
// read at all, as one that could not be opened; damage after some text is reported but not fatal.
bool ScanReport::unreadable_inputs() const {
  return std::any_of(files.begin(), files.end(),
                     [](const FileReport& f) { return f.error.has_value() || (f.damage && f.text_bytes == 0); });
}

}  // namespace hcp::logscan
