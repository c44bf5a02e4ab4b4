// What shell completion offers for an option's value where CLI11 knows no fixed set: names the program knows but
// does not insist on (GPU models, model presets), or the words of a comma-separated list. `hcp cli-json` exports
// them with the rest of the definitions, from which scripts/gen_cli_docs.py writes the completions; nothing here
// validates a value.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace hcp::cli {

struct ValueHint {
  std::vector<std::string> words;
  bool comma_list = false;  // VALUE is "a,b,c": each item is one of `words`
};

CLI::Option* hint_values(CLI::Option* option, ValueHint hint);
const ValueHint* value_hint(const CLI::Option* option);  // null when none

}  // namespace hcp::cli
