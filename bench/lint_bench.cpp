// hcp-lint speed: one small config through the C++ API and through the C ABI (target: 10,000 configs <= 1 s in one
// process, i.e. <= 100 us each). bench/compare_lint.py also times the hcp-lint process on one file and on 10,000.
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>

#include "hcp/hcp.h"
#include "hcp/lint/linter.hpp"

namespace {

const char* kToml =
    "[model]\ntensor_model_parallel_size = 4\ncontext_parallel_size = 8\ncp_comm_type = \"a2a+p2p\"\n"
    "hierarchical_context_parallel_sizes = [2, 4]\nnum_layers = 32\nnum_attention_heads = 32\nnum_query_groups = 8\n"
    "seq_length = 131072\n[dataset]\nseq_length = 131072\n[cluster]\nnodes = 4\ngpus_per_node = 8\ngpu = \"h100\"\n"
    "[env]\ntransformer_engine = \"2.4.0\"\n";

const char* kYaml =
    "model:\n  tensor_model_parallel_size: 4\n  context_parallel_size: 8\n  cp_comm_type: a2a+p2p\n"
    "  hierarchical_context_parallel_sizes: [2, 4]\n  num_attention_heads: 32\n  num_query_groups: 8\n"
    "  seq_length: 131072\ncluster:\n  gpus_per_node: 8\n";

const char* kScript =
    "#!/bin/bash\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\nCP=8\nARGS=(\n  --tensor-model-parallel-size 4\n"
    "  --context-parallel-size $CP\n  --cp-comm-type a2a+p2p\n  --hierarchical-context-parallel-sizes 2 4\n)\n"
    "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py \"${ARGS[@]}\" --seq-length 131072\n";

void lint_cpp(benchmark::State& state, const char* name, const char* text) {
  for (auto _ : state) {
    hcp::lint::LintReport r = hcp::lint::lint({hcp::lint::SourceText{name, text}}, {});
    benchmark::DoNotOptimize(r.units.data());
  }
}
BENCHMARK_CAPTURE(lint_cpp, toml, "cfg.toml", kToml)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(lint_cpp, yaml, "cfg.yaml", kYaml)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(lint_cpp, megatron_script, "run.sh", kScript)->Unit(benchmark::kMicrosecond);

void BM_LintThroughCApi(benchmark::State& state) {
  const size_t n = std::strlen(kToml);
  for (auto _ : state) {
    hcp_lint_report* r = nullptr;
    if (hcp_lint_text(&r, kToml, n, "cfg.toml", nullptr) != HCP_OK) state.SkipWithError(hcp_last_error());
    size_t count = 0;
    hcp_lint_report_count(&count, r);
    benchmark::DoNotOptimize(count);
    hcp_lint_report_destroy(r);
  }
}
BENCHMARK(BM_LintThroughCApi)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
