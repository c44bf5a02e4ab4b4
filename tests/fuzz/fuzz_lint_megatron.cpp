// libFuzzer target: megatron inputs through the whole linter and every renderer.
#include "fuzz_lint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_lint(data, size, hcp::lint::InputFormat::megatron, "fuzz.megatron");
  return 0;
}
