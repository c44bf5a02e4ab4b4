// Optional parts of hcp that need libraries most users do not have - the GPU path (CUDA, NCCL) and the MPI backend
// (Open MPI) - are modules: shared objects loaded on first use, each reached through a table of functions. The
// runtime, libhcp.so and the hcp command link none of those libraries. C++ types cross the boundary, so a module
// is used only by the build that made it: the loader checks its ABI number and the project version.
#pragma once

#include <cstdint>
#include <string>

namespace hcp::modules {

// The first member of every module's table.
struct ModuleHeader {
  uint32_t abi;
  const char* version;  // HCP_PROJECT_VERSION of the module's build
};

// A module's exported entry: its table for `abi`, or nullptr for another.
using EntryFn = const void* (*)(uint32_t abi);

struct ModuleSpec {
  const char* file;        // "libhcp_cuda.so"
  const char* entry;       // the exported entry's name
  const char* env;         // the variable that names the file to load instead ("" or "off": turned off)
  const char* build_path;  // the build tree's module; nullptr when this build made none
  uint32_t abi;
  bool global;             // RTLD_GLOBAL: the module's libraries load plugins that need their symbols (Open MPI)
  const char* purpose;     // what the module is, for messages ("the GPU path")
  const char* needs;       // what the module needs ("the CUDA driver and NCCL (libnccl.so.2)")
  const char* not_built;   // the message when this build made no module
};

struct LoadedModule {
  const ModuleHeader* table = nullptr;
  std::string why;  // when table is null: the paths tried and the loader's errors
};

// Looks, first found wins: $env when set (that file only); beside the binary holding the runtime (libhcp.so, or
// the executable); ../<libdir> from there; the build tree's module; the dynamic loader's search path. Builds that
// made no module look only at $env. Never unloads what it loaded.
LoadedModule load_module(const ModuleSpec& spec);

}  // namespace hcp::modules
