// TOML parsed with a bound on what toml++ does not bound: it recurses once per part of a dotted key
// (`a.b.c = 1`, `[a.b.c]`, `{a.b.c = 1}`), and 50,000 parts in a 100 KB file overflowed the stack (SIGSEGV).
#pragma once

#include <toml++/toml.h>

#include "hcp/lint/source.hpp"

namespace hcp::lint {

// Refuses keys of more than 64 parts (the tree's own depth limit) before parsing, then parses; both as
// hcp::Error{parse} "file:line:col: ...".
toml::table parse_toml(const SourceText& source);

}  // namespace hcp::lint
