// Transformer Engine's attention records, Megatron's dynamic-CP lines and the hcp runtime's lines on the caller's
// groups, through the whole scanner, into intent, evidence and verdict. The line texts are Transformer Engine's (d0067d0) and Megatron-LM's (main d98e8a6, dev
// d48bd6b) format strings with values filled in; real TE excerpts are in realworld/.
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

// A TE >= 2.15 "Running with config" record, as Megatron's root logger prints it.
std::string te_config(bool cp, const std::string& comm, int cp_size, const std::string& prefix = "DEBUG:DotProductAttention:") {
  return prefix + "Running with config={'transformer_engine_version': '2.20.0.dev0+d0067d0', 'compute_capability': "
                  "'sm90', 'qkv_layout': 'sbhd_sbhd_sbhd', 'batch_size': 1, 'num_heads': 16, 'num_gqa_groups': 8, "
                  "'attn_mask_type': 'causal', 'window_size': (-1, 0), 'pad_between_seqs': False, "
                  "'attention_dropout': 0.0, 'context_parallel': " +
         std::string(cp ? "True" : "False") + ", 'cp_comm_type': '" + comm + "', 'cp_size': " + std::to_string(cp_size) +
         ", 'deterministic': False, 'is_training': True, 'fp8': False}\n";
}

const std::string kArgsCp4 =
    "------------------------ arguments ------------------------\n"
    "  context_parallel_size ........................... 4\n"
    "  cp_comm_type .................................... ['p2p']\n"
    "  hierarchical_context_parallel_sizes ............. None\n"
    "-------------------- end of arguments ---------------------\n";

TEST(TeAttention, ContextParallelFalseUnderCpFourIsCpSilentlyOff) {
  const ScanReport r = scan(kArgsCp4 + te_config(false, "p2p", 1) + te_config(false, "p2p", 1));
  EXPECT_EQ(r.verdict, Verdict::cp_silently_off);
  EXPECT_EQ(r.evidence.attention.cp_off_lines, 2u);
  EXPECT_FALSE(r.evidence.attention.cp_on);
  EXPECT_TRUE(r.evidence.attention.comm_types.empty());  // 'p2p' is TE's default without CP: not evidence
  ASSERT_EQ(r.reasons.size(), 2u);
  EXPECT_NE(r.reasons[0].first.find("'context_parallel': False"), std::string::npos);
  EXPECT_EQ(r.reasons[0].second.line, 6u);
  EXPECT_EQ(r.reasons[1].second.line, 2u);  // where CP 4 is configured
}

TEST(TeAttention, ContextParallelTrueIsFlatCpWithItsSizeAndType) {
  const ScanReport r = scan(kArgsCp4 + te_config(true, "p2p", 4));
  EXPECT_EQ(r.verdict, Verdict::flat_cp);
  EXPECT_EQ(r.evidence.attention.cp_on_lines, 1u);
  EXPECT_EQ(r.evidence.attention.comm_types, std::set<std::string>{"p2p"});
  EXPECT_EQ(r.evidence.attention.cp_sizes, std::set<int64_t>{4});
}

TEST(TeAttention, RecordsAloneDecideFlatOrNoCp) {
  EXPECT_EQ(scan(te_config(true, "a2a", 2)).verdict, Verdict::flat_cp);
  const ScanReport off = scan(te_config(false, "p2p", 1, "[DEBUG    | DotProductAttention]: "));
  EXPECT_EQ(off.verdict, Verdict::no_cp);
  EXPECT_EQ(off.intent.cp_comm_type.value, std::nullopt);  // TE's record is evidence, not configuration
  // A vision tower's attention without CP beside the language model's with it: CP is on.
  EXPECT_EQ(scan(te_config(false, "p2p", 1) + te_config(true, "p2p", 2)).verdict, Verdict::flat_cp);
}

TEST(TeAttention, A2aP2pWithCpOnIsHcpActiveAndAnotherTypeIsNot) {
  const std::string hier =
      "  context_parallel_size ........................... 8\n"
      "  cp_comm_type .................................... ['a2a+p2p']\n"
      "  hierarchical_context_parallel_sizes ............. [2, 4]\n";
  EXPECT_EQ(scan(hier + te_config(true, "a2a+p2p", 8)).verdict, Verdict::hcp_active);
  EXPECT_EQ(scan(hier + te_config(true, "p2p", 8)).verdict, Verdict::hcp_not_active);
  EXPECT_EQ(scan(hier + te_config(false, "a2a+p2p", 1)).verdict, Verdict::cp_silently_off);
  EXPECT_EQ(scan(hier).verdict, Verdict::unknown);
}

TEST(TeAttention, RecordWrappedByACollectorIsStillRead) {
  std::string record = te_config(false, "p2p", 1);
  const size_t cut = record.find("'pad_between_seqs'");
  record.insert(cut, "\n");  // the 'context_parallel' key lies on the continuation
  const ScanReport r = scan(kArgsCp4 + record);
  EXPECT_EQ(r.verdict, Verdict::cp_silently_off);
  EXPECT_EQ(r.evidence.attention.cp_off_lines, 1u);
}

TEST(TeAttention, OtherDictsWithAContextParallelKeyAreNotTeRecords) {
  const ScanReport r = scan(kArgsCp4 + "features = {'context_parallel': False, 'fsdp': True}\n");
  EXPECT_FALSE(r.evidence.attention.any());
  EXPECT_EQ(r.verdict, Verdict::flat_cp);
}

TEST(TeAttention, DisablingLinesAreCpOnEvidenceAndBackendsAreCounted) {
  const std::string log =
      "DEBUG:DotProductAttention:Disabling UnfusedDotProductAttention as it does not support context parallelism\n"
      "DEBUG:DotProductAttention:Disabling FusedAttention as cp_comm_type = a2a requires num_heads and "
      "num_gqa_groups divisible by 2 (got num_heads = 3, num_gqa_groups = 3)\n"
      "DEBUG:DotProductAttention:Available backends = {FlashAttention=True (2.7.4.post1), FusedAttention=False, "
      "UnfusedDotProductAttention=False}\n"
      "DEBUG:DotProductAttention:Selected backend = FlashAttention (2.7.4.post1).\n"
      "INFO:DotProductAttention:Running with FlashAttention backend (version 2.7.4.post1)\n"
      "[INFO     | DotProductAttention]: Running with FusedAttention backend (sub-backend 1)\n";
  const ScanReport r = scan(log);
  EXPECT_EQ(r.evidence.attention.cp_on_lines, 2u);
  EXPECT_EQ(r.evidence.attention.cp_on->line, 1u);
  EXPECT_EQ(r.evidence.attention.comm_types, std::set<std::string>{"a2a"});
  const std::map<std::string, uint64_t> backends = {{"FlashAttention (2.7.4.post1)", 2},
                                                    {"FusedAttention (sub-backend 1)", 1}};
  EXPECT_EQ(r.evidence.attention.backends, backends);
  EXPECT_EQ(r.verdict, Verdict::flat_cp);
  EXPECT_EQ(r.failure_count, 0u);
}

TEST(TeAttention, DisablingLinesNotAboutCpAreNotEvidence) {
  const ScanReport r = scan(
      "DEBUG:DotProductAttention:Disabling FusedAttention due to NVTE_FUSED_ATTN=0\n"
      "[DEBUG    | DotProductAttention]: Disabling FusedAttention as it requires flash-attn 2.3+ and no context "
      "parallelism\n"
      "Disabling the progress bar for context parallel ranks\n");
  EXPECT_FALSE(r.evidence.attention.cp_on);
  EXPECT_EQ(r.verdict, Verdict::unknown);
}

TEST(DynamicCp, MegatronArgumentIsItsOwnVerdictNotFlatCp) {
  const ScanReport main_branch = scan(
      "  context_parallel_size ........................... 1\n"
      "  hybrid_context_parallel ......................... True\n");
  EXPECT_EQ(main_branch.verdict, Verdict::dynamic_cp);
  EXPECT_EQ(main_branch.intent.dynamic_cp.value, true);
  // dev prints both arguments, the one not given False, in sorted order.
  const ScanReport dev = scan(
      "  dynamic_context_parallel ........................ True\n"
      "  hybrid_context_parallel ......................... False\n");
  EXPECT_EQ(dev.intent.dynamic_cp.value, true);
  EXPECT_EQ(dev.intent.dynamic_cp.where.line, 1u);
  const ScanReport off = scan(kArgsCp4 + "  hybrid_context_parallel ......................... False\n");
  EXPECT_EQ(off.intent.dynamic_cp.value, false);
  EXPECT_EQ(off.verdict, Verdict::flat_cp);
}

TEST(DynamicCp, WarningGivesTheGroupSizes) {
  const ScanReport r = scan(
      "/opt/megatron/megatron/training/arguments.py:1570: UserWarning: Dynamic CP enabled: dp_size * "
      "context_parallel_size=8 will be used as the maximum dynamic CP group size. Dynamic CP groups will range "
      "from min_dynamic_context_parallel_size=2 to 8.\n"
      "  warnings.warn(\n");
  EXPECT_EQ(r.verdict, Verdict::dynamic_cp);
  EXPECT_EQ(r.evidence.dynamic_cp.group_sizes, (std::set<int64_t>{2, 4, 8}));
  ASSERT_TRUE(r.evidence.dynamic_cp.first);
  EXPECT_EQ(r.evidence.dynamic_cp.first->line, 1u);
  EXPECT_EQ(r.failure_count, 0u);
}

TEST(DynamicCp, GroupDescriptionsInC10dLinesAndTeAtSeveralSizes) {
  const ScanReport groups = scan(kArgsCp4 +
      "I0822 12:03:10.654321 4242 ProcessGroupNCCL.cpp:1023] [PG ID 7 PG GUID 12(HYBRID_DP_CP_GROUP_2) Rank 1] "
      "ProcessGroupNCCL created ncclComm_ 0x7f00 on CUDA device: 5\n"
      "I0822 12:03:10.754321 4242 ProcessGroupNCCL.cpp:1023] [PG ID 8 PG GUID 13(DYNAMIC_DP_CP_GROUP_4) Rank 1] "
      "ProcessGroupNCCL created ncclComm_ 0x7f01 on CUDA device: 5\n");
  EXPECT_EQ(groups.verdict, Verdict::dynamic_cp);
  EXPECT_EQ(groups.evidence.dynamic_cp.group_sizes, (std::set<int64_t>{2, 4}));
  // TE records at CP sizes 2 and 4 (and off for short micro-batches): dynamic, not CP silently off.
  const ScanReport te = scan(kArgsCp4 + te_config(true, "p2p", 2) + te_config(false, "p2p", 1) +
                             te_config(true, "p2p", 4));
  EXPECT_EQ(te.verdict, Verdict::dynamic_cp);
  // Under dynamic CP a run whose records all say False is not CP silently off.
  EXPECT_EQ(scan("  hybrid_context_parallel ......................... True\n" + kArgsCp4 + te_config(false, "p2p", 1))
                .verdict,
            Verdict::dynamic_cp);
}

TEST(CpValidation, UpstreamCpAssertsAreFailuresWithoutALintCode) {
  const char* messages[] = {
      "AssertionError: Hybrid context parallel requires an even number of ranks",
      "AssertionError: nheads must be evenly divisible by tp_size * cp_size",
      "AssertionError: self.linear_num_key_heads=6 must be a multiple of (self.tensor_model_parallel_size=2 * "
      "self.context_parallel_size=2).",
      "RuntimeError: MIMO context parallelism requires attention_mask=None; mask via a causal attn_mask_type or "
      "packed_seq_params (a dense mask cannot line up with the CP-sharded sequence).",
      "AssertionError: Transformer Engine is required to use Context Parallel with THD format data.",
      "AssertionError: Context parallelism is only supported by TEDotProductAttention!",
      "ValueError: context parallelism is not supported for inference shards; cp must be 1, got cp=2",
      "AssertionError: Context parallel not supported for Mamba inference decode",
      "AssertionError: cp_comm_type='a2a' requires seq_len % 2 == 0 for Q, K, V. Found seq_len_q = 7, "
      "seq_len_kv = 7, cp_size = 2.",
      "AssertionError: Padding mask not supported with context parallelism!",
  };
  for (const char* m : messages) {
    const ScanReport r = scan(std::string("[rank1]: ") + m + "\n");
    ASSERT_EQ(r.failures.size(), 1u) << m;
    EXPECT_EQ(r.failures[0].kind, "cp-validation") << m;
    EXPECT_EQ(r.failures[0].lint_code, "") << m;
  }
  // A hierarchical check keeps its lint rule; a warning form is a warning.
  const ScanReport hcp = scan("AssertionError: --hierarchical-context-parallel-sizes must be set when a2a+p2p is used "
                              "in cp comm\n");
  ASSERT_EQ(hcp.failures.size(), 1u);
  EXPECT_EQ(hcp.failures[0].kind, "hcp-validation");
  const ScanReport warn = scan("UserWarning: Hybrid context parallelism not supported with CUDA Graph\n");
  EXPECT_EQ(warn.failure_count, 0u);
  EXPECT_EQ(warn.warnings.size(), 1u);
  // A Python warning that mentions context parallelism but is none of the checks stays a Python warning.
  const ScanReport other = scan("FutureWarning: context parallelism will default to p2p in the next release\n");
  ASSERT_EQ(other.warnings.size(), 1u);
  EXPECT_EQ(other.warnings[0].kind, "python-warning");
}

TEST(FrameworkDicts, VerlTransformerConfigKwargsAreIntent) {
  const ScanReport r = scan(
      "(WorkerDict pid=2262483, ip=10.52.48.37) Overridden TF init config: {'num_layers': 32, "
      "'tensor_model_parallel_size': 4, 'pipeline_model_parallel_size': 1, 'expert_model_parallel_size': 1, "
      "'virtual_pipeline_model_parallel_size': None, 'context_parallel_size': 1, 'sequence_parallel': True}\n");
  EXPECT_EQ(r.intent.cp.value, 1);
  EXPECT_EQ(r.intent.tp.value, 4);
  EXPECT_EQ(r.intent.pp.value, 1);
  EXPECT_EQ(r.verdict, Verdict::no_cp);
  const ScanReport json = scan(R"({"context_parallel_size": 4, "cp_comm_type": "a2a+p2p", )"
                               R"("hierarchical_context_parallel_sizes": [2, 2]})" "\n");
  EXPECT_EQ(json.intent.cp.value, 4);
  EXPECT_TRUE(json.intent.hierarchical());
  EXPECT_EQ(json.intent.hcp_sizes.value, std::optional(std::vector<int64_t>{2, 2}));
}

TEST(FrameworkIntent, TorchtitanMeshNamesOnlyDimensionsAboveOne) {
  const std::string prefix = "[rank0]:[titan] 2025-06-26 18:12:46,592 - root - INFO - ";
  ScanReport r = scan(prefix + "Building 1-D device mesh with ['dp_shard'], [8]\n");
  EXPECT_EQ(r.intent.cp.value, 1);
  EXPECT_EQ(r.verdict, Verdict::no_cp);
  r = scan(prefix + "Building 3-D device mesh with ['dp_shard', 'cp', 'tp'], [2, 4, 2]\n");
  EXPECT_EQ(r.intent.cp.value, 4);
  EXPECT_EQ(r.intent.tp.value, 2);
  EXPECT_EQ(r.verdict, Verdict::flat_cp);
  r = scan(prefix + "Building device mesh with parallelism: pp=1, dp_replicate=1, dp_shard=8, cp=2, tp=1, ep=1\n");
  EXPECT_EQ(r.intent.cp.value, 2);
  // Names and sizes that do not pair up are not read.
  EXPECT_FALSE(scan(prefix + "Building 2-D device mesh with ['dp_shard', 'cp'], [8]\n").intent.cp.value);
}

TEST(FrameworkIntent, AutomodelDistributedBlock) {
  const ScanReport r = scan("  distributed:\n    strategy: fsdp2\n    tp_size: 1\n    cp_size: 2\n");
  EXPECT_EQ(r.intent.cp.value, 2);
  EXPECT_EQ(r.intent.tp.value, 1);
}

// hcp's CP contexts on groups the caller made (hcp.torch with hcp_groups, hcp_cp_context_create_on_groups) log
// "[hcp] cp rank R: using the caller's ...": the CP rank, the sizes, no world ranks (cp_context.cpp).
TEST(HcpRuntime, ContextsOnTheCallersGroupsAreEvidence) {
  std::string hier, flat;
  for (int r = 0; r < 4; ++r) {  // piece by piece: GCC 12's -Wrestrict false positive on long + chains
    std::string line = "[hcp] cp rank ";
    line += std::to_string(r);
    line += ": using the caller's CONTEXT_PARALLEL_GROUP size=4";
    flat += line + "\n";
    hier += line + " and HIERARCHICAL_CONTEXT_PARALLEL_GROUPS sizes=[2,2]\n";
  }
  const ScanReport h = scan(hier);
  EXPECT_EQ(h.verdict, Verdict::hcp_active);
  EXPECT_EQ(h.intent.cp.value, 4);
  ASSERT_TRUE(h.intent.hcp_sizes.value && *h.intent.hcp_sizes.value);
  EXPECT_EQ(**h.intent.hcp_sizes.value, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(h.evidence.groups.at("hcp-runtime:HIERARCHICAL_CONTEXT_PARALLEL_GROUPS").lines, 4u);
  const ScanReport f = scan(flat);
  EXPECT_EQ(f.verdict, Verdict::flat_cp);
  EXPECT_EQ(f.intent.cp.value, 4);
  EXPECT_EQ(f.evidence.groups.count("hcp-runtime:HIERARCHICAL_CONTEXT_PARALLEL_GROUPS"), 0u);
}

}  // namespace
}  // namespace hcp::logscan
