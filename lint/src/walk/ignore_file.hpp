// One .gitignore or .ignore file, matched with git's rules (gitignore(5)): the last pattern that matches a path
// decides; `!` re-includes; a trailing `/` matches directories only; a pattern with a `/` before its end is anchored
// at the file's directory, one without matches a name at any depth; `*`, `?` and `[...]` stay within one path
// segment and `**` spans any number of them. That a file inside an ignored directory cannot be re-included follows
// from the walk, which never enters one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hcp::lint {

class IgnoreFile {
 public:
  enum class Verdict { none, ignored, kept };

  // At most this many patterns a file: each is tried on every path a walk meets, so a hostile file of millions
  // would stall a CI job. Real ones have tens to hundreds.
  static constexpr size_t kMaxPatterns = 4096;

  // Patterns of `text`, the content of the file `name` (for messages) whose patterns are relative to `dir`. Throws
  // Error{invalid_argument} naming name:line past kMaxPatterns.
  IgnoreFile(std::string dir, std::string_view text, const std::string& name = "");

  const std::string& dir() const { return dir_; }
  // `relative`: the path below dir(), '/'-separated, without a leading "./".
  Verdict match(std::string_view relative, bool is_directory) const;

 private:
  struct Pattern {
    std::vector<std::string> segments;  // "**" is a segment of its own; an unanchored pattern starts with one
    bool negated = false;
    bool directory_only = false;
  };
  std::string dir_;
  std::vector<Pattern> patterns_;
};

}  // namespace hcp::lint
