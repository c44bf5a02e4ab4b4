// libFuzzer target: Python configs (the tree-sitter Python grammar, the Python model's paths, calls and values)
// through the whole linter and every renderer.
#include "fuzz_lint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_lint(data, size, hcp::lint::InputFormat::python, "fuzz.py");
  return 0;
}
