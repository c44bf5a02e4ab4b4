// The C hcp_parallel_config -> hcp::ParallelConfig conversion shared by the topology and attention entry points.
#pragma once

#include "hcp/hcp.h"
#include "hcp/parallel_config.hpp"

namespace hcp::capi {

// Reads the caller's versioned struct (see read_versioned); throws Error{invalid_argument} for a bad order or a
// NULL hcp_sizes with levels. Does not validate the sizes themselves (ParallelConfig::validate does).
ParallelConfig to_config(const hcp_parallel_config* in, const char* fn);

}  // namespace hcp::capi
