#include "hcp/lint/rule.hpp"

namespace hcp::lint {

Location LintContext::anchor(std::initializer_list<Location> candidates) const {
  for (const Location& l : candidates) {
    if (l.known()) return l;
  }
  return Location{file, 0, 0};
}

void Reporter::report(Location loc, std::string message, std::string hint, std::vector<Related> related) {
  Diagnostic d;
  d.code = std::string(rule_->code);
  d.severity = rule_->severity;
  d.rule = std::string(rule_->name);
  d.message = std::move(message);
  d.loc = std::move(loc);
  d.hint = std::move(hint);
  d.related = std::move(related);
  out_.push_back(std::move(d));
}

void Reporter::report_as(Severity severity, Location loc, std::string message, std::string hint,
                         std::vector<Related> related) {
  report(std::move(loc), std::move(message), std::move(hint), std::move(related));
  out_.back().severity = severity;
}

void Reporter::unknown(Location loc, std::string message, std::string hint) {
  report_as(Severity::info, std::move(loc), std::move(message), std::move(hint));
  out_.back().unknown_fact = true;
}

}  // namespace hcp::lint
