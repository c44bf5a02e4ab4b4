// Megatron-LM training flags among a program's words, into Bridge keys: shared by launch scripts and the
// functional-test YAML, whose harness turns MODEL_ARGS into the same words.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hcp/lint/config_tree.hpp"
#include "../shell/shell_model.hpp"

namespace hcp::lint {

// Reads the flags of words[from...]; true when one of them is a training flag (the words launch training).
bool read_megatron_flags(const std::vector<ShellWord>& words, size_t from, ConfigTree& tree);

// Reads Megatron-Bridge (and NeMo 2) Hydra overrides among words[from...]; true when one sets a config section.
bool read_bridge_overrides(const std::vector<ShellWord>& words, size_t from, ConfigTree& tree,
                           std::string* foreign = nullptr);

// Reads Hydra overrides (`key=value`, `+key=value`, `++key=value`, `~key`) among words[from...] into `tree` under
// the key `key_of` gives for the key as written (none: not read); true when one was read. A value the shell
// model cannot know leaves its key unknown; a `${X:-v}` value is a default.
bool read_override_words(const std::vector<ShellWord>& words, size_t from, ConfigTree& tree,
                         const std::function<std::optional<std::string>(const std::string&)>& key_of);

}  // namespace hcp::lint
