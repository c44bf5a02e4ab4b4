// edit_distance(): the linter's key suggestions and the command line's "did you mean" (issue 51, item 6).
#include <gtest/gtest.h>

#include "hcp/edit_distance.hpp"

namespace hcp {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("", "lint"), 4u);
  EXPECT_EQ(edit_distance("lint", ""), 4u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("--exclude", "--exclude"), 0u);
  EXPECT_EQ(edit_distance("p2p", "a2a"), 2u);
}

TEST(EditDistance, ASwapOfNeighboursIsOneEdit) {
  EXPECT_EQ(edit_distance("lnit", "lint"), 1u);
  EXPECT_EQ(edit_distance("--fromat", "--format"), 1u);
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
  // Optimal string alignment: no substring is edited twice, so "ca" -> "abc" is 3, not 2.
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);
}

}  // namespace
}  // namespace hcp

namespace hcp {
namespace {

TEST(EditDistance, StopsPastTheLimit) {
  EXPECT_EQ(edit_distance("context_parallel_size", "context_paralel_size", 3), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting", 3), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting", 2), 3u);  // past 2: limit + 1
  EXPECT_EQ(edit_distance("a", "abcdefgh", 3), 4u);       // the lengths alone say so
  EXPECT_EQ(edit_distance("abcdef", "ghijkl", 1), 2u);
  // Early exit never hides a distance within the limit, transpositions included.
  EXPECT_EQ(edit_distance("abdc", "abcd", 1), 1u);
  EXPECT_EQ(edit_distance("xabcd", "abcd", 1), 1u);
}

}  // namespace
}  // namespace hcp
