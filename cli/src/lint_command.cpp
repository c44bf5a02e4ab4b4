#include "lint_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <memory>

#include "cli_options.hpp"
#include "command_name.hpp"
#include "exit_codes.hpp"
#include "hcp/error.hpp"
#include "hcp/printable.hpp"
#include "hcp/lint/config_file.hpp"
#include "hcp/lint/linter.hpp"
#include "hcp/lint/render.hpp"
#include "hcp/plan/plan.hpp"
#include "value_hints.hpp"

namespace hcp::cli {
namespace {

struct LintArgs {
  std::vector<std::string> positional;
  std::string input_format = "auto";
  std::string overrides_file;
  std::optional<int64_t> world_size, nodes, gpus_per_node;
  std::string te_version, gpu;
  std::string format = "text";
  std::string color = "auto";
  std::string fail_on;  // empty: from hcp-lint.toml, else error
  bool strict = false;
  std::vector<std::string> exclude;
  bool no_ignore = false, force_exclude = false;
  std::string stdin_filename;
  std::string config;
  bool no_config = false;
  bool show_info = false;
  bool show_facts = false;
  std::vector<std::string> facts_json;
  bool verbose = false;
  std::vector<std::string> select, ignore, severity;
  std::string explain;
  bool list_rules = false, rules_markdown = false;
};

// A trailing argument is an override when it looks like one and is not an existing path.
bool is_override(const std::string& arg) {
  if (arg.empty() || arg == "-") return false;
  if (arg[0] == '+' || arg[0] == '~') return true;
  std::error_code ec;
  return arg.find('=') != std::string::npos && !std::filesystem::exists(arg, ec);
}

bool use_color(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr && !(term && std::string(term) == "dumb");
}

std::vector<std::string> split_codes(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& v : values) {
    size_t pos = 0;
    while (pos <= v.size()) {
      const size_t comma = v.find(',', pos);
      const std::string code = v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      if (!code.empty()) out.push_back(code);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  return out;
}

// Which files a directory's walk leaves out: hcp-lint.toml's patterns relative to its folder, --exclude's to the
// working directory, and the ignore files unless --no-ignore or respect-gitignore = false.
lint::WalkOptions walk_options(const LintArgs& a, const std::optional<lint::LintConfig>& config) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string cwd = fs::current_path(ec).string();
  const std::string config_dir =
      config ? fs::weakly_canonical(fs::absolute(config->path, ec), ec).parent_path().string() : cwd;
  lint::WalkOptions w;
  for (const std::string& g : config && config->exclude ? *config->exclude : lint::default_excludes())
    w.exclude.push_back({g, config_dir});
  if (config)
    for (const std::string& g : config->extend_exclude) w.exclude.push_back({g, config_dir});
  for (const std::string& g : a.exclude) w.exclude.push_back({g, cwd});
  w.respect_ignore_files = !a.no_ignore && !(config && config->respect_gitignore == false);
  w.force_exclude = a.force_exclude || (config && config->force_exclude == true);
  return w;
}

int run_lint(const LintArgs& a) {
  using namespace hcp::lint;
  if (!a.explain.empty()) {
    const Rule* rule = find_rule(a.explain);
    if (!rule) throw Error(Errc::not_found, "--explain: unknown rule code '" + a.explain + "' (see --list-rules)");
    std::cout << render_explain(*rule);
    return kExitOk;
  }
  if (a.list_rules) {
    std::cout << render_rule_list();
    return kExitOk;
  }
  if (a.rules_markdown) {
    std::cout << render_rules_markdown();
    return kExitOk;
  }

  LintOptions options;
  options.format = parse_format_name(a.input_format);
  // Facts the rules compute with: a count of GPUs or nodes below 1 is a usage error, not a fact.
  for (const auto& [name, value] : {std::pair{"--world-size", a.world_size}, std::pair{"--nodes", a.nodes},
                                    std::pair{"--gpus-per-node", a.gpus_per_node}}) {
    if (value && *value < 1)
      throw Error(Errc::invalid_argument, std::string(name) + " must be positive, got " + std::to_string(*value));
  }
  options.cluster.world_size = a.world_size;
  options.cluster.nodes = a.nodes;
  options.cluster.gpus_per_node = a.gpus_per_node;
  if (!a.te_version.empty()) options.cluster.te_version = a.te_version;
  if (!a.gpu.empty()) options.cluster.gpu = a.gpu;
  options.show_facts = a.show_facts;
  options.select = split_codes(a.select);
  options.ignore = split_codes(a.ignore);
  for (const std::string& s : a.severity) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos) throw Error(Errc::invalid_argument, "--severity: expected CODE=LEVEL, got '" + s + "'");
    options.severity[s.substr(0, eq)] = parse_severity(s.substr(eq + 1));
  }
  // hcp-lint.toml (or [tool.hcp-lint] in pyproject.toml): the command line wins over it.
  std::optional<LintConfig> config;
  if (!a.config.empty()) {
    config = read_lint_config(read_source(a.config), a.config.size() >= 14 &&
                                                         a.config.compare(a.config.size() - 14, 14, "pyproject.toml") == 0);
    if (!config) throw Error(Errc::invalid_argument, a.config + ": no [tool.hcp-lint] table");
  } else if (!a.no_config) {
    config = find_lint_config(".");
  }
  WalkOptions walk = walk_options(a, config);
  if (config) {
    if (options.select.empty()) options.select = config->select;
    options.ignore.insert(options.ignore.end(), config->ignore.begin(), config->ignore.end());
    for (const auto& [code, level] : config->severity) options.severity.emplace(code, level);  // CLI's stay
    options.path_cluster = config->clusters;
  }
  const Severity threshold = a.strict               ? Severity::warning
                             : !a.fail_on.empty()   ? parse_severity(a.fail_on)
                             : config && config->fail_on ? *config->fail_on
                                                    : Severity::error;
  const OutputFormat format = parse_output_format(a.format);
  validate_options(options);

  std::vector<std::string> paths;
  for (const std::string& arg : a.positional) (is_override(arg) ? options.overrides : paths).push_back(arg);
  if (!a.stdin_filename.empty() && paths.empty()) paths.push_back("-");  // as ruff: the name says stdin is read
  if (!a.overrides_file.empty()) {
    options.overrides_file = read_source(a.overrides_file);
    options.overrides_file->format = InputFormat::overrides;
  }
  if (paths.empty() && options.overrides.empty() && !options.overrides_file && a.facts_json.empty()) {
    throw Error(Errc::invalid_argument, "nothing to lint: give config files, directories, '-' or overrides");
  }

  std::vector<SourceText> inputs;
  std::vector<std::pair<std::string, std::string>> unreadable;
  const CollectedInputs collected = collect_inputs(paths, walk);
  for (const auto& [path, refused] : collected.inputs) {
    if (!refused.empty()) {
      unreadable.emplace_back(path, path + ": not read: " + refused);
      continue;
    }
    try {
      inputs.push_back(path == "-" ? read_standard_input() : read_source(path));
      // --stdin-filename: the name picks the form (a .py on stdin is Python) and hcp-lint.toml's [[cluster]] entry.
      if (path == "-" && !a.stdin_filename.empty()) inputs.back().name = a.stdin_filename;
    } catch (const Error& e) {
      const bool named = std::find(paths.begin(), paths.end(), path) != paths.end();
      std::error_code ec;
      // A path named on the command line that does not exist is a usage error; anything else is a finding.
      if (named && path != "-" && !std::filesystem::exists(path, ec)) throw;
      unreadable.emplace_back(path, e.what());
    }
  }
  // The live configuration a job built (hcp.check's JSON, any language's): the facts form, whatever its name.
  for (const std::string& path : a.facts_json) {
    inputs.push_back(path == "-" ? read_standard_input() : read_source(path));
    inputs.back().format = InputFormat::facts;
  }
  LintReport report = hcp::lint::lint(std::move(inputs), options);
  for (const auto& [path, message] : unreadable) add_unreadable(report, path, message, options);
  // Render everything first: a failure while rendering must not leave half a report behind.
  const std::string out =
      render(report, format, RenderOptions{format == OutputFormat::text && use_color(a.color), a.show_info, a.verbose});
  std::cout << out << std::flush;
  // Directories named and nothing in them linted: a typo in the path or a walk that left everything out must not pass
  // as a clean run (ruff and rg warn too). Files named one by one (pre-commit) may all be other files.
  const bool nothing_linted = std::none_of(report.units.begin(), report.units.end(), [](const UnitReport& u) {
    return !u.skipped;
  });
  if (nothing_linted && collected.directories_named == paths.size() && options.overrides.empty() &&
      !options.overrides_file && a.facts_json.empty()) {
    std::string under;
    for (const std::string& p : paths) under += (under.empty() ? "" : ", ") + p;
    const size_t n = report.units.size();
    std::cerr << command_name() << ": warning: no training config found under " << printable(under) << ": "
              << (n == 0 ? std::string("no .toml, .yaml, .yml, .sh, .args or .py file outside ignored and excluded paths")
                         : std::to_string(n) + (n == 1 ? " file" : " files") +
                               " read, none of a linted form (--verbose says what each was taken for)")
              << "\n";
    if (threshold <= Severity::warning) return kExitInput;
  }
  // Inputs that could not be read are HCP000 errors: they fail the run like any error finding.
  return report.fails(threshold) ? kExitFindings : kExitOk;
}

}  // namespace

std::function<int()> add_lint_command(CLI::App& app) {
  auto a = std::make_shared<LintArgs>();
  CLI::App* cmd = app.add_subcommand("lint", "Lint training configs for context-parallel pitfalls (also: hcp-lint)");
  // Groups and value names shape --help, the man pages and the completions alike (scripts/gen_cli_docs.py): FILE
  // completes file names, CODE and CODES rule codes.
  cmd->add_option("inputs", a->positional,
                  "Config files (TOML, YAML, Megatron-LM scripts, Python), directories, '-' for stdin, and Hydra overrides "
                  "(key=value, ++key=value, ~key)")
      ->type_name("PATH");
  std::string group = "Inputs";
  cmd->add_option("--input-format", a->input_format, "Input format for every file")
      ->check(CLI::IsMember({"auto", "toml", "yaml", "overrides", "megatron", "python", "facts"}))
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--overrides-file", a->overrides_file, "A file of Hydra overrides, one per line")
      ->type_name("FILE")
      ->group(group);
  cmd->add_option("--facts-json", a->facts_json,
                  "The configuration a job built, as JSON (Megatron-LM argument names or Bridge keys; repeatable)")
      ->type_name("FILE")
      ->group(group);
  cmd->add_option("--stdin-filename", a->stdin_filename, "The name of the config read from '-', which picks its form")
      ->type_name("NAME")
      ->group(group);
  group = "File selection";
  cmd->add_option("--exclude", a->exclude,
                  "Leave out files and directories that match this glob, relative to the working directory (repeatable)")
      ->allow_extra_args(false)
      ->type_name("GLOB")
      ->group(group);
  cmd->add_flag("--force-exclude", a->force_exclude, "Apply the exclusions to files named on the command line too")
      ->group(group);
  cmd->add_flag("--no-ignore", a->no_ignore, "Walk directories without reading .gitignore, .ignore and .git/info/exclude")
      ->group(group);
  cmd->add_option("--config", a->config, "Read this hcp-lint.toml or pyproject.toml instead of looking for one")
      ->type_name("FILE")
      ->group(group);
  cmd->add_flag("--no-config", a->no_config, "Do not look for hcp-lint.toml / pyproject.toml")->group(group);
  group = "Cluster facts";
  add_int_option(cmd, "--world-size", a->world_size, "Total number of GPUs")->group(group);
  add_int_option(cmd, "--nodes", a->nodes, "Number of nodes")->group(group);
  add_int_option(cmd, "--gpus-per-node", a->gpus_per_node, "GPUs per node (NVLink domain)")->group(group);
  cmd->add_option("--te-version", a->te_version, "Transformer Engine version, e.g. 2.4.0")
      ->type_name("VERSION")
      ->group(group);
  hint_values(cmd->add_option("--gpu", a->gpu, "GPU model, e.g. h100, h200, b200"), {plan::gpu_preset_names()})
      ->type_name("GPU")
      ->group(group);
  group = "Output";
  cmd->add_option("--format", a->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "sarif", "github"}))
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--color", a->color, "Colour in text output")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str()
      ->group(group);
  cmd->add_flag("--show-facts", a->show_facts,
                "Show what each launch resolves to (parallel sizes, CP type, heads, world size), known, default or unknown")
      ->group(group);
  cmd->add_flag("--show-info", a->show_info,
                "Show info findings (unknown facts, parts not read) in text, github and sarif output")
      ->group(group);
  cmd->add_flag("--verbose,-v", a->verbose, "List the inputs skipped as none of the linted forms, and why")->group(group);
  group = "Rules and thresholds";
  cmd->add_option("--fail-on", a->fail_on, "Lowest severity that makes the exit code 1")
      ->check(CLI::IsMember({"error", "warning", "info"}))
      ->capture_default_str()
      ->group(group);
  cmd->add_flag("--strict", a->strict, "Same as --fail-on warning")->group(group);
  // One value per use (repeatable), so a path after the option is not taken as another code.
  cmd->add_option("--select", a->select, "Only these rule codes or prefixes (comma-separated)")
      ->allow_extra_args(false)
      ->type_name("CODES")
      ->group(group);
  cmd->add_option("--ignore", a->ignore, "Skip these rule codes or prefixes (comma-separated)")
      ->allow_extra_args(false)
      ->type_name("CODES")
      ->group(group);
  cmd->add_option("--severity", a->severity, "Change a rule's severity: CODE=error|warning|info (repeatable)")
      ->allow_extra_args(false)
      ->type_name("CODE=LEVEL")
      ->group(group);
  group = "Rule documentation";
  cmd->add_option("--explain", a->explain, "Print a rule's documentation")->type_name("CODE")->group(group);
  cmd->add_flag("--list-rules", a->list_rules, "List every rule")->group(group);
  cmd->add_flag("--rules-markdown", a->rules_markdown, "Print the rule reference as Markdown (docs/rules.md)")
      ->group(group);
  return [a] { return run_lint(*a); };
}

}  // namespace hcp::cli
