// An a2a group's rows in sequence order (cp::group_order): the moves take every member's local row (TE's
// partitioning, packed_rank_indices) to exactly one row of the mixed sequence, the rows there are in the padded
// batch's order, and the labels describe the row each move put there. A plain sequence gives the dual-chunk order
// the plain causal sections assume: the members' first halves in member order, then their second halves reversed.
// Member order (device engines) is each member's rows whole, one move each.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "../../runtime/src/attention/cp/row_labels.hpp"
#include "hcp/packed_sequences.hpp"

namespace hcp::cp {
namespace {

TEST(GroupOrder, PlainSequenceIsDualChunkOrder) {
  // cp 8, a2a groups of 4, 40 local rows (chunks of 20): group 1 holds ranks 4-7, chunks 4-7 and 8-11.
  const PackedBatch batch{{0, 40 * 8}, {}};
  const GroupOrder g = group_order(batch, 8, {4, 5, 6, 7});
  const std::vector<RowMove> want = {{0, 0, 0, 20},   {1, 0, 20, 20},  {2, 0, 40, 20},  {3, 0, 60, 40},
                                     {2, 20, 100, 20}, {1, 20, 120, 20}, {0, 20, 140, 20}};
  ASSERT_EQ(g.moves.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(g.moves[i].member, want[i].member) << "move " << i;
    EXPECT_EQ(g.moves[i].from, want[i].from) << "move " << i;
    EXPECT_EQ(g.moves[i].to, want[i].to) << "move " << i;
    EXPECT_EQ(g.moves[i].rows, want[i].rows) << "move " << i;
  }
  // One document, positions 80..239 in order: a single run would do, the chunks' runs follow each other.
  int64_t next = 80;
  for (const LabelRun& r : g.runs) {
    EXPECT_EQ(r.seg, 0);
    EXPECT_EQ(r.pos, next);
    next += r.rows;
  }
  EXPECT_EQ(next, 240);
}

TEST(GroupOrder, MemberOrderIsTheExchangesLayout) {
  const PackedBatch batch{{0, 100, 130, 400}, pad_for_cp({0, 100, 130, 400}, 4)};
  const int64_t n = batch.cu_seqlens_padded.back() / 4;
  const GroupOrder g = group_order(batch, 4, {2, 3}, false);
  ASSERT_EQ(g.moves.size(), 2u);
  for (int64_t j = 0; j < 2; ++j) {
    EXPECT_EQ(g.moves[static_cast<size_t>(j)].member, j);
    EXPECT_EQ(g.moves[static_cast<size_t>(j)].from, 0);
    EXPECT_EQ(g.moves[static_cast<size_t>(j)].to, j * n);
    EXPECT_EQ(g.moves[static_cast<size_t>(j)].rows, n);
  }
  // The labels: rank 2's rows, then rank 3's.
  RowRuns want = rank_runs(batch, 4, 2);
  const RowRuns second = rank_runs(batch, 4, 3);
  want.insert(want.end(), second.begin(), second.end());
  ASSERT_EQ(g.runs.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(g.runs[i].seg, want[i].seg) << "run " << i;
    EXPECT_EQ(g.runs[i].pos, want[i].pos) << "run " << i;
    EXPECT_EQ(g.runs[i].rows, want[i].rows) << "run " << i;
  }
}

TEST(GroupOrder, PackedGroupsAreInSequenceOrderAndMatchTheirLabels) {
  std::mt19937 gen(5);
  int checked = 0;
  for (int w : {2, 4, 8}) {
    for (int trial = 0; trial < 6; ++trial) {
      PackedBatch batch;
      batch.cu_seqlens = {0};
      std::uniform_int_distribution<int64_t> length(1, 300);
      for (int d = 0; d < 1 + trial * 2; ++d) batch.cu_seqlens.push_back(batch.cu_seqlens.back() + length(gen));
      batch.cu_seqlens_padded = pad_for_cp(batch.cu_seqlens, w);
      const std::vector<int64_t>& padded = batch.cu_seqlens_padded;
      const int64_t n = padded.back() / w;  // local rows a rank
      for (int a = 1; a <= w; a *= 2) {
        for (int p = 0; p < w / a; ++p) {
          std::vector<int> members;
          for (int m = 0; m < a; ++m) members.push_back(m + a * p);
          const GroupOrder g = group_order(batch, w, members);
          // Which padded row each mixed row holds, through the moves; each member row moved exactly once.
          std::vector<int64_t> mixed(static_cast<size_t>(a * n), -1);
          std::vector<std::vector<int>> moved(static_cast<size_t>(a), std::vector<int>(static_cast<size_t>(n), 0));
          for (const RowMove& m : g.moves) {
            const std::vector<int64_t> rows = packed_rank_indices(batch, w, members[static_cast<size_t>(m.member)]);
            for (int64_t i = 0; i < m.rows; ++i) {
              ASSERT_EQ(mixed[static_cast<size_t>(m.to + i)], -1) << "a mixed row written twice";
              mixed[static_cast<size_t>(m.to + i)] = rows[static_cast<size_t>(m.from + i)];
              ++moved[static_cast<size_t>(m.member)][static_cast<size_t>(m.from + i)];
            }
          }
          for (const auto& member : moved)
            for (int times : member) ASSERT_EQ(times, 1) << "cp " << w << " a2a " << a << " group " << p;
          EXPECT_TRUE(std::is_sorted(mixed.begin(), mixed.end())) << "cp " << w << " a2a " << a << " group " << p;
          if (a == w) {  // the whole CP group: the padded batch itself
            for (size_t i = 0; i < mixed.size(); ++i) ASSERT_EQ(mixed[i], static_cast<int64_t>(i));
          }
          // The labels, row by row: the document and position of a real row, -1 for padding.
          size_t row = 0;
          for (const LabelRun& r : g.runs) {
            for (int64_t i = 0; i < r.rows; ++i, ++row) {
              const int64_t at = mixed[row];
              const auto doc = std::upper_bound(padded.begin(), padded.end(), at) - 1;
              const size_t d = static_cast<size_t>(doc - padded.begin());
              const int64_t pos = at - padded[d];
              const bool real = pos < batch.cu_seqlens[d + 1] - batch.cu_seqlens[d];
              ASSERT_EQ(r.seg, real ? static_cast<int32_t>(d) : -1) << "mixed row " << row;
              if (real) {
                ASSERT_EQ(r.pos + i, pos) << "mixed row " << row;
              }
            }
          }
          ASSERT_EQ(row, mixed.size());
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 6 * (3 + 7 + 15));  // cp 2: groups 2 + 1; cp 4: 4 + 2 + 1; cp 8: 8 + 4 + 2 + 1
}

}  // namespace
}  // namespace hcp::cp
