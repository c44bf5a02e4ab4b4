// The `hcp` command. Subcommands register themselves and return the callback that runs them; errors from the
// library become one line on stderr and a documented exit code (exit_codes.hpp).
#include <CLI/CLI.hpp>
#include <iostream>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "exit_codes.hpp"
#include "attn_command.hpp"
#include "cli_json_command.hpp"
#include "command_name.hpp"
#include "did_you_mean.hpp"
#include "groups_command.hpp"
#include "lint_command.hpp"
#include "logscan_command.hpp"
#include "plan_command.hpp"
#include "hcp/error.hpp"
#include "hcp/hcp_version.hpp"
#include "hcp/printable.hpp"

namespace {

// `hcp-lint ARGS` and `hcp-logscan ARGS` are `hcp lint ARGS` and `hcp logscan ARGS` (installed as links); *program
// is the name messages use, the one the user typed.
std::vector<std::string> dispatch_on_program_name(int argc, char** argv, std::string* program) {
  std::vector<std::string> args(argv, argv + argc);
  std::string name = args.empty() ? "hcp" : args[0];
  name = name.substr(name.find_last_of('/') == std::string::npos ? 0 : name.find_last_of('/') + 1);
  *program = "hcp";
  if (name.rfind("hcp-", 0) == 0 && name.size() > 4) {
    args.insert(args.begin() + 1, name.substr(4));
    *program = name;
  }
  return args;
}

int run(int argc, char** argv) {
  using namespace hcp::cli;
  std::string program;
  std::vector<std::string> args = dispatch_on_program_name(argc, argv, &program);
  std::vector<char*> arg_ptrs;
  for (std::string& a : args) arg_ptrs.push_back(a.data());
  argc = static_cast<int>(arg_ptrs.size());
  argv = arg_ptrs.data();
  CLI::App app{"hcp - hierarchical context parallelism toolkit", "hcp"};
  app.set_version_flag("-V,--version", std::string("hcp ") + hcp::kHcpVersionString);
  app.require_subcommand(1);
  std::map<std::string, std::function<int()>> commands;
  commands["groups"] = add_groups_command(app);
  commands["attn"] = add_attn_command(app);
  commands["lint"] = add_lint_command(app);
  commands["logscan"] = add_logscan_command(app);
  commands["plan"] = add_plan_command(app);
  commands["cli-json"] = add_cli_json_command(app);
  // -V / --version on every program and subcommand, as hcp-lint and hcp-logscan are subcommands underneath.
  for (CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_group().empty()) continue;  // hidden
    const bool installed_name = sub->get_name() == "lint" || sub->get_name() == "logscan";
    sub->set_version_flag("-V,--version", (installed_name ? "hcp-" + sub->get_name() : std::string("hcp")) + " " +
                                              hcp::kHcpVersionString);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::vector<std::string> typed(args.begin() + 1, args.end());
    const std::string sub = program == "hcp" ? subcommand_named(app, typed) : "";
    const std::string who = sub.empty() ? program : "hcp " + sub;
    std::cerr << who << ": error: " << hcp::printable(parse_error_message(app, typed, e.what())) << " (see " << who
              << " --help)\n";
    return kExitInput;
  }
  const std::string name = app.get_subcommands().front()->get_name();
  command_name() = program == "hcp" ? "hcp " + name : program;
  try {
    return commands.at(name)();
  } catch (const hcp::Error& e) {
    // Messages carry file names and arguments as given: shown escaped, never as terminal controls.
    std::cerr << command_name() << ": error: " << hcp::printable(e.what()) << "\n";
    if (e.code() == hcp::Errc::internal) return kExitInternal;
    return kExitInput;
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "hcp: error: out of memory\n";
    return hcp::cli::kExitInput;
  } catch (const std::exception& e) {
    std::cerr << "hcp: internal error: " << hcp::printable(e.what()) << "\n";
    return hcp::cli::kExitInternal;
  }
}
