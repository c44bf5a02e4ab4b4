#include "triggers.hpp"

namespace hcp::logscan {

// Keys are chosen so that their first four bytes, which the prefilter fingerprints, are rare in logs: mostly upper
// case, punctuation and '_'; a key starting "ite" would make every fifth position a candidate. A key only selects
// lines; the extractors check the full wording.
//
// Iteration lines are most of a log's bytes, so their key is the earliest word that marks them, " iteration " -
// " ite" with its blank is rare enough (on the benchmark log, 2% more candidates than the old keys, 94% true) -
// and it may settle its line: when the iteration counters follow it ("     10/     100"), what remains is
// Megatron's fixed list of numeric fields, and the search skips to the next line instead of fingerprinting them.
const std::vector<TriggerLiteral>& trigger_literals() {
  static const std::vector<TriggerLiteral> literals = {
      {" iteration ", kIteration, true},  // "[...] iteration  10/  100 |", "validation loss at iteration 100 |"
      {"(ms):", kIteration},  // "elapsed time per iteration (ms):" also on a line a collector trimmed to "iteration"
      {"MODEL_TFLOP", kModelTflop},
      {"s/it", kOtherProgress},  // tqdm's rate in a progress bar
      {"it/s", kOtherProgress},
      {"step: ", kOtherProgress},  // torchtitan
      {"iteration: ", kOtherProgress},  // nanotron: "iteration: 991 / 1000 | ..."
      {"iteration=", kOtherProgress},   // Megatron-DeepSpeed forks (ALCF): "iteration=  21/ 105963 | ..."
      {"| epoch ", kOtherProgress},     // NeMo Automodel: "step 10 | epoch 0 | loss 1.2296 | ..."
      {"max_steps", kOtherProgress},    // its configuration's total
      {"%) | loss: ", kOtherProgress},  // nanochat: "step 00004/21400 (0.02%) | loss: 8.893647 | ..."
      {": train loss ", kOtherProgress},  // llm.c: "step 0: train loss 4.270288 (took 101.887508 ms)"
      {"z)| norm ", kOtherProgress},      // llm.c (CUDA): "step 1/74 | loss 11.0 (+0.00z)| norm 15.3 (+0.00z)| ..."
      {"- timing", kOtherProgress},       // verl: "step:3 - timing/gen:12.597 - ..."
      {": {'train/", kOtherProgress},     // slime: "step 28: {'train/loss': 0.145, ...}"
      {"= Step ", kOtherProgress},        // NeMo-RL: "========================= Step 2/2 ====..."
      {"\xe2\x80\xa2 Loss: ", kOtherProgress},  // NeMo-RL's results: "  • Loss: 0.0123", "  • loss: 0.6645" (DPO)
      {"\xe2\x80\xa2 loss: ", kOtherProgress},
      {"\xe2\x80\xa2 Total step time", kOtherProgress},
      {"TFLOPS per rank", kOtherProgress},
      {"total steps", kOtherProgress},
      {"{'loss'", kOtherProgress},
      {"Tera Flops", kOtherProgress},
      {"Step Time", kOtherProgress | kModelTflop},
      {"using world size", kWorldSize},
      {"- arguments -", kRunStart},   // Megatron's "------------------------ arguments ------------------------"
      {"onfiguration", kRunStart},    // Bridge "Final configuration:", "------- Task Configuration -------", ...
      {"Starting job:", kRunStart},   // torchtitan
      {"model parallel with size", kRunStart},  // Megatron(-DeepSpeed) "> initializing tensor model parallel ..."
      {"before the start of training step", kRunStart},  // Megatron: "[before the start of training step] ..."
      {"L version", kRunStart},  // "NCCL version 2.21.5" (not "NCCL": every NCCL INFO line starts so)
      {"_parallel_size", kConfigKey},
      {"_parallel_degree", kConfigKey},  // torchtitan  // context_, tensor_model_, pipeline_model_, hierarchical_context_
      {"cp_comm_type", kConfigKey | kHcpValidation},  // also "Length of cp_comm_type (2) should equal ..."
      {"_decentralized_pg", kConfigKey | kHcpValidation},
      {"world_size", kConfigKey},
      {"cp_size:", kConfigKey},           // NeMo Automodel's "distributed:" block: "  cp_size: 1"
      {"tp_size:", kConfigKey},
      {"pp_size:", kConfigKey},
      {"device mesh with", kConfigKey},   // torchtitan: "Building 1-D device mesh with ['dp_shard'], [24]"
      {"[hcp] rank", kHcpRuntime},
      {"[hcp] cp rank", kHcpRuntime},  // the runtime on the caller's groups (hcp_cp_context_create_on_groups)
      {"CONTEXT_PARALLEL_GROUP", kGroupName},
      {"COMPLETE", kNcclInit},
      {"Traceback (most recent call last)", kTraceback},
      {"File \"", kTraceback},  // a frame: opens a traceback whose header the log lacks
      {"\xe2\x94\x82 \xe2\x9d\xb1 ", kTraceback},  // "│ ❱ 785 │": a rich traceback box's frame, its header lost
      // "CUDA out of memory", "CUDA error: out of memory", "HIP out of memory"; torch.OutOfMemoryError's message
      // always holds these words.
      {"out of memory", kOutOfMemory},
      {"L WARN", kNcclError},   // "NCCL WARN"
      {"L error", kNcclError},  // "NCCL error in: ..."
      {"ncclInternalError", kNcclError},
      {"ncclSystemError", kNcclError},
      {"ncclUnhandledCudaError", kNcclError},
      {"ncclRemoteError", kNcclError},
      {"ncclInvalidUsage", kNcclError},
      // c10d's watchdog: "Watchdog caught collective operation timeout", "watchdog thread terminated with
      // exception", "Exception (either an error or timeout) detected by watchdog"; watchdog_line tells them apart.
      {"atchdog", kNcclTimeout},
      {"communicator was aborted", kNcclError},
      {"illegal memory access", kGpuFault},
      {"evice-side assert", kGpuFault},  // "device-side assert triggered", HIP "Device-side assertion `...' failed"
      {"Assertion `", kGpuFault},         // a CUDA kernel's assert: "... Assertion `srcIndex < size` failed."
      {"Xid ", kGpuFault},  // "NVRM: Xid (PCI:...): 79", DCGM's "Detected Critical Xid Error"
      {"fallen off the bus", kGpuFault},
      {"HIP error", kGpuFault},
      // A C++ exception ended the process (c10::CUDAError from NCCL work), or std::terminate without one.
      {"terminate called", kGpuFault},
      {"Check failed: ", kGpuFault},  // glog's fatal CHECK: "F0426 17:52:54.043815 30811 x.cc:565] Check failed: ..."
      {"checkTimeout", kNcclTimeout},  // c10d's watchdog timeout shown by its C++ frames only
      {"Root Cause", kChildFailed},
      {"Failures:", kChildFailed},
      {"failed (exitcode: ", kChildFailed},  // torchrun's agent: "failed (exitcode: 1) local_rank: 0 (pid: 9) ..."  // torchrun's list of failed ranks, before its root cause (or cut before it)
      {"CUDA error: ", kCudaError},
      {"cuda runtime error (", kCudaError},  // PyTorch 1.x: "cuda runtime error (39) : uncorrectable ECC error ..."
      {"No dot product attention backend", kCudaError},  // Transformer Engine's ValueError: no backend can run it
      {"oom_kill", kOomKill},
      {"oom-kill", kOomKill},
      {"Warning: ", kWarning},  // "UserWarning: ...", "FutureWarning: ...""
      {"hierarchical", kHcpValidation},  // most upstream HCP messages; validation_messages() tells them apart
      {"seq-length should be a multiple", kHcpValidation},
      {"a2a_cp_group", kHcpValidation},
      {"% cp_size", kHcpValidation},  // "requires num_heads % cp_size == 0"
      {"total_model_size", kHcpValidation},
      {"Unsupported communication type", kHcpValidation},
      {"pp-last rank ordering", kHcpValidation},
      {"sliding window attention", kHcpValidation},
      {"CUDA_DEVICE_MAX_CONNECTIONS", kHcpValidation},
      {"NVIDIA ", kGpuName},
      {"HyperCommGrid", kHyperCommGrid},
      {"(MB)", kMemory},
      {"CANCELLED AT", kSlurmCancel},
      // Transformer Engine's attention (NVTE_DEBUG=1 NVTE_DEBUG_LEVEL=2): "Running with config={...}" (whose
      // 'context_parallel' may lie on a continuation of a hard-wrapped record), "Running with FusedAttention
      // backend (sub-backend 1)", "Selected backend = ...", "Disabling ... context parallelism".
      {"Running with ", kAttention},
      {"'context_parallel': ", kAttention},
      {"Selected backend", kAttention},
      {"Disabling ", kAttention},
      // Megatron's dynamic CP: "Dynamic CP enabled: ..." (dev), groups described HYBRID_DP_CP_GROUP_<n> (main) or
      // DYNAMIC_DP_CP_GROUP_<n> (dev); the arguments hybrid_context_parallel / dynamic_context_parallel are intent.
      {"Dynamic CP enabled", kDynamicCp},
      {"DP_CP_GROUP_", kDynamicCp},
      {"id_context_parallel", kConfigKey},
      {"ic_context_parallel", kConfigKey},
      // Megatron's and Transformer Engine's CP checks (validation_messages() tells them apart): most say
      // "context parallel(ism)"; the others are keyed by their own words.
      {"ontext parallel", kHcpValidation},
      {"ontext Parallel", kHcpValidation},   // "... to use Context Parallel with THD format data"
      {"-context-parallel", kHcpValidation},  // "... is incompatible with --hybrid-context-parallel"
      {"evenly divisible by", kHcpValidation},        // Mamba: "nheads must be evenly divisible by tp_size * cp_size"
      {"divisible by cp_size", kHcpValidation},       // GDN: "... lengths in cu_seqlens must be divisible by cp_size="
      {"self.context_parallel_size=", kHcpValidation},  // GDN: "... must be a multiple of (... * self.context_...)"
      {"dynamic-cp mode", kHcpValidation},
      {"for dynamic CP", kHcpValidation},
      {"seq_len % 2", kHcpValidation},
      {"Sequence length per GPU", kHcpValidation},
      {"TP+CP group", kHcpValidation},
  };
  return literals;
}

// The upstream validation messages and the hcp-lint rule that catches each before a run.
const std::vector<ValidationMessage>& validation_messages() {
  static const std::vector<ValidationMessage> messages = {
      {"hierarchical-context-parallel-sizes must be set", "HCP001"},
      {"hierarchical_context_parallel_sizes must be set", "HCP001"},
      {"Product of hierarchical_context_parallel_sizes", "HCP002"},
      {"seq-length should be a multiple of 2 * context-parallel-size", "HCP003"},
      {"to support hierarchical cp", "HCP005"},
      {"do not support hierarchical_context_parallel_sizes", "HCP006"},
      {"requires cp_group = [a2a_cp_group, p2p_cp_group]", "HCP007"},
      {"requires num_heads % cp_size == 0", "HCP009"},
      {"is not divisible by total_model_size", "HCP010"},
      {"Unsupported communication type", "HCP012"},
      {"Length of cp_comm_type", "HCP013"},
      {"pp-last rank ordering", "HCP014"},
      {"does not support sliding window attention", "HCP016"},
      {"bias type is not supported with hierarchical CP", "HCP017"},
      {"thd format is not supported with hierarchical CP", "HCP018"},
      {"CUDA_DEVICE_MAX_CONNECTIONS to 1", "HCP019"},
      // Checks of CP in general, which no hcp-lint rule sees before a run (kind cp-validation). Megatron-LM:
      {"context parallel requires an even number of ranks", ""},  // Hybrid (main) / Dynamic (dev) CP on odd dp*cp
      {"context parallelism not supported with", ""},   // "Hybrid context parallelism not supported with CUDA Graph"
      {"context parallelism must be used with", ""},
      {"context parallelism only supported with", ""},
      {"context parallelism requires sequence_packing_scheduler", ""},
      {"must be evenly divisible by tp_size * cp_size", ""},  // Mamba, Gated Delta Product
      {"cp_size must be evenly divisible by ngroups", ""},
      {"* self.context_parallel_size=", ""},  // Gated DeltaNet heads
      {"must be divisible by cp_size", ""},   // Gated DeltaNet with packed sequences
      {"MIMO context parallelism requires attention_mask=None", ""},
      {"to use Context Parallel with THD format data", ""},  // THD without (a recent enough) Transformer Engine
      {"Context parallelism is only supported by TEDotProductAttention", ""},
      {"context parallelism is not supported for inference shards", ""},
      {"Context parallel not supported for Mamba infer", ""},  // "inference" ("inferenece" on dev)
      {"Context parallel is not supported for MambaMixer dynamic inference", ""},
      {"Context parallelism is not supported for GDN dynamic inference", ""},
      {"Context parallel is not supported for GDP dynamic inference", ""},
      {"Context parallel not supported for GDP inference decode", ""},
      {"Batch invariant mode does not support context parallelism", ""},
      {"local_cp_size is required for hybrid context parallel", ""},
      {"must not be None when using hybrid context parallel", ""},
      {"hybrid_context_parallel is not supported with MLA", ""},
      {"is incompatible with --hybrid-context-parallel", ""},
      {"is incompatible with --dynamic-context-parallel", ""},
      {"cp_group must be set in dynamic-cp mode", ""},
      {"cp_group is not set in packed_seq_params for dynamic CP", ""},
      {"Only Transformer-Engine version >= 1.0.0 supports context parallelism", ""},
      // Transformer Engine's CP attention (context_parallel.py, backends.py):
      {"Context parallelism does not support", ""},
      {"Context parallelism only supports", ""},
      {"for context parallelism and qkv_format = 'thd'", ""},  // "cu_seqlens_padded can not be None ..."
      {"not supported with context parallelism", ""},  // padding mask, ALiBi, a bias type
      {"does not work with context parallelism", ""},  // a fused sub-backend without CP
      {"requires seq_len % 2 == 0", ""},               // a2a, all_gather
      {"Sequence length per GPU needs to be divisible by 2", ""},  // p2p
      {"Amax reduction across TP+CP group is necessary", ""},
  };
  return messages;
}

}  // namespace hcp::logscan
