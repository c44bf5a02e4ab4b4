// The vector check of an iteration line's counters ("     10/     100") accepts exactly what the scalar parser
// accepts and ends at the same byte, on random text around the shape and on the edges (widths, lengths < 32).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "extract/scan_state.hpp"

namespace hcp::logscan {
namespace {

void expect_same(const std::string& text) {
  const char* p = text.data();
  const char* end = p + text.size();
  EXPECT_EQ(skip_iteration_counters(p, end), iteration_counters(p, end).after) << "'" << text << "'";
}

TEST(IterationCounters, VectorCheckAgreesWithTheParser) {
  const std::string digits(25, '7');
  for (size_t blanks : {0u, 1u, 8u, 30u, 33u}) {
    for (size_t a : {0u, 1u, 9u, 17u, 18u, 19u}) {
      for (size_t b : {0u, 1u, 9u, 18u, 19u, 25u}) {
        const std::string counters = std::string(blanks, ' ') + digits.substr(0, a) + "/ " + digits.substr(0, b);
        for (const std::string& tail : {std::string(), std::string(" | consumed samples: 1 |"), std::string(40, 'x')}) {
          expect_same(counters + tail);
        }
      }
    }
  }
  std::mt19937 rng(17);
  const std::string alphabet = "  0123456789/|x\xff";
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    const size_t n = rng() % 48;
    for (size_t i = 0; i < n; ++i) text += alphabet[rng() % alphabet.size()];
    expect_same(text);
  }
}

}  // namespace
}  // namespace hcp::logscan
