#include "hcp/edit_distance.hpp"

#include <algorithm>
#include <vector>

namespace hcp {

// Optimal string alignment: Levenshtein's insert, delete and substitute, plus swapping two neighbours as one edit,
// the typist's commonest slip ("lnit", "fromat"). The linter asks it for every key of every input against a few
// hundred known names, so the rows are one reused buffer and a row past `limit` ends the work.
size_t edit_distance(std::string_view a, std::string_view b, size_t limit) {
  const size_t longer = std::max(a.size(), b.size()), shorter = std::min(a.size(), b.size());
  if (longer - shorter > limit) return limit + 1;  // at least that many insertions
  const size_t width = b.size() + 1;
  thread_local std::vector<size_t> rows;
  rows.assign(3 * width, 0);
  // Three rows: the one before the previous is where a transposition comes from.
  size_t* before = rows.data();
  size_t* previous = before + width;
  size_t* row = previous + width;
  for (size_t j = 0; j < width; ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    size_t best = row[0];
    for (size_t j = 1; j < width; ++j) {
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], before[j - 2] + 1);
      best = std::min(best, row[j]);
    }
    // Every later row is at least this row's smallest entry minus nothing: past the limit it cannot come back
    // (a transposition reaches back one row, so both rows must be past it).
    if (best > limit && i > 1) {
      size_t previous_best = previous[0];
      for (size_t j = 1; j < width; ++j) previous_best = std::min(previous_best, previous[j]);
      if (previous_best > limit) return limit + 1;
    }
    std::swap(before, previous);
    std::swap(previous, row);
  }
  return std::min(previous[b.size()], limit + 1);
}

}  // namespace hcp
