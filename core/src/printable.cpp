#include "hcp/printable.hpp"

#include <cstdint>
#include <cstdio>

namespace hcp {
namespace {

enum class Mode { text, line, aligned };

// The length of the valid UTF-8 sequence at s[i] (2-4), or 0 when it is not one (overlong forms, surrogates and
// values past U+10FFFF are not).
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const uint8_t c = b(0);
  size_t n = 0;
  uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (b(k) & 0x3F);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
    return 0;
  return n;
}

void escape(std::string& out, const char* format, unsigned value, size_t bytes, Mode mode) {
  if (mode == Mode::aligned) {
    out.append(bytes, ' ');
    return;
  }
  char buf[8];
  std::snprintf(buf, sizeof buf, format, value);
  out += buf;
}

std::string convert(std::string_view s, Mode mode) {
  // The common case, plain printable ASCII, is returned as it is.
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<uint8_t>(s[i]);
    if (c >= 0x80 || c == 0x7F || (c < 0x20 && !(c == '\t' && mode != Mode::aligned) && !(c == '\n' && mode == Mode::text)))
      break;
    ++i;
  }
  if (i == s.size()) return std::string(s);
  std::string out(s.substr(0, i));
  while (i < s.size()) {
    const auto c = static_cast<uint8_t>(s[i]);
    if (c < 0x80) {
      const bool keep = c >= 0x20 ? c != 0x7F : (c == '\t' || (c == '\n' && mode == Mode::text));
      if (keep && !(c == '\t' && mode == Mode::aligned)) out += static_cast<char>(c);
      else escape(out, "\\x%02x", c, 1, mode);
      ++i;
      continue;
    }
    const size_t n = utf8_length(s, i);
    if (n == 0) {
      escape(out, "\\x%02x", c, 1, mode);
      ++i;
    } else if (n == 2 && c == 0xC2 && static_cast<uint8_t>(s[i + 1]) < 0xA0) {  // U+0080..U+009F: C1 controls
      escape(out, "\\u%04x", static_cast<uint8_t>(s[i + 1]), 2, mode);
      i += 2;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace

std::string printable(std::string_view text) { return convert(text, Mode::text); }
std::string printable_line(std::string_view text) { return convert(text, Mode::line); }
std::string printable_aligned(std::string_view text) { return convert(text, Mode::aligned); }

}  // namespace hcp
