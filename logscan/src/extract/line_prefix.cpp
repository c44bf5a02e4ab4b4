#include "line_prefix.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

namespace hcp::logscan {
namespace {

constexpr size_t npos = std::string_view::npos;

bool is_digit(char c) { return static_cast<unsigned>(c - '0') < 10; }
bool is_alpha(char c) { return static_cast<unsigned>((c | 0x20) - 'a') < 26; }
bool is_label_char(char c) {
  return is_digit(c) || is_alpha(c) || c == '_' || c == '.' || c == '-' || c == '/' || c == '@';
}

size_t digit_run(std::string_view t, size_t i) {
  while (i < t.size() && is_digit(t[i])) ++i;
  return i;
}

// n digits exactly at i, or npos.
size_t digits_at(std::string_view t, size_t i, size_t n) {
  const size_t e = digit_run(t, i);
  return e - i == n ? e : npos;
}

size_t char_at(std::string_view t, size_t i, char c) { return i < t.size() && t[i] == c ? i + 1 : npos; }

// HH:MM:SS with an optional fraction (".123", ",123", nanoseconds).
size_t clock_time(std::string_view t, size_t i) {
  for (int part = 0; part < 3 && i != npos; ++part) {
    if (part) i = char_at(t, i, ':');
    if (i != npos) i = digits_at(t, i, 2);
  }
  if (i != npos && i + 1 < t.size() && (t[i] == '.' || t[i] == ',') && is_digit(t[i + 1])) i = digit_run(t, i + 1);
  return i;
}

// YYYY-MM-DD[T ]HH:MM:SS[.frac][Z|+hh:mm|+hhmm], the forms of Python logging, ISO 8601 and RFC 3339.
size_t iso_timestamp(std::string_view t, size_t i) {
  i = digits_at(t, i, 4);
  for (int part = 0; part < 2 && i != npos; ++part) {
    i = char_at(t, i, '-');
    if (i != npos) i = digits_at(t, i, 2);
  }
  if (i == npos || i >= t.size() || (t[i] != 'T' && t[i] != ' ')) return npos;
  i = clock_time(t, i + 1);
  if (i == npos) return npos;
  if (i < t.size() && t[i] == 'Z') return i + 1;
  if (i + 2 < t.size() && (t[i] == '+' || t[i] == '-') && is_digit(t[i + 1]) && is_digit(t[i + 2])) {
    size_t e = i + 3;
    if (e < t.size() && t[e] == ':') ++e;
    return digits_at(t, e, 2) != npos ? e + 2 : npos;
  }
  return i;
}

// "Nov 20 14:37:16" (syslog, journalctl).
size_t syslog_timestamp(std::string_view t, size_t i) {
  if (i + 15 > t.size() || !is_alpha(t[i]) || !is_alpha(t[i + 1]) || !is_alpha(t[i + 2]) || t[i + 3] != ' ') {
    return npos;
  }
  size_t d = i + 4;
  if (t[d] == ' ') ++d;
  const size_t e = digit_run(t, d);
  if (e == d || e - d > 2 || e >= t.size() || t[e] != ' ') return npos;
  return clock_time(t, e + 1);
}

// After a syslog time: " host program[pid]:" or " host program:" when the line has them.
size_t syslog_source(std::string_view t, size_t i) {
  size_t e = i;
  for (int word = 0; word < 2; ++word) {
    if (e >= t.size() || t[e] != ' ') return i;
    const size_t b = ++e;
    while (e < t.size() && is_label_char(t[e])) ++e;
    if (e == b) return i;
  }
  if (e < t.size() && t[e] == '[') {
    const size_t d = digit_run(t, e + 1);
    if (d == e + 1 || d >= t.size() || t[d] != ']') return i;
    e = d + 1;
  }
  return e < t.size() && t[e] == ':' ? e + 1 : i;
}

// A single blank after a token belongs to it (the separator the launcher wrote).
// The blank after a token, or a " | " column separator (Python logging formats such as NeMo Automodel's
// "2025-09-01 07:13:17 | INFO | root | text").
size_t separator(std::string_view t, size_t i) {
  if (i >= t.size() || t[i] != ' ') return i;
  if (i + 2 < t.size() && t[i + 1] == '|' && t[i + 2] == ' ') return i + 3;
  return i + 1;
}

// Whether the token ends the text or a blank or another token follows: a timestamp glued to a word is content.
bool ends_token(std::string_view t, size_t i) { return i >= t.size() || t[i] == ' ' || t[i] == '[' || t[i] == ':'; }

// The token's shape: its text with each run of digits folded to one '#', as a 64-bit FNV-1a hash (shapes are
// compared, never shown), with `tail` appended.
uint64_t fold_hash(std::string_view s, std::string_view tail = {}) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto add = [&](unsigned char c) { h = (h ^ c) * 0x100000001b3ull; };
  bool in_digits = false;
  for (char c : s) {
    if (is_digit(c)) {
      if (!in_digits) add('#');
      in_digits = true;
    } else {
      add(static_cast<unsigned char>(c));
      in_digits = false;
    }
  }
  for (char c : tail) add(static_cast<unsigned char>(c));
  return h;
}

int small_int(std::string_view t, size_t b, size_t e) {
  if (e == b || e - b > 9) return -1;
  int v = 0;
  for (size_t i = b; i < e; ++i) v = v * 10 + (t[i] - '0');
  return v;
}

// "rank=3", "rank 3", "rank3" inside a tag.
int rank_inside(std::string_view tag) {
  for (size_t at = tag.find("rank"); at != npos; at = tag.find("rank", at + 4)) {
    size_t d = at + 4;
    if (d < tag.size() && (tag[d] == '=' || tag[d] == ' ' || tag[d] == '_')) ++d;
    const size_t e = digit_run(tag, d);
    if (e > d) return small_int(tag, d, e);
  }
  return -1;
}

bool names_an_exception(std::string_view label) {
  for (std::string_view tail : {"Error", "Exception", "Warning", "Interrupt", "Exit", "Failure"}) {
    if (label.size() >= tail.size() && label.substr(label.size() - tail.size()) == tail) return true;
  }
  return false;
}

// Four or more lower-case words: a sentence in brackets, which is content (Megatron's "[before the start of
// training step] datetime: ..."), not a tag a logger or launcher puts before lines.
bool is_phrase(std::string_view inner) {
  int words = 0;
  bool in_word = false;
  for (char c : inner) {
    if (c >= 'a' && c <= 'z') {
      words += !in_word;
      in_word = true;
    } else if (c == ' ' && in_word) {
      in_word = false;
    } else {
      return false;
    }
  }
  return words >= 4;
}

bool bracket_token(std::string_view t, size_t i, PrefixToken& tok) {
  // [rank3]: / [rank3]:text (torch's per-rank prefix) and [default3]: (torchrun --tee)
  for (std::string_view tag : {"[rank", "[default"}) {
    if (t.compare(i, tag.size(), tag) != 0) continue;
    const size_t d = i + tag.size(), e = digit_run(t, d);
    if (e == d || e >= t.size() || t[e] != ']') continue;
    const bool rank_tag = tag == "[rank";
    size_t end = e + 1;
    if (end < t.size() && t[end] == ':') {
      ++end;
    } else if (!rank_tag) {
      continue;
    }
    tok = {PrefixToken::rank_tag, rank_tag ? separator(t, end) : end, small_int(t, d, e), -1,
           fold_hash(tag, "#]"), true};
    return true;
  }
  if (const size_t ts = iso_timestamp(t, i + 1); ts != npos && ts < t.size() && t[ts] == ']') {
    size_t end = ts + 1;
    if (end < t.size() && t[end] == ':') ++end;
    tok = {PrefixToken::timestamp, separator(t, end), -1, -1, fold_hash("[ts]"), true};
    return true;
  }
  size_t e = i + 1;
  while (e < t.size() && e - i < 96 && t[e] != ']' && t[e] != '[') ++e;
  if (e >= t.size() || t[e] != ']' || e == i + 1) return false;
  const std::string_view inner = t.substr(i + 1, e - i - 1);
  if (is_phrase(inner)) return false;
  size_t end = e + 1;
  if (end < t.size() && t[end] == ':') ++end;
  if (!ends_token(t, end) && t[end - 1] != ':') return false;
  tok = {PrefixToken::bracket, separator(t, end), rank_inside(inner), -1, fold_hash(t.substr(i, end - i)), false};
  if (digit_run(inner, 0) == inner.size()) tok.value = small_int(inner, 0, inner.size());
  return true;
}

// "(MegatronPolicyWorker[rank=0] pid=3294808, ip=10.0.0.1) ": Ray's tag before every line of a worker.
bool paren_token(std::string_view t, size_t i, PrefixToken& tok) {
  int depth = 0;
  size_t e = i;
  for (; e < t.size() && e - i < 256; ++e) {
    if (t[e] == '(' || t[e] == '[') ++depth;
    if (t[e] == ')' || t[e] == ']') --depth;
    if (depth == 0) break;
  }
  if (e >= t.size() || t[e] != ')' || !ends_token(t, e + 1)) return false;
  const std::string_view inner = t.substr(i + 1, e - i - 1);
  const bool ray = inner.find("pid=") != npos;
  tok = {ray ? PrefixToken::ray_tag : PrefixToken::bracket, separator(t, e + 1), rank_inside(inner), -1,
         ray ? fold_hash("(ray)") : fold_hash(t.substr(i, e + 1 - i)), ray};
  return true;
}

bool number_token(std::string_view t, size_t i, PrefixToken& tok) {
  size_t d = i;
  if (i == 0) {
    while (d < t.size() && d < 7 && t[d] == ' ') ++d;  // srun right-aligns its labels
  }
  const size_t e = digit_run(t, d);
  if (e == d || e - d > 9 || e >= t.size() || (t[e] != ':' && t[e] != '-')) return false;
  // "12:34" is a time, "2024-" a date, "3-7" a range: the number must be followed by text, not a digit.
  if (e + 1 < t.size() && is_digit(t[e + 1])) return false;
  tok = {PrefixToken::number, separator(t, e + 1), -1, small_int(t, d, e), fold_hash("#", t.substr(e, 1)), false};
  return true;
}

bool label_token(std::string_view t, size_t i, PrefixToken& tok) {
  size_t e = i;
  while (e < t.size() && e - i < 96 && is_label_char(t[e])) ++e;
  if (e == i || e >= t.size()) return false;
  const std::string_view name = t.substr(i, e - i);
  // docker compose: "trainer-1  | text"
  size_t b = e;
  while (b < t.size() && t[b] == ' ') ++b;
  if (b > e && b + 1 < t.size() && t[b] == '|' && t[b + 1] == ' ') {
    tok = {PrefixToken::label, b + 2, -1, -1, fold_hash(name, " |"), false};
    return true;
  }
  // NeMo-Run's "role/replica " before the torchrun tag.
  if (t[e] == ' ') {
    const size_t slash = name.rfind('/');
    if (slash == npos || slash + 1 == name.size() || digit_run(name, slash + 1) != name.size()) return false;
    tok = {PrefixToken::label, e + 1, -1, -1, fold_hash(name, " "), false};
    return true;
  }
  // pdsh / DeepSpeed multi-node: "worker-3: text"; exception lines ("RuntimeError: ...") never.
  if (t[e] == ':' && e + 1 < t.size() && (t[e + 1] == ' ' || t[e + 1] == '[') && !names_an_exception(name)) {
    tok = {PrefixToken::label, separator(t, e + 1), -1, -1, fold_hash(name, ":"), false};
    tok.colon = true;
    return true;
  }
  return false;
}

bool token_at(std::string_view t, size_t i, PrefixToken& tok) {
  if (i >= t.size()) return false;
  const char c = t[i];
  if (c == '[') return bracket_token(t, i, tok);
  if (c == '(') return paren_token(t, i, tok);
  if (is_digit(c) || (c == ' ' && i == 0)) {
    if (const size_t ts = iso_timestamp(t, i); ts != npos && ends_token(t, ts)) {
      tok = {PrefixToken::timestamp, separator(t, ts), -1, -1, fold_hash("ts"), true};
      return true;
    }
    return number_token(t, i, tok);
  }
  if (is_alpha(c)) {
    if (const size_t ts = syslog_timestamp(t, i); ts != npos && ends_token(t, ts)) {
      tok = {PrefixToken::timestamp, separator(t, syslog_source(t, ts)), -1, -1, fold_hash("syslog"), true};
      return true;
    }
    return label_token(t, i, tok);
  }
  return false;
}

// Launchers prefix every line or, when they prefix only some, do so from the first lines on: 64 lines tell.
// (Learning costs about a tenth of a microsecond a line; on a directory of small per-rank files it was a third of
// the scan with 512, and a directory of 16,384 such files scanned 7% faster with 64 than with 128.)
constexpr size_t kSampleLines = 64;
constexpr size_t kSampleBytes = 64 * 1024;

uint64_t load8(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// A cheap signature of a line, to tell whether lines of one width differ (not a hash table key): its length and
// its first and last 16 bytes.
uint64_t signature(std::string_view line) {
  uint64_t h = line.size() * 0x9E3779B97F4A7C15ull;
  if (line.size() < 16) {
    for (char c : line) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    return h;
  }
  const char* p = line.data();
  const char* e = p + line.size() - 16;
  for (uint64_t v : {load8(p), load8(p + 8), load8(e), load8(e + 8)}) h = (h ^ v) * 0x100000001b3ull + (h >> 31);
  return h;
}

}  // namespace

size_t char_width(std::string_view line) {
  // Bytes less UTF-8 continuation bytes (10xxxxxx), eight at a time.
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  size_t continuation = 0, i = 0;
  for (; i + 8 <= line.size(); i += 8) {
    const uint64_t x = load8(line.data() + i);
    // One bit per continuation byte, at bit 0 of its byte; summed by a multiply (no popcnt on the base ISA).
    const uint64_t ones = (x & kHigh & ~(x << 1)) >> 7;
    continuation += static_cast<size_t>((ones * 0x0101010101010101ull) >> 56);
  }
  for (; i < line.size(); ++i) continuation += (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80;
  return line.size() - continuation;
}

size_t prefix_tokens(std::string_view line, PrefixToken* out, size_t max_tokens) {
  size_t n = 0, at = 0;
  PrefixToken tok{};
  // Content starts with brackets too ("[PG ID 5 ...]", "[Rank 0]", "[E321 ...]"): a generic bracket is a prefix
  // only as the first token, and the rank tag torchrun puts right before the text is the last one (another rank
  // tag aside).
  while (n < max_tokens && token_at(line, at, tok)) {
    if (tok.end <= at) break;
    if (n > 0 && tok.kind == PrefixToken::bracket) break;
    if (n > 0 && out[n - 1].kind == PrefixToken::rank_tag && tok.kind != PrefixToken::rank_tag) break;
    at = tok.end;
    out[n++] = tok;
    tok = PrefixToken{};
  }
  return n;
}

std::vector<PrefixToken> prefix_tokens(std::string_view line, size_t max_tokens) {
  std::vector<PrefixToken> out(max_tokens);
  out.resize(prefix_tokens(line, out.data(), max_tokens));
  return out;
}

uint64_t combine(uint64_t key, uint64_t shape) { return (key ^ shape) * 0x9E3779B97F4A7C15ull + (key >> 29); }

LinePrefixes::Template* LinePrefixes::find(uint64_t key) {
  for (Template& t : templates_) {
    if (t.key == key) return &t;
  }
  return nullptr;
}

const LinePrefixes::Template* LinePrefixes::find(uint64_t key) const {
  return const_cast<LinePrefixes*>(this)->find(key);
}

void LinePrefixes::observe(std::string_view line) {
  if (settled_ || line.empty()) return;
  if (samples_.empty()) {
    samples_.reserve(kSampleLines);
    templates_.reserve(16);
  }
  ++sample_lines_;
  PrefixToken tokens[kMaxPrefixTokens];
  const size_t count = prefix_tokens(line, tokens, kMaxPrefixTokens);
  uint64_t key = 0;
  for (size_t i = 0; i < count; ++i) {
    const PrefixToken& tok = tokens[i];
    key = combine(key, tok.shape);
    Template* t = find(key);
    if (!t) {
      if (templates_.size() >= 256) break;  // a sample of 128 lines has fewer; bounded whatever the input
      templates_.push_back(Template{key});
      t = &templates_.back();
    }
    ++t->lines;
    t->label_colon = tok.colon;
    if (tok.value >= 0) {
      if (t->last_value >= 0) {
        ++t->steps;
        t->counting_up += tok.value > t->last_value;  // grep -n of a pattern: increasing, not consecutive
      }
      t->last_value = tok.value;
    }
  }
  samples_.push_back({char_width(line), signature(line), fold_hash(line.substr(0, 10))});
  // Lines or bytes, counted on the lines themselves: where learning ends does not depend on how the input was cut.
  observed_bytes_ += line.size() + 1;
  if (sample_lines_ >= kSampleLines || observed_bytes_ >= kSampleBytes) settle();
}

void LinePrefixes::settle() {
  if (settled_) return;
  settled_ = true;
  const uint64_t n = sample_lines_;
  for (Template& t : templates_) {
    // A prefix starts at least a tenth of the lines (a third for "name:" labels, which content can look like).
    t.prefix = t.lines >= 2 && t.lines * (t.label_colon ? 3 : 10) >= n;
    t.line_numbers = t.steps > 0 && t.counting_up * 5 >= t.steps * 4;
  }
  // Hard wrap: the widest lines all have one width W and several of them differ; the lines after them do not
  // start as they do (Megatron's fixed-width iteration lines follow each other); and the cut falls in different
  // places: the W-wide pieces or the pieces after them start in more than one way (a fixed-width line followed
  // each time by the same kind of line, as Megatron's old timers follow its iteration lines, is no wrap).
  size_t width = 0;
  for (const Sample& x : samples_) width = std::max(width, x.width);
  uint64_t lines = 0, successors = 0, alike = 0;
  std::vector<uint64_t> starts, successor_starts;
  auto note = [](std::vector<uint64_t>& v, uint64_t s) {
    if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
  };
  for (size_t i = 0; i < samples_.size(); ++i) {
    const Sample& x = samples_[i];
    if (x.width != width) continue;
    ++lines;
    note(starts, x.start);
    if (i + 1 < samples_.size()) {
      ++successors;
      alike += samples_[i + 1].start == x.start;
      note(successor_starts, samples_[i + 1].start);
    }
  }
  std::vector<uint64_t> texts;  // distinct W-wide lines
  for (const Sample& x : samples_) {
    if (x.width == width) note(texts, x.signature);
  }
  if (width >= 60 && lines >= 3 && texts.size() >= 3 && successors >= 2 && alike * 4 < successors &&
      (starts.size() >= 2 || successor_starts.size() >= 2)) {
    wrap_width_ = width;
  }
  samples_.clear();
  samples_.shrink_to_fit();
}

LinePrefixes::Stripped LinePrefixes::strip(std::string_view line) const {
  Stripped out;
  if (line.empty()) return out;
  const char c = line[0];
  if (c != '[' && c != '(' && c != ' ' && !is_digit(c) && !is_alpha(c)) return out;
  PrefixToken tokens[kMaxPrefixTokens];
  const size_t count = prefix_tokens(line, tokens, kMaxPrefixTokens);
  uint64_t key = 0;
  int rank = -1, number_rank = -1;
  // The longest run of tokens that is a learned prefix or a prefix by form (a rank tag after a learned job label).
  for (size_t i = 0; i < count; ++i) {
    const PrefixToken& tok = tokens[i];
    key = combine(key, tok.shape);
    const Template* t = find(key);
    const bool learned = t && t->prefix;
    if (!learned && !tok.by_form) break;
    out.length = tok.end;
    if (tok.rank >= 0) rank = tok.rank;
    if (tok.kind == PrefixToken::number && !(learned && t->line_numbers)) number_rank = static_cast<int>(tok.value);
  }
  out.rank = rank >= 0 ? rank : number_rank;
  return out;
}

}  // namespace hcp::logscan
