// Inline suppressions (issue 51, item 6): a directive covers the whole command it is on, or the next command when
// alone on a comment line; a code that names no rule is kept for HCP029.
#include <gtest/gtest.h>

#include "../../lint/src/suppressions.hpp"

namespace hcp::lint {
namespace {

SourceText source(const std::string& name, const std::string& text) {
  SourceText s;
  s.name = name;
  s.text = text;
  return s;
}

TEST(Suppressions, CoverEveryLineOfABackslashContinuedCommand) {
  const Suppressions s(source("run.sh",
                              "torchrun pretrain_gpt.py \\\n"
                              "  --context-parallel-size 3 \\\n"
                              "  --seq-length 4096  # hcp-lint: disable=HCP003\n"
                              "echo done\n"));
  for (int line : {1, 2, 3}) EXPECT_TRUE(s.suppressed("HCP003", line)) << line;
  EXPECT_FALSE(s.suppressed("HCP003", 4));
  EXPECT_FALSE(s.suppressed("HCP010", 2));
}

TEST(Suppressions, AloneOnACommentLineTheyCoverTheNextCommand) {
  const Suppressions s(source("run.sh",
                              "#!/bin/bash\n"
                              "# hcp-lint: disable=HCP010, HCP011\n"
                              "# a note\n"
                              "\n"
                              "torchrun x.py \\\n"
                              "  --context-parallel-size 3\n"
                              "torchrun y.py\n"));
  EXPECT_TRUE(s.suppressed("HCP010", 5));
  EXPECT_TRUE(s.suppressed("HCP011", 6));
  EXPECT_FALSE(s.suppressed("HCP010", 7));
  EXPECT_TRUE(s.unknown_codes().empty());
}

TEST(Suppressions, AShellStringThatSpansLinesIsOneCommand) {
  const Suppressions s(source("run.sh",
                              "ARGS=\"\n"
                              "  --seq-length 4096\n"
                              "  --note 'it''s'\n"
                              "\"  # hcp-lint: disable=HCP003\n"
                              "cat <<EOF\n"
                              "don't\n"
                              "EOF\n"
                              "python t.py  # hcp-lint: disable=HCP019\n"
                              "python u.py\n"));
  EXPECT_TRUE(s.suppressed("HCP003", 2));
  EXPECT_FALSE(s.suppressed("HCP019", 2));
  // The here-document's apostrophe opens no string: the next commands stay apart.
  EXPECT_TRUE(s.suppressed("HCP019", 8));
  EXPECT_FALSE(s.suppressed("HCP019", 9));
}

TEST(Suppressions, OutsideShellOnlyABackslashContinues) {
  const Suppressions s(source("cfg.yaml",
                              "model:\n"
                              "  # hcp-lint: disable=HCP022\n"
                              "  context_paralel_size: 2   # it's a typo\n"
                              "  seq_length: 4096\n"));
  EXPECT_TRUE(s.suppressed("HCP022", 3));
  EXPECT_FALSE(s.suppressed("HCP022", 4));
}

TEST(Suppressions, FileWideAndAll) {
  const Suppressions s(source("a.toml", "x = 1\n# hcp-lint: disable-file=all\n"));
  EXPECT_TRUE(s.suppressed("HCP001", 1));
  EXPECT_TRUE(s.suppressed("HCP029", 9));
}

TEST(Suppressions, CodesThatNameNoRuleAreKeptWithTheirPlace) {
  const Suppressions s(source("run.sh", "python t.py  # hcp-lint: disable=HCP003,hcp03 ,all\n"));
  ASSERT_EQ(s.unknown_codes().size(), 1u);
  EXPECT_EQ(s.unknown_codes()[0].second, "HCP03");
  EXPECT_EQ(s.unknown_codes()[0].first.line, 1);
  EXPECT_EQ(s.unknown_codes()[0].first.col, 41);
  EXPECT_TRUE(s.suppressed("HCP003", 1));
}

}  // namespace
}  // namespace hcp::lint
