// YAML forms whose keys mean Bridge's under other names (NeMo-1 launcher YAML, Megatron-LM --yaml-cfg): only the
// mapped keys are taken; Hydra interpolations (${a.b}) are resolved inside the file, anything else is unknown.
#pragma once

#include <span>
#include <string_view>
#include <utility>

#include "hcp/lint/config_tree.hpp"

namespace hcp::lint {

using KeyMap = std::span<const std::pair<std::string_view, std::string_view>>;

// The settings of `yaml` named in `keys` (source key -> Bridge key), under their Bridge keys.
ConfigTree map_yaml_keys(const ConfigTree& yaml, KeyMap keys);

}  // namespace hcp::lint
