// Every fixture log gives its verdict, and the details the verdict stands on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "hcp/logscan/render.hpp"
#include "hcp/logscan/scanner.hpp"

namespace hcp::logscan {
namespace {

using ::testing::HasSubstr;

std::string fixture(const std::string& name) { return std::string(HCP_TESTS_DIR) + "/logscan/fixtures/" + name; }

ScanReport scan(const std::string& name, ScanOptions o = {}) { return scan_paths({fixture(name)}, o); }

bool has_failure(const ScanReport& r, const std::string& kind, const std::string& needle = "") {
  for (const Failure& f : r.failures) {
    if (f.kind == kind && f.message.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST(LogscanVerdicts, MegatronHierarchicalActive) {
  const ScanReport r = scan("megatron_hcp_active.log");
  EXPECT_EQ(r.verdict, Verdict::hcp_active);
  EXPECT_TRUE(r.step_completed);
  EXPECT_FALSE(r.failed);
  EXPECT_EQ(r.intent.cp.value, 4);
  EXPECT_EQ(r.intent.tp.value, 1);
  EXPECT_EQ(r.intent.pp.value, 2);
  EXPECT_EQ(r.intent.world_size.value, 8);
  ASSERT_TRUE(r.intent.hcp_sizes.value && r.intent.hcp_sizes.value->has_value());
  EXPECT_EQ(**r.intent.hcp_sizes.value, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(r.intent.cp_comm_type.value, (std::vector<std::string>{"a2a+p2p"}));
  const auto& l0 = r.evidence.groups.at("c10d:HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0");
  EXPECT_EQ(l0.ranks.size(), 8u);  // from the [defaultN]: prefixes
  EXPECT_EQ(l0.first.line, 45u);
  EXPECT_EQ(r.evidence.nccl_comm_sizes.at(2), 8u);
  EXPECT_EQ(r.evidence.nccl_comm_sizes.at(4), 8u);
  EXPECT_EQ(r.progress.iteration_lines, 20u);
  EXPECT_EQ(r.progress.last_iteration, 200);
  EXPECT_EQ(r.progress.total_iterations, 200);
  EXPECT_NEAR(*r.progress.elapsed_ms.median(), 812.3, 6);
  EXPECT_NEAR(*r.progress.tflops.median(), 402.1, 4);
  EXPECT_EQ(r.progress.validation_losses.size(), 2u);
  EXPECT_DOUBLE_EQ(*r.progress.max_reserved_mb, 32768.0);
  EXPECT_EQ(r.gpu, "H200");
  EXPECT_EQ(r.gpu_peak_tflops, 989);
}

TEST(LogscanVerdicts, PerRankFilesWithRuntimeLinesAnsiAndCrlf) {
  const ScanReport r = scan("per_rank_runtime");
  EXPECT_EQ(r.verdict, Verdict::hcp_active);
  ASSERT_EQ(r.files.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r.files[static_cast<size_t>(i)].rank_from_name, i);
  const auto& hier = r.evidence.groups.at("hcp-runtime:HIERARCHICAL_CONTEXT_PARALLEL_GROUPS");
  EXPECT_EQ(hier.lines, 4u);  // rank 1's lines are wrapped in ANSI colours, rank 2's end in CRLF
  EXPECT_EQ(hier.ranks, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(r.evidence.groups.at("hcp-runtime:CONTEXT_PARALLEL_GROUP").sizes, (std::set<int64_t>{4}));
  EXPECT_TRUE(r.step_completed);
}

TEST(LogscanVerdicts, BridgeIssue2667IsCpSilentlyOff) {
  const ScanReport r = scan("bridge_issue_2667.log");
  EXPECT_EQ(r.verdict, Verdict::cp_silently_off);
  EXPECT_EQ(r.intent.cp.value, 8);
  ASSERT_TRUE(r.intent.hcp_sizes.value);
  EXPECT_FALSE(r.intent.hcp_sizes.value->has_value());  // null in the YAML
  EXPECT_NEAR(*r.progress.model_tflops.median(), 1937, 10);
  EXPECT_EQ(r.gpu, "H200");
  ASSERT_FALSE(r.reasons.empty());
  EXPECT_THAT(r.reasons[0].first, HasSubstr("above the H200's dense bf16 peak"));
}

TEST(LogscanVerdicts, ThroughputAbovePeakIsCpSilentlyOff) {
  const ScanReport r = scan("throughput_above_peak.log");
  EXPECT_EQ(r.verdict, Verdict::cp_silently_off);
  EXPECT_EQ(r.gpu, "H100");
  // --gpu wins over the log: against a B200 the same numbers are plausible.
  ScanOptions o;
  o.gpu = "b200";
  EXPECT_EQ(scan("throughput_above_peak.log", o).verdict, Verdict::flat_cp);
}

TEST(LogscanVerdicts, HierarchicalIntentWithFlatGroupsIsNotActive) {
  const ScanReport r = scan("hcp_not_active_flat_groups.log");
  EXPECT_EQ(r.verdict, Verdict::hcp_not_active);
  EXPECT_EQ(r.evidence.groups.at("c10d:CONTEXT_PARALLEL_GROUP").ranks.size(), 4u);  // [rankN]: prefixes
}

TEST(LogscanVerdicts, DecentralizedProcessGroupsAreNotActive) {
  const ScanReport r = scan("hcp_not_active_decentralized.log");
  EXPECT_EQ(r.verdict, Verdict::hcp_not_active);
  ASSERT_TRUE(r.intent.hcp_sizes.value && r.intent.hcp_sizes.value->has_value());
  EXPECT_EQ(**r.intent.hcp_sizes.value, (std::vector<int64_t>{2, 4}));  // a YAML block list
  EXPECT_EQ(r.intent.use_decentralized_pg.value, true);
  EXPECT_TRUE(r.evidence.hypercommgrid);
}

TEST(LogscanVerdicts, FlatNoCpAndUnknown) {
  const ScanReport flat = scan("flat_cp_slurm.log");
  EXPECT_EQ(flat.verdict, Verdict::flat_cp);
  EXPECT_EQ(flat.progress.iteration_lines, 5u);  // Slurm "3: " prefixes
  EXPECT_EQ(scan("no_cp.log").verdict, Verdict::no_cp);  // core 0.12's "Nonetensor-model-parallel" typo
  const ScanReport unknown = scan("unknown.log");
  EXPECT_EQ(unknown.verdict, Verdict::unknown);
  EXPECT_THAT(unknown.advice, HasSubstr("TORCH_CPP_LOG_LEVEL=INFO"));
  const ScanReport unverifiable = scan("hcp_unverifiable.log");
  EXPECT_EQ(unverifiable.verdict, Verdict::unknown);
  EXPECT_THAT(unverifiable.reasons[0].first, HasSubstr("hierarchical sizes [2, 8] configured"));
}

TEST(LogscanFailures, TracebacksOomValidationAndNccl) {
  const ScanReport oom = scan("failure_oom.log");
  EXPECT_TRUE(oom.failed);
  EXPECT_TRUE(has_failure(oom, "cuda-oom", "Tried to allocate 2.00 GiB"));
  // The OOM and its traceback are one failure, whose message is the exception line (rank 1's line in between is
  // skipped).
  EXPECT_TRUE(has_failure(oom, "cuda-oom", "torch.OutOfMemoryError"));
  EXPECT_EQ(oom.failure_count, 1u);
  const ScanReport hcp = scan("failure_hcp_assert.log");
  EXPECT_TRUE(has_failure(hcp, "hcp-validation", "AssertionError: --hierarchical-context-parallel-sizes must be set"));
  EXPECT_EQ(hcp.failure_count, 1u);
  bool mapped = false;
  for (const Failure& f : hcp.failures) mapped |= f.kind == "hcp-validation" && f.lint_code == "HCP001";
  EXPECT_TRUE(mapped);
  EXPECT_EQ(hcp.verdict, Verdict::cp_silently_off);  // a2a+p2p with sizes None in the argument dump
  const ScanReport nccl = scan("failure_nccl_timeout.log");
  bool timeout = false;
  for (const Failure& f : nccl.failures) {
    timeout |= f.kind == "nccl-timeout" && f.group == "HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L1" && f.where.rank == 3;
  }
  EXPECT_TRUE(timeout);
  EXPECT_TRUE(has_failure(nccl, "nccl-error", "NCCL WARN Cuda failure"));
}

TEST(LogscanDiff, FlagsRegressionsBeyondTheThreshold) {
  const ScanReport base = scan("diff/base.log");
  const DiffReport same = diff_reports(base, scan("diff/same.log"), 0.05);
  EXPECT_FALSE(same.regression()) << render_diff_text(same);
  const DiffReport slower = diff_reports(base, scan("diff/slower.log"), 0.05);
  EXPECT_TRUE(slower.regression());
  int regressions = 0;
  for (const MetricChange& m : slower.metrics) regressions += m.regression;
  EXPECT_EQ(regressions, 3);  // iteration time, throughput, memory; the loss is the same
  EXPECT_FALSE(diff_reports(base, scan("diff/slower.log"), 0.15).regression());
  const DiffReport lost = diff_reports(base, scan("diff/lost_hcp.log"), 0.05);
  EXPECT_TRUE(lost.verdict_regression) << render_diff_text(lost);
}

TEST(LogscanRender, JsonHasTheDocumentedKeys) {
  const std::string json = render_json(scan("megatron_hcp_active.log"));
  for (const char* key : {"\"verdict\"", "\"step_completed\"", "\"failed\"", "\"intent\"", "\"evidence\"",
                          "\"progress\"", "\"failures\"", "\"files\"", "\"reasons\""}) {
    EXPECT_THAT(json, HasSubstr(key));
  }
}

}  // namespace
}  // namespace hcp::logscan

namespace hcp::logscan {
namespace {

TEST(LogscanFailures, SlurmTimeLimitOncePerJob) {
  const ScanReport r = scan_paths({std::string(HCP_TESTS_DIR) + "/logscan/fixtures/failure_slurm_time_limit.log"}, {});
  EXPECT_TRUE(r.failed);
  size_t time_limits = 0;
  for (const Failure& f : r.failures) time_limits += f.kind == "slurm-time-limit";
  EXPECT_EQ(time_limits, 1u);  // the STEP line and the JOB line are one ending of one job
}

TEST(LogscanFailures, WarningsAndUserCancellationsAreNoFailures) {
  const ScanReport r = scan_paths({std::string(HCP_TESTS_DIR) + "/logscan/fixtures/healthy_connections_warning.log"}, {});
  EXPECT_FALSE(r.failed);
  EXPECT_TRUE(r.failures.empty());
}

}  // namespace
}  // namespace hcp::logscan
