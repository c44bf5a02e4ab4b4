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

std::string_view remove_ansi(std::string_view raw, std::string& scratch) {
  if (std::memchr(raw.data(), 0x1b, raw.size()) == nullptr) return raw;
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
  return scratch;
}

LineView view_line(std::string_view raw, std::string& scratch, bool escape, const LinePrefixes& prefixes) {
  if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
  if (escape) raw = remove_ansi(raw, scratch);
  LineView v;
  v.stable = raw.data() != scratch.data();
  const LinePrefixes::Stripped p = prefixes.strip(raw);
  v.rank = p.rank;
  raw.remove_prefix(p.length);
  // A progress bar redrawn with '\r' shows its last state: the text after the last '\r' (which may carry the
  // prefix again).
  if (const void* cr = memrchr(raw.data(), '\r', raw.size())) {
    raw.remove_prefix(static_cast<size_t>(static_cast<const char*>(cr) - raw.data()) + 1);
    const LinePrefixes::Stripped again = prefixes.strip(raw);
    if (again.rank >= 0) v.rank = again.rank;
    raw.remove_prefix(again.length);
  }
  v.text = raw;
  return v;
}

}  // namespace hcp::logscan
