// The 0.7 C ABI: hcp_plan, the layout picture and the HTML logscan page, and their misuse answered with statuses.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "hcp/hcp.h"

namespace {

std::string take(char* text) {
  std::string s = text ? text : "";
  hcp_free(text);
  return s;
}

hcp_plan_options llama70b() {
  hcp_plan_options o = HCP_PLAN_OPTIONS_INIT;
  o.model = "llama3-70b";
  o.seq = 131072;
  o.nodes = 16;
  o.gpu = "h100";
  o.te_version = "2.4.0";
  o.full_recompute = 1;
  return o;
}

TEST(CapiPlan, RanksInEveryFormat) {
  const hcp_plan_options o = llama70b();
  char* out = nullptr;
  ASSERT_EQ(hcp_plan(&out, &o, "text", 3), HCP_OK) << hcp_last_error();
  const std::string text = take(out);
  EXPECT_NE(text.find("verdict: tp 2, pp 4, cp 16 p2p wins"), std::string::npos) << text;
  ASSERT_EQ(hcp_plan(&out, &o, "json", 0), HCP_OK);
  const std::string json = take(out);
  EXPECT_NE(json.find("\"verdict\": \"tp 2, pp 4, cp 16 p2p wins"), std::string::npos);
  EXPECT_NE(json.find("\"code\": \"HCP009\""), std::string::npos);  // a rejection, with its rule
  ASSERT_EQ(hcp_plan(&out, &o, "html", 5), HCP_OK);
  const std::string html = take(out);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("class=\"hcp-layout\""), std::string::npos);
}

TEST(CapiPlan, CustomModelAndGpuFigures) {
  hcp_plan_options o = HCP_PLAN_OPTIONS_INIT;
  o.layers = 4, o.hidden = 1024, o.ffn_hidden = 4096, o.heads = 8, o.kv_heads = 2, o.seq = 8192;
  o.nodes = 2, o.gpus_per_node = 4, o.tp = 2, o.pp = 1;
  o.peak_tflops = 100, o.memory_gib = 40, o.nvlink_gbs = 100, o.network_gbs = 10;
  char* out = nullptr;
  ASSERT_EQ(hcp_plan(&out, &o, "json", 0), HCP_OK) << hcp_last_error();
  const std::string json = take(out);
  EXPECT_NE(json.find("\"name\": \"custom\""), std::string::npos);
  EXPECT_NE(json.find("\"tp\": 2"), std::string::npos);
}

TEST(CapiPlan, MisuseIsAnsweredWithStatuses) {
  char* out = reinterpret_cast<char*>(1);
  hcp_plan_options o = llama70b();
  EXPECT_EQ(hcp_plan(&out, nullptr, "text", 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(hcp_plan(nullptr, &o, "text", 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_plan(&out, &o, "pdf", 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hcp_last_error()).find("unknown format 'pdf'"), std::string::npos);
  EXPECT_EQ(hcp_plan(&out, &o, nullptr, 0), HCP_ERR_INVALID_ARGUMENT);
  o.seq = 0;
  EXPECT_EQ(hcp_plan(&out, &o, "text", 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hcp_last_error()).find("options.seq is required"), std::string::npos);
  o = llama70b();
  o.gpu = "h900";
  EXPECT_EQ(hcp_plan(&out, &o, "text", 0), HCP_ERR_INVALID_ARGUMENT);
  o = llama70b();
  o.kv_heads = 7;
  EXPECT_EQ(hcp_plan(&out, &o, "text", 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hcp_last_error()).find("multiple of kv_heads"), std::string::npos);
  o = llama70b();
  o.reserved0 = 1;
  EXPECT_EQ(hcp_plan(&out, &o, "text", 0), HCP_ERR_INVALID_ARGUMENT);
  o = llama70b();
  o.struct_size = 24;  // not a version
  EXPECT_EQ(hcp_plan(&out, &o, "text", 0), HCP_ERR_INVALID_ARGUMENT);
}

TEST(CapiTopologySvg, DrawsTheLayout) {
  hcp_parallel_config c = HCP_PARALLEL_CONFIG_INIT;
  c.world_size = 32, c.tp = 2, c.cp = 8;
  const int64_t sizes[] = {4, 2};
  c.num_hcp_levels = 2, c.hcp_sizes = sizes;
  hcp_topology* t = nullptr;
  ASSERT_EQ(hcp_topology_create(&t, &c), HCP_OK) << hcp_last_error();
  char* svg = nullptr;
  ASSERT_EQ(hcp_topology_to_svg(&svg, t, 0), HCP_OK);
  const std::string s = take(svg);
  EXPECT_NE(s.find("<svg"), std::string::npos);
  size_t rings = 0;
  for (size_t at = s.find("class=\"ring "); at != std::string::npos; at = s.find("class=\"ring ", at + 1)) ++rings;
  EXPECT_EQ(rings, 16u);
  EXPECT_EQ(hcp_topology_to_svg(nullptr, t, 0), HCP_ERR_INVALID_ARGUMENT);
  hcp_topology_destroy(t);
}

TEST(CapiLogscanHtml, SeriesMakeTheCharts) {
  const std::string log = std::string(HCP_TESTS_DIR) + "/logscan/realworld/logs/009_megatron_2023_tp4_completed.log";
  const char* paths[] = {log.c_str()};
  for (int32_t series : {0, 1}) {
    hcp_logscan_options o = HCP_LOGSCAN_OPTIONS_INIT;
    o.series = series;
    hcp_logscan_report* r = nullptr;
    ASSERT_EQ(hcp_logscan_scan_paths(&r, paths, 1, &o), HCP_OK) << hcp_last_error();
    char* out = nullptr;
    ASSERT_EQ(hcp_logscan_report_render(&out, r, "html"), HCP_OK);
    const std::string html = take(out);
    EXPECT_EQ(html.find("data-points=\"20\"") != std::string::npos, series == 1);
    hcp_logscan_report_destroy(r);
  }
  // The 0.1 struct (ending after gpu) is still a version; series must be 0 or 1.
  hcp_logscan_options old = HCP_LOGSCAN_OPTIONS_INIT;
  old.struct_size = offsetof(hcp_logscan_options, series);
  hcp_logscan_report* r = nullptr;
  ASSERT_EQ(hcp_logscan_scan_paths(&r, paths, 1, &old), HCP_OK);
  hcp_logscan_report_destroy(r);
  hcp_logscan_options bad = HCP_LOGSCAN_OPTIONS_INIT;
  bad.series = 2;
  EXPECT_EQ(hcp_logscan_scan_paths(&r, paths, 1, &bad), HCP_ERR_INVALID_ARGUMENT);
}

}  // namespace
