// The end of a line and whether an ESC byte, or a CR that is not the last byte before the newline, comes before it:
// the vector search agrees with a byte loop from every start, on text with newlines, ESC and CR bytes at random
// places and densities (CRLF endings included), and at every distance from the end.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "match/line_end.hpp"

namespace hcp::logscan {
namespace {

LineEnd naive(const std::string& text, size_t from) {
  bool escape = false;
  size_t i = from;
  for (; i < text.size() && text[i] != '\n'; ++i) {
    escape = escape || text[i] == 0x1b || (text[i] == '\r' && i + 1 < text.size() && text[i + 1] != '\n');
  }
  return {i, escape};
}

TEST(LineEnd, AgreesWithAByteLoop) {
  std::mt19937 rng(41);
  for (int round = 0; round < 300; ++round) {
    const size_t n = rng() % 700;
    const auto newline_every = 1 + rng() % 300, esc_every = 1 + rng() % 900, cr_every = 1 + rng() % 400;
    const bool crlf = rng() % 2 == 0;
    std::string text(n, 'x');
    for (size_t k = 0; k < n; ++k) {
      char& c = text[k];
      if (rng() % newline_every == 0) {
        c = '\n';
        if (crlf && k > 0) text[k - 1] = '\r';
      } else if (rng() % esc_every == 0) {
        c = 0x1b;
      } else if (rng() % cr_every == 0) {
        c = '\r';
      }
    }
    for (size_t from = 0; from <= n; ++from) {
      const LineEnd want = naive(text, from);
      const LineEnd got = find_line_end(text.data(), from, n);
      ASSERT_EQ(got.end, want.end) << "round " << round << " from " << from;
      ASSERT_EQ(got.escape, want.escape) << "round " << round << " from " << from;
    }
  }
}

}  // namespace
}  // namespace hcp::logscan
