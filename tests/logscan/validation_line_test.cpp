// Validation-loss lines are read by hand; this holds the reader to the regular expression it replaced, on the
// real shape and on random text around it (blanks of every kind, signs, exponents, damaged numbers).
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <random>
#include <string>

#include "hcp/logscan/scanner.hpp"

#include "extract/scan_state.hpp"
#include "match/triggers.hpp"

namespace hcp::logscan {
namespace {

std::optional<std::pair<int64_t, double>> by_regex(const std::string& line) {
  static const RE2 re(R"(validation loss at iteration\s+(\d+)\s*\|\s*lm loss value:\s*([-+0-9.eE]+))");
  int64_t iteration = 0;
  double loss = 0;
  if (!RE2::PartialMatch(line, re, &iteration, &loss)) return std::nullopt;
  return std::pair(iteration, loss);
}

// The extractor itself, as the scanner calls it for a line with the " iteration " literal (the literal
// prefilter decides which lines get here; that is tested with the scanner).
std::optional<std::pair<int64_t, double>> by_scanner(const std::string& line) {
  ScanState s;
  const std::string file = "v.log";
  LineView v;
  v.text = line;
  v.file = &file;
  extract_progress(s, v, kIteration);
  if (s.report.progress.validation_losses.empty()) return std::nullopt;
  return s.report.progress.validation_losses.back();
}

void expect_same(const std::string& line) {
  const auto want = by_regex(line);
  const auto got = by_scanner(line);
  ASSERT_EQ(got.has_value(), want.has_value()) << "'" << line << "'";
  if (want) {
    EXPECT_EQ(got->first, want->first) << "'" << line << "'";
    EXPECT_EQ(got->second, want->second) << "'" << line << "'";
  }
}

TEST(ValidationLine, RealShapes) {
  expect_same("[default7]: validation loss at iteration 65 | lm loss value: 8.900000E+00 | lm loss PPL: 1.04E+01 | ");
  expect_same(" validation loss at iteration 1000 | lm loss value: 2.345678E+00 | lm loss PPL: 1.043960E+01 |");
  expect_same("validation loss at iteration\t7\t|\tlm loss value:\t+3.5e-1");
  expect_same("validation loss at iteration 7|lm loss value:-0.25");
  expect_same("validation loss at iteration 99999999999999999999 | lm loss value: 1.0");  // wider than int64
  expect_same("validation loss at iteration 7 | lm loss value: 1.0.0");
  expect_same("validation loss at iteration 7 | lm loss value: ");
  expect_same("validation loss at iteration7 | lm loss value: 1.0");
  expect_same("validation loss at iteration 7 \v| lm loss value: 1.0");  // \v is not a blank to RE2
  const auto v = by_scanner("validation loss at iteration 65 | lm loss value: 8.900000E+00 |");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->first, 65);
  EXPECT_DOUBLE_EQ(v->second, 8.9);
  // Through the scanner: the line's " iteration " literal brings it to the reader.
  LogScanner scanner;
  const std::string text = "[default0]: validation loss at iteration 12 | lm loss value: 2.5E+00 | \n";
  scanner.feed(text.data(), text.size());
  const ScanReport r = scanner.finish();
  ASSERT_EQ(r.progress.validation_losses.size(), 1u);
  EXPECT_EQ(r.progress.validation_losses[0].first, 12);
  EXPECT_EQ(r.progress.validation_losses[0].second, 2.5);
}

TEST(ValidationLine, AgreesWithTheRegexOnRandomText) {
  std::mt19937 rng(29);
  const std::vector<std::string> pieces = {"validation loss at iteration", " ", "\t", "\v", "12", "0", "|",
                                           "lm loss value:", "+", "-", ".", "5", "e", "E", "x", "  | "};
  for (int round = 0; round < 3000; ++round) {
    std::string line = "validation loss at iteration";
    const size_t n = rng() % 9;
    for (size_t i = 0; i < n; ++i) line += pieces[rng() % pieces.size()];
    // Most rounds keep the valid skeleton with one piece disturbed, so that matches are common.
    if (round % 2 == 0) {
      line = "validation loss at iteration " + std::to_string(rng() % 100000) + pieces[rng() % pieces.size()] +
             " | lm loss value: " + pieces[rng() % pieces.size()] + std::to_string(rng() % 1000) + "." +
             std::to_string(rng() % 1000) + pieces[rng() % pieces.size()] + std::to_string(rng() % 30);
    }
    expect_same(line);
  }
}

}  // namespace
}  // namespace hcp::logscan
