// reader -> line finder -> extractors: decoded text arrives in chunks; complete lines are searched in place for
// the trigger literals, and only lines with a hit (or lines inside an open traceback / YAML list) reach an
// extractor.
#include "hcp/logscan/scanner.hpp"

#include <re2/re2.h>

#include <cstring>
#include <deque>
#include <utility>

#include "extract/scan_state.hpp"
#include "input/stream_decoder.hpp"
#include "match/line_end.hpp"
#include "match/line_finder.hpp"
#include "verdict/verdict.hpp"

namespace hcp::logscan {
namespace {


// torchrun's log_dir layout (.../attempt_0/3/stdout.log) or a name with "rank3", "rank_3", "rank-3".
int rank_from_path(const std::string& path) {
  static const RE2 named(R"((?i)(?:^|[/_.-])rank[_-]?(\d{1,7})(?:[/_.-]|$))");
  static const RE2 torchrun(R"(/attempt_\d+/(\d{1,7})/std(?:out|err)\.log)");
  int rank = -1;
  if (RE2::PartialMatch(path, named, &rank) || RE2::PartialMatch(path, torchrun, &rank)) return rank;
  return -1;
}

}  // namespace

std::optional<double> peak_bf16_tflops(std::string_view gpu) {
  std::string g;
  for (char c : gpu) g += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (g.find("h200") != std::string::npos || g.find("h100") != std::string::npos) return 989;
  if (g.find("b200") != std::string::npos) return 2250;
  if (g.find("a100") != std::string::npos) return 312;
  return std::nullopt;
}

struct LogScanner::Impl {
  // A run of complete lines longer than this is scanned piece by piece (the finder lists a piece's lines, then
  // the extractors read them, while they are still in the cache).
  static constexpr size_t kPiece = 128u << 10;

  ScanOptions options;
  LineFinder finder;
  Region region;  // reused: its job list keeps its capacity
  ScanState state;
  std::deque<std::string> names;  // stable storage for LineView::file
  bool open = false;
  FileReport file;
  std::unique_ptr<StreamDecoder> decoder;
  std::string pending;  // a line split across chunks
  bool skipping = false;
  uint64_t line_no = 0;
  std::string scratch;

  explicit Impl(ScanOptions o) : options(std::move(o)) {
    if (options.max_line < 256) options.max_line = 256;
  }

  // The line [s, e) of the region at p; `key` is where its first trigger literal starts (e when none).
  void handle(const char* p, size_t s, size_t e, size_t key, bool escape, uint32_t triggers, uint64_t number) {
    size_t len = e - s;
    if (len > options.max_line) {
      len = options.max_line;
      ++file.truncated_lines;
    }
    LineView v = view_line(std::string_view(p + s, len), scratch, escape);
    v.number = number;
    v.file = &names.back();
    if (v.rank < 0) v.rank = file.rank_from_name;
    if (v.stable && p + key >= v.text.data() && p + key < v.text.data() + v.text.size()) v.key = p + key;
    state.dispatch(v, triggers);
  }

  // Complete lines in [p, p+n); a region that does not end in '\n' is one final or truncated line.
  void process_region(const char* p, size_t n) {
    region.data = p, region.size = n, region.lines_before = line_no;
    finder.find(region);
    line_no += region.newlines;
    extract_region(region);
  }

  // A long run of complete lines, in pieces that end at line ends: small enough that the extractors find a
  // piece's lines still in the cache the search brought them into.
  void process_pieces(const char* p, size_t n) {
    for (size_t at = 0; at < n;) {
      size_t len = std::min(kPiece, n - at);
      if (at + len < n) {
        const void* nl = memrchr(p + at, '\n', len);
        if (!nl) nl = std::memchr(p + at + len, '\n', n - at - len);  // a line longer than a piece
        len = static_cast<size_t>(static_cast<const char*>(nl) - (p + at)) + 1;
      }
      process_region(p + at, len);
      at += len;
    }
  }

  // Stage two over one region: the lines the finder chose, and every line while a traceback or YAML list is open.
  void extract_region(const Region& r) {
    size_t pos = 0;
    uint64_t number = r.lines_before + 1;  // of the line at pos
    for (const LineJob& j : r.jobs) {
      follow_every_line(r, pos, j.start, number);
      handle(r.data, j.start, j.end, j.key, j.escape, j.triggers, j.number);
      pos = j.end + 1;
      number = j.number + 1;
    }
    follow_every_line(r, pos, r.size, number);
    state.end_region();
  }

  // The lines in [pos, until) hold no literal; they matter only to an open traceback or YAML list.
  void follow_every_line(const Region& r, size_t& pos, size_t until, uint64_t& number) {
    while (pos < until && state.wants_every_line()) {
      const LineEnd end = find_line_end(r.data, pos, r.size);
      handle(r.data, pos, end.end, r.size, end.escape, 0, number);
      pos = end.end + 1;
      ++number;
    }
  }

  void finish_partial_line(const char* p, size_t n) {
    process_region(p, n);
    ++line_no;  // the line had no '\n' in the region; it ends here
  }

  void on_text(const char* p, size_t n) {
    file.text_bytes += n;
    const size_t max_line = options.max_line;
    while (n > 0) {
      if (skipping) {  // the rest of an over-long line: not matched, only its end matters
        const void* nl = std::memchr(p, '\n', n);
        if (!nl) return;
        const size_t take = static_cast<size_t>(static_cast<const char*>(nl) - p) + 1;
        skipping = false;
        ++line_no;
        p += take;
        n -= take;
        continue;
      }
      if (!pending.empty()) {
        const void* nl = std::memchr(p, '\n', n);
        const size_t upto = nl ? static_cast<size_t>(static_cast<const char*>(nl) - p) + 1 : n;
        if (pending.size() + upto > max_line + 1) {  // over-long: keep its prefix, skip the rest
          const size_t room = max_line - std::min(pending.size(), max_line);
          pending.append(p, room);
          ++file.truncated_lines;
          process_region(pending.data(), pending.size());
          pending.clear();
          skipping = true;
          p += room;
          n -= room;
          continue;
        }
        pending.append(p, upto);
        p += upto;
        n -= upto;
        if (nl) {
          process_region(pending.data(), pending.size());
          pending.clear();
        }
        continue;
      }
      const void* last = memrchr(p, '\n', n);
      if (last) {
        const size_t take = static_cast<size_t>(static_cast<const char*>(last) - p) + 1;
        if (take > kPiece) {
          process_pieces(p, take);
        } else {
          process_region(p, take);
        }
        p += take;
        n -= take;
        continue;
      }
      if (n <= max_line) {
        pending.assign(p, n);
        return;
      }
      ++file.truncated_lines;
      process_region(p, max_line);
      skipping = true;
      p += max_line;
      n -= max_line;
    }
  }

  void close_input() {
    if (!open) return;
    decoder->finish();
    if (!pending.empty()) {
      finish_partial_line(pending.data(), pending.size());
      pending.clear();
    } else if (skipping) {
      ++line_no;
      skipping = false;
    }
    if (state.list.active) {  // a YAML list that ran to the end of the input
      LineView end{"", -1, line_no, &names.back()};
      follow_list(state, end);
    }
    settle_progress(state);
    file.lines = line_no;
    file.raw_bytes = decoder->raw_bytes();
    file.compression = std::string(compression_name(decoder->compression()));
    if (decoder->damage()) {
      file.damage = "byte " + std::to_string(decoder->damage()->offset) + ": " + decoder->damage()->message;
    }
    state.report.files.push_back(std::move(file));
    decoder.reset();
    open = false;
  }
};

LogScanner::LogScanner(ScanOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
LogScanner::~LogScanner() = default;

void LogScanner::begin_input(const std::string& name) {
  Impl& m = *impl_;
  m.close_input();
  m.names.push_back(name);
  m.file = FileReport{};
  m.file.path = name;
  m.file.rank_from_name = rank_from_path(name);
  m.line_no = 0;
  m.skipping = false;
  m.pending.clear();
  m.state.reset_input();
  m.decoder = std::make_unique<StreamDecoder>([&m](const char* p, size_t n) { m.on_text(p, n); });
  m.open = true;
}

void LogScanner::feed(const char* data, size_t size) {
  if (!impl_->open) begin_input("<stream>");
  impl_->decoder->feed(data, size);
}

void LogScanner::end_input() { impl_->close_input(); }

void LogScanner::input_error(const std::string& name, const std::string& message) {
  impl_->close_input();
  FileReport f;
  f.path = name;
  f.error = message;
  impl_->state.report.files.push_back(std::move(f));
}

ScanReport LogScanner::finish() {
  Impl& m = *impl_;
  m.close_input();
  ScanReport& r = m.state.report;
  if (m.options.gpu) {
    r.gpu = *m.options.gpu;
    r.gpu_where = SourceRef{"--gpu", 0, -1};
  }
  if (r.gpu) r.gpu_peak_tflops = peak_bf16_tflops(*r.gpu);
  decide(r);
  return std::move(r);
}

}  // namespace hcp::logscan
