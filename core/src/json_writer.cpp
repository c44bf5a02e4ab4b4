#include "hcp/json_writer.hpp"

#include <cmath>
#include <cstdio>

namespace hcp {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not one.
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  }
  if (n == 2 && c < 0xC2) return 0;                                 // overlong
  if (n == 3 && c == 0xE0 && b(i + 1) < 0xA0) return 0;             // overlong
  if (n == 3 && c == 0xED && b(i + 1) >= 0xA0) return 0;            // surrogates
  if (n == 4 && (c > 0xF4 || (c == 0xF0 && b(i + 1) < 0x90) || (c == 0xF4 && b(i + 1) >= 0x90))) return 0;
  return n;
}

}  // namespace

void JsonWriter::value(double v) {
  separator();
  if (!std::isfinite(v)) {  // JSON has no NaN or infinity
    out_ += "null";
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  out_ += buf;
}

void JsonWriter::string_literal(std::string_view s) {
  out_ += '"';
  for (size_t i = 0; i < s.size();) {
    // Copy the run of plain ASCII in one append: most strings are nothing else.
    size_t run = i;
    while (run < s.size()) {
      const unsigned char r = static_cast<unsigned char>(s[run]);
      if (r < 0x20 || r >= 0x80 || r == '"' || r == '\\') break;
      ++run;
    }
    if (run > i) {
      out_.append(s.substr(i, run - i));
      i = run;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out_ += '\\';
      out_ += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      static const char* hex = "0123456789abcdef";
      switch (c) {
        case '\n': out_ += "\\n"; break;
        case '\t': out_ += "\\t"; break;
        case '\r': out_ += "\\r"; break;
        default:
          out_ += "\\u00";
          out_ += hex[c >> 4];
          out_ += hex[c & 15];
      }
      ++i;
    } else if (c < 0x80) {
      out_ += static_cast<char>(c);
      ++i;
    } else if (const size_t n = utf8_length(s, i)) {
      out_.append(s.substr(i, n));
      i += n;
    } else {
      out_ += "\xEF\xBF\xBD";  // U+FFFD for an invalid byte
      ++i;
    }
  }
  out_ += '"';
}

}  // namespace hcp
