#include "hcp/lint/input_walk.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "hcp/error.hpp"
#include "hcp/lint/linter.hpp"
#include "ignore_file.hpp"

namespace hcp::lint {
namespace fs = std::filesystem;
namespace {

// The ignore files in force in a directory, the nearest (highest precedence) first: a linked list shared by the
// directories below it.
struct IgnoreChain {
  std::shared_ptr<const IgnoreChain> parent;
  IgnoreFile file;
};
using Chain = std::shared_ptr<const IgnoreChain>;

// `file`'s patterns, relative to `base`, on top of `chain`.
Chain with_file(Chain chain, const fs::path& file, const fs::path& base) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return chain;
  // read_source names the file in its error and bounds its size: an ignore file that cannot be read stops the run
  // rather than linting what it may have left out.
  const SourceText text = read_source(file.string());
  return std::make_shared<const IgnoreChain>(IgnoreChain{std::move(chain), IgnoreFile(base.string(), text.text, file.string())});
}

// .gitignore counts inside a git repository only (as for git and rg); .ignore, rg's own, everywhere and over it.
Chain with_directory_files(Chain chain, const fs::path& dir, bool in_repository) {
  if (in_repository) chain = with_file(std::move(chain), dir / ".gitignore", dir);
  return with_file(std::move(chain), dir / ".ignore", dir);
}

bool ignored(const IgnoreChain* chain, const fs::path& absolute, bool is_directory) {
  for (; chain; chain = chain->parent.get()) {
    const std::string relative = absolute.lexically_relative(chain->file.dir()).generic_string();
    const IgnoreFile::Verdict v = chain->file.match(relative, is_directory);
    if (v != IgnoreFile::Verdict::none) return v == IgnoreFile::Verdict::ignored;
  }
  return false;
}

// The directory holding .git at or above `dir`, or empty outside a repository.
fs::path repository_root(const fs::path& dir) {
  std::error_code ec;
  fs::path d = dir;
  for (int depth = 0; depth < 256 && !d.empty(); ++depth) {
    if (fs::exists(d / ".git", ec)) return d;
    if (d.parent_path() == d) break;
    d = d.parent_path();
  }
  return {};
}

// The ignore files above a walked directory, up to its repository's root: .git/info/exclude lowest, then each
// directory's from the root down, the walked directory's own last.
Chain chain_for_root(const fs::path& root) {
  const fs::path repo = repository_root(root);
  if (repo.empty()) return with_directory_files(nullptr, root, false);
  Chain chain = with_file(nullptr, repo / ".git" / "info" / "exclude", repo);
  std::vector<fs::path> dirs;
  for (fs::path d = root; ; d = d.parent_path()) {
    dirs.push_back(d);
    if (d == repo || d.parent_path() == d) break;
  }
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) chain = with_directory_files(std::move(chain), *it, true);
  return chain;
}

// `inside_base`: a name-only pattern matches below the pattern's base only (a named file's parents are checked up to
// it, not up to /home); in a walk it matches anywhere below the directory walked.
bool matches_exclude(const ExcludePattern& pattern, const fs::path& absolute, bool inside_base) {
  std::string glob = pattern.glob;
  while (glob.size() > 1 && glob.back() == '/') glob.pop_back();
  while (glob.rfind("./", 0) == 0) glob.erase(0, 2);
  const fs::path relative = absolute.lexically_relative(pattern.base);
  const bool inside = !relative.empty() && *relative.begin() != ".." && relative != ".";
  if (glob.find('/') == std::string::npos) {
    return (inside || !inside_base) && ::fnmatch(glob.c_str(), absolute.filename().c_str(), 0) == 0;
  }
  return inside && ::fnmatch(glob.c_str(), relative.generic_string().c_str(), 0) == 0;
}

bool excluded(const std::vector<ExcludePattern>& exclude, const fs::path& absolute, bool inside_base = false) {
  return std::any_of(exclude.begin(), exclude.end(),
                     [&](const ExcludePattern& p) { return matches_exclude(p, absolute, inside_base); });
}

// A file named on the command line under force_exclude: excluded when it, or a directory it is in, matches.
bool excluded_with_parents(const std::vector<ExcludePattern>& exclude, const fs::path& absolute) {
  for (fs::path p = absolute; !p.empty(); p = p.parent_path()) {
    if (excluded(exclude, p, true)) return true;
    if (p.parent_path() == p) break;
  }
  return false;
}

bool is_config_name(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".toml" || ext == ".yaml" || ext == ".yml" || ext == ".sh" || ext == ".args" || ext == ".py";
}

void walk_directory(const std::string& path, const WalkOptions& options, std::vector<CollectedInput>& out) {
  std::error_code ec;
  // Links are followed only where they stay inside the directory named: a link in a pull request must not make a
  // CI job read the runner's files into a public report (the rule `source` follows too).
  const fs::path root = fs::weakly_canonical(fs::absolute(path, ec), ec);
  auto leads_out = [&](const fs::path& link) {
    std::error_code link_ec;
    const fs::path target = fs::weakly_canonical(fs::absolute(link, link_ec), link_ec);
    if (link_ec) return false;  // a link to nothing: read_source says so
    const auto rel = target.lexically_relative(root);
    return rel.empty() || *rel.begin() == "..";
  };
  const bool in_repository = options.respect_ignore_files && !repository_root(root).empty();
  struct Pending {
    fs::path typed, absolute;
    Chain ignore;  // the files in force above this directory
  };
  std::vector<CollectedInput> found;
  // Depth first, a directory at a time, so that one that cannot be listed is named: an error that stops the walk,
  // never a silent partial read.
  std::vector<Pending> dirs{{fs::path(path), root, nullptr}};
  bool first = true;
  while (!dirs.empty()) {
    Pending dir = std::move(dirs.back());
    dirs.pop_back();
    Chain chain = !options.respect_ignore_files ? nullptr
                  : first                       ? chain_for_root(root)
                                                : with_directory_files(dir.ignore, dir.absolute, in_repository);
    first = false;
    fs::directory_iterator it(dir.typed, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      const fs::path& p = it->path();
      const std::string name = p.filename().string();
      const fs::path absolute = dir.absolute / name;
      std::error_code entry_ec;
      if (it->is_directory(entry_ec)) {
        if (name.empty() || name[0] == '.' || it->is_symlink(entry_ec)) continue;  // .git, .github, .venv
        if (ignored(chain.get(), absolute, true) || excluded(options.exclude, absolute)) continue;
        dirs.push_back({p, absolute, chain});
        continue;
      }
      // By name: a FIFO, a device or a link to one (or to nothing) with a config's name is an input too, which
      // read_source reports as unreadable (HCP000) instead of leaving it out in silence.
      if (!is_config_name(p) || ignored(chain.get(), absolute, false) || excluded(options.exclude, absolute)) continue;
      const bool out_of_tree = it->is_symlink(entry_ec) && leads_out(p);
      found.push_back({p.string(), out_of_tree ? "a symbolic link that leads out of " + path +
                                                     " (name it on the command line to lint it)"
                                               : ""});
    }
    if (ec) throw Error(Errc::io, dir.typed.string() + ": cannot list directory: " + ec.message());
  }
  std::sort(found.begin(), found.end(), [](const CollectedInput& a, const CollectedInput& b) { return a.path < b.path; });
  out.insert(out.end(), found.begin(), found.end());
}

}  // namespace

const std::vector<std::string>& default_excludes() {
  static const std::vector<std::string> kDefaults = {"__pypackages__", "_build",       "buck-out", "build",
                                                     "dist",           "node_modules", "site-packages", "venv"};
  return kDefaults;
}

CollectedInputs collect_inputs(const std::vector<std::string>& paths, const WalkOptions& options) {
  CollectedInputs out;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      ++out.directories_named;
      walk_directory(path, options, out.inputs);
      continue;
    }
    if (options.force_exclude && path != "-" &&
        excluded_with_parents(options.exclude, fs::weakly_canonical(fs::absolute(path, ec), ec)))
      continue;
    out.inputs.push_back({path, ""});  // read_source reports a missing or unreadable file with its name
  }
  return out;
}

}  // namespace hcp::lint
