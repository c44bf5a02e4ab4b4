#include "hcp/lint/config_file.hpp"

#include <fnmatch.h>
#include <toml++/toml.h>

#include <filesystem>

#include "hcp/error.hpp"
#include "hcp/lint/linter.hpp"
#include "hcp/lint/loaders.hpp"
#include "hcp/lint/rule.hpp"
#include "loaders/toml_guard.hpp"

namespace hcp::lint {
namespace {

Location at(const SourceText& src, const toml::node& n) {
  return {src.name, static_cast<int>(n.source().begin.line), static_cast<int>(n.source().begin.column)};
}

std::vector<std::string> strings(const SourceText& src, const toml::node& n, const std::string& key) {
  const toml::array* a = n.as_array();
  if (!a) throw_parse_error(at(src, n), key + " must be a list of strings");
  std::vector<std::string> out;
  for (const toml::node& item : *a) {
    if (!item.is_string()) throw_parse_error(at(src, item), key + " must be a list of strings");
    out.push_back(item.as_string()->get());
  }
  return out;
}

std::optional<int64_t> positive(const SourceText& src, const toml::node& n, const std::string& key) {
  // Integers, and floats that hold a whole number (8.0). toml++'s value<int64_t>() would convert any float,
  // which is undefined behaviour past int64's range (found by fuzz_lint_config: nodes = 8.9e41).
  std::optional<int64_t> v;
  if (const auto* i = n.as_integer()) {
    v = i->get();
  } else if (const auto* f = n.as_floating_point()) {
    const double d = f->get();
    if (d >= 1 && d <= 9007199254740992.0 && d == static_cast<double>(static_cast<int64_t>(d)))
      v = static_cast<int64_t>(d);
  }
  if (!v || *v <= 0) throw_parse_error(at(src, n), key + " must be a positive integer");
  return v;
}

std::string text(const SourceText& src, const toml::node& n, const std::string& key) {
  if (!n.is_string()) throw_parse_error(at(src, n), key + " must be a string");
  return n.as_string()->get();
}

PathFacts cluster(const SourceText& src, const toml::table& t) {
  PathFacts p;
  for (const auto& [k, v] : t) {
    const std::string key(k.str());
    if (key == "paths") {
      p.paths = strings(src, v, "cluster.paths");
    } else if (key == "nodes") {
      p.facts.nodes = positive(src, v, "cluster.nodes");
    } else if (key == "gpus-per-node" || key == "gpus_per_node") {
      p.facts.gpus_per_node = positive(src, v, "cluster.gpus-per-node");
    } else if (key == "world-size" || key == "world_size") {
      p.facts.world_size = positive(src, v, "cluster.world-size");
    } else if (key == "gpu") {
      p.facts.gpu = text(src, v, "cluster.gpu");
    } else if (key == "te-version" || key == "te_version") {
      p.facts.te_version = text(src, v, "cluster.te-version");
    } else {
      throw_parse_error(at(src, v), "unknown key '" + key + "' in a [[cluster]] entry (expected paths, nodes, "
                                    "gpus-per-node, world-size, gpu, te-version)");
    }
  }
  if (p.paths.empty()) throw_parse_error(at(src, t), "a [[cluster]] entry needs paths = [\"glob\", ...]");
  return p;
}

}  // namespace

bool path_matches(const std::string& glob, const std::string& path, const std::string& config) {
  std::string p = path;
  while (p.rfind("./", 0) == 0) p.erase(0, 2);
  if (::fnmatch(glob.c_str(), p.c_str(), 0) == 0 || ::fnmatch(glob.c_str(), path.c_str(), 0) == 0) return true;
  if (config.empty()) return false;
  // Relative to the config file's folder, wherever hcp-lint runs from (as exclude patterns are).
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::absolute(config, ec), ec).parent_path();
  const fs::path relative = fs::weakly_canonical(fs::absolute(path, ec), ec).lexically_relative(base);
  if (relative.empty() || *relative.begin() == "..") return false;
  return ::fnmatch(glob.c_str(), relative.generic_string().c_str(), 0) == 0;
}

std::optional<LintConfig> read_lint_config(const SourceText& source, bool pyproject) {
  const toml::table doc = parse_toml(source);
  const toml::table* root = &doc;
  if (pyproject) {
    root = doc["tool"]["hcp-lint"].as_table();
    if (!root) return std::nullopt;
  }
  LintConfig c;
  c.path = source.name;
  for (const auto& [k, v] : *root) {
    const std::string key(k.str());
    if (key == "exclude") {
      c.exclude = strings(source, v, key);
    } else if (key == "extend-exclude" || key == "extend_exclude") {
      c.extend_exclude = strings(source, v, key);
    } else if (key == "force-exclude" || key == "force_exclude" || key == "respect-gitignore" ||
               key == "respect_gitignore") {
      if (!v.is_boolean()) throw_parse_error(at(source, v), key + " must be true or false");
      (key[0] == 'f' ? c.force_exclude : c.respect_gitignore) = v.as_boolean()->get();
    } else if (key == "select") {
      c.select = strings(source, v, key);
    } else if (key == "ignore") {
      c.ignore = strings(source, v, key);
    } else if (key == "fail-on" || key == "fail_on") {
      try {
        c.fail_on = parse_severity(text(source, v, key));
      } catch (const Error& e) {
        throw_parse_error(at(source, v), e.what());
      }
    } else if (key == "severity") {
      const toml::table* t = v.as_table();
      if (!t) throw_parse_error(at(source, v), "severity must be a table of CODE = \"error|warning|info\"");
      for (const auto& [code, level] : *t) {
        if (!find_rule(code.str())) throw_parse_error(at(source, level), "unknown rule code '" + std::string(code.str()) + "'");
        try {
          c.severity[std::string(code.str())] = parse_severity(text(source, level, "severity"));
        } catch (const Error& e) {
          throw_parse_error(at(source, level), e.what());
        }
      }
    } else if (key == "cluster") {
      const toml::array* a = v.as_array();
      if (!a) throw_parse_error(at(source, v), "cluster must be an array of tables ([[cluster]])");
      for (const toml::node& entry : *a) {
        if (!entry.is_table()) throw_parse_error(at(source, entry), "cluster must be an array of tables ([[cluster]])");
        c.clusters.push_back(cluster(source, *entry.as_table()));
        c.clusters.back().config = source.name;
      }
    } else {
      throw_parse_error(at(source, v), "unknown key '" + key + "' (expected exclude, extend-exclude, "
                                       "force-exclude, respect-gitignore, select, ignore, fail-on, severity, cluster)");
    }
  }
  return c;
}

std::optional<LintConfig> find_lint_config(const std::string& start) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::absolute(start, ec);
  if (ec) return std::nullopt;
  for (int depth = 0; depth < 256 && !dir.empty(); ++depth) {
    for (const char* name : {"hcp-lint.toml", "pyproject.toml"}) {
      const fs::path candidate = dir / name;
      if (!fs::is_regular_file(candidate, ec)) continue;
      const bool pyproject = std::string(name) == "pyproject.toml";
      // A pyproject.toml without [tool.hcp-lint] says nothing: the search goes on upward.
      if (auto c = read_lint_config(read_source(candidate.string()), pyproject)) return c;
    }
    const fs::path parent = dir.parent_path();
    if (parent == dir) break;
    dir = parent;
  }
  return std::nullopt;
}

}  // namespace hcp::lint
