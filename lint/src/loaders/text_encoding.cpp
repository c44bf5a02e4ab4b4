#include "text_encoding.hpp"

#include <cstdint>
#include <string_view>

#include "hcp/error.hpp"

namespace hcp::lint {
namespace {

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | cp >> 6);
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | cp >> 12);
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | cp >> 18);
    out += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

[[noreturn]] void malformed(const std::string& name, const char* encoding, size_t at, const char* what) {
  throw Error(Errc::parse, name + ": invalid " + encoding + " at byte " + std::to_string(at) + ": " + what);
}

// Units of `width` bytes (2 or 4) in the given byte order, from `start`.
uint32_t unit(std::string_view s, size_t i, int width, bool big) {
  uint32_t v = 0;
  for (int k = 0; k < width; ++k) {
    const auto b = static_cast<uint8_t>(s[i + static_cast<size_t>(big ? k : width - 1 - k)]);
    v = v << 8 | b;
  }
  return v;
}

std::string decode(const std::string& name, std::string_view s, int width, bool big) {
  const char* encoding = width == 2 ? (big ? "UTF-16BE" : "UTF-16LE") : (big ? "UTF-32BE" : "UTF-32LE");
  const size_t w = static_cast<size_t>(width);
  if (s.size() % w) malformed(name, encoding, s.size() - s.size() % w, "the text ends inside a character");
  std::string out;
  out.reserve(s.size() / w * 3 / 2);
  for (size_t i = w; i < s.size(); i += w) {  // from past the mark
    uint32_t cp = unit(s, i, width, big);
    if (width == 2 && cp >= 0xD800 && cp <= 0xDBFF) {
      if (i + 2 * w > s.size()) malformed(name, encoding, i, "a high surrogate without its pair");
      const uint32_t low = unit(s, i + w, width, big);
      if (low < 0xDC00 || low > 0xDFFF) malformed(name, encoding, i, "a high surrogate without its pair");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      i += w;
    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
      malformed(name, encoding, i, "an unpaired surrogate");
    } else if (cp > 0x10FFFF) {
      malformed(name, encoding, i, "a code point past U+10FFFF");
    }
    append_utf8(out, cp);
  }
  return out;
}

}  // namespace

void decode_byte_order_mark(const std::string& name, std::string& text) {
  const std::string_view s = text;
  auto starts = [&](std::string_view mark) { return s.substr(0, mark.size()) == mark; };
  using namespace std::string_view_literals;
  if (starts("\xEF\xBB\xBF"sv)) text.erase(0, 3);
  else if (starts("\xFF\xFE\x00\x00"sv)) text = decode(name, s, 4, false);  // before UTF-16LE: the same first two
  else if (starts("\x00\x00\xFE\xFF"sv)) text = decode(name, s, 4, true);
  else if (starts("\xFF\xFE"sv)) text = decode(name, s, 2, false);
  else if (starts("\xFE\xFF"sv)) text = decode(name, s, 2, true);
}

}  // namespace hcp::lint
