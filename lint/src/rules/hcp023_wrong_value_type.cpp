#include "hcp/lint/rule.hpp"

namespace hcp::lint {
namespace {

// The fix as the input form spells it: Megatron-LM flags take words (and argparse must accept what is suggested),
// the config files take typed values.
std::string fix(const Setting& s, const std::string& expected) {
  const std::string& flag = s.spelled;
  if (flag.rfind("--", 0) != 0) return "write the value as " + expected;
  if (flag == "--window-size") return "pass Megatron's tuple form, e.g. --window-size 4096,0";
  if (expected.find("list") != std::string::npos) return "pass the integers as separate words, e.g. " + flag + " 2 4";
  if (expected.find("integer") != std::string::npos) return "pass a positive integer, e.g. " + flag + " 4";
  return "pass " + expected + " after " + flag;
}

void check(const LintContext& ctx, Reporter& r) {
  for (const TypeProblem& p : ctx.facts.type_problems) {
    const Value& v = p.setting->value;
    const bool overflow = v.kind == Value::Kind::string && !v.text.empty() &&
                          v.text.find_first_not_of("+-0123456789") == std::string::npos;
    r.report(p.setting->key_loc,
             p.setting->spelled + " must be " + p.expected + ", got " + std::string(v.kind_name()) + " " + v.display() +
                 (overflow ? " (beyond a signed 64-bit integer)" : ""),
             fix(*p.setting, p.expected));
  }
}

}  // namespace

const Rule& rule_hcp023() {
  static const Rule rule{
      {"HCP023", "wrong-value-type", Severity::error, "a CP-related key has a value of the wrong type",
       {"A key the linter checks has a value of the wrong type (a string where an integer is needed, a number "
        "beyond a signed 64-bit integer, a scalar where a list is needed). The other rules ignore such a value.",
        "Bridge's dataclasses and Megatron's argparse either reject it at start-up or, worse, accept it and "
        "compare it as a string.",
        "[model]\ncontext_parallel_size = \"four\"",
        "Write the value with the expected type.",
        "Megatron-Bridge src/megatron/bridge/training/config.py"}},
      &check, ""};
  return rule;
}

}  // namespace hcp::lint
