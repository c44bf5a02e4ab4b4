// A lint rule: its permanent code, default severity and documentation next to its check. all_rules() is the one
// registry (rules/registry.cpp); --explain, --list-rules, SARIF metadata and docs/rules.md all come from it.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hcp/lint/config_tree.hpp"
#include "hcp/lint/diagnostic.hpp"
#include "hcp/lint/facts.hpp"

namespace hcp::lint {

struct RuleDoc {
  std::string_view what;        // the condition, precisely
  std::string_view why;         // what goes wrong upstream, and whether it is silent
  std::string_view example;     // a config that triggers it
  std::string_view fix;         // how to fix it
  std::string_view references;  // upstream code and issues
};

struct RuleInfo {
  std::string_view code;  // "HCP001"; never reused
  std::string_view name;  // "a2a-p2p-without-sizes"
  Severity severity;      // default; configurable per run
  std::string_view summary;
  RuleDoc doc;
};

struct LintContext {
  const ConfigTree& tree;
  const Facts& facts;
  std::string file;  // the unit's main input, for findings with no better place

  // The first known location, else the file itself.
  Location anchor(std::initializer_list<Location> candidates) const;
};

class Reporter {
 public:
  explicit Reporter(std::vector<Diagnostic>& out) : out_(out) {}
  void set_rule(const RuleInfo* rule) { rule_ = rule; }
  void report(Location loc, std::string message, std::string hint = {}, std::vector<Related> related = {});
  // Same, at a lower severity than the rule's default (a weaker form of the finding).
  void report_as(Severity severity, Location loc, std::string message, std::string hint = {},
                 std::vector<Related> related = {});
  // Same, at info level whatever the rule's severity: a fact the rule needs is unknown.
  void unknown(Location loc, std::string message, std::string hint);

 private:
  std::vector<Diagnostic>& out_;
  const RuleInfo* rule_ = nullptr;
};

struct Rule {
  RuleInfo info;
  void (*check)(const LintContext&, Reporter&);
  // The facts the check reads, by Facts::origin name. When one of them is unknown the rule is not run (an info
  // says which fact and why); when one is only a default, its findings are at most warnings.
  std::string_view needs;
};

std::span<const Rule* const> all_rules();
const Rule* find_rule(std::string_view code);  // null when unknown

}  // namespace hcp::lint
