#include "ignore_file.hpp"

#include <fnmatch.h>

#include <string>

#include "hcp/error.hpp"

namespace hcp::lint {
namespace {

std::vector<std::string_view> split_segments(std::string_view path) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t slash = path.find('/', start);
    const size_t end = slash == std::string_view::npos ? path.size() : slash;
    if (end > start) out.push_back(path.substr(start, end - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

// Whether `segments` (with "**" spanning zero or more path segments, or one or more at the end: "dir/**" is what is
// inside dir, not dir) match all of `path`. Dynamic programming over (pattern, path) positions, so that a hostile
// file of many `**` stays linear in each.
bool match_segments(const std::vector<std::string>& segments, const std::vector<std::string_view>& path) {
  const size_t n = path.size();
  // reach[j]: the pattern so far matches the first j path segments.
  std::vector<char> reach(n + 1, 0), next(n + 1, 0);
  reach[0] = 1;
  std::string name;
  for (size_t i = 0; i < segments.size(); ++i) {
    std::fill(next.begin(), next.end(), 0);
    const bool last = i + 1 == segments.size();
    if (segments[i] == "**") {
      bool any = false;
      for (size_t j = 0; j <= n; ++j) {
        // At the end "**" needs at least one segment: from reach[k] it reaches k+1..n.
        if (last ? (j > 0 && (any || reach[j - 1])) : (any || reach[j])) next[j] = 1;
        any = any || reach[j];
      }
    } else {
      for (size_t j = 0; j < n; ++j) {
        if (!reach[j]) continue;
        name.assign(path[j]);
        if (::fnmatch(segments[i].c_str(), name.c_str(), 0) == 0) next[j + 1] = 1;
      }
    }
    reach.swap(next);
  }
  return reach[n] != 0;
}

// A line of the file as a pattern; false for blank lines and comments.
bool parse_line(std::string_view line, std::vector<std::string>* segments, bool* negated, bool* directory_only) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // Trailing spaces are dropped unless the last is escaped with a backslash.
  while (!line.empty() && line.back() == ' ' && !(line.size() >= 2 && line[line.size() - 2] == '\\')) line.remove_suffix(1);
  if (line.empty() || line[0] == '#') return false;
  *negated = line[0] == '!';
  if (*negated) line.remove_prefix(1);
  *directory_only = !line.empty() && line.back() == '/';
  if (*directory_only) line.remove_suffix(1);
  if (line.empty()) return false;
  // A slash at the start or in the middle anchors the pattern at the file's directory.
  const bool anchored = line.find('/') != std::string_view::npos;
  segments->clear();
  if (!anchored) segments->push_back("**");
  for (std::string_view s : split_segments(line)) {
    if (s == "**" && !segments->empty() && segments->back() == "**") continue;  // a/**/**/b is a/**/b
    segments->emplace_back(s);
  }
  // "\!x" and "\#x" name files that start with those characters: fnmatch reads the backslash as an escape.
  return !segments->empty();
}

}  // namespace

IgnoreFile::IgnoreFile(std::string dir, std::string_view text, const std::string& name) : dir_(std::move(dir)) {
  size_t start = 0;
  int line = 0;
  while (start < text.size()) {
    ++line;
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    Pattern p;
    if (parse_line(text.substr(start, end - start), &p.segments, &p.negated, &p.directory_only)) {
      if (patterns_.size() == kMaxPatterns) {
        throw Error(Errc::invalid_argument, name + ":" + std::to_string(line) + ": more than " +
                                                std::to_string(kMaxPatterns) +
                                                " ignore patterns (pass --no-ignore to walk without ignore files)");
      }
      patterns_.push_back(std::move(p));
    }
    start = end + 1;
  }
}

IgnoreFile::Verdict IgnoreFile::match(std::string_view relative, bool is_directory) const {
  const std::vector<std::string_view> path = split_segments(relative);
  for (auto it = patterns_.rbegin(); it != patterns_.rend(); ++it) {
    if (it->directory_only && !is_directory) continue;
    if (match_segments(it->segments, path)) return it->negated ? Verdict::kept : Verdict::ignored;
  }
  return Verdict::none;
}

}  // namespace hcp::lint
