#include "cli_json_command.hpp"

#include <iostream>

#include "exit_codes.hpp"
#include "hcp/hcp_version.hpp"
#include "hcp/json_writer.hpp"
#include "value_hints.hpp"

namespace hcp::cli {
namespace {

void write_option(JsonWriter& w, const CLI::Option& o) {
  w.begin_object();
  w.key("long");
  w.begin_array();
  for (const std::string& n : o.get_lnames()) w.value("--" + n);
  w.end_array();
  w.key("short");
  w.begin_array();
  for (const std::string& n : o.get_snames()) w.value("-" + n);
  w.end_array();
  w.key("positional");
  w.value(o.get_positional() ? o.get_name(true, false) : std::string());
  w.key("flag");
  w.value(o.get_type_name().empty());  // flags take no value, so CLI11 names no type
  // CLI11's own words: "TEXT", "FILE", "TEXT:{a,b}" for fixed values.
  w.key("type");
  w.value(o.get_type_name());
  w.key("default");
  w.value(o.get_default_str());
  w.key("repeatable");
  w.value(o.get_items_expected_max() > 1 || o.get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll);
  w.key("required");
  w.value(o.get_required());
  w.key("group");
  w.value(o.get_group());
  w.key("description");
  w.value(o.get_description());
  w.key("hint");
  if (const ValueHint* h = value_hint(&o)) {
    w.begin_object();
    w.key("words");
    w.begin_array();
    for (const std::string& word : h->words) w.value(word);
    w.end_array();
    w.key("comma_list");
    w.value(h->comma_list);
    w.end_object();
  } else {
    w.null();
  }
  w.end_object();
}

void write_app(JsonWriter& w, const CLI::App& app) {
  w.begin_object();
  w.key("name");
  w.value(app.get_name());
  w.key("description");
  w.value(app.get_description());
  // A command that takes every later word as its own (hcp attn in a tools-only build): no options to document.
  w.key("prefix_command");
  w.value(app.get_prefix_command());
  w.key("options");
  w.begin_array();
  for (const CLI::Option* o : app.get_options()) {
    if (!o->get_positional()) write_option(w, *o);
  }
  w.end_array();
  w.key("positionals");
  w.begin_array();
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_positional()) write_option(w, *o);
  }
  w.end_array();
  w.key("subcommands");
  w.begin_array();
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (!sub->get_group().empty()) write_app(w, *sub);  // hidden ones (this one) have no group
  }
  w.end_array();
  w.end_object();
}

}  // namespace

std::function<int()> add_cli_json_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("cli-json", "The command-line definitions as JSON (for gen_cli_docs.py)");
  cmd->group("");  // hidden: a build tool's, not a user's
  return [&app] {
    std::string out;
    JsonWriter w(out);
    w.begin_object();
    w.key("version");
    w.value(std::string(hcp::kHcpVersionString));
    w.key("command");
    write_app(w, app);
    w.end_object();
    std::cout << out << "\n";
    return kExitOk;
  };
}

}  // namespace hcp::cli
