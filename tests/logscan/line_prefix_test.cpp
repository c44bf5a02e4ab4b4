// The line-prefix learner: which leading tokens of a line are the launcher's prefix, learned from the input's own
// lines, and which are content that only looks like one.
#include "extract/line_prefix.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hcp::logscan {
namespace {

LinePrefixes learned(const std::vector<std::string>& lines) {
  LinePrefixes p;
  for (const std::string& l : lines) p.observe(l);
  p.settle();
  return p;
}

std::string text_after(const LinePrefixes& p, std::string_view line) { return std::string(line.substr(p.strip(line).length)); }

TEST(LinePrefix, RankTagsAreAPrefixByTheirForm) {
  const LinePrefixes p = learned({"plain line", "another"});
  EXPECT_EQ(text_after(p, "[rank3]: Traceback (most recent call last):"), "Traceback (most recent call last):");
  EXPECT_EQ(p.strip("[rank3]: x").rank, 3);
  EXPECT_EQ(text_after(p, "[rank3]:   File \"a.py\", line 1"), "  File \"a.py\", line 1");  // indentation kept
  EXPECT_EQ(text_after(p, "[default12]:  cp_comm_type ... ['p2p']"), "  cp_comm_type ... ['p2p']");
  EXPECT_EQ(p.strip("[default12]:x").rank, 12);
  // Content after the rank tag is never taken for more prefix.
  EXPECT_EQ(text_after(p, "[default0]:[PG ID 5 PG GUID 23(CONTEXT_PARALLEL_GROUP) Rank 0] created"),
            "[PG ID 5 PG GUID 23(CONTEXT_PARALLEL_GROUP) Rank 0] created");
}

TEST(LinePrefix, ABracketedSentenceIsContent) {
  const std::string start = "[before the start of training step] datetime: 2024-04-04 09:09:27";
  const LinePrefixes p = learned({"training ...", start, " iteration        1/  317892 |", start});
  EXPECT_EQ(text_after(p, start), start);
  EXPECT_TRUE(prefix_tokens(start, 4).empty());
  EXPECT_EQ(prefix_tokens("[INFO] step 1", 4).size(), 1u);  // a tag stays one
}

TEST(LinePrefix, PipeSeparatedLoggingColumns) {
  // NeMo Automodel's "%(asctime)s | %(levelname)s | %(name)s | %(message)s".
  const std::vector<std::string> lines = {"2025-09-01 07:13:17 | INFO | root | Config:",
                                          "2025-09-01 07:13:17 | INFO | root |   distributed:",
                                          "2025-09-01 07:13:17 | INFO | root |     cp_size: 1",
                                          "2025-09-01 07:13:21 | INFO | root | step 1 | epoch 0 | loss 10.9521"};
  const LinePrefixes p = learned(lines);
  EXPECT_EQ(text_after(p, lines[2]), "    cp_size: 1");
  EXPECT_EQ(text_after(p, lines[3]), "step 1 | epoch 0 | loss 10.9521");  // the message's own columns stay
}

TEST(LinePrefix, TimestampsOfEveryCommonForm) {
  const LinePrefixes p = learned({"x"});
  EXPECT_EQ(text_after(p, "2024-11-20 14:37:16 context_parallel_size: 8"), "context_parallel_size: 8");
  EXPECT_EQ(text_after(p, "2024-06-01T10:15:01.537000919Z [default0]:text"), "text");
  EXPECT_EQ(p.strip("2024-06-01T10:15:01.537000919Z [default4]:text").rank, 4);
  EXPECT_EQ(text_after(p, "2024-06-01T10:15:01+02:00 text"), "text");
  EXPECT_EQ(text_after(p, "[2021-08-12 08:19:28,225] [INFO] text"), "[INFO] text");
  EXPECT_EQ(text_after(p, "Nov 20 14:37:16 node1 python[123]: cp_comm_type: a2a+p2p"), "cp_comm_type: a2a+p2p");
  // A number that is content, not a time.
  EXPECT_EQ(text_after(p, "2024 was a year"), "2024 was a year");
}

TEST(LinePrefix, RayTagsGiveTheRank) {
  const LinePrefixes p = learned({"x"});
  const std::string line = "(MegatronPolicyWorker[rank=8] pid=3294808, ip=10.109.19.209)   File \"x.py\"";
  EXPECT_EQ(text_after(p, line), "  File \"x.py\"");
  EXPECT_EQ(p.strip(line).rank, 8);
  EXPECT_EQ(p.strip("(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:563] x").rank, 1);
  EXPECT_EQ(text_after(p, "(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:563] x"),
            "[E ProcessGroupNCCL.cpp:563] x");
}

TEST(LinePrefix, LearnedJobLabelsComposeTagsAndLineNumbers) {
  std::vector<std::string> nemo_run, compose, grep_n, srun;
  for (int i = 0; i < 20; ++i) {
    nemo_run.push_back("nemo.collections.llm.api.pretrain/0 [default0]:line " + std::to_string(i));
    compose.push_back("trainer-1  | line " + std::to_string(i));
    grep_n.push_back(std::to_string(100 + i) + ":line " + std::to_string(i));
    srun.push_back(std::to_string(i % 4) + ": line " + std::to_string(i));
  }
  const LinePrefixes a = learned(nemo_run), b = learned(compose), c = learned(grep_n), d = learned(srun);
  EXPECT_EQ(text_after(a, "nemo.collections.llm.api.pretrain/0 [default3]:  cp_comm_type: a2a+p2p"),
            "  cp_comm_type: a2a+p2p");
  EXPECT_EQ(a.strip("nemo.collections.llm.api.pretrain/0 [default3]:x").rank, 3);
  EXPECT_EQ(text_after(b, "trainer-1  | Traceback (most recent call last):"), "Traceback (most recent call last):");
  EXPECT_EQ(text_after(c, "731:RuntimeError: boom"), "RuntimeError: boom");
  EXPECT_EQ(c.strip("731:RuntimeError: boom").rank, -1);  // grep -n counts lines, it names no rank
  EXPECT_EQ(d.strip("3: RuntimeError: boom").rank, 3);    // srun -l names the task
  // Without learning, none of these is a prefix.
  const LinePrefixes none = learned({"x", "y"});
  EXPECT_EQ(none.strip("trainer-1  | x").length, 0u);
  EXPECT_EQ(none.strip("731:x").length, 0u);
}

TEST(LinePrefix, GrepMatchNumbersAreNoRank) {
  // grep -n PATTERN: increasing line numbers with gaps.
  std::vector<std::string> lines;
  for (int i = 0; i < 20; ++i) lines.push_back(std::to_string(1000 + 37 * i) + ":iteration " + std::to_string(i));
  const LinePrefixes p = learned(lines);
  EXPECT_EQ(p.strip("1740:RuntimeError: boom").rank, -1);
  EXPECT_EQ(text_after(p, "1740:RuntimeError: boom"), "RuntimeError: boom");
}

TEST(LinePrefix, ExceptionLinesAreNeverLabels) {
  std::vector<std::string> lines(10, "RuntimeError: CUDA error: an illegal memory access was encountered");
  const LinePrefixes p = learned(lines);
  EXPECT_EQ(p.strip(lines[0]).length, 0u);
  EXPECT_EQ(p.strip("torch.distributed.DistBackendError: NCCL error").length, 0u);
}

TEST(LinePrefix, HardWrapIsLearnedButFixedWidthLinesAreNot) {
  const std::string a(120, 'a'), b(120, 'b'), c(120, 'c');
  // A terminal cut logical lines at 120 columns: pieces of that width, followed by continuations.
  LinePrefixes wrapped = learned({"[default7]: iteration 1" + a.substr(23), " rate: 1" + b.substr(8), "tail 1",
                                  "[default7]: iteration 2" + c.substr(23), " rate: 2" + a.substr(8), "tail 2",
                                  "[default7]: iteration 3" + b.substr(23), " rate: 3" + c.substr(8), "tail 3"});
  EXPECT_EQ(wrapped.wrap_width(), 120u);
  // Megatron's iteration lines have one width and follow each other: no wrap.
  std::vector<std::string> fixed;
  for (int i = 10; i < 20; ++i) fixed.push_back(" iteration " + std::to_string(i) + "/100 |" + a.substr(0, 100));
  EXPECT_EQ(learned(fixed).wrap_width(), 0u);
}

}  // namespace
}  // namespace hcp::logscan
