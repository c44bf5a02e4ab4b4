// The logscan C ABI: streaming and one-call scans, rendering, and misuse answered with statuses.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "hcp/hcp.h"

namespace {

const std::string kFixtures = std::string(HCP_TESTS_DIR) + "/logscan/fixtures/";

TEST(CapiLogscan, StreamingScanInAnyChunking) {
  hcp_logscanner* s = nullptr;
  ASSERT_EQ(hcp_logscan_create(&s, nullptr), HCP_OK);
  ASSERT_EQ(hcp_logscan_begin_input(s, "rank0"), HCP_OK);
  const std::string lines =
      "[hcp] rank 0: created CONTEXT_PARALLEL_GROUP size=4 ranks=[0,1,2,3]\n"
      "[hcp] rank 0: created HIERARCHICAL_CONTEXT_PARALLEL_GROUPS sizes=[2,2] L0=[0,1] L1=[0,2]\n";
  for (size_t i = 0; i < lines.size(); i += 7) {
    ASSERT_EQ(hcp_logscan_feed(s, lines.data() + i, std::min<size_t>(7, lines.size() - i)), HCP_OK);
  }
  hcp_logscan_report* r = nullptr;
  ASSERT_EQ(hcp_logscan_finish(&r, s), HCP_OK);
  const char* verdict = nullptr;
  ASSERT_EQ(hcp_logscan_report_verdict(&verdict, r), HCP_OK);
  EXPECT_STREQ(verdict, "hcp-active");
  char* json = nullptr;
  ASSERT_EQ(hcp_logscan_report_render(&json, r, "json"), HCP_OK);
  EXPECT_NE(std::string(json).find("\"where\": \"rank0:2\""), std::string::npos) << json;
  hcp_free(json);
  // The scanner is spent.
  EXPECT_EQ(hcp_logscan_feed(s, "x", 1), HCP_ERR_INVALID_ARGUMENT);
  hcp_logscan_report* again = nullptr;
  EXPECT_EQ(hcp_logscan_finish(&again, s), HCP_ERR_INVALID_ARGUMENT);
  hcp_logscan_report_destroy(r);
  hcp_logscan_destroy(s);
}

TEST(CapiLogscan, ScanPathsWithOptions) {
  const std::string path = kFixtures + "flat_cp_slurm.log";
  const char* paths[] = {path.c_str()};
  hcp_logscan_report* r = nullptr;
  ASSERT_EQ(hcp_logscan_scan_paths(&r, paths, 1, nullptr), HCP_OK);
  const char* verdict = nullptr;
  hcp_logscan_report_verdict(&verdict, r);
  EXPECT_STREQ(verdict, "flat-cp");
  hcp_logscan_report_destroy(r);
  hcp_logscan_options o = HCP_LOGSCAN_OPTIONS_INIT;
  o.gpu = "a100";  // 350 TFLOP/s/GPU is above an A100's 312
  ASSERT_EQ(hcp_logscan_scan_paths(&r, paths, 1, &o), HCP_OK);
  hcp_logscan_report_verdict(&verdict, r);
  EXPECT_STREQ(verdict, "cp-silently-off");
  for (const char* format : {"text", "github"}) {
    char* text = nullptr;
    ASSERT_EQ(hcp_logscan_report_render(&text, r, format), HCP_OK);
    EXPECT_NE(std::string(text).find("cp-silently-off"), std::string::npos);
    hcp_free(text);
  }
  hcp_logscan_report_destroy(r);
}

TEST(CapiLogscan, MisuseGivesStatuses) {
  hcp_logscanner* s = nullptr;
  hcp_logscan_report* r = nullptr;
  const char* v = nullptr;
  char* text = nullptr;
  EXPECT_EQ(hcp_logscan_create(nullptr, nullptr), HCP_ERR_INVALID_ARGUMENT);
  hcp_logscan_options o = HCP_LOGSCAN_OPTIONS_INIT;
  o.struct_size = 1;
  EXPECT_EQ(hcp_logscan_create(&s, &o), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_logscan_feed(nullptr, "x", 1), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_logscan_begin_input(nullptr, "x"), HCP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(hcp_logscan_create(&s, nullptr), HCP_OK);
  EXPECT_EQ(hcp_logscan_feed(s, nullptr, 3), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_logscan_feed(s, nullptr, 0), HCP_OK);
  EXPECT_EQ(hcp_logscan_begin_input(s, nullptr), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_logscan_finish(nullptr, s), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_logscan_finish(&r, nullptr), HCP_ERR_INVALID_ARGUMENT);
  hcp_logscan_destroy(s);
  hcp_logscan_destroy(nullptr);
  const char* null_path[] = {nullptr};
  EXPECT_EQ(hcp_logscan_scan_paths(&r, null_path, 1, nullptr), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_logscan_scan_paths(&r, nullptr, 1, nullptr), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_logscan_scan_paths(&r, nullptr, 0, nullptr), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_logscan_scan_paths(nullptr, null_path, 1, nullptr), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_logscan_report_verdict(&v, nullptr), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_logscan_report_render(&text, nullptr, "json"), HCP_ERR_INVALID_ARGUMENT);
  const std::string path = kFixtures + "no_cp.log";
  const char* paths[] = {path.c_str()};
  ASSERT_EQ(hcp_logscan_scan_paths(&r, paths, 1, nullptr), HCP_OK);
  EXPECT_EQ(hcp_logscan_report_verdict(nullptr, r), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_logscan_report_render(&text, r, "xml"), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_logscan_report_render(&text, r, nullptr), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_logscan_report_render(nullptr, r, "json"), HCP_ERR_INVALID_ARGUMENT);
  hcp_logscan_report_destroy(r);
  hcp_logscan_report_destroy(nullptr);
}

}  // namespace
