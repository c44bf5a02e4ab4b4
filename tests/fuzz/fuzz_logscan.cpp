// libFuzzer target: raw bytes into the log scanner (plain, or zstd/gzip when the bytes start with their magic),
// in chunks whose sizes come from the input, then every renderer.
#include <cstddef>
#include <cstdint>

#include "hcp/logscan/render.hpp"
#include "hcp/logscan/scanner.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hcp::logscan::ScanOptions options;
  options.max_line = 1024;  // small, so over-long lines are exercised
  hcp::logscan::LogScanner scanner(options);
  scanner.begin_input("fuzz.log");
  const size_t step = size > 0 ? 1 + data[size - 1] % 97 : 1;
  for (size_t pos = 0; pos < size; pos += step) {
    scanner.feed(reinterpret_cast<const char*>(data) + pos, size - pos < step ? size - pos : step);
  }
  const hcp::logscan::ScanReport report = scanner.finish();
  (void)hcp::logscan::render_json(report);
  (void)hcp::logscan::render_text(report);
  (void)hcp::logscan::render_github(report);
  return 0;
}
