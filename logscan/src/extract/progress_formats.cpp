// Progress lines of the formats other than Megatron's iteration line (which progress_lines.cpp reads, NeMo 2's
// "Training epoch E, iteration i/N | ..." included): tqdm progress bars (NeMo 1 / Lightning, Hugging Face),
// torchtitan's "step: N  loss: ..." and its "total steps N", Hugging Face's loss dicts, and Megatron-Bridge's
// "Step Time : 12.78s GPU utilization: 528.1 TFLOP/s/GPU". These are a small share of a log's lines, so they are
// read with regular expressions.
#include <re2/re2.h>

#include <cmath>

#include "scan_state.hpp"

namespace hcp::logscan {
namespace {

bool has(std::string_view t, std::string_view what) { return t.find(what) != std::string_view::npos; }

// "Epoch 0:   1%|          | 795/77225 [9:07:58<878:01:48, 41.36s/it, loss=3.1, reduced_train_loss=3.090, ...]"
// "  2%|▏         | 10/620 [00:52<50:17,  4.95s/it]"
void progress_bar(ScanState& s, const LineView& line) {
  static const RE2 bar(R"(^(.*?)\|\s*(\d{1,15})/(\d{1,15}) \[([^\]]*)\])");
  std::string label, inside;
  int64_t n = 0, total = 0;
  if (!RE2::PartialMatch(line.text, bar, &label, &n, &total, &inside)) return;
  // Validation, test and sanity-check bars count other batches.
  for (std::string_view other : {"alidat", "Test", "test", "Predict", "Sanity", "Evaluat", "eval"}) {
    if (has(label, other)) return;
  }
  Progress& pr = s.report.progress;
  // An unlabelled evaluation bar (Hugging Face prints one in the middle of training) has fewer batches than the
  // training bar.
  if (total < s.bar_total) return;
  s.bar_total = total;
  ++pr.iteration_lines;
  pr.format = ProgressFormat::progress_bar;
  pr.last_iteration = n;
  pr.total_iterations = total;
  if (!pr.first_iteration) pr.first_iteration = line.ref();
  static const RE2 reduced(R"(reduced_train_loss=([-+0-9.eE]+|nan))");
  static const RE2 loss(R"((?:^|[ ,])loss=([-+0-9.eE]+|nan))");
  static const RE2 timing(R"(train_step_timing in s=([0-9.eE+-]+))");
  static const RE2 rate(R"(([0-9.]+)(s/it|it/s))");
  double v = 0;
  std::string unit;
  if (RE2::PartialMatch(inside, reduced, &v) || RE2::PartialMatch(inside, loss, &v)) pr.last_lm_loss = v;
  if (RE2::PartialMatch(inside, timing, &v)) {
    pr.step_ms.add(v * 1000);
  } else if (RE2::PartialMatch(inside, rate, &v, &unit) && v > 0) {
    pr.step_ms.add(unit == "s/it" ? v * 1000 : 1000 / v);
  }
}

// "[titan] ... - root - INFO - step:  4  loss:  7.62585  grad_norm: 26.6250  memory: ...  tflops: 314.71  mfu: ..."
void torchtitan_step(ScanState& s, const LineView& line) {
  static const RE2 step(R"((^|[^A-Za-z_])step:\s*(\d{1,15})\s+loss:\s*([-+0-9.eE]+))");
  std::string lead;
  int64_t n = 0;
  double loss = 0;
  if (!RE2::PartialMatch(line.text, step, &lead, &n, &loss)) return;
  const size_t at = line.text.find("step:");
  if (has(line.text.substr(0, at), "alidat")) return;  // "validate step:" lines
  Progress& pr = s.report.progress;
  ++pr.iteration_lines;
  pr.format = ProgressFormat::torchtitan;
  pr.last_iteration = n;
  pr.last_lm_loss = loss;
  if (!pr.first_iteration) {
    pr.first_iteration = line.ref();
    pr.first_lm_loss = loss;
  }
  static const RE2 tflops(R"(tflops:\s*([0-9.]+))");
  double v = 0;
  if (RE2::PartialMatch(line.text, tflops, &v)) pr.step_tflops.add(v);
}

void other_line(ScanState& s, const LineView& line) {
  const std::string_view t = line.text;
  Progress& pr = s.report.progress;
  double v = 0;
  // torchtitan: "Training starts at step 1, ..., total steps 10 (warmup 2)"
  static const RE2 total(R"(total steps (\d{1,15}))");
  if (int64_t n = 0; has(t, "total steps") && RE2::PartialMatch(t, total, &n)) pr.total_iterations = n;
  // Hugging Face Trainer: "{'loss': 0.8533, 'grad_norm': 4.87, 'learning_rate': 1.45e-05, 'epoch': 0.16}"
  static const RE2 dict(R"(\{'loss': ([-+0-9.eE]+))");
  if (has(t, "{'loss'") && RE2::PartialMatch(t, dict, &v)) pr.last_lm_loss = v;
  // Megatron-DeepSpeed (2021): "Effective Tera Flops per GPU: 41.31 and total parameters 52.005 B" after each
  // iteration line.
  static const RE2 tera(R"(Effective Tera Flops per GPU:\s*([0-9.]+))");
  if (has(t, "Tera Flops") && RE2::PartialMatch(t, tera, &v)) pr.step_tflops.add(v);
  // Megatron-Bridge: "Step Time : 12.78s GPU utilization: 528.1 TFLOP/s/GPU" (MODEL_TFLOP/s/GPU lines are read
  // as such by progress_lines.cpp).
  static const RE2 step_time(R"(Step Time\s*:\s*([0-9.]+)s(?: GPU utilization:\s*([0-9.]+)\s*(MODEL_)?TFLOP/s/GPU)?)");
  std::string tflops, model;
  if (has(t, "Step Time") && RE2::PartialMatch(t, step_time, &v, &tflops, &model)) {
    pr.step_ms.add(v * 1000);
    if (!tflops.empty() && model.empty()) {
      if (const auto x = to_double(tflops)) pr.step_tflops.add(*x);
    }
    if (pr.format == ProgressFormat::none) pr.format = ProgressFormat::bridge_step_time;
  }
}

}  // namespace

void extract_other_progress(ScanState& s, const LineView& line) {
  const std::string_view t = line.text;
  if (has(t, "s/it") || has(t, "it/s")) progress_bar(s, line);
  if (has(t, "step: ") || has(t, "step:")) torchtitan_step(s, line);
  other_line(s, line);
}

}  // namespace hcp::logscan
