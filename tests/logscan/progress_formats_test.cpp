// Progress and failure forms of frameworks other than Megatron-LM, through the whole scanner (the literal
// prefilter decides which lines reach the readers): nanotron's iteration lines with its human-format numbers, the
// key=value iteration lines of Megatron-DeepSpeed forks, nanochat's and llm.c's step lines, verl's, slime's and
// NeMo-RL's steps, tqdm bars that are not training steps, torchrun blocks
// without a root cause and its agent's line, std::terminate without an exception or without its what(), c10d's
// watchdog shown by its frames or its fatal line, glog's fatal CHECK, indented tracebacks. Real excerpts of each are in realworld/.
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

TEST(Nanochat, StepLinesWithAndWithoutTheirTotal) {
  std::string log;
  const char* dt[] = {"989.44", "991.09", "996.81"};
  for (int i = 0; i < 3; ++i) {
    log += "step 0000" + std::to_string(4 + i) + "/21400 (0.02%) | loss: 8.8" + std::to_string(i) +
           " | lrm: 1.00 | dt: " + dt[i] + "ms | tok/sec: 529,882 | mfu: 74.13 | total time: 0.00m\n";
  }
  ScanReport r = scan(log);
  EXPECT_EQ(r.progress.format, ProgressFormat::nanochat);
  EXPECT_EQ(r.progress.iteration_lines, 3u);
  EXPECT_EQ(r.progress.last_iteration, 6);
  EXPECT_EQ(r.progress.total_iterations, 21400);
  EXPECT_DOUBLE_EQ(*r.progress.last_lm_loss, 8.82);
  EXPECT_DOUBLE_EQ(*r.progress.iteration_ms(), 991.09);
  EXPECT_FALSE(r.progress.reported_tflops());  // MFU only
  r = scan("step 00012 (3.1%) | loss: 5.250000 | lrm: 1.00 | dt: 512ms | tok/sec: 1,024 | mfu: 40.1% | epoch: 0 | "
           "remaining: 290s\n");
  EXPECT_EQ(r.progress.last_iteration, 12);
  EXPECT_FALSE(r.progress.total_iterations);
}

TEST(LlmC, BothTrainersStepLinesAndValidationNotCounted) {
  ScanReport r = scan("val loss 4.531809\nstep 0: train loss 4.270288 (took 101.887508 ms)\n"
                      "step 1: train loss 4.465426 (took 102.043178 ms)\nstep 2: train loss 4.410182 (took "
                      "101.841108 ms)\nval loss 4.5\n");
  EXPECT_EQ(r.progress.format, ProgressFormat::llmc);
  EXPECT_EQ(r.progress.iteration_lines, 3u);
  EXPECT_EQ(r.progress.last_iteration, 2);
  EXPECT_FALSE(r.progress.total_iterations);
  EXPECT_DOUBLE_EQ(*r.progress.last_lm_loss, 4.410182);
  EXPECT_DOUBLE_EQ(*r.progress.iteration_ms(), 101.887508);
  r = scan("step    1/74 | loss 11.009463 (+0.00z)| norm 15.3042 (+0.00z)| lr 8.57e-07 | 3370.09 ms | 30.1% bf16 MFU "
           "| 155576 tok/s\nstep    2/74 | loss 10.954012 (+1.41z)| norm 14.9876 (-0.71z)| lr 1.71e-06 | 3250.11 ms | "
           "31.2% bf16 MFU | 156001 tok/s\n");
  EXPECT_EQ(r.progress.last_iteration, 2);
  EXPECT_EQ(r.progress.total_iterations, 74);
  EXPECT_DOUBLE_EQ(*r.progress.last_lm_loss, 10.954012);
  EXPECT_NEAR(*r.progress.iteration_ms(), 3310.1, 1e-9);  // the median of two
}

TEST(RlFrameworks, VerlSlimeAndNemoRlSteps) {
  ScanReport r = scan("(main_task pid=27483) step:3 - timing/gen:12.597 - actor/pg_loss:0.005 - critic/vf_loss:0.317\n"
                      "(TaskRunner pid=9) step:4 - actor/pg_loss:0.004 - timing_s/gen:10.0 - timing_s/step:41.5 - "
                      "perf/mfu:0.3\n");
  EXPECT_EQ(r.progress.format, ProgressFormat::verl);
  EXPECT_EQ(r.progress.last_iteration, 4);
  EXPECT_FALSE(r.progress.last_lm_loss);  // an RL step has no LM loss
  EXPECT_DOUBLE_EQ(*r.progress.iteration_ms(), 41500);
  r = scan("step 1: {'train/loss': 0.10215942561626434, 'train/pg_loss': 0.1021, 'train/step': 1}\n"
           "critic-step 1: {'train/critic-loss': 0.5, 'train/step': 1}\n"
           "step 28: {'train/loss': 0.1451725959777832, 'train/pg_loss': 0.1451, 'train/step': 28}\n");
  EXPECT_EQ(r.progress.format, ProgressFormat::slime);
  EXPECT_EQ(r.progress.iteration_lines, 2u);
  EXPECT_EQ(r.progress.last_iteration, 28);
  EXPECT_DOUBLE_EQ(*r.progress.last_lm_loss, 0.1451725959777832);
  r = scan("\n========================= Step 1/20 =========================\n\xe2\x96\xb6 Taking a training step...\n"
           "\n\xf0\x9f\x93\x8a Training Results:\n  \xe2\x80\xa2 Loss: 0.0123\n  \xe2\x80\xa2 Avg Reward: 0.5\n"
           "  \xe2\x80\xa2 Training FLOPS: 812.00 TFLOPS (101.50 TFLOPS per rank)\n\n\xe2\x8f\xb1\xef\xb8\x8f  Timing:\n"
           "  \xe2\x80\xa2 Total step time: 41.20s\n"
           "\n========================= Step 2/20 =========================\n"
           "\xf0\x9f\x93\x8a Validation Results for `default` set:\n    \xe2\x80\xa2 Validation loss: 0.6645\n");
  EXPECT_EQ(r.progress.format, ProgressFormat::nemo_rl);
  EXPECT_EQ(r.progress.last_iteration, 2);
  EXPECT_EQ(r.progress.total_iterations, 20);
  EXPECT_DOUBLE_EQ(*r.progress.last_lm_loss, 0.0123);  // not the validation loss
  EXPECT_DOUBLE_EQ(*r.progress.iteration_ms(), 41200);
  EXPECT_DOUBLE_EQ(*r.progress.reported_tflops(), 101.5);
  // A bullet list outside NeMo-RL's steps is nothing.
  EXPECT_FALSE(scan("  \xe2\x80\xa2 Loss: 0.5\n").progress.last_lm_loss);
}

TEST(ProgressBar, ABarFinishedBeforeTheFirstLossIsNotTheTraining) {
  const std::string prep = "100%|##########| 7/7 [00:00<00:00, 1809.09it/s]\n";
  const std::string dicts = "{'loss': 0.1474, 'grad_norm': nan, 'learning_rate': 0.0001, 'epoch': 0.04}\n"
                            "{'loss': 0.173, 'grad_norm': 0.5097, 'learning_rate': 0.0001, 'epoch': 0.35}\n";
  ScanReport r = scan(prep + dicts);
  EXPECT_EQ(r.progress.format, ProgressFormat::none);
  EXPECT_FALSE(r.progress.last_iteration);
  EXPECT_FALSE(r.progress.iteration_ms());
  EXPECT_DOUBLE_EQ(*r.progress.last_lm_loss, 0.173);
  // A training bar that moves between the loss dicts is the progress, finished or not.
  r = scan(" 10%|#         | 10/100 [00:05<00:45, 2.00it/s]\n" + dicts + "100%|##########| 100/100 [00:50<00:00, "
           "2.00it/s]\n");
  EXPECT_EQ(r.progress.format, ProgressFormat::progress_bar);
  EXPECT_EQ(r.progress.last_iteration, 100);
  // Without loss dicts a finished bar is kept (nothing says it was not the training).
  EXPECT_EQ(scan(prep).progress.last_iteration, 7);
}

TEST(ProgressBar, LossInTheLabel) {
  const ScanReport r = scan("Training Epoch: 1/3, step 16/36 completed (loss: 0.17207536101341248):  44%|####      | "
                            "4/9 [04:37<05:24, 64.93s/it]\n");
  EXPECT_EQ(r.progress.last_iteration, 4);
  EXPECT_DOUBLE_EQ(*r.progress.last_lm_loss, 0.17207536101341248);
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

TEST(Abort, TerminateWithoutWhatAfterAnotherFailureIsThatFailure) {
  // PyTorch 1.x's ECC error, then the teardown: one failure, the exception line's.
  ScanReport r = scan("RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at "
                      "/pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265\n"
                      "terminate called without an active exception\n");
  ASSERT_EQ(r.failure_count, 1u);
  EXPECT_EQ(r.failures[0].kind, "traceback");
  // Several ranks' terminate lines interleaved, one what() kept: the watchdog timeout, once, on its rank - also
  // when the block without what() comes first.
  r = scan("terminate called after throwing an instance of 'c10::DistBackendError'\n"
           "terminate called after throwing an instance of 'c10::DistBackendError'\n"
           "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with "
           "exception: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=BROADCAST, "
           "Timeout(ms)=1800000) ran for 1800011 milliseconds before timing out.\n"
           "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632\n"
           "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<long>) + 0x2b4 (0x7f in "
           "libtorch_cuda.so)\n");
  ASSERT_EQ(r.failure_count, 1u);
  EXPECT_EQ(r.failures[0].kind, "nccl-timeout");
  EXPECT_EQ(r.failures[0].where.rank, 3);
  // Alone, a block without what() is still a process that failed.
  r = scan("terminate called after throwing an instance of 'c10::DistBackendError'\n");
  ASSERT_EQ(r.failure_count, 1u);
  EXPECT_EQ(r.failures[0].kind, "abort");
}

TEST(Watchdog, TimeoutShownOnlyByItsFramesOrItsFatalLine) {
  const std::string frames =
      "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x1554e8b12f86 in libc10.so)\n"
      "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
      "std::ratio<1l, 1000l> > >) + 0x1d2 (0x1554e9e0f8f2 in libtorch_cuda.so)\n"
      "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x1554e9e16333 in libtorch_cuda.so)\n"
      "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x1554e9e1871c in libtorch_cuda.so)\n"
      "\nterminate called after throwing an instance of 'c10::DistBackendError'\n";
  ScanReport r = scan(frames);
  ASSERT_EQ(r.failure_count, 1u);
  EXPECT_EQ(r.failures[0].kind, "nccl-timeout");
  // Frames of the watchdog without checkTimeout are no timeout.
  r = scan("frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x1554e9e1871c in libtorch_cuda.so)\n");
  EXPECT_EQ(r.failure_count, 0u);
  r = scan("[F930 15:23:07.686401350 ProcessGroupNCCL.cpp:1309] [PG ID 6 PG GUID  Rank 0] [PG ID 6 PG GUID  Rank 0] "
           "Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.\n"
           "[F930 15:23:07.687389178 ProcessGroupNCCL.cpp:1309] [PG ID 3 PG GUID  Rank 1] [PG ID 3 PG GUID  Rank 1] "
           "Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.\n");
  ASSERT_EQ(r.failure_count, 2u);
  EXPECT_EQ(r.failures[0].kind, "nccl-timeout");
  EXPECT_EQ(r.failures[0].where.rank, 0);
  EXPECT_EQ(r.failures[1].where.rank, 1);
}

TEST(GlogCheck, FatalCheckIsAFailureOfItsKind) {
  ScanReport r = scan("`F0426 17:52:54.043815 30811 hl_cuda_device.cc:565] Check failed: cudaSuccess == cudaStat (0 "
                      "vs. 39) Cuda Error: uncorrectable ECC error encountered\n*** Check failure stack trace: ***\n"
                      "    @     0x7f423a77f66d  google::LogMessage::Fail()\n");
  ASSERT_EQ(r.failure_count, 1u);
  EXPECT_EQ(r.failures[0].kind, "cuda-error");
  EXPECT_EQ(r.failures[0].message.rfind("Check failed: cudaSuccess", 0), 0u);
  r = scan("F0101 00:00:01.000001 17 kvstore.cc:80] Check failed: (nworkers) == (4)\n");
  ASSERT_EQ(r.failure_count, 1u);
  EXPECT_EQ(r.failures[0].kind, "abort");
  // glog's INFO line quoting a check, and prose, are none.
  EXPECT_EQ(scan("I0101 00:00:01.000001 17 x.cc:80] Check failed: none so far\n").failure_count, 0u);
  EXPECT_EQ(scan("Check failed: see the docs\n").failure_count, 0u);
}

TEST(Traceback, IndentedBlockAndRayExceptionType) {
  const ScanReport r = scan(
      "Traceback (most recent call last):\n"
      "   File \"/verl/trainer/main_ppo.py\", line 44, in main\n"
      "     run_ppo(config)\n"
      "   File \"/ray/_private/worker.py\", line 930, in get_objects\n"
      "     raise value.as_instanceof_cause()\n"
      " ray.exceptions.RayTaskError(TypeError): ray::TaskRunner.run() (pid=12170, ip=33.17.221.2)\n"
      "   File \"/verl/trainer/main_ppo.py\", line 296, in run\n"
      "     trainer.fit()\n");
  ASSERT_EQ(r.failure_count, 1u);
  EXPECT_EQ(r.failures[0].kind, "traceback");
  EXPECT_EQ(r.failures[0].where.line, 6u);
  EXPECT_EQ(r.failures[0].message.rfind("ray.exceptions.RayTaskError(TypeError): ", 0), 0u);
}

TEST(Traceback, ExceptionGroupGutterAndARichBoxWithoutItsHeader) {
  ScanReport r = scan(
      "        |   File \"/x/anyio/_backends/_asyncio.py\", line 847, in __aexit__\n"
      "        |     raise BaseExceptionGroup(\n"
      "        | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)\n"
      "        +-+---------------- 1 ----------------\n"
      "          | Traceback (most recent call last):\n"
      "          |   File \"/x/anycorn/task_group.py\", line 53, in _handle\n");
  ASSERT_EQ(r.failure_count, 1u);  // the open sub-traceback is part of the same group
  EXPECT_EQ(r.failures[0].kind, "traceback");
  EXPECT_EQ(r.failures[0].where.line, 3u);
  r = scan("stderr: \xe2\x94\x82 \xe2\x9d\xb1 785 \xe2\x94\x82   elastic_launch(        \xe2\x94\x82\n"
           "stderr: \xe2\x94\x82   786 \xe2\x94\x82   \xe2\x94\x82   config=config,     \xe2\x94\x82\n");
  ASSERT_EQ(r.failure_count, 1u);
  EXPECT_EQ(r.failures[0].kind, "log-ends-in-traceback");
  // A table row in prose is no gutter.
  EXPECT_EQ(scan("| ExceptionGroup: a column |\n").failure_count, 0u);
}

TEST(ChildFailed, TorchrunAgentLineWithoutItsBlock) {
  const std::string agent = "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 "
                            "(pid: 1622990) of binary: /usr/bin/python\n";
  ScanReport r = scan(agent + "Traceback (most recent call last):\n  File \"/usr/bin/torchrun\", line 8, in "
                              "<module>\n    sys.exit(main())\n");
  ASSERT_EQ(r.failure_count, 1u);  // torchrun's own traceback, cut, is the same failure
  EXPECT_EQ(r.failures[0].kind, "child-failed");
  EXPECT_EQ(r.failures[0].where.rank, -1);  // a local rank is not the global rank on every node
  EXPECT_NE(r.failures[0].message.find("local_rank 0 failed with exitcode 1"), std::string::npos);
  // The block that follows names the global rank and takes the agent line's place.
  r = scan(agent + "Root Cause (first observed failure):\n[0]:\n  rank      : 9 (local_rank: 1)\n"
                   "  exitcode  : 1 (pid: 32050)\n=======\n");
  ASSERT_EQ(r.failure_count, 1u);
  EXPECT_EQ(r.failures[0].where.rank, 9);
  // After the worker's own failure the agent line only reports its exit.
  r = scan("RuntimeError: CUDA error: an illegal memory access was encountered\n" + agent);
  ASSERT_EQ(r.failure_count, 1u);
  EXPECT_EQ(r.failures[0].kind, "cuda-illegal-address");
}

}  // namespace
}  // namespace hcp::logscan
