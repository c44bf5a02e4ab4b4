// Runs every fixture under tests/lint/fixtures. Each fixture states what it expects in its header comments:
//   # expect: HCP001, HCP019     these codes are reported
//   # expect-not: HCP015         these are not (an info that a rule could not check does not count)
//   # expect-clean               no error or warning at all
//   # lint-facts: te_version=2.4.0 gpus_per_node=8 world_size=16 gpu=h100 nodes=2
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "hcp/lint/linter.hpp"
#include "hcp/lint/rule.hpp"

namespace hcp::lint {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(HCP_TESTS_DIR) / "lint" / "fixtures";

struct Expectations {
  std::set<std::string> expect, expect_not;
  bool clean = false;
  CommandLineFacts facts;
};

std::set<std::string> codes(const std::string& list) {
  std::set<std::string> out;
  std::string token;
  std::istringstream in(list);
  while (in >> token) {
    token.erase(std::remove(token.begin(), token.end(), ','), token.end());
    if (!token.empty()) out.insert(token);
  }
  return out;
}

Expectations read_expectations(const std::string& text) {
  Expectations e;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto after = [&](const std::string& marker) -> std::optional<std::string> {
      const size_t p = line.find(marker);
      if (p == std::string::npos) return std::nullopt;
      return line.substr(p + marker.size());
    };
    if (auto v = after("# expect-not:")) e.expect_not.merge(codes(*v));
    else if (auto v2 = after("# expect:")) e.expect.merge(codes(*v2));
    else if (line.find("# expect-clean") != std::string::npos) e.clean = true;
    else if (auto v3 = after("# lint-facts:")) {
      std::istringstream kv(*v3);
      for (std::string item; kv >> item;) {
        const std::string key = item.substr(0, item.find('=')), value = item.substr(item.find('=') + 1);
        if (key == "te_version") e.facts.te_version = value;
        if (key == "gpu") e.facts.gpu = value;
        if (key == "gpus_per_node") e.facts.gpus_per_node = std::stoll(value);
        if (key == "world_size") e.facts.world_size = std::stoll(value);
        if (key == "nodes") e.facts.nodes = std::stoll(value);
      }
    }
  }
  return e;
}

std::vector<std::string> fixture_files() {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(kFixtures)) {
    if (entry.is_regular_file()) out.push_back(fs::relative(entry.path(), kFixtures).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class LintFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(LintFixture, ReportsWhatItsHeaderExpects) {
  SourceText source = read_source((kFixtures / GetParam()).string());
  const Expectations e = read_expectations(source.text);
  ASSERT_TRUE(!e.expect.empty() || !e.expect_not.empty() || e.clean) << "fixture states no expectation";
  LintOptions options;
  options.cluster = e.facts;
  const LintReport report = lint({source}, options);
  ASSERT_EQ(report.units.size(), 1u);
  const UnitReport& unit = report.units[0];
  ASSERT_FALSE(unit.error) << *unit.error;
  std::set<std::string> found;
  std::string listing;
  for (const Diagnostic& d : unit.diagnostics) {
    if (!d.unknown_fact) found.insert(d.code);  // "not checked: X is unknown" is no finding of the rule
    listing += "\n  " + d.loc.text() + " " + d.code + " " + std::string(severity_name(d.severity)) + ": " + d.message;
    EXPECT_TRUE(d.loc.file == source.name || d.loc.file.rfind("<command line", 0) == 0) << d.loc.file;
  }
  for (const std::string& code : e.expect) EXPECT_TRUE(found.count(code)) << code << " not reported:" << listing;
  for (const std::string& code : e.expect_not) EXPECT_FALSE(found.count(code)) << code << " reported:" << listing;
  if (e.clean) {
    EXPECT_FALSE(report.fails(Severity::warning)) << "expected no error or warning:" << listing;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LintFixture, ::testing::ValuesIn(fixture_files()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// Every rule has a fixture that fires it and a near-miss that does not, in TOML and in another format.
TEST(LintFixtures, EveryRuleFiresAndHasANearMissInTwoFormats) {
  for (const Rule* rule : all_rules()) {
    if (!rule->check) continue;  // HCP000 comes from the loaders (tested with the shell model and the CLI)
    const std::string code(rule->info.code);
    std::set<std::string> fire_formats, ok_formats;
    for (const std::string& file : fixture_files()) {
      const auto text = read_source((kFixtures / file).string()).text;
      const Expectations e = read_expectations(text);
      const std::string ext = fs::path(file).extension().string();
      if (e.expect.count(code)) fire_formats.insert(ext);
      if (e.expect_not.count(code)) ok_formats.insert(ext);
    }
    // A framework's own setting (HCP027: verl's keys; HCP033: NeMo-RL's padding) cannot be written in a
    // Megatron-Bridge TOML: two of the framework's forms instead.
    const bool toml = code != "HCP027" && code != "HCP033";
    EXPECT_TRUE((fire_formats.count(".toml") || !toml) && fire_formats.size() >= 2) << code << " lacks firing fixtures";
    EXPECT_TRUE((ok_formats.count(".toml") || !toml) && ok_formats.size() >= 2) << code << " lacks near-miss fixtures";
  }
}

}  // namespace
}  // namespace hcp::lint

namespace hcp::lint {
namespace {

// A misspelt name in a rule's `needs` would make the linter skip that fact's provenance check silently.
TEST(RuleNeeds, EveryNeededFactExists) {
  const Facts facts;
  for (const Rule* rule : all_rules()) {
    std::string_view needs = rule->needs;
    while (!needs.empty()) {
      const size_t comma = needs.find(',');
      const std::string_view need = needs.substr(0, comma);
      EXPECT_NE(facts.origin(need), nullptr) << rule->info.code << " needs unknown fact '" << need << "'";
      needs = comma == std::string_view::npos ? std::string_view() : needs.substr(comma + 1);
    }
  }
}

}  // namespace
}  // namespace hcp::lint
