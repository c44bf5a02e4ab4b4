// The key order of labelled forward calls (key_order.hpp): keys gathered in rank order are walked in sequence order
// (a document's chunks joined into one run, padding last), and calls whose runs cannot be joined keep their stored
// order: a single-rank packed batch, a ring step's block (a document's two chunks are not adjacent in the sequence).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "../../runtime/src/attention/cpu/key_order.hpp"

namespace hcp::cpu {
namespace {

struct Keys {
  std::vector<int32_t> seg, pos;
  void add(int32_t s, int32_t first, int32_t rows) {
    for (int32_t i = 0; i < rows; ++i) seg.push_back(s), pos.push_back(s < 0 ? 0 : first + i);
  }
  AttnParams params() const {
    AttnParams p;
    p.sk = static_cast<int64_t>(seg.size());
    p.k_labels = {seg.data(), pos.data()};
    return p;
  }
};

// Two documents of 8 and 4 tokens, each padded (segment -1) to 8 and split into 4 chunks (cp 2); rank r holds
// chunks r and 3 - r of each.
void rank_chunks(int rank, Keys* k) {
  for (int c : {rank, 3 - rank}) k->add(0, 2 * c, 2);
  for (int c : {rank, 3 - rank}) {
    if (2 * c < 4) k->add(1, 2 * c, 2); else k->add(-1, 0, 2);
  }
}

TEST(KeyOrder, GatheredKeysAreWalkedInSequenceOrderWithPaddingLast) {
  Keys k;
  rank_chunks(0, &k);  // stored rows 0..7: doc0 c0, doc0 c3, doc1 c0, pad
  rank_chunks(1, &k);  // stored rows 8..15: doc0 c1, doc0 c2, doc1 c1, pad
  const KeyOrder order = key_order(k.params());
  ASSERT_TRUE(order.reordered());
  EXPECT_EQ(order.rows, (std::vector<int64_t>{0, 1, 8, 9, 10, 11, 2, 3, 4, 5, 12, 13, 6, 7, 14, 15}));
  EXPECT_EQ(order.seg, (std::vector<int32_t>{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, -1, -1, -1, -1}));
  EXPECT_EQ(order.pos, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 0, 0, 0, 0}));
}

TEST(KeyOrder, RunsThatCannotJoinKeepTheStoredOrder) {
  Keys ring_block;
  rank_chunks(0, &ring_block);  // chunks 0 and 3 of each document
  EXPECT_FALSE(key_order(ring_block.params()).reordered());
  Keys packed;  // a single rank's packed batch: documents whole, in order
  packed.add(0, 0, 8), packed.add(1, 0, 4), packed.add(-1, 0, 4);
  EXPECT_FALSE(key_order(packed.params()).reordered());
  EXPECT_FALSE(key_order(AttnParams{}).reordered());  // no labels
}

}  // namespace
}  // namespace hcp::cpu
