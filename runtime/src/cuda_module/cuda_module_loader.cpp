// The public CUDA and NCCL entry points (attention_cuda.hpp, nccl_communicator.hpp) without linking CUDA: the first
// call loads libhcp_cuda.so and every call goes through its table. Without the module - a build without the GPU
// path, a machine without the CUDA driver or NCCL, HCP_CUDA_MODULE=off - each says why, as Errc::unsupported.
//
// Where the module is looked for, first found wins:
//   1. $HCP_CUDA_MODULE, when set: that file only ("" or "off": the GPU path is turned off);
//   2. beside the binary holding this code (libhcp.so, or the executable): an installed or packaged library;
//   3. <that directory>/../<libdir>: the installed hcp command finds the installed module;
//   4. the build tree's module, in builds that made one (tests and the CLI in the build tree);
//   5. the dynamic loader's own search (LD_LIBRARY_PATH, the cache).
// Builds without the GPU path look only at $HCP_CUDA_MODULE: a module of another build may not match this one.
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_module/cuda_module_abi.hpp"
#include "hcp/attention_cuda.hpp"
#include "hcp/nccl_communicator.hpp"

namespace hcp {
namespace {

constexpr const char* kModuleFile = "libhcp_cuda.so";

struct Loaded {
  const cuda_module::Table* table = nullptr;
  std::string why;  // when table is null
};

#ifdef HCP_CUDA_MODULE_BUILD_PATH
std::string directory_of_this_binary() {
  Dl_info info{};
  static const int anchor = 0;
  if (dladdr(&anchor, &info) == 0 || info.dli_fname == nullptr) return {};
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}
#endif

std::vector<std::string> candidates(bool* from_env) {
  *from_env = false;
  if (const char* env = std::getenv("HCP_CUDA_MODULE")) {
    *from_env = true;
    const std::string value = env;
    if (value.empty() || value == "off") return {};
    return {value};
  }
#ifdef HCP_CUDA_MODULE_BUILD_PATH
  std::vector<std::string> out;
  const std::string dir = directory_of_this_binary();
  if (!dir.empty()) {
    out.push_back(dir + "/" + kModuleFile);
    out.push_back(dir + "/../" + HCP_INSTALL_LIBDIR + "/" + kModuleFile);
  }
  out.push_back(HCP_CUDA_MODULE_BUILD_PATH);
  out.push_back(kModuleFile);
  return out;
#else
  return {};
#endif
}

Loaded load() {
  Loaded result;
  bool from_env = false;
  const std::vector<std::string> paths = candidates(&from_env);
  if (paths.empty()) {
    result.why = from_env ? "the GPU path is turned off (HCP_CUDA_MODULE is empty or 'off')"
                          : "this build of hcp has no CUDA path (configure with HCP_WITH_CUDA=ON and the CUDA "
                            "toolkit and NCCL installed)";
    return result;
  }
  std::string tried;
  for (const std::string& path : paths) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed: its code may run until exit
    if (handle == nullptr) {
      const char* err = dlerror();
      // A file that is not there is the usual case on the search path; a file that fails to load (a missing
      // libnccl.so.2, no CUDA driver) is the reason to report.
      tried += "\n  " + path + ": " + (err ? err : "cannot be loaded");
      continue;
    }
    auto entry = reinterpret_cast<cuda_module::EntryFn>(dlsym(handle, cuda_module::kEntryName));
    const cuda_module::Table* table = entry ? entry(cuda_module::kAbi) : nullptr;
    if (table == nullptr || std::string(table->version) != HCP_PROJECT_VERSION) {
      tried += "\n  " + path + ": not the CUDA module of this build of hcp (" + HCP_PROJECT_VERSION + ")";
      continue;
    }
    result.table = table;
    return result;
  }
  result.why = std::string("the GPU path needs ") + kModuleFile + " with the CUDA driver and NCCL (libnccl.so.2), " +
               "and it could not be loaded:" + tried;
  return result;
}

const Loaded& module() {
  static const Loaded loaded = load();  // thread-safe, once
  return loaded;
}

Status missing() { return {Errc::unsupported, module().why}; }

}  // namespace

bool cuda_built() { return module().table != nullptr; }

Status cuda_device_status() {
  const auto* t = module().table;
  return t ? t->device_status() : missing();
}

Status cuda_stream_create(void** stream) {
  const auto* t = module().table;
  return t ? t->stream_create(stream) : missing();
}

void cuda_stream_destroy(void* stream) {
  if (const auto* t = module().table) t->stream_destroy(stream);
}

Status cuda_stream_synchronize(void* stream) {
  const auto* t = module().table;
  return t ? t->stream_synchronize(stream) : missing();
}

Status attention_forward_cuda(const AttnParams& p, void* stream) {
  const auto* t = module().table;
  return t ? t->attention_forward(p, stream) : missing();
}

Status attention_backward_cuda(const AttnParams& p, void* stream) {
  const auto* t = module().table;
  return t ? t->attention_backward(p, stream) : missing();
}

Status attention_delta_cuda(const AttnParams& p, void* stream) {
  const auto* t = module().table;
  return t ? t->attention_delta(p, stream) : missing();
}

Status make_cuda_engine(void* stream, std::unique_ptr<CpEngine>* out) {
  const auto* t = module().table;
  return t ? t->make_engine(stream, out) : missing();
}

Status make_nccl_communicator(void* nccl_comm, const NcclOptions& options, std::unique_ptr<Communicator>* out) {
  const auto* t = module().table;
  return t ? t->wrap_nccl(nccl_comm, options, out) : missing();
}

Status nccl_unique_id(unsigned char (&id)[kNcclUniqueIdBytes]) {
  const auto* t = module().table;
  return t ? t->nccl_unique_id(id) : missing();
}

Status make_nccl_communicator(const unsigned char (&id)[kNcclUniqueIdBytes], int rank, int size,
                              const NcclOptions& options, std::unique_ptr<Communicator>* out) {
  const auto* t = module().table;
  return t ? t->create_nccl(id, rank, size, options, out) : missing();
}

}  // namespace hcp
