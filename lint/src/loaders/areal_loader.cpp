// AReaL (github.com/inclusionAI/AReaL, read at 4aef98d): the training engine and its whole mesh are one
// allocation string, `actor.backend: "megatron:d4p2t2c2"` or, with a different expert layout,
// `"megatron:(attn:d1p4t2c2|ffn:d1p4t1e4)"` (areal/api/alloc_mode.py grammar at :594-634; flat form :868-889,
// hybrid :943-1036): d, p, t, c, e are the data, pipeline, tensor, context and expert parallel sizes, the ffn
// part's t the expert tensor size, each 1 when absent - expert tensor included, not Megatron's "= tp"
// (alloc_mode.py:62-90). The process groups are built with exactly those (areal/engine/megatron_engine.py:229-241),
// never hierarchical ones; the actor's world is d x p x t x c (alloc_mode.py:152-159). The YAML is composed by
// Hydra with `key=value` overrides after `--config FILE` (areal/api/cli_args.py:2890-2912). The sequence length is
// each micro-batch's (megatron_engine.py:893) and the model shape the Hugging Face checkpoint's: unknown here.
#include <filesystem>
#include <regex>

#include "framework_launches.hpp"
#include "hcp/error.hpp"
#include "hcp/lint/linter.hpp"
#include "megatron_flag_reader.hpp"
#include "yaml_inheritance.hpp"

namespace hcp::lint {
namespace {

struct Mesh {
  int64_t d = 1, p = 1, t = 1, c = 1, e = 1, etp = 1;
};

// One part "d4p2t2c2" into `m` (letters as alloc_mode.py reads them); false on anything else.
bool parse_part(std::string_view part, Mesh& m, bool ffn) {
  static const std::regex dim(R"(([dptce])(\d{1,9}))");
  std::string text(part);
  std::string rest = std::regex_replace(text, dim, "");
  if (!rest.empty()) return false;
  for (std::sregex_iterator it(text.begin(), text.end(), dim), end; it != end; ++it) {
    const char letter = (*it)[1].str()[0];
    const int64_t n = std::stoll((*it)[2]);
    if (n <= 0) return false;
    if (ffn) {  // the expert layout: t is the expert tensor size; d and p are checked against attn's by AReaL
      if (letter == 't') m.etp = n;
      if (letter == 'e') m.e = n;
      continue;
    }
    (letter == 'd' ? m.d : letter == 'p' ? m.p : letter == 't' ? m.t : letter == 'c' ? m.c : m.e) = n;
  }
  return true;
}

std::optional<Mesh> parse_backend(std::string_view s) {
  if (s.rfind("megatron:", 0) != 0) return std::nullopt;
  s.remove_prefix(9);
  Mesh m;
  if (!s.empty() && s.front() == '(' && s.back() == ')') {
    s = s.substr(1, s.size() - 2);
    const size_t bar = s.find('|');
    std::string_view attn = s.substr(0, bar), ffn = bar == std::string_view::npos ? "" : s.substr(bar + 1);
    if (attn.rfind("attn:", 0) != 0 || (!ffn.empty() && ffn.rfind("ffn:", 0) != 0)) return std::nullopt;
    if (!parse_part(attn.substr(5), m, false) || (!ffn.empty() && !parse_part(ffn.substr(4), m, true))) {
      return std::nullopt;
    }
    return m;
  }
  if (!parse_part(s, m, false)) return std::nullopt;
  return m;
}

Setting derived(const Setting& from, const char* key, int64_t value) {
  Setting s = from;
  s.key = key;
  s.value = Value::make_int(value, std::to_string(value), from.value.loc);
  s.provenance = from.provenance == Provenance::defaulted ? Provenance::defaulted : Provenance::computed;
  return s;
}

// The Megatron component of an older top-level `allocation_mode` (areal/trainer/rl_trainer.py reads it:
// "sglang:d4t4+megatron:(attn:d2p4t2|ffn:d1p4e4)"): components joined by '+' (disaggregated) or '|' (colocated)
// outside parentheses, a name in brackets after the backend ("megatron[actor]:d4"). Empty when none is Megatron's.
std::string megatron_component(const std::string& mode) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char ch : mode) {
    if (ch == '(') ++depth;
    if (ch == ')') --depth;
    if (depth == 0 && (ch == '+' || ch == '|')) {
      parts.emplace_back();
      continue;
    }
    if (ch != ' ') parts.back() += ch;
  }
  for (std::string part : parts) {
    if (part.rfind("megatron", 0) != 0) continue;
    const size_t open = part.find('['), colon = part.find(':');
    if (open != std::string::npos && open < colon) part.erase(open, part.find(']') - open + 1);
    if (part.rfind("megatron:", 0) == 0) return part;
  }
  return {};
}

FrameworkLaunches areal_launches(const ConfigTree& raw) {
  FrameworkLaunches out;
  for (const char* worker : {"actor", "critic"}) {
    ConfigTree backend = map_names(raw, {{std::string(worker) + ".backend", "backend"}});
    if (!backend.find("backend") && std::string(worker) == "actor") {
      if (const Setting* mode = raw.find("allocation_mode"); mode && mode->value.kind == Value::Kind::string) {
        Setting s = *mode;
        s.key = "backend";
        s.value.text = megatron_component(mode->value.text);
        if (!s.value.text.empty()) backend.set(std::move(s));
      }
    }
    const Setting* b = backend.find("backend");
    if (!b) continue;
    ConfigVariant v;
    v.role = std::string("AReaL ") + worker;
    v.base = "the model config of the Hugging Face checkpoint";
    if (b->provenance == Provenance::unknown) {
      for (const char* key : {"model.context_parallel_size", "model.tensor_model_parallel_size",
                              "model.pipeline_model_parallel_size", "cluster.world_size"}) {
        Setting s = *b;
        s.key = key;
        v.tree.set(std::move(s));
      }
    } else if (b->value.kind != Value::Kind::string || b->value.text.rfind("megatron:", 0) != 0) {
      continue;
    } else if (const std::optional<Mesh> m = parse_backend(b->value.text)) {
      v.tree.set(derived(*b, "model.context_parallel_size", m->c));
      v.tree.set(derived(*b, "model.tensor_model_parallel_size", m->t));
      v.tree.set(derived(*b, "model.pipeline_model_parallel_size", m->p));
      v.tree.set(derived(*b, "model.expert_model_parallel_size", m->e));
      v.tree.set(derived(*b, "model.expert_tensor_parallel_size", m->etp));
      int64_t world = m->d;
      if (!__builtin_mul_overflow(world, m->p, &world) && !__builtin_mul_overflow(world, m->t, &world) &&
          !__builtin_mul_overflow(world, m->c, &world)) {
        v.tree.set(derived(*b, "cluster.world_size", world));
      }
    } else {
      out.unread.push_back({b->key_loc, std::string(worker) + ".backend " + b->value.display() +
                                            " is not an allocation AReaL's grammar reads"});
      continue;
    }
    v.unit = static_cast<int>(out.variants.size());
    out.variants.push_back(std::move(v));
  }
  if (out.variants.empty())
    out.skipped = "AReaL without a Megatron backend (neither actor.backend nor allocation_mode is megatron:...)";
  return out;
}

}  // namespace

LoadedInput load_areal_yaml(const SourceText& source) {
  ConfigTree raw;
  load_yaml(source, raw);
  return as_input(areal_launches(raw));
}

// A program given AReaL's `actor.backend=megatron:...` override (examples/*/gsm8k_rl.py --config FILE ...), or a
// `--config FILE` whose actor.backend is megatron:... (found as launched, inside the working directory): the
// override wins over the file (cli_args.py composes FILE, then the overrides).
std::optional<FrameworkLaunches> read_areal_launch(const std::vector<ShellWord>& words, size_t from,
                                                   const std::string& script) {
  const auto backends = [](const std::string& k) -> std::optional<std::string> {
    return k == "actor.backend" || k == "critic.backend" ? std::optional<std::string>(k) : std::nullopt;
  };
  ConfigTree overrides;
  read_override_words(words, from, overrides, backends);
  ConfigTree raw;
  std::vector<SourceText> read;
  for (size_t i = from; i + 1 < words.size(); ++i) {
    if (words[i].text != "--config" || !words[i + 1].known()) continue;
    const std::string path = find_launch_config(words[i + 1].text, script);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec) || !refused_outside_working_directory(path).empty()) break;
    try {
      SourceText text = read_source(path);
      ConfigTree file;
      load_yaml(text, file);
      for (const char* key : {"actor.backend", "critic.backend", "allocation_mode"})
        if (const Setting* s = file.find(key)) raw.set(*s);
      read.push_back(std::move(text));
    } catch (const Error&) {
      // Not an AReaL config (or not YAML): the program is someone else's.
    }
    break;
  }
  for (const std::string& k : overrides.keys_in_order()) raw.set(*overrides.find(k));
  // Positive evidence of AReaL: an allocation in the overrides or in the --config file. Without a Megatron
  // component the launch is claimed and skipped with why, so that its own key=value (scheduler.type=local) are
  // never taken for Megatron-Bridge overrides.
  const bool areal = raw.find("actor.backend") || raw.find("allocation_mode");
  if (!areal) return std::nullopt;
  FrameworkLaunches out = areal_launches(raw);
  if (out.variants.empty() && read.empty() && !overrides.find("actor.backend")) return std::nullopt;
  out.read = std::move(read);
  return out;
}

}  // namespace hcp::lint
