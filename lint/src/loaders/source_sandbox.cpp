#include "source_sandbox.hpp"

#include <filesystem>
#include <system_error>

namespace hcp::lint {

namespace fs = std::filesystem;

std::function<std::string(const std::string& path)> source_sandbox(const std::string& script_name) {
  std::error_code ec;
  const fs::path script(script_name);
  fs::path root;
  if (fs::is_regular_file(script, ec)) root = fs::canonical(fs::absolute(script, ec).parent_path(), ec);
  if (root.empty() || ec) {
    return [](const std::string&) { return std::string("files are sourced only next to a script read from a file"); };
  }
  return [root](const std::string& path) -> std::string {
    std::error_code e;
    const fs::path real = fs::canonical(fs::path(path), e);  // links resolved: where the read would really go
    if (e) return "the file cannot be read";
    // Inside root: the relative path from root does not climb out of it.
    const fs::path rel = real.lexically_relative(root);
    if (!rel.empty() && *rel.begin() != ".." && !rel.is_absolute()) return {};
    return "outside the script's folder " + root.string() + " (hcp-lint reads sourced files only from there)";
  };
}

}  // namespace hcp::lint
