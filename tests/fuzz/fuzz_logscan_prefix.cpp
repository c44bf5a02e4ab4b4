// libFuzzer target: the line-prefix learner. Lines of the input are the sample, then every line is stripped and
// viewed; a stripped prefix must lie within its line, and stripping must not depend on anything but the line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "extract/line_prefix.hpp"
#include "extract/scan_state.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> lines;
  for (size_t at = 0; at <= text.size();) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  hcp::logscan::LinePrefixes prefixes;
  for (std::string_view line : lines) prefixes.observe(line);
  prefixes.settle();
  std::string scratch;
  for (std::string_view line : lines) {
    const auto stripped = prefixes.strip(line);
    if (stripped.length > line.size()) std::abort();
    if (prefixes.strip(line).length != stripped.length) std::abort();
    const hcp::logscan::LineView v = hcp::logscan::view_line(line, scratch, true, prefixes);
    if (v.text.size() > line.size()) std::abort();
    (void)hcp::logscan::prefix_tokens(line, 64);
  }
  return 0;
}
