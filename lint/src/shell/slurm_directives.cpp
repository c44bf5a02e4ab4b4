#include "slurm_directives.hpp"

#include <string_view>

namespace hcp::lint::shell {
namespace {

// The environment variables sbatch sets from an option (Slurm's sbatch(1) "OUTPUT ENVIRONMENT VARIABLES").
struct Mapping {
  std::string_view long_name, short_name;
  std::string_view vars[2];
};
constexpr Mapping kMappings[] = {
    {"--nodes", "-N", {"SLURM_NNODES", "SLURM_JOB_NUM_NODES"}},
    {"--ntasks-per-node", "", {"SLURM_NTASKS_PER_NODE", ""}},
    {"--ntasks", "-n", {"SLURM_NTASKS", "SLURM_NPROCS"}},
    {"--gpus-per-node", "", {"SLURM_GPUS_PER_NODE", ""}},
};

void set(Vars& env, std::string_view name, const std::string& value,
         const Location& at) {
  ShellPiece p;
  p.text = value;
  p.loc = at;
  p.provenance = Provenance::computed;
  p.why = "set by Slurm from #SBATCH";
  env.set(std::string(name), Var{{{p}}, false, true});
}

}  // namespace

void read_directives(const SourceText& script, ShellRun& out, Vars& env) {
  size_t pos = 0;
  int line = 0;
  while (pos < script.text.size()) {
    size_t end = script.text.find('\n', pos);
    if (end == std::string::npos) end = script.text.size();
    std::string_view l(script.text.data() + pos, end - pos);
    pos = end + 1;
    ++line;
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.remove_suffix(1);
    if (l.rfind("#SBATCH", 0) != 0 && l.rfind("#PBS", 0) != 0) continue;
    const Location at{script.name, line, 1};
    out.directives.emplace_back(l);
    out.directive_locs.push_back(at);
    if (l.rfind("#SBATCH", 0) != 0) continue;
    // Options: --name=value, --name value, -N value, -Nvalue.
    std::string_view rest = l.substr(7);
    const size_t b = rest.find_first_not_of(" \t");
    if (b == std::string_view::npos) continue;
    rest = rest.substr(b);
    const size_t sp = rest.find_first_of(" \t");
    std::string_view opt = rest.substr(0, sp), value;
    if (const size_t eq = opt.find('='); eq != std::string_view::npos) {
      value = opt.substr(eq + 1);
      opt = opt.substr(0, eq);
    } else if (sp != std::string_view::npos) {
      value = rest.substr(sp);
      value.remove_prefix(std::min(value.size(), value.find_first_not_of(" \t")));
      value = value.substr(0, value.find_first_of(" \t#"));
    }
    if (opt.size() > 2 && opt[0] == '-' && opt[1] != '-' && value.empty()) {  // -N2
      value = opt.substr(2);
      opt = opt.substr(0, 2);
    }
    if (opt == "--gres" && value.rfind("gpu:", 0) == 0) {  // gpu:8 or gpu:h100:8
      const std::string_view count = value.substr(value.rfind(':') + 1);
      if (parse_shell_int(std::string(count))) set(env, "SLURM_GPUS_PER_NODE", std::string(count), at);
      continue;
    }
    for (const Mapping& m : kMappings) {
      if (opt != m.long_name && (m.short_name.empty() || opt != m.short_name)) continue;
      if (!parse_shell_int(std::string(value))) break;  // ranges (--nodes=2-4) leave the count unknown
      for (std::string_view v : m.vars) {
        if (!v.empty()) set(env, v, std::string(value), at);
      }
    }
  }
}

}  // namespace hcp::lint::shell
