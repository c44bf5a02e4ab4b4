// A YAML config with the files its `defaults:` key names merged under it, as NeMo-RL's load_config does
// (nemo_rl/utils/config.py): `defaults` is a path or a list of paths, relative to the file that names them; parents
// merge in order, later ones win, the file itself wins over all; lists are replaced whole; a section with
// `_override_: true` replaces the parents' section instead of merging into it. Parent files are read only inside the
// working directory (links resolved), so a pull request's config cannot make a CI job read the runner's files.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hcp/lint/config_tree.hpp"
#include "hcp/lint/source.hpp"

namespace hcp::lint {

struct InheritedYaml {
  ConfigTree raw;                                        // dotted keys as written, each with its own file's place
  std::vector<SourceText> read;                          // the parent files read, for findings that point there
  std::vector<std::pair<Location, std::string>> unread;  // parents not read, and why
};

// `key`: the key naming the parents - NeMo-RL's `defaults`, Primus's `extends` (same semantics:
// primus/core/config/yaml_loader.py:134-169).
InheritedYaml load_yaml_with_defaults(const SourceText& source, const std::string& key = "defaults");

// Whether hcp-lint may read `path` for a config that names it: an existing file inside the working directory once
// links are resolved (empty), or why not.
std::string refused_outside_working_directory(const std::string& path);

}  // namespace hcp::lint
