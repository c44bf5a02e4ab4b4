// The SIMD prefilter finds exactly what a naive search finds, with the right newline counts.
#include <gtest/gtest.h>

#include <random>

#include "match/literal_set.hpp"
#include "match/triggers.hpp"

namespace hcp::logscan {
namespace {

TEST(LiteralSet, MatchesANaiveSearchOnRandomText) {
  std::vector<std::string> literals;
  for (const TriggerLiteral& t : trigger_literals()) literals.emplace_back(t.text);
  const LiteralSet set(literals);
  std::mt19937 rng(11);
  const std::string alphabet = "abcdefgilmnoprstuwxyz_()[]|:%-. \nCOMPLETEHyPLW0123456789";
  for (int round = 0; round < 20; ++round) {
    std::string text;
    const size_t n = 1 + rng() % 5000;
    while (text.size() < n) {
      if (rng() % 40 == 0) {
        text += literals[rng() % literals.size()];
      } else {
        text += alphabet[rng() % alphabet.size()];
      }
    }
    std::vector<LiteralHit> hits;
    const uint64_t newlines = set.find_all(text.data(), text.size(), hits);
    std::vector<std::pair<size_t, uint32_t>> expected, got;
    for (size_t pos = 0; pos < text.size(); ++pos) {
      for (uint32_t id = 0; id < literals.size(); ++id) {
        if (text.compare(pos, literals[id].size(), literals[id]) == 0) expected.emplace_back(pos, id);
      }
    }
    for (const LiteralHit& h : hits) {
      got.emplace_back(h.pos, h.id);
      EXPECT_EQ(h.newlines, static_cast<uint64_t>(std::count(text.begin(), text.begin() + static_cast<long>(h.pos), '\n')));
    }
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, expected) << "round " << round;
    EXPECT_EQ(newlines, static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n')));
  }
}

}  // namespace
}  // namespace hcp::logscan
