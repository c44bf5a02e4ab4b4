// libFuzzer target: the C ABI entry points that take text - hcp_lint_text with a format chosen by the first byte,
// and the streaming log scanner - must answer with a status, never crash.
#include <cstddef>
#include <cstdint>

#include "hcp/hcp.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kFormats[] = {"auto", "toml", "yaml", "overrides", "megatron", nullptr};
  hcp_lint_options options = HCP_LINT_OPTIONS_INIT;
  options.input_format = kFormats[data[0] % 6];
  hcp_lint_report* report = nullptr;
  const char* text = reinterpret_cast<const char*>(data + 1);
  if (hcp_lint_text(&report, text, size - 1, "fuzz", &options) == HCP_OK) {
    size_t n = 0;
    hcp_lint_report_count(&n, report);
    for (size_t i = 0; i < n; ++i) {
      hcp_lint_diagnostic d = HCP_LINT_DIAGNOSTIC_INIT;
      hcp_lint_report_get(&d, report, i);
    }
    char* out = nullptr;
    if (hcp_lint_report_render(&out, report, "json") == HCP_OK) hcp_free(out);
    hcp_lint_report_destroy(report);
  }
  hcp_logscanner* scanner = nullptr;
  if (hcp_logscan_create(&scanner, nullptr) != HCP_OK) return 0;
  hcp_logscan_feed(scanner, text, size - 1);
  hcp_logscan_report* scan = nullptr;
  if (hcp_logscan_finish(&scan, scanner) == HCP_OK) {
    char* out = nullptr;
    if (hcp_logscan_report_render(&out, scan, "json") == HCP_OK) hcp_free(out);
    hcp_logscan_report_destroy(scan);
  }
  hcp_logscan_destroy(scanner);
  return 0;
}
