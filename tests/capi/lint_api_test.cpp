// The lint C ABI: findings as structs, rendering, options, and every misuse answered with a status.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hcp/hcp.h"

namespace {

const char* kSilentlyOff = "[model]\ncontext_parallel_size = 4\ncp_comm_type = \"a2a+p2p\"\n";

struct Report {
  hcp_lint_report* r = nullptr;
  ~Report() { hcp_lint_report_destroy(r); }
};

std::vector<std::string> codes(const hcp_lint_report* r) {
  size_t n = 0;
  EXPECT_EQ(hcp_lint_report_count(&n, r), HCP_OK);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    hcp_lint_diagnostic d = HCP_LINT_DIAGNOSTIC_INIT;
    EXPECT_EQ(hcp_lint_report_get(&d, r, i), HCP_OK);
    out.emplace_back(d.code);
  }
  return out;
}

TEST(CapiLint, TextBufferFindingsAndRendering) {
  Report rep;
  ASSERT_EQ(hcp_lint_text(&rep.r, kSilentlyOff, std::strlen(kSilentlyOff), "cfg.toml", nullptr), HCP_OK)
      << hcp_last_error();
  size_t n = 0;
  ASSERT_EQ(hcp_lint_report_count(&n, rep.r), HCP_OK);
  ASSERT_GE(n, 1u);
  bool found = false;
  for (size_t i = 0; i < n; ++i) {
    hcp_lint_diagnostic d = HCP_LINT_DIAGNOSTIC_INIT;
    ASSERT_EQ(hcp_lint_report_get(&d, rep.r, i), HCP_OK);
    if (std::string(d.code) != "HCP001") continue;
    found = true;
    EXPECT_EQ(d.severity, HCP_SEVERITY_ERROR);
    EXPECT_STREQ(d.file, "cfg.toml");
    EXPECT_EQ(d.line, 3);
    EXPECT_EQ(d.col, 1);
    EXPECT_STREQ(d.rule, "a2a-p2p-without-sizes");
    EXPECT_NE(std::string(d.hint), "");
  }
  EXPECT_TRUE(found);
  for (const char* format : {"text", "json", "sarif", "github"}) {
    char* out = nullptr;
    ASSERT_EQ(hcp_lint_report_render(&out, rep.r, format), HCP_OK) << format;
    EXPECT_NE(std::string(out).find("HCP001"), std::string::npos) << format;
    hcp_free(out);
  }
  char* out = nullptr;
  EXPECT_EQ(hcp_lint_report_render(&out, rep.r, "xml"), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
}

TEST(CapiLint, OptionsSelectOverridesAndFacts) {
  const char* overrides[] = {"model.hierarchical_context_parallel_sizes=[2,2]"};
  hcp_lint_options o = HCP_LINT_OPTIONS_INIT;
  o.overrides = overrides;
  o.num_overrides = 1;
  o.te_version = "1.11.0";
  o.select = "HCP001,HCP005";
  Report rep;
  ASSERT_EQ(hcp_lint_text(&rep.r, kSilentlyOff, std::strlen(kSilentlyOff), "cfg.toml", &o), HCP_OK) << hcp_last_error();
  EXPECT_EQ(codes(rep.r), std::vector<std::string>{"HCP005"});

  o.select = nullptr;
  o.severities = "HCP005=warning";
  Report rep2;
  ASSERT_EQ(hcp_lint_text(&rep2.r, kSilentlyOff, std::strlen(kSilentlyOff), "cfg.toml", &o), HCP_OK);
  size_t n = 0;
  hcp_lint_report_count(&n, rep2.r);
  for (size_t i = 0; i < n; ++i) {
    hcp_lint_diagnostic d = HCP_LINT_DIAGNOSTIC_INIT;
    hcp_lint_report_get(&d, rep2.r, i);
    if (std::string(d.code) == "HCP005") {
      EXPECT_EQ(d.severity, HCP_SEVERITY_WARNING);
    }
  }
}

TEST(CapiLint, PythonConfigsByNameOrByInputFormat) {
  // The Megatron-Bridge guide's lines without the sizes: HCP001 at cp_comm_type, from a name ending in .py or from
  // any name with input_format "python".
  const char* py = "cfg.model.context_parallel_size = 4\ncfg.model.cp_comm_type = \"a2a+p2p\"\n";
  auto errors = [](const hcp_lint_report* r) {
    size_t n = 0;
    EXPECT_EQ(hcp_lint_report_count(&n, r), HCP_OK);
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i) {
      hcp_lint_diagnostic d = HCP_LINT_DIAGNOSTIC_INIT;
      EXPECT_EQ(hcp_lint_report_get(&d, r, i), HCP_OK);
      if (d.severity == HCP_SEVERITY_ERROR) {
        out.push_back(std::string(d.code) + "@" + std::to_string(d.line) + ":" + std::to_string(d.col));
      }
    }
    return out;
  };
  Report rep;
  ASSERT_EQ(hcp_lint_text(&rep.r, py, std::strlen(py), "recipe.py", nullptr), HCP_OK) << hcp_last_error();
  EXPECT_EQ(errors(rep.r), std::vector<std::string>{"HCP001@2:11"});
  hcp_lint_options o = HCP_LINT_OPTIONS_INIT;
  o.input_format = "python";
  Report rep2;
  ASSERT_EQ(hcp_lint_text(&rep2.r, py, std::strlen(py), "snippet", &o), HCP_OK) << hcp_last_error();
  EXPECT_EQ(errors(rep2.r), std::vector<std::string>{"HCP001@2:11"});
}

TEST(CapiLint, InputErrorsAreStatuses) {
  hcp_lint_report* r = reinterpret_cast<hcp_lint_report*>(0x1);
  EXPECT_EQ(hcp_lint_file(&r, "/no/such/config.toml", nullptr), HCP_ERR_IO);
  EXPECT_EQ(r, nullptr);
  EXPECT_NE(std::string(hcp_last_error()).find("/no/such/config.toml: cannot read"), std::string::npos);
  EXPECT_EQ(hcp_lint_file(&r, "/", nullptr), HCP_ERR_IO);
  const char* bad = "[model\ncp = 1\n";
  EXPECT_EQ(hcp_lint_text(&r, bad, std::strlen(bad), "bad.toml", nullptr), HCP_ERR_PARSE);
  EXPECT_NE(std::string(hcp_last_error()).find("bad.toml:1:"), std::string::npos) << hcp_last_error();
}

TEST(CapiLint, MisuseGivesStatusesNotCrashes) {
  hcp_lint_report* r = nullptr;
  hcp_lint_options o = HCP_LINT_OPTIONS_INIT;
  EXPECT_EQ(hcp_lint_file(nullptr, "x.toml", nullptr), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_lint_file(&r, nullptr, nullptr), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_lint_text(nullptr, "", 0, nullptr, nullptr), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_lint_text(&r, nullptr, 5, nullptr, nullptr), HCP_ERR_INVALID_ARGUMENT);
  o.num_overrides = 2;
  EXPECT_EQ(hcp_lint_text(&r, "", 0, nullptr, &o), HCP_ERR_INVALID_ARGUMENT);
  o = HCP_LINT_OPTIONS_INIT;
  o.select = "HCP999";
  EXPECT_EQ(hcp_lint_text(&r, "", 0, nullptr, &o), HCP_ERR_INVALID_ARGUMENT);
  o = HCP_LINT_OPTIONS_INIT;
  o.input_format = "xml";
  EXPECT_EQ(hcp_lint_text(&r, "", 0, nullptr, &o), HCP_ERR_INVALID_ARGUMENT);
  o = HCP_LINT_OPTIONS_INIT;
  o.gpus_per_node = -8;
  EXPECT_EQ(hcp_lint_text(&r, "", 0, nullptr, &o), HCP_ERR_INVALID_ARGUMENT);
  o = HCP_LINT_OPTIONS_INIT;
  o.struct_size = 8;
  EXPECT_EQ(hcp_lint_text(&r, "", 0, nullptr, &o), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(r, nullptr);

  Report rep;
  ASSERT_EQ(hcp_lint_text(&rep.r, "", 0, nullptr, nullptr), HCP_OK);  // an empty config: nothing to report
  size_t n = 99;
  EXPECT_EQ(hcp_lint_report_count(&n, rep.r), HCP_OK);
  EXPECT_EQ(n, 0u);
  hcp_lint_diagnostic d = HCP_LINT_DIAGNOSTIC_INIT;
  EXPECT_EQ(hcp_lint_report_get(&d, rep.r, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_lint_report_get(nullptr, rep.r, 0), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_lint_report_count(nullptr, rep.r), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_lint_report_count(&n, nullptr), HCP_ERR_INVALID_ARGUMENT);
  char* text = nullptr;
  EXPECT_EQ(hcp_lint_report_render(nullptr, rep.r, "text"), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_lint_report_render(&text, nullptr, "text"), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_lint_report_render(&text, rep.r, nullptr), HCP_ERR_INVALID_ARGUMENT);
  hcp_lint_report_destroy(nullptr);
}

TEST(CapiLint, ConcurrentLintCallsAndReads) {
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        hcp_lint_report* r = nullptr;
        if (hcp_lint_text(&r, kSilentlyOff, std::strlen(kSilentlyOff), "cfg.toml", nullptr) != HCP_OK) {
          ++bad[t];
          continue;
        }
        const auto c = codes(r);
        if (std::find(c.begin(), c.end(), "HCP001") == c.end()) ++bad[t];
        hcp_lint_report_destroy(r);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad, (std::vector<int>{0, 0, 0, 0}));
}

}  // namespace
