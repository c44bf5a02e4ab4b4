// libFuzzer target: yaml inputs through the whole linter and every renderer.
#include "fuzz_lint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_lint(data, size, hcp::lint::InputFormat::yaml, "fuzz.yaml");
  return 0;
}
