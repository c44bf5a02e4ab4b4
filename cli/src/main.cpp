// The `hcp` command. Subcommands register themselves and return the callback that runs them; errors from the
// library become one line on stderr and a documented exit code (exit_codes.hpp).
#include <CLI/CLI.hpp>
#include <iostream>
#include <map>
#include <new>

#include "exit_codes.hpp"
#include "groups_command.hpp"
#include "hcp/error.hpp"
#include "hcp/hcp.h"

namespace {

int run(int argc, char** argv) {
  using namespace hcp::cli;
  CLI::App app{"hcp - hierarchical context parallelism toolkit", "hcp"};
  app.set_version_flag("--version", std::string("hcp ") + HCP_VERSION_STRING);
  app.require_subcommand(1);
  std::map<std::string, std::function<int()>> commands;
  commands["groups"] = add_groups_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "hcp: error: " << e.what() << " (see hcp --help)\n";
    return kExitInput;
  }
  const std::string name = app.get_subcommands().front()->get_name();
  try {
    return commands.at(name)();
  } catch (const hcp::Error& e) {
    std::cerr << "hcp " << name << ": error: " << e.what() << "\n";
    return e.code() == hcp::Errc::internal ? kExitInternal : kExitInput;
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
    std::cerr << "hcp: internal error: " << e.what() << "\n";
    return hcp::cli::kExitInternal;
  }
}
