// Progress and failure forms of frameworks other than Megatron-LM, through the whole scanner (the literal
// prefilter decides which lines reach the readers): nanotron's iteration lines with its human-format numbers, the
// key=value iteration lines of Megatron-DeepSpeed forks, tqdm bars that are not training steps, torchrun blocks
// without a root cause, and std::terminate without an exception. Real excerpts of each are in realworld/.
#include <gtest/gtest.h>

#include <string>

#include "hcp/logscan/scanner.hpp"

namespace hcp::logscan {
namespace {

ScanReport scan(const std::string& text) {
  LogScanner s;
  s.begin_input("p.log");
  s.feed(text.data(), text.size());
  s.end_input();
  return s.finish();
}

TEST(Nanotron, IterationLinesWithHumanFormatNumbers) {
  const std::string prefix = "01/02/2025 10:00:00 [INFO|DP=0|PP=0|TP=0|node-3]: ";
  std::string log;
  const char* times[] = {"11.5K", "11.4K", "9.87K"};
  for (int i = 0; i < 3; ++i) {
    log += prefix + "iteration: " + std::to_string(41 + i) + " / 5000 | consumed_tokens: 2.6M | "
           "elapsed_time_per_iteration_ms: " + times[i] + " | tokens_per_sec: 22.8K | global_batch_size: 64 | "
           "lm_loss: 2.3" + std::to_string(i) + " | lr: 1e-05 | model_tflops_per_gpu: 38." + std::to_string(i) +
           " | hardware_tflops_per_gpu: 40.1 | grad_norm: 1.25\n";
  }
  const ScanReport r = scan(log);
  EXPECT_EQ(r.progress.format, ProgressFormat::nanotron);
  EXPECT_EQ(r.progress.iteration_lines, 3u);
  EXPECT_EQ(r.progress.last_iteration, 43);
  EXPECT_EQ(r.progress.total_iterations, 5000);
  EXPECT_DOUBLE_EQ(*r.progress.last_lm_loss, 2.32);
  EXPECT_DOUBLE_EQ(*r.progress.first_lm_loss, 2.30);
  EXPECT_DOUBLE_EQ(*r.progress.iteration_ms(), 11400);  // "11.4K" ms: the median of 11.5K, 11.4K and 9.87K
  EXPECT_DOUBLE_EQ(*r.progress.reported_tflops(), 38.1);  // the model FLOPs, not the hardware figure
  // Not nanotron's: no total, or a key that only ends in "iteration".
  EXPECT_EQ(scan(prefix + "iteration: 41 | lm_loss: 2.3\n").progress.iteration_lines, 0u);
  EXPECT_EQ(scan("per_iteration: 4 / 5 | x\n").progress.iteration_lines, 0u);
}

TEST(MegatronDeepSpeedKeyValue, IterationLines) {
  auto line = [](int i, const std::string& loss, const std::string& flops) {
    return "[2024-09-16 22:59:42][INFO][training_log:661] -  iteration=" + std::string(8 - std::to_string(i).size(), ' ') +
           std::to_string(i) + "/  635782 | consumed_samples=        3072 | elapsed_time_per_iteration_ms=" +
           std::to_string(7000 + i) + ".5 | learning_rate=3.7e-08 | global_batch_size=768 | " + loss +
           "loss_scale=1.0 | number_of_skipped_iterations=  0 | samples_per_second=107.4 | " + flops + "\n";
  };
  // Releases print "TFLOPs=", later ones "[LM]TFLOPs=" (Megatron's model FLOPs) and "[DS]TFLOPs=" (DeepSpeed's
  // profiler), or with a dash: the model FLOPs are the throughput.
  const std::string log = line(4, "lm loss=11.171233 | ", "TFLOPs=84.00 |") +
                          line(5, "lm loss=11.05 | ", "[LM]TFLOPs=85.00 | [DS]TFLOPs=108.31 |") +
                          line(6, "", "[LM]-TFLOPs=86.00 | [DS]-TFLOPs=109.31 |") +  // skipped: no loss
                          "[2024-09-16 23:09:09][INFO][training:1083] - iteration=2 [0/8]: (torch.Size([4, 4097]))\n";
  const ScanReport r = scan(log);
  EXPECT_EQ(r.progress.format, ProgressFormat::megatron_deepspeed_kv);
  EXPECT_EQ(r.progress.iteration_lines, 3u);  // not the debug line "iteration=2 [0/8]:"
  EXPECT_EQ(r.progress.last_iteration, 6);
  EXPECT_EQ(r.progress.total_iterations, 635782);
  EXPECT_DOUBLE_EQ(*r.progress.last_lm_loss, 11.05);  // the last line that has a loss
  EXPECT_DOUBLE_EQ(*r.progress.iteration_ms(), 7005.5);
  EXPECT_DOUBLE_EQ(*r.progress.reported_tflops(), 85.0);
}

TEST(Automodel, StepLinesAndTheConfigurationsMaxSteps) {
  const std::string log = "2025-09-01 07:13:17 | INFO | root |   step_scheduler:\n"
                          "2025-09-01 07:13:17 | INFO | root |     max_steps: 18500\n"
                          "step  9 | epoch 0 | loss 1.1696 | grad_norm 1.6721 | lr 8.59e-06 | mem 48.55 GiB | tps 2075.14/gpu\n"
                          "INFO:root:step 10 | epoch 0 | loss 1.2296 | grad_norm 1.6987 | mem: 12.35 GiB | tps 9196.97\n"
                          "INFO:root:[val] step 10 | epoch 0 | loss 0.2469\n";
  const ScanReport r = scan(log);
  EXPECT_EQ(r.progress.format, ProgressFormat::automodel);
  EXPECT_EQ(r.progress.iteration_lines, 2u);  // not the validation line
  EXPECT_EQ(r.progress.last_iteration, 10);
  EXPECT_EQ(r.progress.total_iterations, 18500);
  EXPECT_DOUBLE_EQ(*r.progress.last_lm_loss, 1.2296);
  EXPECT_FALSE(r.progress.iteration_ms());  // Automodel prints no step time
  EXPECT_FALSE(scan("step 3 | epoch 0 | loss 1.5\n").progress.total_iterations);
}

TEST(ProgressBar, LoadingSavingAndRolloutBarsAreNotTrainingSteps) {
  const std::string log =
      "Loading weights: 100%|##########| 568/568 [00:12<00:00, 45.1it/s]\n"
      "Loading checkpoint shards: 100%|##########| 8/8 [00:09<00:00,  1.18s/it]\n"
      "Processed prompts: 100%|##########| 1280/1280 [00:11<00:00, 113.55it/s, est. speed input: 91918.03 toks/s]\n"
      "Training Progress:   7%|7         | 15/210 [01:30<19:30,  6.00s/it, loss=1.234]\n"
      "Saving weights: 100%|##########| 15/15 [00:00<00:00, 2484.58it/s]\n";
  const ScanReport r = scan(log);
  EXPECT_EQ(r.progress.format, ProgressFormat::progress_bar);
  EXPECT_EQ(r.progress.iteration_lines, 1u);
  EXPECT_EQ(r.progress.last_iteration, 15);
  EXPECT_EQ(r.progress.total_iterations, 210);
  EXPECT_DOUBLE_EQ(*r.progress.last_lm_loss, 1.234);
  EXPECT_DOUBLE_EQ(*r.progress.iteration_ms(), 6000);
}

TEST(ChildFailed, ListWithoutRootCauseReportsTheFirstRankListed) {
  const std::string entry = "  time      : 2025-07-10_21:46:37\n  host      : node-1\n";
  auto block = [&](const std::string& root) {
    return "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
           "============================================================\ntrain.py FAILED\n"
           "------------------------------------------------------------\nFailures:\n[1]:\n" + entry +
           "  rank      : 5 (local_rank: 5)\n  exitcode  : -6 (pid: 32051)\n[2]:\n" + entry +
           "  rank      : 7 (local_rank: 7)\n  exitcode  : -6 (pid: 32053)\n" + root;
  };
  // Cut before the root cause: the first rank listed. The entries "[1]:", "[2]:" look like rank prefixes to the
  // prefix learner; the block is read all the same.
  ScanReport r = scan(block(""));
  ASSERT_EQ(r.failure_count, 1u);
  EXPECT_EQ(r.failures[0].kind, "child-failed");
  EXPECT_EQ(r.failures[0].where.rank, 5);
  EXPECT_NE(r.failures[0].message.find("first failure listed rank 5, exitcode -6"), std::string::npos);
  // With its root cause: that rank, once.
  r = scan(block("------------------------------------------------------------\n"
                 "Root Cause (first observed failure):\n[0]:\n" + entry +
                 "  rank      : 2 (local_rank: 2)\n  exitcode  : 1 (pid: 32050)\n"
                 "============================================================\n"));
  ASSERT_EQ(r.failure_count, 1u);
  EXPECT_EQ(r.failures[0].where.rank, 2);
  EXPECT_NE(r.failures[0].message.find("root cause rank 2, exitcode 1"), std::string::npos);
  // "Failures:" that is not torchrun's list.
  EXPECT_EQ(scan("Failures:\n  none of the 12 tests failed\n").failure_count, 0u);
}

TEST(Abort, TerminateWithoutAnActiveException) {
  const ScanReport r = scan("INFO memonger.py:  97: optimisation took 0.02 secs\n"
                            "terminate called without an active exception\nAborted (core dumped)\n");
  ASSERT_EQ(r.failure_count, 1u);
  EXPECT_EQ(r.failures[0].kind, "abort");
  EXPECT_EQ(r.failures[0].message, "terminate called without an active exception");
}

}  // namespace
}  // namespace hcp::logscan
