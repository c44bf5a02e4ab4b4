#include "line_finder.hpp"

#include "../extract/scan_state.hpp"
#include "line_end.hpp"
#include "triggers.hpp"

namespace hcp::logscan {
namespace {

std::vector<std::string> literal_texts() {
  std::vector<std::string> out;
  for (const TriggerLiteral& t : trigger_literals()) out.emplace_back(t.text);
  return out;
}

}  // namespace

LineFinder::LineFinder() : literals_(literal_texts()) {
  for (const TriggerLiteral& t : trigger_literals()) {
    if (t.settles_line) settles_line_ |= uint64_t{1} << trigger_of_.size();
    trigger_of_.push_back(t.triggers);
  }
}

void LineFinder::find(Region& r) const {
  const char* const p = r.data;
  const size_t n = r.size;
  r.jobs.clear();
  ScanCursor cur;
  while (cur.pos < n) {
    uint64_t ids = literals_.next(p, n, n, cur);
    if (ids == 0) break;
    const size_t s = cur.line_start, key = cur.pos;
    const LineEnd end = find_line_end(p, s, n);
    const uint64_t newlines = cur.newlines;
    if (!settled(p, end.end, cur.pos, ids)) {
      ++cur.pos;
      while (const uint64_t more = literals_.next(p, n, end.end, cur)) {
        ids |= more;
        ++cur.pos;
      }
    }
    r.jobs.push_back({s, end.end, key, r.lines_before + newlines + 1, triggers_of(ids), end.escape});
    cur = {end.end + 1, end.end + 1, newlines + (end.end < n ? 1 : 0)};
  }
  r.newlines = cur.newlines;
}

bool LineFinder::settled(const char* p, size_t line_end, size_t at, uint64_t ids) const {
  if ((ids & settles_line_) == 0) return false;
  const size_t key = literals_.literal(static_cast<uint32_t>(__builtin_ctzll(ids & settles_line_))).size();
  return at + key <= line_end && skip_iteration_counters(p + at + key, p + line_end) != nullptr;
}

uint32_t LineFinder::triggers_of(uint64_t ids) const {
  uint32_t t = 0;
  for (; ids; ids &= ids - 1) t |= trigger_of_[static_cast<size_t>(__builtin_ctzll(ids))];
  return t;
}

}  // namespace hcp::logscan
