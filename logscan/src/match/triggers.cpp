#include "triggers.hpp"

namespace hcp::logscan {

const std::vector<TriggerLiteral>& trigger_literals() {
  static const std::vector<TriggerLiteral> literals = {
      {"iteration", kIteration, ""},
      {"MODEL_TFLOP", kModelTflop, ""},
      {"using world size:", kWorldSize, ""},
      {"context_parallel_size", kConfigKey, ""},
      {"cp_comm_type", kConfigKey, ""},
      {"tensor_model_parallel_size", kConfigKey, ""},
      {"pipeline_model_parallel_size", kConfigKey, ""},
      {"use_decentralized_pg", kConfigKey, ""},
      {"world_size", kConfigKey, ""},
      {"[hcp] rank", kHcpRuntime, ""},
      {"CONTEXT_PARALLEL_GROUP", kGroupName, ""},
      {"Init COMPLETE", kNcclInit, ""},
      {"Traceback (most recent call last)", kTraceback, ""},
      {"out of memory", kOutOfMemory, ""},
      {"OutOfMemoryError", kOutOfMemory, ""},
      {"NCCL WARN", kNcclError, ""},
      {"NCCL error", kNcclError, ""},
      {"ncclInternalError", kNcclError, ""},
      {"ncclSystemError", kNcclError, ""},
      {"ncclUnhandledCudaError", kNcclError, ""},
      {"ncclRemoteError", kNcclError, ""},
      {"ncclInvalidUsage", kNcclError, ""},
      {"Watchdog caught collective operation timeout", kNcclTimeout, ""},
      {"watchdog thread terminated", kNcclTimeout, ""},
      {"hierarchical-context-parallel-sizes must be set", kHcpValidation, "HCP001"},
      {"hierarchical_context_parallel_sizes must be set", kHcpValidation, "HCP001"},
      {"Product of hierarchical_context_parallel_sizes", kHcpValidation, "HCP002"},
      {"seq-length should be a multiple of 2 * context-parallel-size", kHcpValidation, "HCP003"},
      {"to support hierarchical cp", kHcpValidation, "HCP005"},
      {"do not support hierarchical_context_parallel_sizes", kHcpValidation, "HCP006"},
      {"requires cp_group = [a2a_cp_group, p2p_cp_group]", kHcpValidation, "HCP007"},
      {"requires num_heads % cp_size == 0", kHcpValidation, "HCP009"},
      {"is not divisible by total_model_size", kHcpValidation, "HCP010"},
      {"Unsupported communication type", kHcpValidation, "HCP012"},
      {"Length of cp_comm_type", kHcpValidation, "HCP013"},
      {"pp-last rank ordering", kHcpValidation, "HCP014"},
      {"does not support sliding window attention", kHcpValidation, "HCP016"},
      {"bias type is not supported with hierarchical CP", kHcpValidation, "HCP017"},
      {"thd format is not supported with hierarchical CP", kHcpValidation, "HCP018"},
      {"CUDA_DEVICE_MAX_CONNECTIONS to 1", kHcpValidation, "HCP019"},
      {"NVIDIA ", kGpuName, ""},
      {"HyperCommGrid", kHyperCommGrid, ""},
      {"memory (MB)", kMemory, ""},
      {"Final configuration:", kFinalConfig, ""},
  };
  return literals;
}

}  // namespace hcp::logscan
