// reader -> matcher -> extractors: decoded text arrives in chunks; complete lines are scanned in place for the
// trigger literals, and only lines with a hit (or lines inside an open traceback / YAML list) reach an extractor.
#include "hcp/logscan/scanner.hpp"

#include <re2/re2.h>

#include <cstring>
#include <deque>
#include <map>

#include "extract/scan_state.hpp"
#include "hcp/error.hpp"
#include "input/input_tape.hpp"
#include "input/stream_decoder.hpp"
#include "match/line_end.hpp"
#include "match/literal_set.hpp"
#include "match/triggers.hpp"
#include "verdict/verdict.hpp"

namespace hcp::logscan {
namespace {

std::vector<std::string> literal_texts() {
  std::vector<std::string> out;
  for (const TriggerLiteral& t : trigger_literals()) out.emplace_back(t.text);
  return out;
}

// The literal set reports a bit per kind of line, not per literal: literals with the same triggers share one (the
// scanner only needs the triggers), and a literal that settles its line has its own (its key's length is read
// from it). So the literals are not bounded by the 64 bits of a hit.
struct LiteralBits {
  std::vector<uint8_t> bit_of;        // by literal
  std::vector<uint32_t> trigger_of;   // by bit
  std::vector<size_t> key_length;     // by bit: the settling literal's length (0 for the others)
  uint64_t settles_line = 0;          // bits after which the rest of a line is not searched
};

LiteralBits literal_bits() {
  LiteralBits b;
  for (const TriggerLiteral& t : trigger_literals()) {
    size_t bit = b.trigger_of.size();
    if (!t.settles_line) {
      for (size_t k = 0; k < b.trigger_of.size(); ++k) {
        if (b.trigger_of[k] == t.triggers && !(b.settles_line >> k & 1)) bit = k;
      }
    }
    if (bit == b.trigger_of.size()) {
      if (bit >= 64) throw Error(Errc::internal, "logscan: more than 64 kinds of trigger literals");
      b.trigger_of.push_back(t.triggers);
      b.key_length.push_back(0);
    }
    if (t.settles_line) {
      b.settles_line |= uint64_t{1} << bit;
      b.key_length[bit] = std::string_view(t.text).size();
    }
    b.bit_of.push_back(static_cast<uint8_t>(bit));
  }
  return b;
}

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

// What reading one input takes: its report, decoder, line state, learned prefixes and the text held while they
// are learned, a hard-wrapped line being joined.
struct InputReading {
  bool open = false;
  FileReport file;
  std::unique_ptr<StreamDecoder> decoder;
  bool decode_ahead = false;  // a compressed input is decoded on a thread of its own (LogScanner::decode_ahead)
  std::string pending;  // a line split across chunks
  bool skipping = false;
  uint64_t line_no = 0;
  std::optional<std::string> read_damage;  // see input_damaged
  // The input's first lines, held until its line prefixes and wrap width are learned from them.
  LinePrefixes prefixes;
  std::string learn_buf;
  size_t learn_seen = 0;  // bytes of learn_buf observed as lines
  // A line the terminal hard-wrapped, being joined from its pieces.
  std::string wrapped;
  uint64_t wrapped_number = 0;
  const std::string* cur_name = nullptr;  // in names
};

struct LogScanner::Impl : InputReading {
  ScanOptions options;
  LiteralBits bits = literal_bits();
  LiteralSet literals{literal_texts(), bits.bit_of};
  const std::vector<uint32_t>& trigger_of = bits.trigger_of;  // by bit
  const uint64_t settles_line = bits.settles_line;
  ScanState state;
  std::deque<std::string> names;  // stable storage for LineView::file
  std::string scratch;
  std::string wrap_scratch;
  InputTape* tape = nullptr;  // record_to(): every line handed to the extractors is also recorded here
  std::function<InputTape*()> tape_full;  // record_to(): the next segment when this one is full

  void dispatch(const LineView& v, uint32_t triggers) {
    if (tape) {
      record(InputTape::Kind::dispatch, v.text, v.rank, v.number, triggers);
      // A recording worker's own report is never read: it needs only what decides which of its lines are handed
      // over (open blocks, the progress format, the run's configuration). Lines that only add evidence are
      // extracted once, on replay (twice was a tenth of the CPU time of a per-rank directory of large files).
      if ((triggers & ~kEvidenceOnly) == 0 && !state.wants_every_line()) return;
    }
    state.dispatch(v, triggers);
  }

  void record(InputTape::Kind kind, std::string_view text, int rank, uint64_t number, uint32_t triggers) {
    tape->entries.push_back({kind, rank, triggers, number, tape->arena.size(), text.size()});
    tape->arena.append(text);
    if (tape_full && tape->bytes() >= InputTape::kSegmentBytes) tape = tape_full();
  }

  // Several inputs may be open at once (a live per-rank directory). The one being fed is in the InputReading
  // base; the others wait in their slots, and switching swaps them.
  struct Slot {
    InputReading reading;
    InputBlocks blocks;
  };
  std::map<int, Slot> slots;
  // poll(): what was reported already.
  size_t polled_failures = 0, polled_warnings = 0;
  std::optional<Verdict> emitted_verdict;
  std::vector<uint64_t> verdict_inputs;  // what the verdict was last computed from
  int active = -1;  // the id of the input in the members (-1: none)
  int stream = -1;  // begin_input's input
  int next_id = 0;

  void swap_with(Slot& s) {
    std::swap(static_cast<InputReading&>(*this), s.reading);
    state.swap_input_blocks(s.blocks);
  }

  // Makes input `id` the one in the members, the one there going back to its slot.
  void activate(int id) {
    if (id == active && open) return;
    if (open) swap_with(slots[active]);
    const auto it = slots.find(id);
    if (it == slots.end()) throw Error(Errc::invalid_argument, "logscan: no open input " + std::to_string(id));
    swap_with(it->second);
    slots.erase(it);
    active = id;
  }

  void start_input(const std::string& name) {
    names.push_back(name);
    cur_name = &names.back();
    file = FileReport{};
    file.path = name;
    file.rank_from_name = rank_from_path(name);
    line_no = 0;
    skipping = false;
    pending.clear();
    prefixes = LinePrefixes{};
    learn_buf.clear();
    learn_seen = 0;
    wrapped.clear();
    read_damage.reset();
    state.reset_input();
    decoder = std::make_unique<StreamDecoder>([this](const char* p, size_t n) { on_text(p, n); }, decode_ahead);
    open = true;
  }

  explicit Impl(ScanOptions o) : options(std::move(o)) {
    if (options.max_line < 256) options.max_line = 256;
    state.keep_series = options.series;
  }

  // The line [s, e) of the region at p; `key` is where its first trigger literal starts (e when none).
  // `counters_end` is where the counters after an iteration key end, when the scanner checked them (or null).
  void handle(const char* p, size_t s, size_t e, size_t key, bool escape, uint32_t triggers, uint64_t number,
              const char* counters_end) {
    size_t len = e - s;
    if (len > options.max_line) {
      len = options.max_line;
      ++file.truncated_lines;
    }
    if (prefixes.wrap_width() && join_wrapped(std::string_view(p + s, len), number)) return;
    if (const std::string_view raw(p + s, len); has_redraws(raw)) return redrawn_records(raw, number);
    LineView v = view_line(std::string_view(p + s, len), scratch, escape, prefixes);
    v.number = number;
    v.file = cur_name;
    if (v.rank < 0) v.rank = file.rank_from_name;
    if (v.stable && p + key >= v.text.data() && p + key < v.text.data() + v.text.size()) {
      v.key = p + key;
      v.counters_end = counters_end;
    }
    dispatch(v, triggers);
  }

  // "\r" inside a line: a progress bar or a line redrawn in place. Each redraw was a record of its own (a
  // Megatron line per iteration, a bar state per update), so each is read, in order.
  static bool has_redraws(std::string_view raw) {
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    return std::memchr(raw.data(), '\r', raw.size()) != nullptr;
  }

  void redrawn_records(std::string_view raw, uint64_t number) {
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    int rank = -1;
    while (!raw.empty()) {
      const size_t cr = raw.find('\r');
      const std::string_view record = raw.substr(0, cr);
      raw = cr == std::string_view::npos ? std::string_view{} : raw.substr(cr + 1);
      LineView v = view_line(record, scratch, true, prefixes);
      if (v.text.empty()) continue;
      if (v.rank < 0) v.rank = rank >= 0 ? rank : file.rank_from_name;  // later redraws lack the prefix
      rank = v.rank;
      v.number = number;
      v.file = cur_name;
      v.stable = false;
      dispatch(v, triggers_in(record));
      state.end_region();
    }
  }

  // A line cut at the wrap width is held and the lines that continue it are appended (without their prefix);
  // the whole is read when a piece is shorter. True when the line was taken.
  bool join_wrapped(std::string_view raw, uint64_t number) {
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    // The width a terminal wraps at is the visible one, as learned: without ANSI codes.
    const bool cut = char_width(remove_ansi(raw, wrap_scratch)) == prefixes.wrap_width();
    if (!state.wrap_pending) {
      if (!cut) return false;
      wrapped.assign(raw);
      wrapped_number = number;
      state.wrap_pending = true;
      return true;
    }
    raw.remove_prefix(prefixes.strip(raw).length);
    wrapped.append(raw.substr(0, options.max_line - std::min(wrapped.size(), options.max_line)));
    if (cut && wrapped.size() < options.max_line) return true;
    flush_wrapped();
    return true;
  }

  void flush_wrapped() {
    if (!state.wrap_pending) return;
    state.wrap_pending = false;
    const std::string line = std::move(wrapped);
    wrapped.clear();
    LineView v = view_line(line, scratch, true, prefixes);
    v.number = wrapped_number;
    v.file = cur_name;
    v.stable = false;
    if (v.rank < 0) v.rank = file.rank_from_name;
    dispatch(v, triggers_in(line));
    state.end_region();
  }

  uint32_t triggers_in(std::string_view t) const {
    ScanCursor cur;
    uint64_t ids = 0;
    while (const uint64_t more = literals.next(t.data(), t.size(), t.size(), cur)) {
      ids |= more;
      ++cur.pos;
    }
    return triggers_of(ids);
  }

  // Complete lines in [p, p+n); a region that does not end in '\n' is one final or truncated line. The cursor
  // stops at each line with a literal (or at every line inside a traceback or YAML list); the literals later on
  // that line are collected by searching up to its end - except on an iteration line, known by the counters after
  // its key, whose remaining bytes are never fingerprinted.
  void process_region(const char* p, size_t n) {
    const uint64_t base = line_no;
    ScanCursor cur;
    while (cur.pos < n) {
      uint64_t ids = 0;
      if (!state.wants_every_line()) {
        ids = literals.next(p, n, n, cur);
        if (ids == 0) break;
      }
      const size_t s = cur.line_start, key = ids ? cur.pos : n;
      const LineEnd end = find_line_end(p, s, n);
      const size_t e = end.end;
      const uint64_t newlines = cur.newlines;
      // A line with ANSI codes or '\r' redraws is searched to its end: a redraw may hold more records.
      const char* const counters_end = end.escape ? nullptr : settled(p, e, cur.pos, ids);
      if (!counters_end) {
        if (ids != 0) ++cur.pos;
        while (const uint64_t more = literals.next(p, n, e, cur)) {
          ids |= more;
          ++cur.pos;
        }
      }
      if (!counters_end || !fast_lane(p, s, e, key, end.escape, ids, counters_end, base + newlines + 1)) {
        handle(p, s, e, key, end.escape, triggers_of(ids), base + newlines + 1, counters_end);
      }
      cur = {e + 1, e + 1, newlines + (e < n ? 1 : 0)};
    }
    line_no = base + cur.newlines;
    state.end_region();
  }

  // A settled iteration line goes straight to the progress reader when nothing else could want it: no ANSI code
  // or truncation to undo, no other literal, no open traceback or YAML list. Its rank prefix, line number and
  // the line view are not needed there (they were a third of the work on such a line).
  bool fast_lane(const char* p, size_t s, size_t e, size_t key, bool escape, uint64_t ids,
                 const char* counters_end, uint64_t number) {
    const bool only_key = (ids & (ids - 1)) == 0 && trigger_of[static_cast<size_t>(__builtin_ctzll(ids))] == kIteration;
    if (escape || e - s > options.max_line || !only_key || state.wants_every_line()) return false;
    const char* end = p + e;
    if (end[-1] == '\r') --end;
    if (!settled_iteration_line(state, p + key + 1, counters_end, end)) return false;
    if (tape) {  // from the blank before the word: the replay checks the same text
      record(InputTape::Kind::settled_iteration, std::string_view(p + key, static_cast<size_t>(end - (p + key))), -1,
             number, static_cast<uint32_t>(counters_end - (p + key)));
    }
    return true;
  }

  // Where the counters after an iteration key at `at` end, or null when the line is not settled by its key.
  const char* settled(const char* p, size_t line_end, size_t at, uint64_t ids) const {
    if ((ids & settles_line) == 0) return nullptr;
    const size_t key = bits.key_length[static_cast<size_t>(__builtin_ctzll(ids & settles_line))];
    return at + key <= line_end ? skip_iteration_counters(p + at + key, p + line_end) : nullptr;
  }

  uint32_t triggers_of(uint64_t ids) const {
    uint32_t t = 0;
    for (; ids; ids &= ids - 1) t |= trigger_of[static_cast<size_t>(__builtin_ctzll(ids))];
    return t;
  }

  void finish_partial_line(const char* p, size_t n) {
    process_region(p, n);
    ++line_no;  // the line had no '\n' in the region; it ends here
  }

  // Decoded text: held while the prefixes are learned from the input's first lines, then scanned.
  void on_text(const char* p, size_t n) {
    file.text_bytes += n;
    if (prefixes.settled() && learn_buf.empty()) return scan_text(p, n);
    // The learner ends on its own after 64 lines or 64 KiB of lines; held text beyond this is a line with no end
    // yet (a pathological input), read as it is.
    const size_t kLearnBytes = 256 * 1024 + options.max_line;
    if (learn_buf.empty()) {
      // Learn from the chunk in place: most inputs settle within their first chunk, which is then scanned
      // without a copy.
      const size_t seen = observe_lines(p, n, 0);
      if (prefixes.settled()) return scan_text(p, n);
      learn_buf.assign(p, n);
      learn_seen = seen;
      n = 0;
    } else {
      // Complete the held text's last line from this chunk, then learn from the rest in place: the decoder hands
      // a file's first four bytes apart (to tell its compression), and appending a 16 MiB window to them was a
      // copy of the window.
      const void* nl = std::memchr(p, '\n', n);
      const size_t head = nl ? static_cast<size_t>(static_cast<const char*>(nl) - p) + 1 : n;
      learn_buf.append(p, head);
      learn_seen = observe_lines(learn_buf.data(), learn_buf.size(), learn_seen);
      p += head;
      n -= head;
      if (!prefixes.settled() && n > 0) {
        const size_t held = learn_buf.size();
        const size_t seen = observe_lines(p, n, 0);
        if (!prefixes.settled()) {
          learn_buf.append(p, n);
          learn_seen = held + seen;
          n = 0;
        }
      }
    }
    if (prefixes.settled() || learn_buf.size() >= kLearnBytes) end_learning();  // scans what was held
    if (n > 0) scan_text(p, n);  // the rest of a chunk the learning settled in
  }

  // Shows the learner the complete lines of [p+from, p+n) until it settles; returns where it stopped.
  size_t observe_lines(const char* p, size_t n, size_t from) {
    while (!prefixes.settled() && from < n) {
      const void* nl = std::memchr(p + from, '\n', n - from);
      if (!nl) break;
      const size_t e = static_cast<size_t>(static_cast<const char*>(nl) - p);
      std::string_view line(p + from, std::min(e - from, options.max_line));
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      prefixes.observe(strip_ansi(line));
      from = e + 1;
    }
    return from;
  }

  // Settles the prefixes on what has been seen and scans the held text.
  void end_learning() {
    if (prefixes.settled() && learn_buf.empty()) return;
    prefixes.settle();
    const std::string held = std::move(learn_buf);
    learn_buf.clear();
    learn_buf.shrink_to_fit();
    scan_text(held.data(), held.size());
  }

  std::string_view strip_ansi(std::string_view line) { return remove_ansi(line, scratch); }

  void scan_text(const char* p, size_t n) {
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
        process_region(p, take);
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
    end_learning();
    if (!pending.empty()) {
      finish_partial_line(pending.data(), pending.size());
      pending.clear();
    } else if (skipping) {
      ++line_no;
      skipping = false;
    }
    flush_wrapped();
    if (state.list.active) {  // a YAML list that ran to the end of the input
      LineView end{"", -1, line_no, cur_name};
      follow_list(state, end);
    }
    settle_progress(state);
    state.end_input(*cur_name);
    file.lines = line_no;
    file.raw_bytes = decoder->raw_bytes();
    file.compression = std::string(compression_name(decoder->compression()));
    if (read_damage) {
      file.damage = std::move(*read_damage);
      read_damage.reset();
    } else if (decoder->damage()) {
      file.damage = "byte " + std::to_string(decoder->damage()->offset) + ": " + decoder->damage()->message;
    }
    if (tape) {
      tape->name = *cur_name;
      tape->file = file;
      tape->ended = true;
    }
    state.report.files.push_back(std::move(file));
    decoder.reset();
    open = false;
    // A recording scanner starts each input afresh: what a tape holds must depend on its input alone (a run split
    // or a first iteration line carried over from another file would change which lines it records).
    if (tape) state = ScanState{};
  }
};

namespace {
// A GPU given by the user that hcp has no peak for would silently turn off the peak check (a CP job reported flat
// instead of silently off): refused, naming the models it knows.
ScanOptions checked(ScanOptions options) {
  if (options.gpu && !peak_bf16_tflops(*options.gpu))
    throw Error(Errc::invalid_argument, "unknown GPU model '" + *options.gpu +
                                            "': expected one naming h100, h200, a100 or b200 (or none: the log's own)");
  return options;
}
}  // namespace

LogScanner::LogScanner(ScanOptions options) : impl_(std::make_unique<Impl>(checked(std::move(options)))) {}
LogScanner::~LogScanner() = default;

// begin_input/feed/end_input work on one input at a time (the "stream" input, an id of its own); open_input and
// its id functions on several at once. Inputs of both kinds wait in their slots while another is fed.
void LogScanner::begin_input(const std::string& name) {
  Impl& m = *impl_;
  if (m.stream >= 0) close_input(m.stream);
  m.stream = open_input(name);
}

int LogScanner::open_input(const std::string& name) {
  Impl& m = *impl_;
  const int id = m.next_id++;
  if (m.open) m.swap_with(m.slots[m.active]);  // the input being fed waits in its slot
  m.start_input(name);
  m.active = id;
  return id;
}

void LogScanner::feed_input(int id, const char* data, size_t size) {
  impl_->activate(id);
  impl_->decoder->feed(data, size);
}

void LogScanner::close_input(int id) {
  Impl& m = *impl_;
  m.activate(id);
  m.close_input();
  m.active = -1;
  if (id == m.stream) m.stream = -1;
}

void LogScanner::settle_learning(size_t min_lines) {
  Impl& m = *impl_;
  std::vector<int> ids;
  if (m.open) ids.push_back(m.active);
  for (const auto& [id, slot] : m.slots) ids.push_back(id);
  for (int id : ids) {
    m.activate(id);
    if (m.prefixes.observed() >= min_lines) m.end_learning();
  }
}

void LogScanner::settle_learning_of(int id) {
  impl_->activate(id);
  impl_->end_learning();
}

void LogScanner::feed(const char* data, size_t size) {
  if (impl_->stream < 0) begin_input("<stream>");
  feed_input(impl_->stream, data, size);
}

void LogScanner::end_input() {
  if (impl_->stream >= 0) close_input(impl_->stream);
}

void LogScanner::input_damaged(uint64_t offset, const std::string& message) {
  Impl& m = *impl_;
  if (m.stream < 0) return;
  m.activate(m.stream);
  m.read_damage = "byte " + std::to_string(offset) + ": " + message;
}

void LogScanner::decode_ahead(bool on) { impl_->decode_ahead = on; }

void LogScanner::record_to(InputTape* tape, std::function<InputTape*()> full) {
  impl_->tape = tape;
  impl_->tape_full = tape ? std::move(full) : nullptr;
}

void LogScanner::replay(const InputTape& t) {
  Impl& m = *impl_;
  ScanState& st = m.state;
  if (t.first) {
    end_input();
    if (!t.ended && t.last) {  // nothing was read: the input's error
      m.state.report.files.push_back(t.file);
      return;
    }
    // A segmented tape's name comes with its first segment (the worker knows it when it begins).
    m.names.push_back(t.name);
    m.cur_name = &m.names.back();
    st.reset_input();
  }
  for (const InputTape::Entry& e : t.entries) {
    const std::string_view text(t.arena.data() + e.text, e.size);
    if (e.kind == InputTape::Kind::settled_iteration) {
      // [blank, "iteration ", counters ...): as the worker's fast lane saw it; e.triggers holds the counters' end.
      const char* word = text.data() + 1;
      if (settled_iteration_line(st, word, text.data() + e.triggers, text.data() + text.size())) continue;
      LineView v{text.substr(1), -1, e.number, m.cur_name};
      v.stable = false;
      st.dispatch(v, kIteration);
      continue;
    }
    LineView v{text, e.rank, e.number, m.cur_name};
    v.stable = false;
    st.dispatch(v, e.triggers);
  }
  if (!t.last) {
    st.end_region();  // views into this segment become copies: the next one replaces it
    return;
  }
  if (st.list.active) {
    LineView end{"", -1, t.file.lines, m.cur_name};
    follow_list(st, end);
  }
  settle_progress(st);  // copies the last iteration lines out of the tape
  st.end_input(*m.cur_name);
  st.report.files.push_back(t.file);
  if (t.error_after) st.report.files.push_back(*t.error_after);
}

void LogScanner::input_error(const std::string& name, const std::string& message) {
  end_input();
  FileReport f;
  f.path = name;
  f.error = message;
  if (InputTape* t = impl_->tape) {
    if (t->ended) {
      t->error_after = f;  // the input was read in part: its lines, then the error
    } else {
      t->name = name;
      t->file = f;
    }
  }
  impl_->state.report.files.push_back(std::move(f));
}

std::vector<LiveEvent> LogScanner::poll() {
  Impl& m = *impl_;
  // A live reader wants the lines read now: inputs that showed enough lines to learn from stop holding them.
  settle_learning(kLiveSampleLines);
  std::vector<LiveEvent> out;
  const ScanReport& r = m.state.report;
  // Failures and warnings are final once their line is read (an exception line's kind is settled on that line).
  for (; m.polled_failures < r.failures.size(); ++m.polled_failures) {
    LiveEvent e{LiveEvent::Kind::failure};
    e.failure = r.failures[m.polled_failures];
    out.push_back(std::move(e));
  }
  for (; m.polled_warnings < r.warnings.size(); ++m.polled_warnings) {
    LiveEvent e{LiveEvent::Kind::warning};
    e.warning = r.warnings[m.polled_warnings];
    out.push_back(std::move(e));
  }
  // The verdict is recomputed only when what it depends on changed (a copy of the progress samples per poll
  // would cost more than the scan): the runs, the configuration, the group and attention evidence, the first step,
  // and the throughput every 4096 progress lines.
  const Intent& in = r.intent;
  uint64_t groups = 0;
  for (const auto& [key, g] : r.evidence.groups) groups += g.lines;
  const std::vector<uint64_t> inputs = {
      r.runs.size(), in.cp.value.has_value(), in.cp_comm_type.value.has_value(), in.hcp_sizes.value.has_value(),
      in.use_decentralized_pg.value.has_value(), groups, r.evidence.hypercommgrid.has_value(),
      r.progress.any(), r.progress.iteration_lines >> 12, r.gpu.has_value(),
      in.dynamic_cp.value.has_value() + 2u * in.dynamic_cp.value.value_or(false),
      r.evidence.dynamic_cp.first.has_value(), r.evidence.attention.cp_on.has_value(),
      r.evidence.attention.cp_off.has_value(), r.evidence.attention.comm_types.size(),
      r.evidence.attention.cp_sizes.size()};
  if (inputs == m.verdict_inputs) return out;
  m.verdict_inputs = inputs;
  ScanReport now;
  now.intent = r.intent;
  now.evidence = r.evidence;
  now.progress = r.progress;
  now.gpu = m.options.gpu ? m.options.gpu : r.gpu;
  now.gpu_where = r.gpu_where;
  if (now.gpu) now.gpu_peak_tflops = peak_bf16_tflops(*now.gpu);
  decide(now);
  // Settled: conclusive evidence, or a training step (the configuration and the groups come before it).
  const bool conclusive = now.verdict == Verdict::cp_silently_off || now.verdict == Verdict::hcp_active ||
                          now.verdict == Verdict::hcp_not_active;
  if ((conclusive || now.step_completed) && m.emitted_verdict != now.verdict) {
    m.emitted_verdict = now.verdict;
    LiveEvent e{LiveEvent::Kind::verdict};
    e.verdict = now.verdict;
    e.reasons = std::move(now.reasons);
    out.push_back(std::move(e));
  }
  return out;
}

ScanReport LogScanner::finish() {
  Impl& m = *impl_;
  m.close_input();
  while (!m.slots.empty()) {  // inputs still open, in the order they were opened
    m.activate(m.slots.begin()->first);
    m.close_input();
  }
  m.active = -1;
  m.stream = -1;
  ScanReport& r = m.state.report;
  if (m.options.gpu) {
    r.gpu = *m.options.gpu;
    r.gpu_where = SourceRef{"--gpu", 0, -1};
  }
  if (r.gpu) r.gpu_peak_tflops = peak_bf16_tflops(*r.gpu);
  decide(r);
  m.state.finish_runs(r);
  r.progress.run = static_cast<int>(r.runs.size()) - 1;
  if (!r.progress.any() && m.state.last_progress) {  // the last run made no progress: show the last that did
    r.progress = std::move(*m.state.last_progress);
    r.progress.run = m.state.last_progress_run;
    r.step_completed = true;
  }
  r.failed = r.failure_count > 0;
  return std::move(r);
}

}  // namespace hcp::logscan
