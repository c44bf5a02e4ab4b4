// Status strings, the per-thread last error, version and memory release.
#include <cstdlib>
#include <string>

#include "guard.hpp"

namespace hcp::capi {
namespace {
thread_local std::string last_error;
}
void set_last_error(std::string message) { last_error = std::move(message); }
const char* last_error_text() { return last_error.c_str(); }
}  // namespace hcp::capi

extern "C" {

HCP_API unsigned hcp_version_number(void) { return HCP_VERSION_NUMBER; }
HCP_API const char* hcp_version_string(void) { return HCP_VERSION_STRING; }

HCP_API const char* hcp_status_string(hcp_status status) {
  switch (status) {
    case HCP_OK: return "ok";
    case HCP_ERR_INVALID_ARGUMENT: return "invalid argument";
    case HCP_ERR_INVALID_CONFIG: return "invalid configuration";
    case HCP_ERR_BUFFER_TOO_SMALL: return "buffer too small";
    case HCP_ERR_OUT_OF_MEMORY: return "out of memory";
    case HCP_ERR_IO: return "i/o error";
    case HCP_ERR_PARSE: return "parse error";
    case HCP_ERR_UNSUPPORTED: return "unsupported";
    case HCP_ERR_COMM: return "communication error";
    case HCP_ERR_TIMEOUT: return "timeout";
    case HCP_ERR_SHAPE: return "shape error";
    case HCP_ERR_NOT_FOUND: return "not found";
    case HCP_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

HCP_API const char* hcp_last_error(void) { return hcp::capi::last_error_text(); }

HCP_API void hcp_free(void* ptr) { std::free(ptr); }

}  // extern "C"
