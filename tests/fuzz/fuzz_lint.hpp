// Shared body of the lint fuzz targets: any bytes, read as one input format, must give findings or a parse
// error - never a crash, a hang or an exception of another kind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "hcp/error.hpp"
#include "hcp/lint/linter.hpp"
#include "hcp/lint/render.hpp"
#include "loaders/text_encoding.hpp"

inline void fuzz_lint(const uint8_t* data, size_t size, hcp::lint::InputFormat format, const char* name) {
  hcp::lint::SourceText source;
  source.name = name;
  source.format = format;
  source.text.assign(reinterpret_cast<const char*>(data), size);
  // As read_source does: text with a byte-order mark (UTF-16, UTF-32) decoded first, or refused with the offset.
  try {
    hcp::lint::decode_byte_order_mark(source.name, source.text);
  } catch (const hcp::Error&) {
    return;
  }
  hcp::lint::LintOptions options;
  options.cluster.gpus_per_node = 8;  // lets the locality rule build a topology
  const hcp::lint::LintReport report = hcp::lint::lint({source}, options);
  // Every renderer must cope with whatever the input held (invalid UTF-8 included). SARIF carries the whole rule
  // table and costs ten times the rest, so it runs on one input in eight to keep the execution rate up.
  for (auto f : {hcp::lint::OutputFormat::text, hcp::lint::OutputFormat::json, hcp::lint::OutputFormat::github}) {
    (void)hcp::lint::render(report, f, hcp::lint::RenderOptions{false, true, true});
  }
  if (size % 8 == 0) (void)hcp::lint::render(report, hcp::lint::OutputFormat::sarif, hcp::lint::RenderOptions{});
}
