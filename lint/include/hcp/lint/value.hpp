// A configuration value as any of the input formats spells it, with where it was written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hcp/lint/location.hpp"

namespace hcp::lint {

// Where a value came from, from most to least certain. `defaulted`: the input gives it only as a default for
// something the environment may set (${CP:-8} in a script). `unknown`: the input cannot know it (a positional
// parameter, an environment variable it does not set, a command's output); rules that need it stay silent.
enum class Provenance { literal, computed, defaulted, unknown };

struct Value {
  enum class Kind { null, boolean, integer, real, string, list, table };
  Kind kind = Kind::null;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  std::string text;           // the string, or the literal as written for numbers
  std::vector<Value> items;   // list entries
  Location loc;

  static Value make_null(Location loc);
  static Value make_bool(bool b, Location loc);
  static Value make_int(int64_t i, std::string literal, Location loc);
  static Value make_real(double d, std::string literal, Location loc);
  static Value make_string(std::string s, Location loc);
  static Value make_list(std::vector<Value> items, Location loc);

  // "null", "true", "4", "'a2a+p2p'", "[2, 2]"
  std::string display() const;
  std::string_view kind_name() const;
};

// Reads an untyped scalar the way YAML, Hydra overrides and shell arguments all need it: null/~, true/false,
// 64-bit integers, reals, else a string. An integer literal that does not fit in 64 bits stays a string with
// `overflow` set, so the type rule can say so.
Value parse_scalar(const std::string& text, Location loc, bool* overflow = nullptr);

}  // namespace hcp::lint
