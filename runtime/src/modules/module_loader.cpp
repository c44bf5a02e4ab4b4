#include "modules/module_loader.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace hcp::modules {
namespace {

std::string directory_of_this_binary() {
  Dl_info info{};
  static const int anchor = 0;
  if (dladdr(&anchor, &info) == 0 || info.dli_fname == nullptr) return {};
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::vector<std::string> candidates(const ModuleSpec& spec, bool* from_env) {
  *from_env = false;
  if (const char* env = std::getenv(spec.env)) {
    *from_env = true;
    const std::string value = env;
    if (value.empty() || value == "off") return {};
    return {value};
  }
  if (spec.build_path == nullptr) return {};
  std::vector<std::string> out;
  const std::string dir = directory_of_this_binary();
  if (!dir.empty()) {
    out.push_back(dir + "/" + spec.file);
    out.push_back(dir + "/../" + HCP_INSTALL_LIBDIR + "/" + spec.file);
  }
  out.push_back(spec.build_path);
  out.push_back(spec.file);
  return out;
}

}  // namespace

LoadedModule load_module(const ModuleSpec& spec) {
  LoadedModule result;
  bool from_env = false;
  const std::vector<std::string> paths = candidates(spec, &from_env);
  if (paths.empty()) {
    result.why = from_env ? std::string(spec.file) + " is turned off (" + spec.env + " is empty or 'off')"
                          : std::string(spec.not_built);
    return result;
  }
  std::string tried;
  for (const std::string& path : paths) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | (spec.global ? RTLD_GLOBAL : RTLD_LOCAL));
    if (handle == nullptr) {
      const char* err = dlerror();
      tried += "\n  " + path + ": " + (err ? err : "cannot be loaded");
      continue;
    }
    auto entry = reinterpret_cast<EntryFn>(dlsym(handle, spec.entry));
    const auto* table = static_cast<const ModuleHeader*>(entry ? entry(spec.abi) : nullptr);
    if (table == nullptr || std::string(table->version) != HCP_PROJECT_VERSION) {
      tried += "\n  " + path + ": not the module of this build of hcp (" + HCP_PROJECT_VERSION + ")";
      continue;
    }
    result.table = table;
    return result;
  }
  result.why = std::string(spec.purpose) + " needs " + spec.file + " with " + spec.needs +
               ", and it could not be loaded:" + tried;
  return result;
}

}  // namespace hcp::modules
