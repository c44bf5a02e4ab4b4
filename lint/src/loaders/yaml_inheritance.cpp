#include "yaml_inheritance.hpp"

#include <filesystem>
#include <system_error>
#include <utility>

#include "hcp/error.hpp"
#include "hcp/lint/linter.hpp"
#include "hcp/lint/loaders.hpp"

namespace hcp::lint {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxDepth = 16;

std::string refused(const fs::path& path) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  if (ec) return "it cannot be read";
  const fs::path cwd = fs::canonical(fs::current_path(ec), ec);
  if (ec) return "the working directory cannot be resolved";
  const fs::path rel = real.lexically_relative(cwd);
  if (rel.empty() || *rel.begin() == ".." || rel.is_absolute()) {
    return "outside the working directory " + cwd.string() + " (hcp-lint reads inherited configs only from there)";
  }
  return {};
}

bool under(const std::string& key, const std::string& prefix) {
  return key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0 && key[prefix.size()] == '.';
}

class Loader {
 public:
  Loader(InheritedYaml& out, std::string key) : out_(out), key_(std::move(key)) {}

  // The merged keys of `source` and its ancestors into `into`.
  void load(const SourceText& source, ConfigTree& into, int depth, std::vector<std::string>& chain) {
    ConfigTree own;
    load_yaml(source, own);
    const bool inherited = !into.empty() || own.find(key_);
    if (const Setting* d = own.find(key_)) {
      std::vector<Value> parents;
      if (d->value.kind == Value::Kind::string) parents.push_back(d->value);
      if (d->value.kind == Value::Kind::list) parents = d->value.items;
      for (const Value& parent : parents) {
        if (parent.kind != Value::Kind::string) continue;
        inherit(source, parent, into, depth, chain);
      }
    }
    // Sections the file replaces whole (`_override_: true`): the parents' keys under them go first.
    for (const std::string& key : own.keys_in_order()) {
      constexpr std::string_view kOverride = "._override_";
      if (key.size() <= kOverride.size() || key.compare(key.size() - kOverride.size(), kOverride.size(), kOverride) != 0)
        continue;
      const Setting* flag = own.find(key);
      if (!flag || flag->value.kind != Value::Kind::boolean || !flag->value.boolean) continue;
      const std::string section = key.substr(0, key.size() - kOverride.size());
      const std::vector<std::string> keys = into.keys_in_order();
      for (const std::string& k : keys) {
        if (k == section || under(k, section)) into.remove(k);
      }
    }
    for (const std::string& key : own.keys_in_order()) {
      if (key == key_ || key.find("_override_") != std::string::npos) continue;
      // A mapping replaces a scalar (and the reverse): the parent's keys under it go.
      const Setting* s = own.find(key);
      if (s->value.kind != Value::Kind::table) {
        if (!inherited) {
          into.set(*s);
          continue;
        }
        const std::vector<std::string> keys = into.keys_in_order();
        for (const std::string& k : keys) {
          if (under(k, key)) into.remove(k);
        }
        into.set(*s);
      }
    }
  }

 private:
  void inherit(const SourceText& child, const Value& parent, ConfigTree& into, int depth,
               std::vector<std::string>& chain) {
    const fs::path path = fs::path(child.name).parent_path() / parent.text;
    const std::string name = path.lexically_normal().string();
    if (depth >= kMaxDepth) return out_.unread.push_back({parent.loc, key_ + ": " + parent.text + " (nested too deep)"});
    if (const std::string why = refused(path); !why.empty()) {
      return out_.unread.push_back({parent.loc, key_ + ": " + parent.text + " is not read: " + why});
    }
    std::error_code ec;
    const std::string real = fs::canonical(path, ec).string();
    for (const std::string& c : chain) {
      if (c == real) return out_.unread.push_back({parent.loc, key_ + ": " + parent.text + " inherits from itself"});
    }
    SourceText text;
    try {
      text = read_source(name);
    } catch (const Error& e) {
      return out_.unread.push_back({parent.loc, key_ + ": " + parent.text + " is not read: " + e.what()});
    }
    chain.push_back(real);
    load(text, into, depth + 1, chain);
    chain.pop_back();
    out_.read.push_back(std::move(text));
  }

  InheritedYaml& out_;
  std::string key_;
};

}  // namespace

std::string refused_outside_working_directory(const std::string& path) { return refused(fs::path(path)); }

InheritedYaml load_yaml_with_defaults(const SourceText& source, const std::string& key) {
  InheritedYaml out;
  Loader loader(out, key);
  std::vector<std::string> chain;
  std::error_code ec;
  if (fs::is_regular_file(source.name, ec)) chain.push_back(fs::canonical(source.name, ec).string());
  loader.load(source, out.raw, 0, chain);
  return out;
}

}  // namespace hcp::lint
