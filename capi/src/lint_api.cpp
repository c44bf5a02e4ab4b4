// C ABI over hcp::lint.
#include <cstddef>
#include <string>
#include <vector>

#include "guard.hpp"
#include "hcp/lint/linter.hpp"
#include "hcp/lint/render.hpp"
#include "strings.hpp"
#include "struct_versions.hpp"

struct hcp_lint_report {
  hcp::lint::LintReport report;
  std::vector<const hcp::lint::Diagnostic*> flat;  // every unit's findings, in order
};

namespace hcp::capi {
namespace {

using lint::LintOptions;

std::vector<std::string> split_commas(const char* text) {
  std::vector<std::string> out;
  if (text == nullptr) return out;
  std::string item;
  for (const char* p = text;; ++p) {
    if (*p == ',' || *p == '\0') {
      if (!item.empty()) out.push_back(item);
      item.clear();
      if (*p == '\0') break;
    } else if (*p != ' ') {
      item += *p;
    }
  }
  return out;
}

std::optional<int64_t> positive_or_unknown(int64_t v, const char* fn, const char* field) {
  if (v < 0) {
    throw Error(Errc::invalid_argument, std::string(fn) + ": options->" + field + " (" + std::to_string(v) +
                                            ") must be positive, or 0 for unknown");
  }
  return v == 0 ? std::nullopt : std::optional<int64_t>(v);
}

LintOptions to_options(const hcp_lint_options* in, const char* fn) {
  LintOptions o;
  if (in == nullptr) return o;
  const hcp_lint_options c = read_versioned(in, hcp_lint_options HCP_LINT_OPTIONS_INIT, fn, "options");
  if (c.input_format) o.format = lint::parse_format_name(c.input_format);
  if (c.num_overrides > 0) require(c.overrides, fn, "options->overrides");
  for (size_t i = 0; i < c.num_overrides; ++i) {
    if (c.overrides[i] == nullptr) {
      throw Error(Errc::invalid_argument, std::string(fn) + ": options->overrides[" + std::to_string(i) + "] is NULL");
    }
    o.overrides.emplace_back(c.overrides[i]);
  }
  o.select = split_commas(c.select);
  o.ignore = split_commas(c.ignore);
  for (const std::string& s : split_commas(c.severities)) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos) {
      throw Error(Errc::invalid_argument, std::string(fn) + ": options->severities entry '" + s + "' is not CODE=LEVEL");
    }
    o.severity[s.substr(0, eq)] = lint::parse_severity(s.substr(eq + 1));
  }
  o.cluster.world_size = positive_or_unknown(c.world_size, fn, "world_size");
  o.cluster.nodes = positive_or_unknown(c.nodes, fn, "nodes");
  o.cluster.gpus_per_node = positive_or_unknown(c.gpus_per_node, fn, "gpus_per_node");
  if (c.te_version) o.cluster.te_version = c.te_version;
  if (c.gpu) o.cluster.gpu = c.gpu;
  lint::validate_options(o);
  return o;
}

// Runs the linter on one input; an input error becomes the call's status, not a report.
hcp_lint_report* run(lint::SourceText source, const LintOptions& options) {
  auto* handle = new hcp_lint_report{lint::lint({std::move(source)}, options), {}};
  for (const lint::UnitReport& u : handle->report.units) {
    if (u.error) {
      const std::string message = *u.error;
      const Errc code = message.find("cannot read") != std::string::npos ? Errc::io : Errc::parse;
      delete handle;
      throw Error(code, message);
    }
    for (const lint::Diagnostic& d : u.diagnostics) handle->flat.push_back(&d);
  }
  return handle;
}

const hcp_lint_report& report_of(const hcp_lint_report* r, const char* fn) {
  require(r, fn, "report");
  return *r;
}

}  // namespace
}  // namespace hcp::capi

using namespace hcp::capi;

extern "C" {

HCP_API hcp_status hcp_lint_file(hcp_lint_report** out, const char* path, const hcp_lint_options* options) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    require(out, fn, "out");
    *out = nullptr;
    require(path, fn, "path");
    const LintOptions o = to_options(options, fn);
    *out = run(hcp::lint::read_source(path), o);
  });
}

HCP_API hcp_status hcp_lint_text(hcp_lint_report** out, const char* text, size_t length, const char* name,
                                 const hcp_lint_options* options) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    require(out, fn, "out");
    *out = nullptr;
    if (length > 0) require(text, fn, "text");
    const LintOptions o = to_options(options, fn);
    hcp::lint::SourceText source;
    source.name = name ? name : "<text>";
    source.text.assign(text ? text : "", length);
    *out = run(std::move(source), o);
  });
}

HCP_API void hcp_lint_report_destroy(hcp_lint_report* report) {
  forget_handle(report);
  delete report;
}

HCP_API hcp_status hcp_lint_report_last_error(char** out_message, const hcp_lint_report* report) {
  return copy_handle_error(out_message, report, __func__);
}

HCP_API hcp_status hcp_lint_report_count(size_t* out_count, const hcp_lint_report* report) {
  const char* fn = __func__;
  return guarded_on(report, fn, [&] {
    require(out_count, fn, "out_count");
    *out_count = report_of(report, fn).flat.size();
  });
}

HCP_API hcp_status hcp_lint_report_get(hcp_lint_diagnostic* out, const hcp_lint_report* report, size_t index) {
  const char* fn = __func__;
  return guarded_on(report, fn, [&] {
    require(out, fn, "out");
    const hcp_lint_report& r = report_of(report, fn);
    if (index >= r.flat.size()) {
      throw hcp::Error(hcp::Errc::invalid_argument, std::string(fn) + ": index " + std::to_string(index) +
                                                        " out of range [0, " + std::to_string(r.flat.size()) + ")");
    }
    const hcp::lint::Diagnostic& d = *r.flat[index];
    const hcp_lint_diagnostic value{sizeof(hcp_lint_diagnostic), d.code.c_str(), d.rule.c_str(), d.message.c_str(),
                                    d.hint.c_str(), d.loc.file.c_str(), d.loc.line, d.loc.col,
                                    static_cast<int32_t>(d.severity), 0};
    write_versioned(out, value, fn, "out");
  });
}

HCP_API hcp_status hcp_lint_report_render(char** out_text, const hcp_lint_report* report, const char* format) {
  const char* fn = __func__;
  return guarded_on(report, fn, [&] {
    require(out_text, fn, "out_text");
    *out_text = nullptr;
    const hcp_lint_report& r = report_of(report, fn);
    require(format, fn, "format");
    *out_text = dup_for_caller(hcp::lint::render(r.report, hcp::lint::parse_output_format(format), hcp::lint::RenderOptions{false, true, true}));
  });
}

}  // extern "C"
