// Inputs: zstd and gzip (concatenated too), damaged streams, garbage, NUL bytes, over-long lines, and any chunking.
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "hcp/logscan/render.hpp"
#include "hcp/logscan/scanner.hpp"

namespace hcp::logscan {
namespace {

std::string read(const std::string& name) {
  std::ifstream in(std::string(HCP_TESTS_DIR) + "/logscan/fixtures/" + name, std::ios::binary);
  std::ostringstream o;
  o << in.rdbuf();
  return o.str();
}

// As the zstd command writes it: with a content checksum.
std::string zstd(const std::string& text) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_compressBound(text.size()), '\0');
  out.resize(ZSTD_compress2(c, out.data(), out.size(), text.data(), text.size()));
  ZSTD_freeCCtx(c);
  return out;
}

std::string gzip(const std::string& text) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// Feeds `bytes` as one input in pieces of the given sizes (cycled).
ScanReport feed(const std::string& bytes, std::vector<size_t> pieces = {1 << 20}, ScanOptions o = {}) {
  LogScanner s(o);
  s.begin_input("input.log");
  size_t pos = 0, k = 0;
  while (pos < bytes.size()) {
    const size_t n = std::min(pieces[k++ % pieces.size()], bytes.size() - pos);
    s.feed(bytes.data() + pos, n);
    pos += n;
  }
  s.end_input();
  return s.finish();
}

// What must not depend on how the bytes arrived.
std::string essence(const ScanReport& r) {
  std::ostringstream o;
  o << verdict_name(r.verdict) << " " << r.step_completed << r.failed << " lines=" << r.files.at(0).lines
    << " text=" << r.files.at(0).text_bytes << " iterations=" << r.progress.iteration_lines << " failures="
    << r.failure_count << " groups=" << r.evidence.groups.size();
  for (const auto& [k, g] : r.evidence.groups) o << " " << k << "@" << g.first.line << "x" << g.lines;
  for (const Failure& f : r.failures) o << " " << f.kind << "@" << f.where.line;
  return o.str();
}

const char* kFixtures[] = {"megatron_hcp_active.log", "bridge_issue_2667.log", "failure_oom.log",
                           "hcp_not_active_decentralized.log", "failure_nccl_timeout.log", "flat_cp_slurm.log"};

TEST(LogscanInput, CompressedInputsGiveTheSameReport) {
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    const std::string text = read(name);
    const std::string plain = essence(feed(text));
    const ScanReport z = feed(zstd(text));
    EXPECT_EQ(essence(z), plain);
    EXPECT_EQ(z.files[0].compression, "zstd");
    EXPECT_FALSE(z.files[0].damage) << *z.files[0].damage;
    const ScanReport g = feed(gzip(text));
    EXPECT_EQ(essence(g), plain);
    EXPECT_EQ(g.files[0].compression, "gzip");
    EXPECT_FALSE(g.files[0].damage);
    // Concatenated frames and members (zstd -c a b, cat a.gz b.gz) read as one text.
    const size_t half = text.find('\n', text.size() / 2) + 1;
    EXPECT_EQ(essence(feed(zstd(text.substr(0, half)) + zstd(text.substr(half)))), plain);
    EXPECT_EQ(essence(feed(gzip(text.substr(0, half)) + gzip(text.substr(half)))), plain);
  }
}

TEST(LogscanInput, ChunkingDoesNotMatter) {
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    const std::string text = read(name);
    const std::string whole = essence(feed(text));
    EXPECT_EQ(essence(feed(text, {1})), whole);
    EXPECT_EQ(essence(feed(text, {7, 3, 61, 1, 400})), whole);
    EXPECT_EQ(essence(feed(zstd(text), {5, 1, 33})), whole);
  }
}

TEST(LogscanInput, OneLargeChunkAndManySmallOnesGiveTheSameReport) {
  // Megabytes in one chunk (a mapped window) against the same text in small chunks (pipe reads, decoder output):
  // lines and tracebacks across chunk ends, and lines longer than max_line, read the same.
  const std::string fixture = read("failure_oom.log") + read("megatron_hcp_active.log");
  std::string text;
  while (text.size() < (3u << 20)) {
    text += fixture;
    text += "[default1]: " + std::string(200000, 'y') + " CONTEXT_PARALLEL_GROUP after a long line\n";
  }
  const ScanReport whole = feed(text, {text.size()});
  const ScanReport small = feed(text, {4093, 1});
  EXPECT_EQ(essence(whole), essence(small));
  EXPECT_EQ(whole.progress.iteration_lines, small.progress.iteration_lines);
  EXPECT_EQ(whole.files[0].truncated_lines, small.files[0].truncated_lines);
  EXPECT_GT(whole.failure_count, 1u);
}

TEST(LogscanInput, TruncatedAndCorruptStreamsKeepWhatCameBefore) {
  // Large enough for many compressed blocks: zstd decodes a block whole or not at all.
  std::string text = read("megatron_hcp_active.log");
  std::mt19937 rng(5);
  while (text.size() < (2u << 20)) {  // varied text: a repetitive one compresses into a single block
    text += "NCCL INFO Channel " + std::to_string(rng() % 100000) + " via P2P/IPC " + std::to_string(rng()) + "\n";
  }
  for (const std::string& compressed : {zstd(text), gzip(text)}) {
    const std::string cut = compressed.substr(0, compressed.size() * 3 / 4);
    const ScanReport r = feed(cut);
    SCOPED_TRACE(r.files[0].compression);
    ASSERT_TRUE(r.files[0].damage);
    EXPECT_NE(r.files[0].damage->find("byte " + std::to_string(cut.size()) + ": truncated"), std::string::npos)
        << *r.files[0].damage;
    EXPECT_EQ(r.verdict, Verdict::hcp_active);  // the group lines come early
    EXPECT_GT(r.files[0].text_bytes, text.size() / 2);

    std::string corrupt = compressed;
    for (size_t i = corrupt.size() / 2; i < corrupt.size() / 2 + 64; ++i) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
    const ScanReport c = feed(corrupt);
    ASSERT_TRUE(c.files[0].damage);
    EXPECT_NE(c.files[0].damage->find("corrupt"), std::string::npos) << *c.files[0].damage;
  }
}

// A compressed input decoded on a second thread ahead of the scan gives the report one thread gives: whole,
// cut and corrupt streams, in one chunk and in many, with text many times the queues (raw pieces of 1 MiB, eight
// blocks of 256 KiB).
TEST(LogscanInput, DecodingAheadOnASecondThreadGivesTheSameReport) {
  std::string text = read("failure_oom.log") + read("megatron_hcp_active.log");
  std::mt19937 rng(9);
  while (text.size() < (24u << 20)) {  // varied, so that the compressed stream is megabytes too
    text += " iteration " + std::to_string(rng() % 100000) + "/  317892 | lm loss: 1." + std::to_string(rng() % 1000) +
            "E+00 | NCCL INFO Channel " + std::to_string(rng()) + "\n";
  }
  auto ahead = [](const std::string& bytes, std::vector<size_t> pieces) {
    LogScanner s;
    s.decode_ahead(true);
    s.begin_input("input.log");
    size_t pos = 0, k = 0;
    while (pos < bytes.size()) {
      const size_t n = std::min(pieces[k++ % pieces.size()], bytes.size() - pos);
      s.feed(bytes.data() + pos, n);
      pos += n;
    }
    s.end_input();
    return s.finish();
  };
  for (const std::string& compressed : {zstd(text), gzip(text)}) {
    std::string corrupt = compressed;
    for (size_t i = corrupt.size() / 2; i < corrupt.size() / 2 + 64; ++i) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
    for (const std::string& input : {compressed, compressed.substr(0, compressed.size() / 3)}) {
      const std::string one = render_json(feed(input));
      EXPECT_EQ(render_json(ahead(input, {16u << 20})), one);
      EXPECT_EQ(render_json(ahead(input, {4096, 1, 70000})), one);
    }
    // How much text comes before corrupt data, and where the damage is reported, depend on how the raw bytes
    // were handed to the decoder (it may take a whole piece before it finds the damage), in one thread as in two:
    // pieces below the thread's own (1 MiB) give the same report, larger ones the same damage.
    const std::vector<size_t> small = {4096, 1, 70000};
    EXPECT_EQ(render_json(ahead(corrupt, small)), render_json(feed(corrupt, small)));
    const ScanReport whole = ahead(corrupt, {16u << 20});
    ASSERT_TRUE(whole.files[0].damage);
    EXPECT_NE(whole.files[0].damage->find(": corrupt "), std::string::npos) << *whole.files[0].damage;
  }
  // Plain text is not decoded at all: the same in either mode.
  EXPECT_EQ(render_json(ahead(text.substr(0, 1u << 20), {65536})), render_json(feed(text.substr(0, 1u << 20))));
}

// After the last gzip member: zero padding is ignored (as gzip does), anything else is damage at its offset - it
// was dropped in silence (issue 54). Split over chunks too.
TEST(LogscanInput, TrailingDataAfterTheLastGzipMemberIsDamageButZeroPaddingIsNot) {
  const std::string text = read("megatron_hcp_active.log");
  const std::string gz = gzip(text);
  for (size_t piece : {size_t{1} << 20, size_t{7}}) {
    const ScanReport padded = feed(gz + std::string(512, '\0'), {piece});
    EXPECT_FALSE(padded.files[0].damage) << *padded.files[0].damage;
    EXPECT_EQ(padded.files[0].text_bytes, text.size());
    const ScanReport junk = feed(gz + std::string(5, '\0') + "not a member\n", {piece});
    ASSERT_TRUE(junk.files[0].damage);
    EXPECT_NE(junk.files[0].damage->find("byte " + std::to_string(gz.size() + 5) +
                                          ": trailing data after the last gzip member"),
              std::string::npos)
        << *junk.files[0].damage;
    EXPECT_EQ(junk.files[0].text_bytes, text.size());
    EXPECT_EQ(junk.verdict, Verdict::hcp_active);
  }
}

// A zstd stream may start with a skippable frame (pzstd writes one): it was read as plain text. And a file that is
// only the start of a gzip header is a cut gzip stream, not text; nothing decoded at all makes it unreadable.
TEST(LogscanInput, SkippableZstdFramesAndCutGzipHeaders) {
  const std::string text = read("megatron_hcp_active.log");
  const std::string skippable = std::string("\x50\x2a\x4d\x18\x04\x00\x00\x00", 8) + "wxyz";
  const ScanReport z = feed(skippable + zstd(text));
  EXPECT_EQ(z.files[0].compression, "zstd");
  EXPECT_FALSE(z.files[0].damage) << *z.files[0].damage;
  EXPECT_EQ(z.files[0].text_bytes, text.size());
  EXPECT_EQ(z.verdict, Verdict::hcp_active);
  const ScanReport g = feed(std::string("\x1f\x8b", 2));
  EXPECT_EQ(g.files[0].compression, "gzip");
  ASSERT_TRUE(g.files[0].damage);
  EXPECT_NE(g.files[0].damage->find("truncated gzip stream"), std::string::npos) << *g.files[0].damage;
  EXPECT_TRUE(g.unreadable_inputs());
  EXPECT_FALSE(feed(gzip(text).substr(0, 4000)).unreadable_inputs());  // damaged after some text: reported only
}

TEST(LogscanInput, GarbageAndNulBytesDoNotStopTheScan) {
  std::mt19937 rng(3);
  std::string junk(1 << 20, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  const ScanReport r = feed(junk + "\n" + read("bridge_issue_2667.log"));
  EXPECT_EQ(r.verdict, Verdict::cp_silently_off);
  std::string with_nul = read("megatron_hcp_active.log");
  with_nul.insert(100, std::string("\0\0\xff\xfe", 4));
  EXPECT_EQ(feed(with_nul).verdict, Verdict::hcp_active);
}

TEST(LogscanInput, OverLongLinesAreMatchedOnTheirPrefixAndCounted) {
  // A 200 MB line: a group line at its start, a failure far beyond the prefix.
  std::string line = "[PG ID 7 PG GUID 41(HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0) Rank 0] created ";
  const std::string filler(1 << 20, 'x');
  LogScanner s;
  s.begin_input("long.log");
  s.feed(line.data(), line.size());
  for (int i = 0; i < 200; ++i) s.feed(filler.data(), filler.size());
  const std::string tail = " CUDA out of memory here\nnext line\n";
  s.feed(tail.data(), tail.size());
  s.end_input();
  const ScanReport r = s.finish();
  EXPECT_EQ(r.files[0].truncated_lines, 1u);
  EXPECT_EQ(r.files[0].lines, 2u);
  EXPECT_EQ(r.verdict, Verdict::hcp_active);
  EXPECT_FALSE(r.failed);  // beyond the 64 KiB prefix
}

TEST(LogscanInput, IterationLinesSettleOnTheirCountersOtherLinesAreSearchedWhole) {
  const std::string text =
      "[default7]: [2026-08-22 12:00:00] iteration        5/      10 | consumed samples: 40 | elapsed time per "
      "iteration (ms): 800.0 | throughput per GPU (TFLOP/s/GPU): 400.5 | lm loss: 9.000000E+00 | number of skipped "
      "iterations:   1 | number of nan iterations:   2 |\n"
      // " iteration " without counters: the rest of the line is still searched, and the failure is found.
      "[default3]: Exception at iteration 6: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n"
      // A collector trimmed the leading blank: the elapsed field's key still selects the line.
      "iteration 7/ 10 | elapsed time per iteration (ms): 810.0 | lm loss: 8.500000E+00 |\r\n"
      // Colour codes inside an iteration line.
      "\x1b[32m[default7]: iteration        8/      10 | elapsed time per iteration (ms): 820.0 | "
      "lm loss: 8.000000E+00 | number of skipped iterations:   3 | number of nan iterations:   0 |\x1b[0m\n";
  for (const std::vector<size_t>& pieces : {std::vector<size_t>{1 << 20}, std::vector<size_t>{1}, {13, 101}}) {
    const ScanReport r = feed(text, pieces);
    const Progress& p = r.progress;
    EXPECT_EQ(p.iteration_lines, 3u);
    EXPECT_EQ(p.last_iteration, 8);
    EXPECT_EQ(p.total_iterations, 10);
    EXPECT_EQ(p.skipped_iterations, 4);
    EXPECT_EQ(p.nan_iterations, 2);
    EXPECT_EQ(p.first_lm_loss, 9.0);
    EXPECT_EQ(p.last_lm_loss, 8.0);
    EXPECT_EQ(p.elapsed_ms.median(), 810.0);
    EXPECT_EQ(p.tflops.count(), 3u);  // every iteration line, NaN where the field is missing
    EXPECT_EQ(p.tflops.median(), 400.5);
    EXPECT_EQ(p.reported_tflops(), 400.5);
    EXPECT_TRUE(r.failed);
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0].where.line, 2u);
  }
}

TEST(LogscanInput, TheLastIterationLineIsReadWhateverItsPrefix) {
  // The last line's counters and loss are read when the input ends, from a copy of at most 1 KiB: a long prefix
  // before the "iteration" word must not push them out of it.
  const std::string prefix = "[default7]: " + std::string(1100, '=') + " ";
  const std::string text = prefix + "iteration        9/      12 | elapsed time per iteration (ms): 800.0 | "
                                    "lm loss: 7.250000E+00 | number of skipped iterations:   0 | "
                                    "number of nan iterations:   0 |\n";
  for (const std::vector<size_t>& pieces : {std::vector<size_t>{1 << 20}, std::vector<size_t>{7}}) {
    const ScanReport r = feed(text, pieces);
    EXPECT_EQ(r.progress.iteration_lines, 1u);
    EXPECT_EQ(r.progress.last_iteration, 9);
    EXPECT_EQ(r.progress.total_iterations, 12);
    EXPECT_EQ(r.progress.last_lm_loss, 7.25);
  }
}

TEST(LogscanInput, UnreadablePathsAreReportedNotFatal) {
  const std::string dir = std::string(HCP_TESTS_DIR) + "/logscan/fixtures/";
  // The missing path lies beside the fixtures so that the name order does not depend on where the tree is
  // checked out (CI clones under another root).
  const ScanReport r = scan_paths({dir + "no_cp.log", dir + "no_such_log.txt", dir + "diff"});
  ASSERT_EQ(r.files.size(), 6u);
  EXPECT_TRUE(r.unreadable_inputs());
  // Inputs are read in natural name order, whatever the order of the arguments; a directory recursively.
  EXPECT_EQ(r.files[0].path, dir + "diff/base.log");
  EXPECT_EQ(r.files[4].path, dir + "no_cp.log");
  EXPECT_EQ(r.files[5].path, dir + "no_such_log.txt");
  EXPECT_EQ(r.files[5].error, "no such file");
  // The rest was still read: each file is a run of its own (each starts with its configuration), and the verdict
  // is the last run's.
  EXPECT_EQ(r.runs.size(), 5u);
  EXPECT_EQ(r.runs[0].verdict, Verdict::hcp_active);
  EXPECT_EQ(r.verdict, Verdict::no_cp);
}

TEST(LogscanInput, MegatronsStartOfTrainingLineAfterProgressStartsARun) {
  auto it = [](int n, const char* loss) {
    return " iteration        " + std::to_string(n) + "/  317892 | consumed samples:           96 | elapsed time per "
           "iteration (ms): 25849.1 | lm loss: " + loss + " |\n";
  };
  const std::string start = "> building train, validation, and test datasets ...\n> finished creating GPT datasets ...\n"
                            "done with setup ...\ntraining ...\n"
                            "[before the start of training step] datetime: 2024-04-04 09:09:27\n";
  const ScanReport r = feed(start + it(1, "1.1E+01") + it(2, "2.5E+01") + start + it(1, "1.7E+01"));
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_EQ(r.runs[0].last_iteration, 2);
  EXPECT_EQ(r.progress.last_iteration, 1);
  // In another file it is that rank's copy of the same run.
  LogScanner two;
  const std::string rank = start + it(1, "1.1E+01");
  for (const char* name : {"rank0.log", "rank1.log"}) {
    two.begin_input(name);
    two.feed(rank.data(), rank.size());
    two.end_input();
  }
  EXPECT_EQ(two.finish().runs.size(), 1u);
}

TEST(LogscanInput, ReportDoesNotDependOnArgumentOrder) {
  const std::string dir = std::string(HCP_TESTS_DIR) + "/logscan/realworld/logs/";
  const std::string a = dir + "085_derived_bridge_yaml_a2a_p2p_hcp_null.log", b = dir + "022_megatron_args_dump_cp1_hcp_none.log";
  const ScanReport ab = scan_paths({a, b}), ba = scan_paths({b, a});
  EXPECT_EQ(render_json(ab), render_json(ba));
  EXPECT_EQ(ab.verdict, Verdict::cp_silently_off);  // 085 comes last in name order
  ASSERT_EQ(ab.runs.size(), 2u);
  EXPECT_EQ(ab.runs[0].verdict, Verdict::no_cp);
}

}  // namespace
}  // namespace hcp::logscan

namespace hcp::logscan {
namespace {

TEST(LogscanInput, PrefixLearningDoesNotDependOnChunking) {
  // Prefixed logs whose prefixes are learned (Ray, grep -n, srun -l, compose) and a hard-wrapped one: the report is
  // the same whether the bytes come whole, a byte at a time, or in uneven pieces (the decoder hands the first four
  // bytes apart, and learning holds lines until it settles).
  for (const char* name : {"089_derived_ray_actor_prefix_bridge_a2a_p2p_hcp_null.log",
                           "091_derived_grepn_prefix_bridge_a2a_p2p_hcp_null.log",
                           "092_derived_srun_label_bridge_a2a_p2p_hcp_null.log",
                           "099_derived_hard_wrap_120_megatron_iterations.log", "042_ray_worker_watchdog_ansi_remnant.log"}) {
    std::ifstream in(std::string(HCP_TESTS_DIR) + "/logscan/realworld/logs/" + name, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(bytes.empty()) << name;
    const std::string whole = render_json(feed(bytes));
    EXPECT_EQ(render_json(feed(bytes, {1})), whole) << name;
    EXPECT_EQ(render_json(feed(bytes, {3, 4093, 17, 65536})), whole) << name;
  }
}

TEST(LogscanInput, FailuresAreCountedOnceWithTheirGroupAndRank) {
  // torch prints a timeout in several lines per rank; the group may come on a later line (torch 2.4 form), the
  // OOM comes with its traceback, the ECC error three times (traceback, watchdog, C++ terminate).
  const std::string text =
      "[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=600000)\n"
      "[rank1]:[E ProcessGroupNCCL.cpp:1537] [PG 9 (HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0) Rank 1] Exception "
      "(either an error or timeout) detected by watchdog at work: 5\n"
      "[rank0]: Traceback (most recent call last):\n"
      "[rank0]:   File \"train.py\", line 3, in <module>\n"
      "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 9, in step\n"
      "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
      "[E ProcessGroupNCCL.cpp:916] [Rank 3] NCCL watchdog thread terminated with exception: CUDA error: "
      "uncorrectable ECC error encountered\n"
      "terminate called after throwing an instance of 'c10::Error'\n"
      "  what():  CUDA error: uncorrectable ECC error encountered\n"
      "frame #0: c10::Error::Error() + 0x42\n";
  const ScanReport r = feed(text);
  ASSERT_EQ(r.failure_count, 3u) << render_json(r);
  EXPECT_EQ(r.failures[0].kind, "nccl-timeout");
  EXPECT_EQ(r.failures[0].where.rank, 1);
  EXPECT_EQ(r.failures[0].group, "HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0");  // from the later line
  EXPECT_EQ(r.failures[1].kind, "cuda-oom");
  EXPECT_EQ(r.failures[1].where.rank, 0);
  EXPECT_EQ(r.failures[2].kind, "traceback");  // the ECC error, once
}

// An out-of-memory line outside a traceback: its message starts at the exception's whole name (a fixed offset
// before the words gave "OfMemoryError: CUDA out of memory..."; issue 54).
TEST(LogscanInput, OutOfMemoryMessagesStartAtTheExceptionsName) {
  const std::pair<const char*, const char*> cases[] = {
      {"[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n",
       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"},
      {"2: RuntimeError: CUDA error: out of memory\n", "RuntimeError: CUDA error: out of memory"},
      {"[W] allocator says HIP out of memory on device 1\n", "HIP out of memory on device 1"},
      {"ValueError was fixed long ago in this job; much later: CUDA out of memory on rank 2\n",
       "CUDA out of memory on rank 2"},
  };
  for (const auto& [line, message] : cases) {
    const ScanReport r = feed(line);
    ASSERT_EQ(r.failure_count, 1u) << line;
    EXPECT_EQ(r.failures[0].kind, "cuda-oom");
    EXPECT_EQ(r.failures[0].message, message);
  }
}

TEST(LogscanInput, RedrawnIterationLinesAreEachRead) {
  // Megatron lines redrawn in place with '\r' (no ANSI codes): each record is an iteration, also after the first
  // iteration line (when plain lines take the scanner's fast lane).
  auto line = [](int i) {
    return " iteration " + std::to_string(i) + "/     100 | consumed samples: 64 | elapsed time per iteration (ms): "
           "812.0 | lm loss: 7.0" + std::to_string(i % 10) + "0000E+00 | number of skipped iterations:   0 | number "
           "of nan iterations:   0 |";
  };
  const std::string text = line(1) + "\n" + line(2) + "\r" + line(3) + "\r" + line(4) + "\n" + line(5) + "\r\n";
  for (const std::vector<size_t>& pieces : {std::vector<size_t>{1 << 20}, std::vector<size_t>{5}}) {
    const ScanReport r = feed(text, pieces);
    EXPECT_EQ(r.progress.iteration_lines, 5u);
    EXPECT_EQ(r.progress.last_iteration, 5);
  }
}

TEST(LogscanParallel, SameReportForAnyThreadCount) {
  // The real-world corpus as one directory: 96 files, runs, failures of every kind, prefixes, wraps.
  const std::string dir = std::string(HCP_TESTS_DIR) + "/logscan/realworld/logs";
  ScanOptions one;
  const std::string sequential = render_json(scan_paths({dir}, one));
  for (unsigned jobs : {2u, 3u, 8u, 0u}) {
    ScanOptions o;
    o.jobs = jobs;
    EXPECT_EQ(render_json(scan_paths({dir}, o)), sequential) << "jobs " << jobs;
  }
  ScanOptions two;
  two.jobs = 2;
  const std::string fixtures = std::string(HCP_TESTS_DIR) + "/logscan/fixtures/per_rank_runtime";
  EXPECT_EQ(render_json(scan_paths({fixtures}, two)), render_json(scan_paths({fixtures}, one)));
}

// Large per-rank files, plain and compressed: each input's tape comes in many segments, replayed while its worker
// still reads it, and workers wait for room while the segments waiting exceed the budget. The report is the
// sequential one, with iteration lines and a traceback on both sides of segment boundaries.
TEST(LogscanParallel, LargeFilesStreamedInSegmentsGiveTheSameReport) {
  namespace fs = std::filesystem;
  std::string pattern = (fs::temp_directory_path() / "hcp-parallel-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const fs::path dir(pattern);
  auto rank_log = [](int rank, int lines) {
    std::string t = "using world size: 8, data-parallel size: 2, context-parallel size: 4, tensor-model-parallel "
                    "size: 1, pipeline-model-parallel size: 1\n";
    for (int i = 1; i <= lines; ++i) {
      t += " [2026-08-22 12:00:00] iteration " + std::to_string(i) + "/  100000 | consumed samples: " +
           std::to_string(i * 64) + " | elapsed time per iteration (ms): " + std::to_string(800 + (i * 7 + rank) % 50) +
           ".5 | throughput per GPU (TFLOP/s/GPU): 401.2 | lm loss: 7.0" + std::to_string(i % 10) +
           "0000E+00 | number of skipped iterations:   0 | number of nan iterations:   0 |\n";
      t += "node-1:4100:4156 [" + std::to_string(rank) + "] NCCL INFO Channel 01/0 : 3[3] -> 4[4] via P2P/IPC/read\n";
      if (i == lines / 2) {  // a traceback longer than a segment: it spans a boundary whatever the offsets
        t += "Traceback (most recent call last):\n";
        const std::string path(3000, 'd');  // 390 frames of 3 KB: 1.1 MiB, within the 400 lines a traceback may have
        for (int f = 0; f < 390; ++f) t += "  File \"/" + path + "/train.py\", line " + std::to_string(f) + ", in step\n";
        t += "ValueError: shapes (4, 8) and (2, 8) do not match\n";  // known only as the traceback's end
      }
    }
    return t;
  };
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
  };
  write("rank_0.log", rank_log(0, 24000));  // about 8 MiB of recorded lines: eight segments and more
  write("rank_1.log.zst", zstd(rank_log(1, 24000)));
  write("rank_2.log.gz", gzip(rank_log(2, 12000)));
  write("rank_3.log", rank_log(3, 40));
  write("rank_4.log", rank_log(4, 30000));
  ScanOptions one;
  const std::string sequential = render_json(scan_paths({dir.string()}, one));
  EXPECT_NE(sequential.find("\"last_iteration\": 30000"), std::string::npos);
  EXPECT_NE(sequential.find("ValueError: shapes (4, 8)"), std::string::npos);
  for (unsigned jobs : {2u, 3u, 5u}) {
    ScanOptions o;
    o.jobs = jobs;
    EXPECT_EQ(render_json(scan_paths({dir.string()}, o)), sequential) << "jobs " << jobs;
  }
  // Over the tape budget (16 MiB on two threads): a small file, a large one whose lines are seldom recorded (slow
  // to finish, little tape), then one of about 19 MiB of recorded iteration lines. Whichever thread takes the last
  // one runs ahead of the one before it past the budget: a worker then waits for room, the replaying thread
  // replays the file before its own as it comes instead of scanning further. The report is still the sequential one.
  fs::remove_all(dir);
  fs::create_directory(dir);
  write("rank_0.log", rank_log(0, 10));
  std::string quiet;
  const std::string channel = "node-1:4100:4156 [1] NCCL INFO Channel 01/0 : 3[3] -> 4[4] via P2P/IPC/read\n";
  while (quiet.size() < (48u << 20)) quiet += channel;
  write("rank_1.log", quiet);
  write("rank_2.log", rank_log(2, 100000));
  const std::string over_budget = render_json(scan_paths({dir.string()}, one));
  EXPECT_NE(over_budget.find("\"last_iteration\": 100000"), std::string::npos);
  for (int round = 0; round < 3; ++round) {
    ScanOptions o;
    o.jobs = 2;
    EXPECT_EQ(render_json(scan_paths({dir.string()}, o)), over_budget) << "round " << round;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hcp::logscan
