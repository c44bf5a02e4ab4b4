// The iteration series behind the HTML charts: one point per training iteration line with its counter, loss, time
// and TFLOP/s; nothing kept unless asked; bounded on long logs by keeping every other line; the same with the
// parallel scan of several files.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "hcp/logscan/scanner.hpp"

namespace hcp::logscan {
namespace {

std::string megatron_line(int64_t it, int64_t total, double loss, double ms) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                " [2026-01-01 00:00:00] iteration %8lld/%8lld | consumed samples: %12lld | elapsed time per "
                "iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: 1.0E-04 | global "
                "batch size:    32 | lm loss: %.6E | loss scale: 1.0 | grad norm: 1.000 | number of skipped "
                "iterations:   0 | number of nan iterations:   0 |\n",
                static_cast<long long>(it), static_cast<long long>(total), static_cast<long long>(it * 32), ms,
                400.0 + static_cast<double>(it % 7), loss);
  return buf;
}

ScanReport scan_text(const std::string& text, bool series) {
  ScanOptions o;
  o.series = series;
  LogScanner s(o);
  s.begin_input("train.log");
  s.feed(text.data(), text.size());
  s.end_input();
  return s.finish();
}

TEST(Series, OnePointPerIterationLine) {
  std::string text;
  for (int i = 1; i <= 50; ++i) text += megatron_line(i * 10, 500, 10.0 - 0.1 * i, 1000.0 + i);
  const ScanReport r = scan_text(text, true);
  ASSERT_EQ(r.series.size(), 50u);
  EXPECT_EQ(r.series_stride, 1u);
  EXPECT_EQ(r.series[0].iteration, 10);
  EXPECT_EQ(r.series[49].iteration, 500);
  EXPECT_NEAR(r.series[0].loss, 9.9, 1e-9);
  EXPECT_NEAR(r.series[0].elapsed_ms, 1001.0, 1e-9);
  EXPECT_NEAR(r.series[0].tflops, 403.0, 1e-9);
  EXPECT_TRUE(scan_text(text, false).series.empty());
}

TEST(Series, LongLogsKeepEveryOtherLine) {
  std::string text;
  const int64_t n = static_cast<int64_t>(ScanReport::kMaxSeries) + 1000;
  text.reserve(static_cast<size_t>(n) * 400);
  for (int64_t i = 1; i <= n; ++i) text += megatron_line(i, n, 2.0, 100.0);
  const ScanReport r = scan_text(text, true);
  EXPECT_EQ(r.series_stride, 2u);
  EXPECT_EQ(r.series.size(), static_cast<size_t>((n + 1) / 2));
  for (size_t i = 0; i < r.series.size(); ++i) ASSERT_EQ(r.series[i].iteration, static_cast<int64_t>(2 * i + 1));
}

TEST(Series, ParallelScanGivesTheSamePoints) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("hcp_series_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> paths;
  for (int f = 0; f < 3; ++f) {
    const std::string path = (dir / ("rank" + std::to_string(f) + ".log")).string();
    std::ofstream out(path);
    for (int i = 1; i <= 20; ++i) out << megatron_line(i + 100 * f, 300, 5.0 - 0.01 * i - f, 500.0 + f);
    paths.push_back(path);
  }
  ScanOptions one, many;
  one.series = many.series = true;
  many.jobs = 3;
  const ScanReport a = scan_paths(paths, one), b = scan_paths(paths, many);
  ASSERT_EQ(a.series.size(), 60u);
  ASSERT_EQ(b.series.size(), a.series.size());
  for (size_t i = 0; i < a.series.size(); ++i) {
    EXPECT_EQ(a.series[i].iteration, b.series[i].iteration);
    EXPECT_EQ(a.series[i].loss, b.series[i].loss);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hcp::logscan
