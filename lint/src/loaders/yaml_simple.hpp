// A fast path for the YAML that training configs are written in: block mappings and sequences, plain and
// single-line quoted scalars, single-line flow sequences of scalars, comments. Anything else (anchors, aliases,
// tags, flow mappings, block scalars, multi-line scalars, several documents, tabs) makes it decline, and yaml-cpp
// reads the file instead. yaml-cpp needs ~60-90 us for a ten-line file; this needs a few.
#pragma once

#include "hcp/lint/config_tree.hpp"
#include "hcp/lint/source.hpp"

namespace hcp::lint {

// Fills `tree` and returns true when the whole text is in the subset; returns false (tree untouched) otherwise.
bool load_simple_yaml(const SourceText& source, ConfigTree& tree);

}  // namespace hcp::lint
