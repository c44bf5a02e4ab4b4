// Progress lines of the formats other than Megatron's iteration line (which progress_lines.cpp reads, NeMo 2's
// "Training epoch E, iteration i/N | ..." included): tqdm progress bars (NeMo 1 / Lightning, Hugging Face),
// torchtitan's "step: N  loss: ..." and its "total steps N", Hugging Face's loss dicts, nanotron, Megatron-DeepSpeed
// forks' key=value lines, NeMo Automodel, nanochat, llm.c, the RL frameworks verl, slime and NeMo-RL, and
// Megatron-Bridge's
// "Step Time : 12.78s GPU utilization: 528.1 TFLOP/s/GPU". These are a small share of a log's lines, so they are
// read with regular expressions.
#include <re2/re2.h>

#include <cctype>
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
  // Validation, test and sanity-check bars count other batches; loading, saving, downloading, tokenising and
  // generating bars (vLLM's "Processed prompts" in an RL rollout) are not training steps at all. A weight-loading
  // bar of 568 shards before "Training Progress 15/210" had been taken as the progress (and, as the longer bar,
  // had hidden the training bar).
  for (std::string_view other : {"alidat", "Test", "test", "Predict", "Sanity", "Evaluat", "eval"}) {
    if (has(label, other)) return;
  }
  std::string lower(label);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view other : {"load", "saving", "download", "upload", "shard", "processed prompts", "processing",
                                 "map", "tokeniz", "generat", "adding requests", "captur", "fetch", "filter",
                                 "convert", "writing", "reading", "creating", "building", "preprocess", "packing",
                                 "rollout", "sampling", "merging", "compil", "warming", "resolv", "extract"}) {
    if (has(lower, other)) return;
  }
  Progress& pr = s.report.progress;
  // An unlabelled evaluation bar (Hugging Face prints one in the middle of training) has fewer batches than the
  // training bar.
  if (total < s.bar_total) return;
  s.bar_total = total;
  s.loss_dicts_at_bar = s.loss_dicts;
  s.bar_finished = n == total;
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
  // llama-recipes puts the loss in the label: "Training Epoch: 1/3, step 16/36 completed (loss: 0.172):  44%|".
  static const RE2 label_loss(R"(\(loss: ([-+0-9.eE]+|nan)\))");
  if (RE2::PartialMatch(inside, reduced, &v) || RE2::PartialMatch(inside, loss, &v) ||
      RE2::PartialMatch(label, label_loss, &v)) {
    pr.last_lm_loss = v;
  }
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

// A progress line of N/M steps with its loss, step time (ms) and TFLOP/s per GPU, when the line has them.
void count_step(ScanState& s, const LineView& line, ProgressFormat format, int64_t n, std::optional<int64_t> total,
                std::optional<double> loss, std::optional<double> ms, std::optional<double> tflops) {
  Progress& pr = s.report.progress;
  ++pr.iteration_lines;
  pr.format = format;
  pr.last_iteration = n;
  pr.total_iterations = total;
  if (loss) pr.last_lm_loss = loss;
  if (!pr.first_iteration) {
    pr.first_iteration = line.ref();
    pr.first_lm_loss = loss;
  }
  if (ms) pr.step_ms.add(*ms);
  if (tflops) pr.step_tflops.add(*tflops);
}

// The number a field's one group captures, if the line has the field.
std::optional<double> number(std::string_view t, const RE2& field) {
  std::string digits;
  return RE2::PartialMatch(t, field, &digits) ? to_double(digits) : std::nullopt;
}

// nanotron's human format: three significant digits and a K, M, G, T suffix ("11.5K" is 11500).
std::optional<double> human_number(std::string_view t, const RE2& field) {
  std::string digits, suffix;
  if (!RE2::PartialMatch(t, field, &digits, &suffix)) return std::nullopt;
  auto v = to_double(digits);
  if (!v) return std::nullopt;
  static constexpr std::string_view kSuffixes = "KMGTP";
  if (!suffix.empty()) *v *= std::pow(1000.0, static_cast<double>(kSuffixes.find(suffix[0]) + 1));
  return v;
}

// nanotron: "iteration: 991 / 1000 | consumed_tokens: 634K | elapsed_time_per_iteration_ms: 45 | ... | lm_loss: 10.6
// | lr: 1e-05 | model_tflops_per_gpu: 0.00869 | hardware_tflops_per_gpu: 0.00869 | ..." (older releases print
// "time_per_iteration_ms"); the model FLOPs are the throughput, as Megatron's.
void nanotron_iteration(ScanState& s, const LineView& line) {
  static const RE2 head(R"((?:^|[\s:\]])iteration: (\d{1,15}) / (\d{1,15}) \|)");
  int64_t n = 0, total = 0;
  if (!RE2::PartialMatch(line.text, head, &n, &total)) return;
  static const RE2 ms(R"(time_per_iteration_ms: ([0-9.]+(?:e[-+]?\d+)?)([KMGTP]?))");
  static const RE2 loss(R"(\| lm_loss: ([-+0-9.]+(?:e[-+]?\d+)?|nan)([KMGTP]?))");
  static const RE2 tflops(R"(model_tflops_per_gpu: ([0-9.]+(?:e[-+]?\d+)?)([KMGTP]?))");
  count_step(s, line, ProgressFormat::nanotron, n, total, human_number(line.text, loss), human_number(line.text, ms),
             human_number(line.text, tflops));
}

// Megatron-DeepSpeed forks (ALCF's): " iteration=  136004/  136100 | consumed_samples= ... |
// elapsed_time_per_iteration_ms=3415.3 | ... | lm loss=12.316531 | ... | TFLOPs=53.66 |", with "[LM]TFLOPs=" and
// "[DS]TFLOPs=" (or "[LM]-TFLOPs=") in later versions: [LM] is Megatron's model-FLOPs formula, the throughput;
// [DS] DeepSpeed's flops profiler. A skipped iteration prints no loss.
void kv_iteration(ScanState& s, const LineView& line) {
  static const RE2 head(R"((?:^|[\s\]:-])iteration=\s*(\d{1,15})/\s*(\d{1,15}) \|)");
  int64_t n = 0, total = 0;
  if (!RE2::PartialMatch(line.text, head, &n, &total)) return;
  static const RE2 ms(R"(elapsed_time_per_iteration_ms=([0-9.]+))");
  static const RE2 loss(R"(\| lm[ _-]loss=([-+0-9.eE]+|nan) )");
  static const RE2 lm_tflops(R"(\[LM\]-?TFLOPs=([0-9.]+))");
  static const RE2 tflops(R"(\| TFLOPs=([0-9.]+))");
  std::optional<double> flops = number(line.text, lm_tflops);
  if (!flops) flops = number(line.text, tflops);
  count_step(s, line, ProgressFormat::megatron_deepspeed_kv, n, total, number(line.text, loss), number(line.text, ms),
             flops);
}

// NeMo Automodel: "step 10 | epoch 0 | loss 1.2296 | grad_norm 1.6987 | lr 8.19e-06 | mem 36.24 GiB | tps 830.26/gpu"
// ("[val] step 20 | epoch 0 | loss 0.2469" is validation); no step time or FLOPs, and the total only in its
// configuration ("max_steps: 18500").
void automodel_step(ScanState& s, const LineView& line) {
  static const RE2 step(R"((^|[\s:\]])step\s+(\d{1,15}) \| epoch \d{1,15} \| loss ([-+0-9.eE]+|nan))");
  std::string lead;
  int64_t n = 0;
  std::string loss;
  if (!RE2::PartialMatch(line.text, step, &lead, &n, &loss)) return;
  if (has(line.text.substr(0, line.text.find("step")), "val")) return;
  const auto total = s.max_steps > 0 ? std::optional<int64_t>(s.max_steps) : std::nullopt;
  count_step(s, line, ProgressFormat::automodel, n, total, to_double(loss), std::nullopt, std::nullopt);
}

// nanochat: "step 00004/21400 (0.02%) | loss: 8.893647 | lrm: 1.00 | dt: 989.44ms | tok/sec: 529,882 | mfu: 74.13
// | total time: 0.00m" (its time-budgeted variants print no total: "step 00004 (0.0%) | loss: ... | dt: 989ms").
// No FLOP/s: only an MFU percentage.
void nanochat_step(ScanState& s, const LineView& line) {
  static const RE2 step(R"((?:^|[\s:\]])step (\d{1,15})(?:/(\d{1,15}))? \([0-9.]+%\) \| loss: ([-+0-9.eE]+|nan) )");
  static const RE2 dt(R"(\| dt: ([0-9.]+)ms)");
  int64_t n = 0;
  std::string total, loss;
  if (!RE2::PartialMatch(line.text, step, &n, &total, &loss)) return;
  count_step(s, line, ProgressFormat::nanochat, n, total.empty() ? std::nullopt : to_int(total), to_double(loss),
             number(line.text, dt), std::nullopt);
}

// llm.c: "step 0: train loss 4.270288 (took 101.887508 ms)" (train_gpt2.c, 0-based, no total), and
// train_gpt2.cu's "step    1/74 | loss 11.009463 (+0.00z)| norm 15.3042 (+0.00z)| lr 8.57e-07 | 3370.09 ms | 30.1%
// bf16 MFU | 155576 tok/s" (1-based, of the total). "val loss 4.531809" is validation.
void llmc_step(ScanState& s, const LineView& line) {
  static const RE2 old_step(R"((?:^|[\s:\]])step (\d{1,15}): train loss ([-+0-9.eE]+|nan) \(took ([0-9.]+) ms\))");
  static const RE2 cu_step(
      R"((?:^|[\s:\]])step\s+(\d{1,15})/(\d{1,15}) \| loss ([-+0-9.eE]+|nan) \([^)]*\)\| norm [^|]*\| lr [^|]*\| ([0-9.]+) ms \|)");
  int64_t n = 0, total = 0;
  std::string loss, ms;
  if (RE2::PartialMatch(line.text, old_step, &n, &loss, &ms)) {
    count_step(s, line, ProgressFormat::llmc, n, std::nullopt, to_double(loss), to_double(ms), std::nullopt);
  } else if (RE2::PartialMatch(line.text, cu_step, &n, &total, &loss, &ms)) {
    count_step(s, line, ProgressFormat::llmc, n, total, to_double(loss), to_double(ms), std::nullopt);
  }
}

// verl's console logger: "step:3 - timing/gen:12.597 - ... - actor/pg_loss:0.005 - ... - timing_s/step:41.2 - ..."
// (one " - "-joined line of numeric metrics a step). An RL step has no LM loss; its time is timing_s/step (older
// versions: timing/step), in seconds.
void verl_step(ScanState& s, const LineView& line) {
  static const RE2 step(R"((?:^|[\s)\]:])step:(\d{1,15}) - [A-Za-z_]+/)");
  static const RE2 time(R"( - timing(?:_s)?/step:([0-9.]+)(?: |$))");
  int64_t n = 0;
  if (!RE2::PartialMatch(line.text, step, &n)) return;
  const std::optional<double> seconds = number(line.text, time);
  count_step(s, line, ProgressFormat::verl, n, std::nullopt, std::nullopt,
             seconds ? std::optional<double>(*seconds * 1000) : std::nullopt, std::nullopt);
}

// slime (Megatron backend, mid-2025 to early 2026): "step 28: {'train/loss': 0.1451, 'train/pg_loss': ..., 'train/step':
// 28}"; a critic's own lines are "critic-step N: {...}" and do not count.
void slime_step(ScanState& s, const LineView& line) {
  static const RE2 step(R"((?:^|[\s\]:])step (\d{1,15}): \{'train/)");
  static const RE2 loss(R"(\{'train/loss': ([-+0-9.eE]+|nan)[,}])");
  int64_t n = 0;
  if (!RE2::PartialMatch(line.text, step, &n)) return;
  std::string value;
  const std::optional<double> l = RE2::PartialMatch(line.text, loss, &value) ? to_double(value) : std::nullopt;
  count_step(s, line, ProgressFormat::slime, n, std::nullopt, l, std::nullopt, std::nullopt);
}

// NeMo-RL (GRPO, DPO, SFT, distillation): a banner before each step, "========================= Step 2/2
// =========================", then its "📊 Training Results:" ("  • Loss: 0.0123"; DPO: "  • loss: 0.6645"), "  •
// Total step time: 41.20s" and "  • Training FLOPS: 812.00 TFLOPS (101.50 TFLOPS per rank)". Validation results
// ("• Validation loss: ...") are no training loss.
void nemo_rl_line(ScanState& s, const LineView& line) {
  const std::string_view t = line.text;
  Progress& pr = s.report.progress;
  static const RE2 banner(R"(^=+ Step (\d{1,15})/(\d{1,15}) =+\s*$)");
  static const RE2 loss(R"(^\s*• [Ll]oss: ([-+0-9.eE]+|nan)\s*$)");
  static const RE2 time(R"(^\s*• Total step time: ([0-9.]+)s)");
  static const RE2 flops(R"(\(([0-9.]+) TFLOPS per rank\))");
  int64_t n = 0, total = 0;
  std::string v;
  if (RE2::PartialMatch(t, banner, &n, &total)) {
    count_step(s, line, ProgressFormat::nemo_rl, n, total, std::nullopt, std::nullopt, std::nullopt);
  } else if (pr.format == ProgressFormat::nemo_rl && RE2::PartialMatch(t, loss, &v)) {
    pr.last_lm_loss = to_double(v);
    if (!pr.first_lm_loss) pr.first_lm_loss = pr.last_lm_loss;
  } else if (pr.format == ProgressFormat::nemo_rl && RE2::PartialMatch(t, time, &v)) {
    if (const auto x = to_double(v)) pr.step_ms.add(*x * 1000);
  } else if (pr.format == ProgressFormat::nemo_rl && RE2::PartialMatch(t, flops, &v)) {
    if (const auto x = to_double(v)) pr.step_tflops.add(*x);
  }
}

void other_line(ScanState& s, const LineView& line) {
  const std::string_view t = line.text;
  Progress& pr = s.report.progress;
  double v = 0;
  // torchtitan: "Training starts at step 1, ..., total steps 10 (warmup 2)"
  static const RE2 total(R"(total steps (\d{1,15}))");
  if (int64_t n = 0; has(t, "total steps") && RE2::PartialMatch(t, total, &n)) pr.total_iterations = n;
  // A configuration's "max_steps: 18500" (YAML dump): the total of NeMo Automodel's step lines.
  static const RE2 max_steps(R"((?:^|\s)max_steps:\s*(\d{1,15})\s*$)");
  if (int64_t n = 0; has(t, "max_steps") && RE2::PartialMatch(t, max_steps, &n)) s.max_steps = n;
  // Hugging Face Trainer: "{'loss': 0.8533, 'grad_norm': 4.87, 'learning_rate': 1.45e-05, 'epoch': 0.16}"
  static const RE2 dict(R"(\{'loss': ([-+0-9.eE]+))");
  if (has(t, "{'loss'") && RE2::PartialMatch(t, dict, &v)) {
    pr.last_lm_loss = v;
    ++s.loss_dicts;
  }
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
  if (has(t, "iteration: ")) nanotron_iteration(s, line);
  if (has(t, "iteration=")) kv_iteration(s, line);
  if (has(t, "| epoch ")) automodel_step(s, line);
  if (has(t, "%) | loss: ")) nanochat_step(s, line);
  if (has(t, ": train loss ") || has(t, "z)| norm ")) llmc_step(s, line);
  if (has(t, "- timing")) verl_step(s, line);
  if (has(t, ": {'train/")) slime_step(s, line);
  if (has(t, "= Step ") || has(t, "• ") || has(t, "TFLOPS per rank")) nemo_rl_line(s, line);
  other_line(s, line);
}

}  // namespace hcp::logscan
