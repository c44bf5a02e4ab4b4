// A Python config file read without running it: the module, each top-level function the file does not call and
// each method of its classes are units (a call of the file's own function is read where it is made, with its
// arguments); each unit's statements run on paths (an `if` whose test is unknown forks them, as in the shell
// model, up to a bound past which branches are joined), and every assignment to a config object's attribute or
// keyword of a known constructor becomes a setting of that path's ConfigTree with the value's provenance.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hcp/lint/loaders.hpp"
#include "hcp/lint/source.hpp"

namespace hcp::lint {

struct PythonUnit {
  std::string name;                     // "" for the module's own statements, else the function's name
  std::vector<ConfigVariant> variants;  // one per path (with the call's family and context, see ConfigVariant)
};

struct PythonRun {
  std::vector<PythonUnit> units;  // only the units that build or change a config
  bool imports_config_library = false;  // megatron.bridge, nemo, nemo_run
  std::vector<std::pair<Location, std::string>> unread;  // syntax errors and statements not followed
  size_t steps = 0;  // statements read on all paths of all units: the file's reading budget (kMaxSteps)
};

PythonRun run_python(const SourceText& source);

}  // namespace hcp::lint
