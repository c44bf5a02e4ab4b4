// libFuzzer target: hcp-lint.toml and pyproject.toml readers. Any bytes give a configuration or an hcp::Error
// naming the place - never a crash, a hang or another exception.
#include <cstddef>
#include <cstdint>

#include "hcp/error.hpp"
#include "hcp/lint/config_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hcp::lint::SourceText source;
  source.name = "hcp-lint.toml";
  source.text.assign(reinterpret_cast<const char*>(data), size);
  for (const bool pyproject : {false, true}) {
    try {
      (void)hcp::lint::read_lint_config(source, pyproject);
    } catch (const hcp::Error&) {
    }
  }
  return 0;
}
