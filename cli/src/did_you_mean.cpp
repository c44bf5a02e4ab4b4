#include "did_you_mean.hpp"

#include <algorithm>
#include <cstddef>

#include "hcp/edit_distance.hpp"

namespace hcp::cli {
namespace {

// The candidate nearest to `word`, if within a third of its length (at least 1, at most 3 edits).
std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
  const size_t limit = std::clamp<size_t>(word.size() / 3, 1, 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& c : candidates) {
    const size_t distance = edit_distance(word, c, limit);
    if (distance < best_distance) best = c, best_distance = distance;
  }
  return best;
}

std::vector<std::string> long_options(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options())
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  return names;
}

}  // namespace

std::string subcommand_named(CLI::App& app, const std::vector<std::string>& args) {
  for (const std::string& word : args) {
    if (word == "--") break;
    if (word.empty() || word[0] == '-') continue;
    for (const CLI::App* sub : app.get_subcommands({}))
      if (sub->get_name() == word) return word;
    return "";  // the first word that is no option is where the subcommand belongs
  }
  return "";
}

std::string parse_error_message(CLI::App& app, const std::vector<std::string>& args, const std::string& error) {
  std::vector<std::string> subcommands;
  for (const CLI::App* sub : app.get_subcommands({})) subcommands.push_back(sub->get_name());
  const CLI::App* in = nullptr;  // the subcommand named so far
  for (const std::string& word : args) {
    if (word == "--") break;
    if (!in && !word.empty() && word[0] != '-') {
      for (const CLI::App* sub : app.get_subcommands({}))
        if (sub->get_name() == word) in = sub;
      if (in) continue;
      // CLI11 says only "A subcommand is required": name the word it did not know.
      const std::string near = nearest(word, subcommands);
      return "unrecognised subcommand '" + word + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)");
    }
    if (word.rfind("--", 0) != 0 || word.size() < 3) continue;
    const std::string name = word.substr(0, word.find('='));
    const CLI::App& owner = in ? *in : app;
    if (owner.get_option_no_throw(name) || app.get_option_no_throw(name)) continue;
    const std::string near = nearest(name, long_options(owner));
    if (!near.empty()) return error + " (did you mean '" + near + "'?)";
  }
  return error;
}

}  // namespace hcp::cli
