// The project version for C++ code that must not include the C header; CMake takes it from hcp/hcp.h.
#pragma once

namespace hcp {
inline constexpr const char* kHcpVersionString = HCP_PROJECT_VERSION;
}
