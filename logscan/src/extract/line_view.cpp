#include <charconv>
#include <cstring>

#include "scan_state.hpp"

namespace hcp::logscan {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::optional<int64_t> to_int(std::string_view s) {
  s = trim(s);
  int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc()) return std::nullopt;
  return v;
}

std::optional<double> to_double(std::string_view s) {
  s = trim(s);
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc()) return std::nullopt;
  return v;
}

std::optional<std::vector<int64_t>> to_int_list(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
  std::vector<int64_t> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == ',')) ++i;
    if (i >= s.size()) break;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != ',') ++j;
    const auto v = to_int(s.substr(i, j - i));
    if (!v) return std::nullopt;
    out.push_back(*v);
    i = j;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

namespace {

bool is_digit(char c) { return static_cast<unsigned>(c - '0') < 10; }

// "[default12]:" / "[rank12]:" -> 12 and the length of the prefix. Every line with a trigger comes here, so the
// tags are compared as constants and the digits without the locale's classification.
bool bracket_prefix(std::string_view t, int& rank, size_t& len) {
  size_t i = 0;
  bool rank_tag = false;
  if (t.size() >= 8 && std::memcmp(t.data(), "[default", 8) == 0) {
    i = 8;
  } else if (t.size() >= 5 && std::memcmp(t.data(), "[rank", 5) == 0) {
    i = 5;
    rank_tag = true;
  } else {
    return false;
  }
  const size_t start = i;
  int64_t v = 0;
  while (i < t.size() && is_digit(t[i]) && i - start < 9) v = v * 10 + (t[i++] - '0');
  if (i == start || t.substr(i, 2) != "]:") return false;
  rank = static_cast<int>(v);
  len = i + 2;
  if (rank_tag && len < t.size() && t[len] == ' ') ++len;  // newer torch writes "[rank3]: text"
  return true;
}

// Slurm --label: "12: " at the very start.
bool slurm_prefix(std::string_view t, int& rank, size_t& len) {
  size_t i = 0;
  while (i < t.size() && i < 7 && t[i] == ' ') ++i;  // srun right-aligns the labels
  const size_t start = i;
  int64_t v = 0;
  while (i < t.size() && is_digit(t[i]) && i - start < 7) v = v * 10 + (t[i++] - '0');
  if (i == start || i + 1 >= t.size() || t[i] != ':' || t[i + 1] != ' ') return false;
  rank = static_cast<int>(v);
  len = i + 2;
  return true;
}

}  // namespace

LineView view_line(std::string_view raw, std::string& scratch, bool escape) {
  if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
  if (escape && std::memchr(raw.data(), 0x1b, raw.size()) != nullptr) {
    // Drop CSI sequences (ESC [ ... final byte) and lone ESC characters.
    scratch.clear();
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != 0x1b) {
        scratch += raw[i];
        continue;
      }
      if (i + 1 < raw.size() && raw[i + 1] == '[') {
        i += 2;
        while (i < raw.size() && !(raw[i] >= 0x40 && raw[i] <= 0x7e)) ++i;
      }
    }
    raw = scratch;
  }
  LineView v;
  v.stable = raw.data() != scratch.data();
  size_t len = 0;
  if ((!raw.empty() && raw[0] == '[' && bracket_prefix(raw, v.rank, len)) ||
      (!raw.empty() && (is_digit(raw[0]) || raw[0] == ' ') &&
       slurm_prefix(raw, v.rank, len))) {
    raw.remove_prefix(len);
  }
  v.text = raw;
  return v;
}

}  // namespace hcp::logscan
