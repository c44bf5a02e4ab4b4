// The SIMD prefilter finds exactly what a naive search finds, with the right line starts and newline counts, and
// stops at the limit it is given.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "match/literal_set.hpp"
#include "match/triggers.hpp"

namespace hcp::logscan {
namespace {

struct Found {
  size_t pos;
  uint64_t ids;
  size_t line_start;
  uint64_t newlines;
  bool operator==(const Found&) const = default;
};

std::vector<std::string> trigger_texts() {
  std::vector<std::string> literals;
  for (const TriggerLiteral& t : trigger_literals()) literals.emplace_back(t.text);
  return literals;
}

std::string random_text(std::mt19937& rng, const std::vector<std::string>& literals, size_t n) {
  const std::string alphabet = "abcdefgilmnoprstuwxyz_()[]|:%-. \nCOMPLETEHyPLW0123456789";
  std::string text;
  while (text.size() < n) {
    if (rng() % 40 == 0) {
      text += literals[rng() % literals.size()];
    } else {
      text += alphabet[rng() % alphabet.size()];
    }
  }
  return text;
}

// Literal k reports bit k % 64: the scanner's literals outnumber the bits, and some share one.
std::vector<Found> naive(const std::string& text, size_t limit, const std::vector<std::string>& literals) {
  std::vector<Found> out;
  size_t line_start = 0;
  uint64_t newlines = 0;
  for (size_t pos = 0; pos < limit; ++pos) {
    uint64_t ids = 0;
    for (uint32_t id = 0; id < literals.size(); ++id) {
      if (text.compare(pos, literals[id].size(), literals[id]) == 0) ids |= uint64_t{1} << (id % 64);
    }
    if (ids) out.push_back({pos, ids, line_start, newlines});
    if (text[pos] == '\n') {
      ++newlines;
      line_start = pos + 1;
    }
  }
  return out;
}

TEST(LiteralSet, MatchesANaiveSearchOnRandomText) {
  const std::vector<std::string> literals = trigger_texts();
  std::vector<uint8_t> bits;
  for (size_t k = 0; k < literals.size(); ++k) bits.push_back(static_cast<uint8_t>(k % 64));
  const LiteralSet set(literals, bits);
  std::mt19937 rng(11);
  for (int round = 0; round < 40; ++round) {
    const std::string text = random_text(rng, literals, 1 + rng() % 5000);
    const size_t limit = round % 2 ? text.size() : rng() % (text.size() + 1);  // half the rounds stop early
    std::vector<Found> got;
    ScanCursor cur;
    while (const uint64_t ids = set.next(text.data(), text.size(), limit, cur)) {
      got.push_back({cur.pos, ids, cur.line_start, cur.newlines});
      ++cur.pos;
    }
    ASSERT_EQ(got, naive(text, limit, literals)) << "round " << round;
    EXPECT_EQ(cur.pos, limit);
    EXPECT_EQ(cur.newlines, static_cast<uint64_t>(std::count(text.begin(), text.begin() + static_cast<long>(limit), '\n')));
    const size_t nl = limit == 0 ? std::string::npos : text.rfind('\n', limit - 1);
    EXPECT_EQ(cur.line_start, nl == std::string::npos ? 0 : nl + 1);
  }
}

TEST(LiteralSet, ReportsEveryLiteralThatStartsAtOnePosition) {
  const LiteralSet set({"abcdef", "abcd", "xabc"});
  const std::string text = "..abcdef..";
  ScanCursor cur;
  EXPECT_EQ(set.next(text.data(), text.size(), text.size(), cur), 0b011u);
  EXPECT_EQ(cur.pos, 2u);
}

TEST(LiteralSet, RejectsLiteralsItCannotSearch) {
  EXPECT_THROW(LiteralSet({"abc"}), std::invalid_argument);
  EXPECT_THROW(LiteralSet({"ab\ncd"}), std::invalid_argument);
  EXPECT_THROW(LiteralSet(std::vector<std::string>(65, "abcd")), std::invalid_argument);
  EXPECT_THROW(LiteralSet({"abcd", "efgh"}, {0}), std::invalid_argument);   // a bit for every literal
  EXPECT_THROW(LiteralSet({"abcd"}, {64}), std::invalid_argument);          // bits are those of a uint64_t
  EXPECT_THROW(LiteralSet(std::vector<std::string>(257, "abcd"), std::vector<uint8_t>(257, 0)),
               std::invalid_argument);
}

// Literals sharing a bit report that bit (the scanner gives one bit to every literal with the same triggers), so
// more than 64 literals can be searched; each literal is still found where it starts.
TEST(LiteralSet, LiteralsMayShareABit) {
  std::vector<std::string> literals;
  std::vector<uint8_t> bits;
  for (int k = 0; k < 150; ++k) {
    literals.push_back("key" + std::to_string(1000 + k));
    bits.push_back(static_cast<uint8_t>(k % 3 == 0 ? 5 : k % 40));
  }
  const LiteralSet set(literals, bits);
  for (int k : {0, 3, 41, 77, 149}) {
    const std::string text = "....key" + std::to_string(1000 + k) + "....";
    ScanCursor cur;
    EXPECT_EQ(set.next(text.data(), text.size(), text.size(), cur), uint64_t{1} << bits[static_cast<size_t>(k)]) << k;
    EXPECT_EQ(cur.pos, 4u);
  }
  ScanCursor cur;
  const std::string none = "....key0999....key1150....";
  EXPECT_EQ(set.next(none.data(), none.size(), none.size(), cur), 0u);
}

}  // namespace
}  // namespace hcp::logscan
