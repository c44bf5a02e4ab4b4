// Reads tests/fixtures/megatron_layouts.jsonl: layouts computed with Megatron-Core's own code (its README).
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hcp/topology.hpp"

namespace hcp::test {

struct FixtureCase {
  int line = 0;
  nlohmann::json json;
  ParallelConfig config() const {
    ParallelConfig c;
    c.world_size = json.at("world_size");
    c.tp = json.at("tp");
    c.pp = json.at("pp");
    c.cp = json.at("cp");
    c.ep = json.value("ep", 1);
    c.order = parse_order(json.at("order").get<std::string>());
    if (!json.at("hcp_sizes").is_null()) c.hcp_sizes = json.at("hcp_sizes").get<std::vector<int64_t>>();
    return c;
  }
};

inline std::string fixture_path() { return std::string(HCP_TESTS_DIR) + "/fixtures/megatron_layouts.jsonl"; }

inline std::vector<FixtureCase> load_fixture_cases() {
  std::vector<FixtureCase> cases;
  std::ifstream in(fixture_path());
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty()) cases.push_back({n, nlohmann::json::parse(line)});
  }
  return cases;
}

}  // namespace hcp::test
