// The rule table: every rule, in code order. Codes are permanent and never reused.
#include "hcp/lint/rule.hpp"

namespace hcp::lint {

const Rule& rule_hcp000();
const Rule& rule_hcp001();
const Rule& rule_hcp002();
const Rule& rule_hcp003();
const Rule& rule_hcp004();
const Rule& rule_hcp005();
const Rule& rule_hcp006();
const Rule& rule_hcp007();
const Rule& rule_hcp008();
const Rule& rule_hcp009();
const Rule& rule_hcp010();
const Rule& rule_hcp011();
const Rule& rule_hcp012();
const Rule& rule_hcp013();
const Rule& rule_hcp014();
const Rule& rule_hcp015();
const Rule& rule_hcp016();
const Rule& rule_hcp017();
const Rule& rule_hcp018();
const Rule& rule_hcp019();
const Rule& rule_hcp020();
const Rule& rule_hcp021();
const Rule& rule_hcp022();
const Rule& rule_hcp023();
const Rule& rule_hcp024();
const Rule& rule_hcp025();
const Rule& rule_hcp026();
const Rule& rule_hcp027();
const Rule& rule_hcp028();
const Rule& rule_hcp029();
const Rule& rule_hcp030();
const Rule& rule_hcp031();
const Rule& rule_hcp032();
const Rule& rule_hcp033();

std::span<const Rule* const> all_rules() {
  static const Rule* const rules[] = {
      &rule_hcp000(), &rule_hcp001(), &rule_hcp002(), &rule_hcp003(), &rule_hcp004(), &rule_hcp005(), &rule_hcp006(),
      &rule_hcp007(), &rule_hcp008(), &rule_hcp009(), &rule_hcp010(), &rule_hcp011(), &rule_hcp012(),
      &rule_hcp013(), &rule_hcp014(), &rule_hcp015(), &rule_hcp016(), &rule_hcp017(), &rule_hcp018(),
      &rule_hcp019(), &rule_hcp020(), &rule_hcp021(), &rule_hcp022(), &rule_hcp023(), &rule_hcp024(), &rule_hcp025(),
      &rule_hcp026(),
      &rule_hcp027(),
      &rule_hcp028(),
      &rule_hcp029(),
      &rule_hcp030(),
      &rule_hcp031(),
      &rule_hcp032(),
      &rule_hcp033(),
  };
  return rules;
}

const Rule* find_rule(std::string_view code) {
  for (const Rule* rule : all_rules()) {
    if (rule->info.code == code) return rule;
  }
  return nullptr;
}

}  // namespace hcp::lint
