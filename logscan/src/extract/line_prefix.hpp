// Line prefixes that launchers and log collectors put before each line of a training log, learned per input.
//
// A prefix is a run of tokens at the start of a line: rank tags ("[rank3]:", "[default3]:"), timestamps (ISO,
// RFC 3339 with nanoseconds as `kubectl logs --timestamps` writes them, syslog "Nov 20 14:37:16"), bracketed tags
// ("[1745]" from grep -n, "[INFO]"), Ray actor tags ("(MegatronPolicyWorker[rank=0] pid=1, ip=10.0.0.1)"),
// job labels ("nemo.collections.llm.api.pretrain/0" from NeMo-Run), compose service tags ("trainer-1  | "), and
// numbers ("3: " from srun -l, "123:" from grep -n). The tokenizer knows these shapes, not literals; which of
// them form this input's prefix is learned from the input's first lines: a token sequence is a prefix when its
// shape (digits folded) starts enough of them. Rank tags, full timestamps and Ray tags are prefixes by their
// form alone, because torchrun and Ray often prefix only the lines that come late (tracebacks at the end).
//
// The same sample tells whether the input was hard-wrapped by a terminal: many lines cut at exactly one width,
// none longer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hcp::logscan {

struct PrefixToken {
  enum Kind : uint8_t { rank_tag, timestamp, bracket, ray_tag, label, number };
  Kind kind;
  size_t end = 0;       // where the token, with the one separator it owns, ends in the line
  int rank = -1;        // a rank the token names ("[rank3]", "rank=3", "[default3]")
  int64_t value = -1;   // the number of a number or "[123]" token (a srun label or a grep line number)
  uint64_t shape = 0;   // the token's text with digit runs folded to '#', hashed
  bool by_form = false;  // a prefix whatever the learning says
  bool colon = false;    // a "name:" label, which content can look like
};

// At most `max_tokens` leading tokens of a line, each starting where the previous one ended, into out; returns how
// many (no allocation: every sampled and every stripped line comes here).
size_t prefix_tokens(std::string_view line, PrefixToken* out, size_t max_tokens);
std::vector<PrefixToken> prefix_tokens(std::string_view line, size_t max_tokens = 6);
constexpr size_t kMaxPrefixTokens = 6;

class LinePrefixes {
 public:
  // Learning: the input's first lines, then settle().
  void observe(std::string_view line);
  void settle();
  bool settled() const { return settled_; }
  // Lines observed so far, and whether the sample is big enough to settle on.
  size_t observed() const { return sample_lines_; }

  struct Stripped {
    size_t length = 0;  // bytes of prefix
    int rank = -1;
  };
  Stripped strip(std::string_view line) const;

  // The terminal width the input was hard-wrapped at (in characters), 0 when it was not.
  size_t wrap_width() const { return wrap_width_; }

 private:
  struct Template {
    uint64_t key = 0;  // the shapes of a token sequence, hashed together
    uint64_t lines = 0;
    bool label_colon = false;
    // Numbers seen in this template's number token over consecutive sample lines: line numbers (grep -n)
    // count up by one; srun labels do not.
    int64_t last_value = -1;
    uint64_t counting_up = 0, steps = 0;
    bool line_numbers = false;
    bool prefix = false;
  };
  struct Sample {  // a sample line, for the wrap width
    size_t width;
    uint64_t signature, start;  // the line, and its first 10 bytes with digits folded
  };
  Template* find(uint64_t key);
  const Template* find(uint64_t key) const;

  std::vector<Template> templates_;  // few: a linear search beats a map of strings
  std::vector<Sample> samples_;
  size_t sample_lines_ = 0;
  size_t observed_bytes_ = 0;
  size_t wrap_width_ = 0;
  bool settled_ = false;
};

// The width of a line in characters (UTF-8 continuation bytes do not count).
size_t char_width(std::string_view line);

}  // namespace hcp::logscan
