// The literals that can start an interesting line, each with the extractor it feeds. Every extractor's lines
// contain at least one of these, so lines without any are never looked at.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace hcp::logscan {

enum Trigger : uint32_t {
  kIteration = 1u << 0,       // iteration and validation lines
  kModelTflop = 1u << 1,      // Bridge "MODEL_TFLOP/s/GPU"
  kWorldSize = 1u << 2,       // Megatron "using world size:"
  kConfigKey = 1u << 3,       // argument dump / Bridge YAML keys
  kHcpRuntime = 1u << 4,      // "[hcp] rank N: created ...", "[hcp] cp rank N: using the caller's ..."
  kGroupName = 1u << 5,       // "CONTEXT_PARALLEL_GROUP" (c10d, runtime, mentions)
  kNcclInit = 1u << 6,        // "Init COMPLETE"
  kTraceback = 1u << 7,
  kOutOfMemory = 1u << 8,
  kNcclError = 1u << 9,
  kNcclTimeout = 1u << 10,
  kHcpValidation = 1u << 11,  // upstream HCP validation messages
  kGpuName = 1u << 12,
  kHyperCommGrid = 1u << 13,
  kMemory = 1u << 14,
  kSlurmCancel = 1u << 15,    // slurmstepd "*** JOB n ON host CANCELLED AT t DUE TO TIME LIMIT ***"
  kGpuFault = 1u << 16,       // illegal memory access, device-side asserts, Xid, HIP errors, C++ terminate
  kChildFailed = 1u << 17,    // torchrun's ChildFailedError block
  kOomKill = 1u << 18,        // Slurm / kernel OOM killer
  kWarning = 1u << 19,        // Python warnings (reported, never failures)
  kOtherProgress = 1u << 21,  // progress bars, torchtitan steps, Hugging Face loss dicts, Bridge "Step Time"
  kCudaError = 1u << 20,      // "CUDA error: ...", TE's "No dot product attention backend ...": an exception line
                              // even without its traceback's header
  kRunStart = 1u << 22,       // configuration dumps and NCCL initialisation that open a run
  kAttention = 1u << 23,      // Transformer Engine's attention debug lines ("Running with config=", "Disabling ...")
  kDynamicCp = 1u << 24,      // Megatron's dynamic/hybrid CP: its warning, group descriptions and arguments
};

// Kinds whose extractors only add evidence: they open no block, and set no intent, progress or failure that decides
// how later lines are read.
constexpr uint32_t kEvidenceOnly = kGroupName | kNcclInit | kHyperCommGrid | kGpuName | kAttention | kDynamicCp;

struct TriggerLiteral {
  std::string_view text;
  uint32_t triggers;          // the extractors a line with this key goes to
  bool settles_line = false;  // followed by iteration counters, the rest of the line is not searched for keys
};

struct ValidationMessage {
  std::string_view text;
  std::string_view lint_code;
};

const std::vector<TriggerLiteral>& trigger_literals();
const std::vector<ValidationMessage>& validation_messages();

}  // namespace hcp::logscan
