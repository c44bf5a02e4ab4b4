#include "hcp/lint/config_tree.hpp"

#include <algorithm>

namespace hcp::lint {

void ConfigTree::set(Setting setting) {
  const std::string key = setting.key;
  if (settings_.find(key) == settings_.end()) order_.push_back(key);
  settings_[key] = std::move(setting);
}

void ConfigTree::remove(const std::string& key) {
  settings_.erase(key);
  order_.erase(std::remove(order_.begin(), order_.end(), key), order_.end());
}

const Setting* ConfigTree::find(const std::string& key) const {
  const auto it = settings_.find(key);
  return it == settings_.end() ? nullptr : &it->second;
}

}  // namespace hcp::lint
