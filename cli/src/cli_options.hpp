#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>

#include "hcp/error.hpp"
#include "int_list.hpp"

namespace hcp::cli {

// An integer option parsed exactly: CLI11's own conversion clamps out-of-range values, which would turn
// 99999999999999999999 into a valid-looking number. Errors surface as CLI11 validation errors (exit 2).
// Target is an int64_t or a std::optional<int64_t>.
template <typename Target>
CLI::Option* add_int_option(CLI::App* cmd, const std::string& name, Target& target, const std::string& help) {
  return cmd->add_option_function<std::string>(
      name,
      [&target, name](const std::string& v) {
        try {
          target = parse_int(v, name.c_str());
        } catch (const Error& e) {
          throw CLI::ValidationError(e.what());
        }
      },
      help)
      ->type_name("N");
}

}  // namespace hcp::cli
