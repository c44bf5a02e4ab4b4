#include "launchers.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <string_view>

namespace hcp::lint {
namespace {

std::string_view base_name(std::string_view w) {
  const size_t slash = w.rfind('/');
  return slash == std::string_view::npos ? w : w.substr(slash + 1);
}

bool is_python(std::string_view w) {
  const std::string_view b = base_name(w);
  return b == "python" || b.rfind("python3", 0) == 0;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The value of an option among words[from, to): --name=value, --name value, -Nvalue, -N value.
std::optional<ShellWord> option(const std::vector<ShellWord>& words, size_t from, size_t to,
                                std::initializer_list<std::string_view> names) {
  for (size_t i = from; i < to; ++i) {
    const std::string& w = words[i].text;
    for (std::string_view name : names) {
      if (w.size() < name.size() || w.compare(0, name.size(), name) != 0) continue;
      if (w.size() == name.size()) {
        if (i + 1 < to) return words[i + 1];
        return std::nullopt;
      }
      const bool long_option = name.size() > 2;
      if (long_option && w[name.size()] != '=') continue;
      ShellWord v = words[i];
      const size_t skip = name.size() + (long_option ? 1 : 0);
      if (v.known_prefix < skip) continue;  // the option's name itself is not known
      v.text = w.substr(skip);
      v.known_prefix -= skip;
      if (v.loc.col > 0) v.loc.col += static_cast<int>(skip);
      return v;
    }
  }
  return std::nullopt;
}

bool has_word(const std::vector<ShellWord>& words, size_t from, size_t to, std::string_view w) {
  for (size_t i = from; i < to; ++i) {
    if (words[i].text == w) return true;
  }
  return false;
}

std::optional<int64_t> as_count(const std::string& text) {
  int64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || v <= 0) return std::nullopt;
  return v;
}

void set_count(ConfigTree& tree, const char* key, const std::string& spelled, const ShellWord& w,
               const std::string& why_not_a_count = "") {
  Setting s;
  s.key = key;
  s.spelled = spelled;
  s.key_loc = w.loc;
  s.provenance = w.provenance;
  s.why = w.why;
  if (w.known()) {
    const auto n = as_count(w.text);
    if (n) {
      s.value = Value::make_int(*n, w.text, w.loc);
    } else {
      s.provenance = Provenance::unknown;
      s.why = why_not_a_count.empty() ? spelled + " " + w.text + " is not a count" : why_not_a_count;
    }
  }
  tree.set(std::move(s));
}

ShellWord implied(const ShellWord& at, std::string text) {
  ShellWord w = at;
  w.text = std::move(text);
  w.known_prefix = w.text.size();
  w.provenance = Provenance::computed;
  w.why.clear();
  return w;
}

// `--nnodes 2`, `--nnodes 2:2` (elastic range with equal ends), `--nnodes 1:4` (unknown).
ShellWord nodes_of_range(const ShellWord& w) {
  const size_t colon = w.text.find(':');
  if (!w.known() || colon == std::string::npos) return w;
  ShellWord out = w;
  if (w.text.substr(0, colon) == w.text.substr(colon + 1)) {
    out.text = w.text.substr(0, colon);
  } else {
    out.provenance = Provenance::unknown;
    out.why = "an elastic range of nodes (" + w.text + ")";
  }
  return out;
}

std::optional<ShellWord> directive(const ShellRun& run, std::initializer_list<std::string_view> names) {
  std::vector<ShellWord> words;
  for (size_t i = 0; i < run.directives.size(); ++i) {
    const std::string& d = run.directives[i];
    if (d.rfind("#SBATCH", 0) != 0) continue;
    size_t p = 7;
    while (p < d.size()) {
      while (p < d.size() && (d[p] == ' ' || d[p] == '\t')) ++p;
      if (p < d.size() && d[p] == '#') break;
      const size_t b = p;
      while (p < d.size() && d[p] != ' ' && d[p] != '\t') ++p;
      if (p == b) break;
      ShellWord w;
      w.text = d.substr(b, p - b);
      w.known_prefix = w.text.size();
      w.loc = run.directive_locs[i];
      w.loc.col = static_cast<int>(b) + 1;
      words.push_back(std::move(w));
    }
  }
  std::optional<ShellWord> found;
  for (size_t i = 0; i < words.size(); ++i) {  // the last one wins, as in sbatch
    if (auto v = option(words, i, i + 1 < words.size() ? i + 2 : i + 1, names)) found = v;
  }
  return found;
}

void read_ray_environment(const std::vector<ShellWord>& words, size_t to, ConfigTree& tree) {
  const auto json = option(words, 0, to, {"--runtime-env-json"});
  if (!json) return;
  if (!json->known() || json->text.size() > (1u << 16)) return;
  // Runtime environments are shallow; a deeply nested one is not parsed (the parser's values recurse to free).
  int depth = 0, deepest = 0;
  for (const char c : json->text) {
    if (c == '{' || c == '[') deepest = std::max(deepest, ++depth);
    if (c == '}' || c == ']') --depth;
  }
  if (deepest > 16) return;
  const auto parsed = nlohmann::json::parse(json->text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("env_vars") || !parsed["env_vars"].is_object()) {
    return;
  }
  for (const auto& [name, value] : parsed["env_vars"].items()) {
    Setting s;
    s.key = "env." + name;
    s.spelled = name + " (ray --runtime-env-json)";
    s.key_loc = json->loc;
    s.value = Value::make_string(value.is_string() ? value.get<std::string>() : value.dump(), json->loc);
    tree.set(std::move(s));
  }
}

}  // namespace

bool is_ms_swift_megatron(const std::vector<ShellWord>& words, size_t args_start) {
  return args_start >= 2 && base_name(words[args_start - 2].text) == "megatron";
}

size_t training_arguments_start(const std::vector<ShellWord>& words) {
  if (!words.empty() && words[0].text.rfind("--", 0) == 0) return 0;  // an argument file: flags only
  // NeMo 2's CLI: `nemo llm pretrain --factory llama3_8b trainer.strategy.context_parallel_size=2 ...`.
  if (words.size() > 2 && base_name(words[0].text) == "nemo" && words[1].text == "llm") return 3;
  // ms-swift's Megatron CLI: `megatron sft|pt|rlhf --tensor_model_parallel_size 4 ...` (swift/cli/_megatron).
  if (words.size() > 1 && base_name(words[0].text) == "megatron" &&
      (words[1].text == "sft" || words[1].text == "pt" || words[1].text == "rlhf")) {
    return 2;
  }
  if (!words.empty()) {
    const std::string_view head = base_name(words[0].text);
    if (head == "echo" || head == "printf" || head == "cat" || head == "tee") return words.size();
    // Primus: `primus-cli MODE [opts] -- train pretrain ARGS` (primus_launch.cpp).
    if (head == "primus-cli") {
      for (size_t i = 1; i + 2 < words.size(); ++i)
        if (words[i].text == "--" && words[i + 1].text == "train" && words[i + 2].text == "pretrain") return i + 3;
    }
  }
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i].text;
    if (ends_with(w, ".py")) return i + 1;  // a path with unknown parts still names a Python program
    // Primus's examples/run_pretrain.sh and its Slurm and local variants take the experiment's overrides.
    const std::string_view b = base_name(w);
    if (b == "run_pretrain.sh" || b == "run_slurm_pretrain.sh" || b == "run_local_pretrain.sh") return i + 1;
    // python -m package.module (but not the torch launchers, whose script comes later)
    if (is_python(w) && i + 2 < words.size() && words[i + 1].text == "-m") {
      const std::string& module = words[i + 2].text;
      if (module != "torch.distributed.run" && module != "torch.distributed.launch") return i + 3;
    }
  }
  return words.size();
}

void read_launcher(const ShellCommand& command, size_t args_start, const ShellRun& run, ConfigTree& tree) {
  if (is_ms_swift_megatron(command.words, args_start)) {
    // ms-swift starts torchrun itself with NPROC_PER_NODE processes on NNODES nodes (default 1), and sets
    // CUDA_DEVICE_MAX_CONNECTIONS=1 unless the environment has it (os.environ.setdefault in swift/cli/_megatron).
    for (const ShellEnv& e : command.env) {
      if (e.name == "NPROC_PER_NODE") set_count(tree, "cluster.gpus_per_node", "NPROC_PER_NODE", e.value);
      if (e.name == "NNODES") set_count(tree, "cluster.nodes", "NNODES", e.value);
    }
    if (tree.find("cluster.gpus_per_node") && !tree.find("cluster.nodes")) {
      set_count(tree, "cluster.nodes", "ms-swift (no NNODES: one node)", implied(command.words[0], "1"));
    }
    Setting conn;
    conn.key = "env.CUDA_DEVICE_MAX_CONNECTIONS";
    conn.spelled = "CUDA_DEVICE_MAX_CONNECTIONS (ms-swift's default)";
    conn.key_loc = command.words[0].loc;
    conn.value = Value::make_string("1", conn.key_loc);
    tree.set(std::move(conn));
    return;
  }
  std::vector<ShellWord> words = command.outer;
  words.insert(words.end(), command.words.begin(), command.words.begin() + static_cast<long>(args_start));
  const size_t end = words.size();
  size_t torchrun = end, srun = end, mpirun = end, deepspeed = end, msrun = end;
  for (size_t i = 0; i < end; ++i) {
    const std::string_view b = base_name(words[i].text);
    if (b == "torchrun" && torchrun == end) torchrun = i;
    if (is_python(words[i].text) && i + 2 < end && words[i + 1].text == "-m" &&
        (words[i + 2].text == "torch.distributed.run" || words[i + 2].text == "torch.distributed.launch")) {
      torchrun = i + 2;
    }
    if (b == "srun" && srun == end) srun = i;
    if ((b == "mpirun" || b == "mpiexec") && mpirun == end) mpirun = i;
    if (b == "deepspeed" && deepspeed == end) deepspeed = i;
    if (b == "msrun" && msrun == end) msrun = i;
    if (b == "ray") read_ray_environment(words, end, tree);
  }
  if (msrun < end) {
    // MindSpore's msrun (MindSpeed-LLM's *_ms.sh scripts): --worker_num is the whole job's process count,
    // --local_worker_num the processes on this node.
    if (const auto w = option(words, msrun, end, {"--worker_num", "--worker-num"})) {
      set_count(tree, "cluster.world_size", "msrun --worker_num", *w);
    }
    if (const auto l = option(words, msrun, end, {"--local_worker_num", "--local-worker-num"})) {
      set_count(tree, "cluster.gpus_per_node", "msrun --local_worker_num", *l);
    }
    return;
  }
  if (torchrun < end) {
    // torchrun: --nproc_per_node (default 1) processes on each of --nnodes nodes (default 1; --standalone is one).
    const auto nproc = option(words, torchrun, end, {"--nproc_per_node", "--nproc-per-node"});
    if (nproc) {
      set_count(tree, "cluster.gpus_per_node", "--nproc_per_node", *nproc,
                "--nproc_per_node " + nproc->text + " is decided on the machine");
    } else {
      set_count(tree, "cluster.gpus_per_node", "torchrun (no --nproc_per_node: 1 process per node)",
                implied(words[torchrun], "1"));
    }
    const auto nnodes = option(words, torchrun, end, {"--nnodes"});
    if (nnodes) {
      set_count(tree, "cluster.nodes", "--nnodes", nodes_of_range(*nnodes));
    } else {
      set_count(tree, "cluster.nodes",
                has_word(words, torchrun, end, "--standalone") ? "torchrun --standalone (one node)"
                                                                : "torchrun (no --nnodes: one node)",
                implied(words[torchrun], "1"));
    }
    return;
  }
  if (deepspeed < end) {
    if (const auto g = option(words, deepspeed, end, {"--num_gpus", "--num-gpus"})) {
      set_count(tree, "cluster.gpus_per_node", "--num_gpus", *g);
    }
    if (const auto n = option(words, deepspeed, end, {"--num_nodes", "--num-nodes"})) {
      set_count(tree, "cluster.nodes", "--num_nodes", *n);
    } else if (!option(words, deepspeed, end, {"--hostfile", "-H", "--include", "-i"})) {
      set_count(tree, "cluster.nodes", "deepspeed (no --num_nodes or hostfile: this machine)", implied(words[deepspeed], "1"));
    }
    return;
  }
  if (mpirun < end) {
    if (const auto np = option(words, mpirun, end, {"-np", "-n", "--np"})) {
      set_count(tree, "cluster.world_size", "mpirun -np", *np);
    }
    return;
  }
  if (srun < end) {
    // srun starts the Python program itself: one rank per task.
    if (const auto n = option(words, srun, end, {"--ntasks", "-n"})) {
      set_count(tree, "cluster.world_size", "srun --ntasks", *n);
      return;
    }
    auto nodes = option(words, srun, end, {"--nodes", "-N"});
    if (!nodes) nodes = directive(run, {"--nodes", "-N"});
    auto per_node = option(words, srun, end, {"--ntasks-per-node"});
    if (!per_node) per_node = directive(run, {"--ntasks-per-node"});
    if (nodes) set_count(tree, "cluster.nodes", "--nodes", nodes_of_range(*nodes));
    if (per_node) set_count(tree, "cluster.gpus_per_node", "--ntasks-per-node", *per_node);
  }
}

}  // namespace hcp::lint
