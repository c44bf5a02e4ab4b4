// Expressions of a Python config file, evaluated on one path without running anything: literals, arithmetic and
// comparisons of known values, `or` defaults, conditional expressions with known tests, dict and list displays,
// names and config attributes the path knows, and the known constructors and recipe calls, which build config
// objects. Everything else (a call's result, an attribute of a run-time object, the environment) is unknown and
// says why.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string_view>

#include "../loaders/yaml_forms.hpp"
#include "python_state.hpp"

namespace hcp::lint {
namespace {

constexpr int kMaxDepth = 200;  // nesting of one expression; deeper ones (never written by hand) are unknown

std::string str(const SyntaxNode& n) { return std::string(n.text()); }

// "llm.llama3_8b.pretrain_recipe" for a callee made of names and attributes, else "".
std::string dotted(const SyntaxNode& n) {
  if (n.is("identifier")) return str(n);
  if (n.is("attribute")) {
    const std::string base = dotted(n.field("object"));
    return base.empty() ? "" : base + "." + str(n.field("attribute"));
  }
  return "";
}

std::string last_part(const std::string& d) {
  const size_t dot = d.rfind('.');
  return dot == std::string::npos ? d : d.substr(dot + 1);
}

Provenance combined(const PyValue& a, const PyValue& b, std::string* why) {
  if (a.provenance == Provenance::defaulted) {
    *why = a.why;
    return Provenance::defaulted;
  }
  if (b.provenance == Provenance::defaulted) {
    *why = b.why;
    return Provenance::defaulted;
  }
  return Provenance::computed;
}

PyValue unknown_at(const PyContext& cx, const SyntaxNode& n, std::string why) {
  return PyValue::unknown(std::move(why), py_loc(cx, n));
}

PyValue integer_literal(const PyContext& cx, const SyntaxNode& n) {
  std::string t;
  for (char c : n.text()) {
    if (c != '_') t += c;
  }
  int base = 10;
  size_t from = 0;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X' || t[1] == 'o' || t[1] == 'O' || t[1] == 'b' ||
                                      t[1] == 'B')) {
    base = (t[1] == 'x' || t[1] == 'X') ? 16 : (t[1] == 'o' || t[1] == 'O') ? 8 : 2;
    from = 2;
  }
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data() + from, t.data() + t.size(), v, base);
  if (ec != std::errc() || end != t.data() + t.size()) return unknown_at(cx, n, "an integer beyond 64 bits");
  return PyValue::of(Value::make_int(v, str(n), py_loc(cx, n)), Provenance::literal);
}

PyValue string_literal(const PyContext& cx, const SyntaxNode& n) {
  std::string out;
  for (uint32_t i = 0; i < n.named_child_count(); ++i) {
    const SyntaxNode c = n.named_child(i);
    if (c.is("interpolation")) return unknown_at(cx, n, "an f-string with values filled in at run time");
    if (c.is("string_start") && c.text().find_first_of("bB") != std::string_view::npos) {
      return unknown_at(cx, n, "a bytes literal");
    }
    if (c.is("string_content")) out += c.text();
  }
  return PyValue::of(Value::make_string(out, py_loc(cx, n)), Provenance::literal);
}

// a op b on known integers (and + on strings); unknown when either is unknown or the result leaves 64 bits.
PyValue arithmetic(const PyContext& cx, const SyntaxNode& n, const PyValue& a, const PyValue& b,
                   std::string_view op) {
  if (!a.known() || !b.known()) return unknown_at(cx, n, !a.known() ? a.why : b.why);
  std::string why;
  const Provenance p = combined(a, b, &why);
  const Location at = py_loc(cx, n);
  auto done = [&](Value v) {
    PyValue out = PyValue::of(std::move(v), p);
    out.why = why;
    return out;
  };
  if (a.value.kind == Value::Kind::string && b.value.kind == Value::Kind::string && op == "+") {
    return done(Value::make_string(a.value.text + b.value.text, at));
  }
  if (a.value.kind != Value::Kind::integer || b.value.kind != Value::Kind::integer) {
    return unknown_at(cx, n, "arithmetic the loader does not evaluate");
  }
  const int64_t x = a.value.integer, y = b.value.integer;
  int64_t r = 0;
  bool bad = false;
  if (op == "+") {
    bad = __builtin_add_overflow(x, y, &r);
  } else if (op == "-") {
    bad = __builtin_sub_overflow(x, y, &r);
  } else if (op == "*") {
    bad = __builtin_mul_overflow(x, y, &r);
  } else if (op == "//" || op == "%") {
    if (y == 0 || (x == INT64_MIN && y == -1)) return unknown_at(cx, n, "a division by zero");
    int64_t q = x / y, m = x % y;
    if (m != 0 && ((m < 0) != (y < 0))) {  // Python floors
      --q;
      m += y;
    }
    r = op == "//" ? q : m;
  } else if (op == "**") {
    if (y < 0) return unknown_at(cx, n, "a negative power");
    r = 1;
    for (int64_t i = 0; i < y && !bad; ++i) bad = __builtin_mul_overflow(r, x, &r);
  } else if (op == "/") {
    if (y == 0) return unknown_at(cx, n, "a division by zero");
    const double d = static_cast<double>(x) / static_cast<double>(y);
    return done(Value::make_real(d, std::to_string(d), at));
  } else {
    return unknown_at(cx, n, "an operator the loader does not evaluate");
  }
  if (bad) return unknown_at(cx, n, "a result beyond 64 bits");
  return done(Value::make_int(r, std::to_string(r), at));
}

bool same_value(const Value& a, const Value& b) {
  if (a.kind == Value::Kind::integer && b.kind == Value::Kind::real) return static_cast<double>(a.integer) == b.real;
  if (a.kind == Value::Kind::real && b.kind == Value::Kind::integer) return a.real == static_cast<double>(b.integer);
  return a.kind == b.kind && a.display() == b.display();
}

PyValue comparison(PyPath& p, const PyContext& cx, const SyntaxNode& n, int depth);
PyValue eval(PyPath& p, const PyContext& cx, const SyntaxNode& n, int depth);

PyValue boolean(const PyContext& cx, const SyntaxNode& n, bool b, const PyValue& from) {
  PyValue out = PyValue::of(Value::make_bool(b, py_loc(cx, n)), from.provenance == Provenance::defaulted
                                                                     ? Provenance::defaulted
                                                                     : Provenance::computed);
  out.why = from.why;
  return out;
}

PyValue comparison(PyPath& p, const PyContext& cx, const SyntaxNode& n, int depth) {
  // a < b < c: operands are the named children, operators the others, in order.
  std::vector<SyntaxNode> operands;
  std::vector<std::string> ops;
  for (uint32_t i = 0; i < n.child_count(); ++i) {
    const SyntaxNode c = n.child(i);
    if (c.named()) {
      operands.push_back(c);
    } else {
      if (!ops.empty() && operands.size() == ops.size()) {
        ops.back() += ' ';  // "not in", "is not" (appended piece by piece: GCC 12 warns falsely on " " + s)
        ops.back() += c.text();
      } else {
        ops.push_back(str(c));
      }
    }
  }
  if (operands.size() != ops.size() + 1) return unknown_at(cx, n, "a comparison the loader does not read");
  PyValue left = eval(p, cx, operands[0], depth + 1);
  bool result = true;
  PyValue basis = left;
  for (size_t i = 0; i < ops.size(); ++i) {
    const PyValue right = eval(p, cx, operands[i + 1], depth + 1);
    if (!left.known() || !right.known()) return unknown_at(cx, n, !left.known() ? left.why : right.why);
    if (right.provenance == Provenance::defaulted) basis = right;
    const Value& a = left.value;
    const Value& b = right.value;
    const std::string& op = ops[i];
    bool r = false;
    if (op == "==" || op == "is") {
      r = same_value(a, b);
    } else if (op == "!=" || op == "is not") {
      r = !same_value(a, b);
    } else if (op == "in" || op == "not in") {
      if (b.kind != Value::Kind::list) return unknown_at(cx, n, "a membership test the loader does not read");
      bool found = false;
      for (const Value& item : b.items) found = found || same_value(a, item);
      r = op == "in" ? found : !found;
    } else if (a.kind == Value::Kind::integer && b.kind == Value::Kind::integer) {
      const int64_t x = a.integer, y = b.integer;
      r = op == "<" ? x < y : op == "<=" ? x <= y : op == ">" ? x > y : op == ">=" ? x >= y : false;
      if (op != "<" && op != "<=" && op != ">" && op != ">=") return unknown_at(cx, n, "an unknown comparison");
    } else {
      return unknown_at(cx, n, "a comparison the loader does not evaluate");
    }
    result = result && r;
    left = right;
  }
  return boolean(cx, n, result, basis);
}

PyValue sequence(PyPath& p, const PyContext& cx, const SyntaxNode& n, int depth) {
  std::vector<Value> items;
  PyValue out;
  Provenance prov = Provenance::literal;
  for (uint32_t i = 0; i < n.named_child_count(); ++i) {
    const SyntaxNode c = n.named_child(i);
    if (c.is("comment")) continue;
    const PyValue v = eval(p, cx, c, depth + 1);
    if (!v.known()) return unknown_at(cx, n, v.why);
    if (v.provenance == Provenance::defaulted) {
      prov = Provenance::defaulted;
      out.why = v.why;
    } else if (v.provenance == Provenance::computed && prov == Provenance::literal) {
      prov = Provenance::computed;
    }
    items.push_back(v.value);
  }
  const std::string why = out.why;
  out = PyValue::of(Value::make_list(std::move(items), py_loc(cx, n)), prov);
  out.why = why;
  return out;
}

PyValue dictionary(PyPath& p, const PyContext& cx, const SyntaxNode& n, int depth) {
  PyValue out;
  out.kind = PyValue::Kind::dict;
  out.loc = py_loc(cx, n);
  auto put = [&](const std::string& k, PyValue v) {
    for (PyDictEntry& e : out.dict) {
      if (e.key == k) {
        e.value = std::move(v);
        return;
      }
    }
    out.dict.push_back(PyDictEntry{k, std::move(v)});
  };
  for (uint32_t i = 0; i < n.named_child_count(); ++i) {
    const SyntaxNode c = n.named_child(i);
    if (c.is("pair")) {
      const PyValue k = eval(p, cx, c.field("key"), depth + 1);
      if (!k.known() || k.value.kind != Value::Kind::string) return unknown_at(cx, n, "a dict with keys known at run time");
      put(k.value.text, eval(p, cx, c.field("value"), depth + 1));
    } else if (c.is("dictionary_splat")) {
      const PyValue d = eval(p, cx, c.named_child(0), depth + 1);
      if (d.kind != PyValue::Kind::dict) return unknown_at(cx, n, "a dict merged with one known at run time");
      for (const PyDictEntry& e : d.dict) put(e.key, e.value);
    } else if (!c.is("comment")) {
      return unknown_at(cx, n, "a dict comprehension");
    }
  }
  return out;
}

const PyValue* lookup(const PyPath& p, const PyContext& cx, const std::string& name) {
  if (const auto it = p.names.find(name); it != p.names.end()) return &it->second;
  if (cx.globals) {
    if (const auto it = cx.globals->find(name); it != cx.globals->end()) return &it->second;
  }
  return nullptr;
}

int add_object(PyPath& p, std::string path, bool placed) {
  p.objects.push_back(PyObject{placed, std::move(path), {}, {}, -1, false});
  return static_cast<int>(p.objects.size()) - 1;
}

PyValue object_value(int id, Location loc) {
  PyValue v;
  v.kind = PyValue::Kind::object;
  v.object = id;
  v.loc = std::move(loc);
  return v;
}

// The settings that a model, dataset or dist section takes from keyword arguments the loader cannot see
// (**kwargs of unknown content): they become unknown rather than absent, so that no rule reads their absence.
constexpr std::string_view kOpenModelKeys[] = {
    "context_parallel_size", "cp_comm_type", "hierarchical_context_parallel_sizes", "tensor_model_parallel_size",
    "pipeline_model_parallel_size", "seq_length", "num_layers", "num_attention_heads", "num_query_groups",
    "expert_model_parallel_size", "expert_tensor_parallel_size", "window_size", "sequence_parallel",
};

void open_keys(PyPath& p, int obj, const std::string& why, const Location& loc,
               const std::vector<std::string>& given) {
  const std::string path = p.objects[static_cast<size_t>(obj)].path;
  auto open = [&](std::string_view k) {
    if (std::find(given.begin(), given.end(), std::string(k)) != given.end()) return;
    py_set_attribute(p, obj, std::string(k), PyValue::unknown(why, loc), loc, std::string(k));
  };
  if (path == "model" || path == "@nemo.trainer.strategy") {
    for (std::string_view k : kOpenModelKeys) open(k);
  } else if (path == "dataset" || path == "@nemo.data") {
    open("seq_length");
  } else if (path == "dist") {
    open("use_decentralized_pg");
  }
}

// A call of the file's own function, with its arguments' values on this path.
PyCall own_call(PyPath& p, const PyContext& cx, const SyntaxNode& n, const std::string& name, const SyntaxNode& args,
                int depth) {
  PyCall c;
  c.function = name;
  c.at = py_loc(cx, n);
  for (uint32_t i = 0; args.is("argument_list") && i < args.named_child_count(); ++i) {
    const SyntaxNode a = args.named_child(i);
    if (a.is("comment")) continue;
    if (a.is("keyword_argument")) {
      c.keywords.emplace_back(str(a.field("name")), eval(p, cx, a.field("value"), depth + 1));
    } else if (a.is("dictionary_splat")) {
      const PyValue d = eval(p, cx, a.named_child(0), depth + 1);
      if (d.kind == PyValue::Kind::dict) {
        for (const PyDictEntry& e : d.dict) c.keywords.emplace_back(e.key, e.value);
      } else {
        c.open = "may be given by " + str(a) + " at line " + std::to_string(a.line());
      }
    } else if (a.is("list_splat")) {
      c.open = "may be given by " + str(a) + " at line " + std::to_string(a.line());
    } else {
      c.positional.push_back(eval(p, cx, a, depth + 1));
    }
  }
  for (PyValue& v : c.positional) v = py_carry(v, p.objects, c.objects);
  for (auto& kv : c.keywords) kv.second = py_carry(kv.second, p.objects, c.objects);
  return c;
}

// NeMo 2 recipe factories (llm.<model>.pretrain_recipe(...)) pass these to the trainer they build.
std::string nemo_recipe_argument(const std::string& k) {
  static const std::pair<const char*, const char*> kArgs[] = {
      {"num_nodes", "trainer.num_nodes"},
      {"num_gpus_per_node", "trainer.devices"},
      {"tensor_parallelism", "trainer.strategy.tensor_model_parallel_size"},
      {"pipeline_parallelism", "trainer.strategy.pipeline_model_parallel_size"},
      {"context_parallelism", "trainer.strategy.context_parallel_size"},
      {"sequence_parallelism", "trainer.strategy.sequence_parallel"},
      {"expert_parallelism", "trainer.strategy.expert_model_parallel_size"},
  };
  for (const auto& [name, target] : kArgs) {
    if (k == name) return target;
  }
  return {};
}

// Megatron-Bridge recipes of 2025 and early 2026 (llama3_8b_pretrain_config(context_parallelism=2, seq_length=...),
// later **kwargs of the provider's own names) set these on the model, and the sequence length on the data too.
std::vector<std::string> bridge_recipe_argument(const std::string& k) {
  if (k == "seq_length") return {"model.seq_length", "dataset.seq_length"};
  static const std::pair<const char*, const char*> kArgs[] = {
      {"tensor_parallelism", "tensor_model_parallel_size"},
      {"pipeline_parallelism", "pipeline_model_parallel_size"},
      {"context_parallelism", "context_parallel_size"},
      {"sequence_parallelism", "sequence_parallel"},
      {"tensor_model_parallel_size", "tensor_model_parallel_size"},
      {"pipeline_model_parallel_size", "pipeline_model_parallel_size"},
      {"context_parallel_size", "context_parallel_size"},
      {"sequence_parallel", "sequence_parallel"},
      {"cp_comm_type", "cp_comm_type"},
      {"hierarchical_context_parallel_sizes", "hierarchical_context_parallel_sizes"},
  };
  for (const auto& [name, field] : kArgs) {
    if (k == name) return {std::string("model.") + field};
  }
  return {};
}

// The arguments of a call, in order (comments left out).
void append_arguments(const SyntaxNode& args, std::vector<SyntaxNode>* out, bool skip_first_positional) {
  for (uint32_t i = 0; args.is("argument_list") && i < args.named_child_count(); ++i) {
    const SyntaxNode a = args.named_child(i);
    if (a.is("comment")) continue;
    const bool positional = !a.is("keyword_argument") && !a.is("dictionary_splat") && !a.is("list_splat");
    if (positional && skip_first_positional) {
      skip_first_positional = false;
      continue;
    }
    out->push_back(a);
  }
}

PyValue call(PyPath& p, const PyContext& cx, const SyntaxNode& n, int depth) {
  SyntaxNode fn = n.field("function");
  const SyntaxNode args = n.field("arguments");
  std::vector<SyntaxNode> arguments;
  // functools.partial(llm.llama3_8b.pretrain_recipe, name=..., num_nodes=...)(...): the function called with the
  // partial's arguments, then the call's - whatever the result is named (only `recipe` and the like were read).
  if (const SyntaxNode inner = fn.is("call") ? fn.field("arguments") : SyntaxNode();
      fn.is("call") && (dotted(fn.field("function")) == "partial" || dotted(fn.field("function")) == "functools.partial") &&
      inner.is("argument_list") && inner.named_child_count() > 0 && !dotted(inner.named_child(0)).empty()) {
    append_arguments(inner, &arguments, true);
    fn = inner.named_child(0);
  }
  append_arguments(args, &arguments, false);
  const std::string name = dotted(fn);
  // The method's name even on a call's result: AutoBridge.from_hf_pretrained(...).to_megatron_provider().
  std::string cls = fn.is("attribute") ? str(fn.field("attribute")) : last_part(name);
  std::vector<SyntaxNode> positional;
  for (const SyntaxNode& a : arguments)
    if (!a.is("keyword_argument") && !a.is("dictionary_splat") && !a.is("list_splat")) positional.push_back(a);
  if (fn.is("identifier") && cx.functions && cx.call_function &&
      std::find(cx.functions->begin(), cx.functions->end(), name) != cx.functions->end()) {
    return (*cx.call_function)(p, own_call(p, cx, n, name, args, depth));
  }
  // The environment: known only when the job runs.
  if (name == "os.getenv" || name == "getenv" || name == "os.environ.get" || name == "environ.get") {
    const std::string var = positional.empty() ? "?" : str(positional[0]);
    return unknown_at(cx, n, "environment variable " + var);
  }
  if ((cls == "int" || cls == "bool") && name == cls && positional.size() == 1) {
    const PyValue v = eval(p, cx, positional[0], depth + 1);
    if (v.known() && v.value.kind == Value::Kind::integer && cls == "int") return v;
    if (v.known() && cls == "bool") return boolean(cx, n, py_truthy(v.value), v);
    return unknown_at(cx, n, v.known() ? "a conversion the loader does not evaluate" : v.why);
  }
  // Fiddle / NeMo-Run configs of a class: run.Config(MegatronStrategy, ...), run.Partial(llm.pretrain, ...).
  bool via_run = false;
  if ((cls == "Config" || cls == "Partial") && !positional.empty() && !dotted(positional[0]).empty()) {
    cls = last_part(dotted(positional[0]));
    positional.erase(positional.begin());
    via_run = true;
  }
  // NeMo 2's entry points (llm.pretrain(model=, data=, trainer=), run.Partial(llm.train, ...)); a bare pretrain()
  // is Megatron-LM's or Bridge's, which take other arguments.
  const bool nemo_entry = (cls == "pretrain" || cls == "finetune" || cls == "train") &&
                          (via_run || name == "llm." + cls || name == "nemo.collections.llm." + cls);
  std::string root;
  int obj = -1;
  const bool recipe = python_recipe_call(cls, &root);
  if (recipe) {
    obj = add_object(p, root, true);
  } else if (nemo_entry) {
    obj = add_object(p, "@nemo", true);
  } else if (cls == "to_megatron_provider") {
    obj = add_object(p, "model", true);  // AutoBridge...to_megatron_provider(): a GPTModelProvider of that model
  } else if (const std::string section = python_class_section(cls); section != "none") {
    obj = add_object(p, section, true);
  } else if (!cls.empty() && std::isupper(static_cast<unsigned char>(cls[0]))) {
    // A class the loader does not place: an object whose keyword arguments count once the file puts it into a
    // config (ConfigContainer(dataset=MyDatasetConfig(seq_length=...)), run.Config(llm.LlamaModel, config=...)).
    // Another framework's strategy keeps its own settings (FSDP2's context parallelism is not Megatron's).
    obj = add_object(p, "", false);
    p.objects[static_cast<size_t>(obj)].opaque = cls.size() > 8 && cls.compare(cls.size() - 8, 8, "Strategy") == 0;
  } else {
    // Its arguments are still evaluated: they may build config objects or call the file's own functions.
    for (const SyntaxNode& a : arguments) {
      if (a.is("keyword_argument")) {
        eval(p, cx, a.field("value"), depth + 1);
      } else {
        eval(p, cx, a.is("dictionary_splat") || a.is("list_splat") ? a.named_child(0) : a, depth + 1);
      }
    }
    return unknown_at(cx, n, "the result of " + (name.empty() ? std::string("a call") : name + "()"));
  }
  const PyObject& made = p.objects[static_cast<size_t>(obj)];
  if (made.placed) p.builds = true;
  std::vector<std::string> given;
  {
    for (const SyntaxNode& a : arguments) {
      if (a.is("keyword_argument")) {
        const SyntaxNode key = a.field("name");
        const std::string k = str(key);
        const PyValue v = eval(p, cx, a.field("value"), depth + 1);
        if (recipe) {
          // A recipe's own arguments: NeMo 2 recipe factories take the cluster shape and parallel sizes under
          // names of their own, and so did Bridge's recipes before they took none (2025-26); other parameters are
          // the recipe's own (what it does with them is not in this file).
          for (const std::string& target : root == "@nemo" ? std::vector<std::string>{nemo_recipe_argument(k)}
                                                            : bridge_recipe_argument(k)) {
            if (!target.empty()) py_set_attribute(p, obj, target, v, py_loc(cx, key), k);
          }
          continue;
        }
        given.push_back(k);
        py_set_attribute(p, obj, k, v, py_loc(cx, key), k);
      } else if (a.is("dictionary_splat") && !recipe) {
        const PyValue d = eval(p, cx, a.named_child(0), depth + 1);
        if (d.kind == PyValue::Kind::dict) {
          for (const PyDictEntry& e : d.dict) {
            given.push_back(e.key);
            py_set_attribute(p, obj, e.key, e.value, py_loc(cx, a), e.key);
          }
        } else {
          open_keys(p, obj, "may be given by " + str(a) + " (" + d.why + ")", py_loc(cx, a), given);
        }
      } else if (!a.is("comment") && !a.is("keyword_argument")) {
        eval(p, cx, a.is("dictionary_splat") || a.is("list_splat") ? a.named_child(0) : a, depth + 1);
      }
    }
  }
  return object_value(obj, py_loc(cx, n));
}

bool conventional_config_name(const std::string& name) {
  static const char* const kNames[] = {"cfg", "config", "recipe", "pretrain", "finetune", "conf", "container",
                                       "cfg_container", "config_container", "run_config", "train_config"};
  for (const char* k : kNames) {
    if (name == k) return true;
  }
  return false;
}

// The object under `id` at attribute `attr`: a view with the joined path (the same config, seen deeper).
int view(PyPath& p, int id, const std::string& attr) {
  if (id < 0 || static_cast<size_t>(id) >= p.objects.size()) return -1;
  const PyObject& o = p.objects[static_cast<size_t>(id)];
  if (!o.placed) return -1;
  return add_object(p, o.path.empty() ? attr : o.path + "." + attr, true);
}

PyValue attribute(PyPath& p, const PyContext& cx, const SyntaxNode& n) {
  std::vector<std::string> attrs;
  SyntaxNode base = n;
  while (base.is("attribute")) {
    attrs.insert(attrs.begin(), str(base.field("attribute")));
    base = base.field("object");
  }
  const int parent = py_object_of(p, cx, base, attrs);
  if (parent < 0) {
    return unknown_at(cx, n, "`" + str(n) + "`, an attribute of an object built at run time");
  }
  const PyObject& o = p.objects[static_cast<size_t>(parent)];
  const std::string key = python_config_key(o.path, attrs.back());
  if (!key.empty()) {
    if (const Setting* s = p.tree.find(key)) {
      PyValue v = s->provenance == Provenance::unknown ? PyValue::unknown(s->why, s->key_loc)
                                                       : PyValue::of(s->value, s->provenance);
      v.why = s->why;
      return v;
    }
    return unknown_at(cx, n, "`" + str(n) + "` is not set in this file");
  }
  // A deeper config object (cfg.model, recipe.trainer.strategy).
  return object_value(view(p, parent, attrs.back()), py_loc(cx, n));
}

PyValue subscript(PyPath& p, const PyContext& cx, const SyntaxNode& n, int depth) {
  const std::string base = dotted(n.field("value"));
  if (base == "os.environ" || base == "environ") {
    return unknown_at(cx, n, "environment variable " + str(n.field("subscript")));
  }
  const PyValue v = eval(p, cx, n.field("value"), depth + 1);
  const PyValue k = eval(p, cx, n.field("subscript"), depth + 1);
  if (v.kind == PyValue::Kind::dict && k.known() && k.value.kind == Value::Kind::string) {
    for (const PyDictEntry& e : v.dict) {
      if (e.key == k.value.text) return e.value;
    }
    return unknown_at(cx, n, "key " + k.value.display() + " is not in the dict");
  }
  if (v.known() && v.value.kind == Value::Kind::list && k.known() && k.value.kind == Value::Kind::integer) {
    const int64_t size = static_cast<int64_t>(v.value.items.size());
    int64_t i = k.value.integer;
    if (i < 0) i += size;
    if (i >= 0 && i < size) {
      PyValue out = PyValue::of(v.value.items[static_cast<size_t>(i)], v.provenance);
      out.why = v.why;
      return out;
    }
  }
  return unknown_at(cx, n, v.kind == PyValue::Kind::unknown ? v.why : "a subscript the loader does not evaluate");
}

PyValue eval(PyPath& p, const PyContext& cx, const SyntaxNode& n, int depth) {
  if (n.null()) return PyValue::unknown("an expression the file does not finish");
  if (depth > kMaxDepth) return unknown_at(cx, n, "an expression nested too deeply");
  const std::string_view t = n.type();
  const Location at = py_loc(cx, n);
  if (t == "integer") return integer_literal(cx, n);
  if (t == "float") {
    std::string s;
    for (char c : n.text()) {
      if (c != '_') s += c;
    }
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(d)) return unknown_at(cx, n, "a number the loader does not read");
    return PyValue::of(Value::make_real(d, str(n), at), Provenance::literal);
  }
  if (t == "string") return string_literal(cx, n);
  if (t == "concatenated_string") {
    std::string out;
    for (uint32_t i = 0; i < n.named_child_count(); ++i) {
      const PyValue s = string_literal(cx, n.named_child(i));
      if (!s.known()) return s;
      out += s.value.text;
    }
    return PyValue::of(Value::make_string(out, at), Provenance::literal);
  }
  if (t == "true" || t == "false") return PyValue::of(Value::make_bool(t == "true", at), Provenance::literal);
  if (t == "none") return PyValue::of(Value::make_null(at), Provenance::literal);
  if (t == "parenthesized_expression") return eval(p, cx, n.named_child(0), depth + 1);
  if (t == "list" || t == "tuple") return sequence(p, cx, n, depth);
  if (t == "dictionary") return dictionary(p, cx, n, depth);
  if (t == "identifier") {
    const std::string name = str(n);
    if (name == "__name__" && cx.unit.empty()) return PyValue::of(Value::make_string("__main__", at), Provenance::literal);
    if (const PyValue* v = lookup(p, cx, name)) return *v;
    return unknown_at(cx, n, "`" + name + "` is not set in this file");
  }
  if (t == "attribute") return attribute(p, cx, n);
  if (t == "subscript") return subscript(p, cx, n, depth);
  if (t == "call") return call(p, cx, n, depth);
  if (t == "comparison_operator") return comparison(p, cx, n, depth);
  if (t == "unary_operator") {
    const PyValue v = eval(p, cx, n.field("argument"), depth + 1);
    const std::string op = str(n.field("operator"));
    if (!v.known() || v.value.kind != Value::Kind::integer) return v.known() ? unknown_at(cx, n, "a unary operator on a non-integer") : v;
    if (op == "+") return v;
    if (op != "-" || v.value.integer == INT64_MIN) return unknown_at(cx, n, "a unary operator the loader does not evaluate");
    PyValue out = PyValue::of(Value::make_int(-v.value.integer, "-" + v.value.text, at), v.provenance);
    out.why = v.why;
    return out;
  }
  if (t == "not_operator") {
    const PyValue v = eval(p, cx, n.field("argument"), depth + 1);
    return v.known() ? boolean(cx, n, !py_truthy(v.value), v) : v;
  }
  if (t == "boolean_operator") {
    const PyValue a = eval(p, cx, n.field("left"), depth + 1);
    if (!a.known()) return a;
    const bool is_or = str(n.field("operator")) == "or";
    // `x or default`: x when truthy; `x and y`: y when x is truthy.
    if (py_truthy(a.value) == is_or) return a;
    return eval(p, cx, n.field("right"), depth + 1);
  }
  if (t == "binary_operator") {
    return arithmetic(cx, n, eval(p, cx, n.field("left"), depth + 1), eval(p, cx, n.field("right"), depth + 1),
                      n.field("operator").text());
  }
  if (t == "conditional_expression" && n.named_child_count() == 3) {
    const PyValue test = eval(p, cx, n.named_child(1), depth + 1);
    if (!test.known()) return unknown_at(cx, n, "a conditional expression whose test is unknown (" + test.why + ")");
    return eval(p, cx, n.named_child(py_truthy(test.value) ? 0 : 2), depth + 1);
  }
  return unknown_at(cx, n, "an expression the loader does not evaluate (" + std::string(t) + ")");
}

}  // namespace

Location py_loc(const PyContext& cx, const SyntaxNode& n) {
  return Location{cx.source ? cx.source->name : std::string(), n.line(), n.col()};
}

PyValue py_eval(PyPath& p, const PyContext& cx, const SyntaxNode& n) { return eval(p, cx, n, 0); }

PyValue py_carry(const PyValue& v, const std::vector<PyObject>& from, std::vector<PyObject>& to) {
  PyValue out = v;
  if (v.kind == PyValue::Kind::object) {
    if (v.object < 0 || static_cast<size_t>(v.object) >= from.size()) return PyValue::unknown("a config object", v.loc);
    PyObject o = from[static_cast<size_t>(v.object)];
    o.owner = -1;  // an id of the other table
    for (auto& part : o.parts) {  // objects given as its attributes go with it
      PyValue pv;
      pv.kind = PyValue::Kind::object;
      pv.object = part.second;
      const PyValue moved = part.second == v.object ? pv : py_carry(pv, from, to);
      part.second = moved.kind == PyValue::Kind::object ? moved.object : -1;
    }
    to.push_back(std::move(o));
    out.object = static_cast<int>(to.size()) - 1;
  }
  for (PyDictEntry& e : out.dict) e.value = py_carry(e.value, from, to);
  return out;
}

bool py_truthy(const Value& v) {
  switch (v.kind) {
    case Value::Kind::null: return false;
    case Value::Kind::boolean: return v.boolean;
    case Value::Kind::integer: return v.integer != 0;
    case Value::Kind::real: return v.real != 0;
    case Value::Kind::string: return !v.text.empty();
    case Value::Kind::list: return !v.items.empty();
    case Value::Kind::table: return true;
  }
  return true;
}

int py_object_of(PyPath& p, const PyContext& cx, const SyntaxNode& base, const std::vector<std::string>& attrs) {
  if (attrs.empty()) return -1;
  int id = -1;
  if (base.is("identifier")) {
    const std::string name = str(base);
    const PyValue* v = lookup(p, cx, name);
    if (v && v->kind == PyValue::Kind::object && static_cast<size_t>(v->object) < p.objects.size()) {
      id = v->object;
    } else if ((!v || v->kind == PyValue::Kind::unknown) && cx.implicit_roots && conventional_config_name(name) &&
               attrs.size() >= 2) {
      // A config whose origin the file does not show (a parameter, a call's result, the guide's bare `cfg`):
      // taken for one only under the names configs go by, in a file of a config library (or a bare snippet), and
      // when the chain names one's parts - an HF processor's `tokenizer` or a NeMo 1 OmegaConf `model` is not.
      const bool nemo = attrs[0] == "trainer" || attrs[0] == "data" || (attrs[0] == "model" && attrs[1] == "config");
      const bool bridge = !nemo && is_bridge_section(attrs[0]) && attrs[0] != "cluster" && attrs[0] != "env";
      if (!nemo && !bridge) return -1;
      id = add_object(p, nemo ? "@nemo" : "", true);
      p.names[name] = object_value(id, py_loc(cx, base));
    } else {
      return -1;
    }
  } else {
    const PyValue v = py_eval(p, cx, base);
    if (v.kind != PyValue::Kind::object || v.object < 0 || static_cast<size_t>(v.object) >= p.objects.size()) return -1;
    id = v.object;
  }
  for (size_t i = 0; i + 1 < attrs.size() && id >= 0; ++i) id = view(p, id, attrs[i]);
  return id;
}

namespace {

// Forgets what the path knew under an attribute path that was just replaced (cfg.model = another provider), but
// for what object `keep` set itself (the provider's own keyword arguments).
void forget_under(PyPath& p, const std::string& path, int keep) {
  // Set by `keep` or by an object placed into it (its strategy, its model config), at any depth.
  auto kept = [&](int id) {
    for (int depth = 0; id >= 0 && static_cast<size_t>(id) < p.objects.size() && depth < 64; ++depth) {
      if (id == keep) return true;
      id = p.objects[static_cast<size_t>(id)].owner;
    }
    return false;
  };
  std::vector<std::string> stale;
  for (const auto& [key, from] : p.origin) {
    const std::string& f = from.first;
    if (f.size() > path.size() && f.compare(0, path.size(), path) == 0 && f[path.size()] == '.' &&
        !kept(from.second)) {
      stale.push_back(key);
    }
  }
  for (const std::string& k : stale) {
    p.tree.remove(k);
    p.origin.erase(k);
  }
}

void set_key(PyPath& p, Setting s, const std::string& from, int object) {
  // Lightning's Trainer takes devices="auto" / -1 and decides when the job starts.
  if (s.key.rfind("cluster.", 0) == 0 && s.provenance != Provenance::unknown &&
      (s.value.kind != Value::Kind::integer || s.value.integer < 1)) {
    s.provenance = Provenance::unknown;
    s.why = "`" + s.spelled + " = " + s.value.display() + "`: chosen by Lightning when the job starts";
    s.value = Value::make_null(s.value.loc);
  }
  p.origin[s.key] = {from, object};
  p.tree.set(std::move(s));
  p.builds = true;
}

}  // namespace

void py_set_attribute(PyPath& p, int obj, const std::string& attr, const PyValue& v, const Location& key_loc,
                      const std::string& spelled) {
  auto setting = [&](std::string key) {
    Setting s;
    s.key = std::move(key);
    s.spelled = spelled;
    s.key_loc = key_loc;
    s.provenance = v.kind == PyValue::Kind::value ? v.provenance : Provenance::unknown;
    s.why = v.kind == PyValue::Kind::dict ? "a dict" : v.why;
    s.value = v.kind == PyValue::Kind::value ? v.value : Value::make_null(v.loc);
    return s;
  };
  if (obj < 0 || static_cast<size_t>(obj) >= p.objects.size()) return;
  PyObject& o = p.objects[static_cast<size_t>(obj)];
  if (o.opaque) return;
  if (!o.placed) {
    if (v.kind == PyValue::Kind::object) {
      o.parts.emplace_back(attr, v.object);
    } else {
      o.pending.push_back(setting(attr));
    }
    return;
  }
  const std::string child = o.path.empty() ? attr : o.path + "." + attr;
  // Whatever is assigned, what the path knew under this attribute is replaced.
  forget_under(p, child, v.kind == PyValue::Kind::object ? v.object : -2);
  if (v.kind == PyValue::Kind::object) {  // cfg.model = provider: the provider's settings are the section's
    if (v.object < 0 || static_cast<size_t>(v.object) >= p.objects.size()) return;
    PyObject& placed = p.objects[static_cast<size_t>(v.object)];
    const bool moved = !(placed.placed && placed.path == child);
    placed.placed = true;
    placed.path = child;
    if (v.object != obj) placed.owner = obj;
    std::vector<Setting> pending = std::move(placed.pending);
    placed.pending.clear();
    const bool opaque = placed.opaque;
    const std::vector<std::pair<std::string, int>> parts = std::move(placed.parts);
    placed.parts.clear();
    for (Setting& s : pending) {
      const std::string from = child + "." + s.key;
      s.key = python_config_key(child, s.key);
      if (!s.key.empty() && !opaque) set_key(p, std::move(s), from, v.object);
    }
    for (const auto& [part, id] : parts) {
      if (!opaque && id != v.object) py_set_attribute(p, v.object, part, object_value(id, key_loc), key_loc, part);
    }
    if (moved) p.builds = true;
    return;
  }
  const std::string key = python_config_key(o.path, attr);
  if (!key.empty()) {
    set_key(p, setting(key), child, obj);
    return;
  }
  if (!python_config_key(child, "x").empty()) p.builds = true;  // a section replaced by what the file does not show
}

}  // namespace hcp::lint
