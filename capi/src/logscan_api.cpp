// C ABI over hcp::logscan.
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "guard.hpp"
#include "hcp/logscan/render.hpp"
#include "hcp/logscan/scanner.hpp"
#include "strings.hpp"
#include "struct_versions.hpp"

struct hcp_logscanner {
  std::unique_ptr<hcp::logscan::LogScanner> scanner;  // null once finished
  std::deque<hcp::logscan::LiveEvent> events;         // polled from the scanner, not yet handed out
  hcp::logscan::LiveEvent current;                    // the one handed out last (its strings are the caller's)
  std::string name, message;
};

struct hcp_logscan_report {
  hcp::logscan::ScanReport report;
};

namespace hcp::capi {
namespace {

logscan::ScanOptions to_options(const hcp_logscan_options* in, const char* fn) {
  logscan::ScanOptions o;
  if (in == nullptr) return o;
  const hcp_logscan_options c =
      read_versioned(in, hcp_logscan_options HCP_LOGSCAN_OPTIONS_INIT, fn, "options");
  if (c.gpu) o.gpu = c.gpu;
  if (c.series != 0 && c.series != 1)
    throw Error(Errc::invalid_argument, std::string(fn) + ": options.series must be 0 or 1, not " +
                                            std::to_string(c.series));
  o.series = c.series == 1;
  return o;
}

logscan::LogScanner& live(hcp_logscanner* s, const char* fn) {
  require(s, fn, "scanner");
  if (!s->scanner) throw Error(Errc::invalid_argument, std::string(fn) + ": the scanner has already finished");
  return *s->scanner;
}

const logscan::ScanReport& report_of(const hcp_logscan_report* r, const char* fn) {
  require(r, fn, "report");
  return r->report;
}

}  // namespace
}  // namespace hcp::capi

using namespace hcp::capi;

extern "C" {

HCP_API hcp_status hcp_logscan_create(hcp_logscanner** out, const hcp_logscan_options* options) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    require(out, fn, "out");
    *out = nullptr;
    auto scanner = std::make_unique<hcp_logscanner>();
    scanner->scanner = std::make_unique<hcp::logscan::LogScanner>(to_options(options, fn));
    *out = scanner.release();
  });
}

HCP_API hcp_status hcp_logscan_begin_input(hcp_logscanner* scanner, const char* name) {
  const char* fn = __func__;
  return guarded_on(scanner, fn, [&] {
    auto& s = live(scanner, fn);
    require(name, fn, "name");
    s.begin_input(name);
  });
}

HCP_API hcp_status hcp_logscan_feed(hcp_logscanner* scanner, const void* data, size_t size) {
  const char* fn = __func__;
  return guarded_on(scanner, fn, [&] {
    auto& s = live(scanner, fn);
    if (size > 0) require(data, fn, "data");
    s.feed(static_cast<const char*>(data), size);
  });
}

HCP_API hcp_status hcp_logscan_poll(hcp_logscanner* scanner, hcp_logscan_event* out) {
  const char* fn = __func__;
  return guarded_on(scanner, fn, [&] {
    require(out, fn, "out");
    checked_size<hcp_logscan_event>(out->struct_size, true, fn, "out");  // before an event is taken
    auto& s = live(scanner, fn);
    if (scanner->events.empty()) {
      for (auto& e : s.poll()) scanner->events.push_back(std::move(e));
    }
    hcp_logscan_event value{sizeof(hcp_logscan_event), HCP_LOGSCAN_EVENT_NONE, -1, "", "", "", 0};
    if (!scanner->events.empty()) {
      scanner->current = std::move(scanner->events.front());
      scanner->events.pop_front();
      const hcp::logscan::LiveEvent& e = scanner->current;
      using K = hcp::logscan::LiveEvent::Kind;
      hcp::logscan::SourceRef where;
      if (e.kind == K::verdict) {
        value.kind = HCP_LOGSCAN_EVENT_VERDICT;
        scanner->name = std::string(hcp::logscan::verdict_name(e.verdict));
        scanner->message = e.reasons.empty() ? "" : e.reasons.front().first;
        if (!e.reasons.empty()) where = e.reasons.front().second;
      } else if (e.kind == K::failure) {
        value.kind = HCP_LOGSCAN_EVENT_FAILURE;
        scanner->name = e.failure.kind;
        scanner->message = e.failure.message;
        where = e.failure.where;
      } else {
        value.kind = HCP_LOGSCAN_EVENT_WARNING;
        scanner->name = e.warning.kind;
        scanner->message = e.warning.message;
        where = e.warning.where;
      }
      scanner->current.failure.where = where;  // keeps the file name alive with the event
      value.rank = where.rank;
      value.name = scanner->name.c_str();
      value.message = scanner->message.c_str();
      value.file = scanner->current.failure.where.file.c_str();
      value.line = where.line;
    }
    write_versioned(out, value, fn, "out");
  });
}

HCP_API hcp_status hcp_logscan_finish(hcp_logscan_report** out, hcp_logscanner* scanner) {
  const char* fn = __func__;
  return guarded_on(scanner, fn, [&] {
    require(out, fn, "out");
    *out = nullptr;
    auto& s = live(scanner, fn);
    auto report = std::make_unique<hcp_logscan_report>(hcp_logscan_report{s.finish()});
    scanner->scanner.reset();
    *out = report.release();
  });
}

HCP_API void hcp_logscan_destroy(hcp_logscanner* scanner) {
  forget_handle(scanner);
  delete scanner;
}

HCP_API hcp_status hcp_logscan_last_error(char** out_message, const hcp_logscanner* scanner) {
  return copy_handle_error(out_message, scanner, __func__);
}

HCP_API hcp_status hcp_logscan_scan_paths(hcp_logscan_report** out, const char* const* paths, size_t num_paths,
                                          const hcp_logscan_options* options) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    require(out, fn, "out");
    *out = nullptr;
    if (num_paths > 0) require(paths, fn, "paths");
    std::vector<std::string> list;
    for (size_t i = 0; i < num_paths; ++i) {
      if (paths[i] == nullptr) {
        throw hcp::Error(hcp::Errc::invalid_argument, std::string(fn) + ": paths[" + std::to_string(i) + "] is NULL");
      }
      list.emplace_back(paths[i]);
    }
    if (list.empty()) throw hcp::Error(hcp::Errc::invalid_argument, std::string(fn) + ": no paths to scan");
    *out = new hcp_logscan_report{hcp::logscan::scan_paths(list, to_options(options, fn))};
  });
}

HCP_API hcp_status hcp_logscan_report_verdict(const char** out_verdict, const hcp_logscan_report* report) {
  const char* fn = __func__;
  return guarded_on(report, fn, [&] {
    require(out_verdict, fn, "out_verdict");
    *out_verdict = hcp::logscan::verdict_name(report_of(report, fn).verdict).data();
  });
}

HCP_API hcp_status hcp_logscan_report_render(char** out_text, const hcp_logscan_report* report, const char* format) {
  const char* fn = __func__;
  return guarded_on(report, fn, [&] {
    require(out_text, fn, "out_text");
    *out_text = nullptr;
    const auto& r = report_of(report, fn);
    require(format, fn, "format");
    const std::string f = format;
    std::string text;
    if (f == "json") text = hcp::logscan::render_json(r);
    else if (f == "text") text = hcp::logscan::render_text(r);
    else if (f == "github") text = hcp::logscan::render_github(r);
    else if (f == "html") text = hcp::logscan::render_html(r);
    else throw hcp::Error(hcp::Errc::invalid_argument, std::string(fn) + ": unknown format '" + f + "' (text, json, github, html)");
    *out_text = dup_for_caller(text);
  });
}

HCP_API void hcp_logscan_report_destroy(hcp_logscan_report* report) {
  forget_handle(report);
  delete report;
}

HCP_API hcp_status hcp_logscan_report_last_error(char** out_message, const hcp_logscan_report* report) {
  return copy_handle_error(out_message, report, __func__);
}

}  // extern "C"
