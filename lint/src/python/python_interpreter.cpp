// Statements of a Python config file on paths. An `if` whose test is unknown forks each path (the branch taken
// and the one not, each remembering its condition); past kMaxPaths the branches are joined instead, a name or key
// that differs between them becoming unknown. A loop's body may run any number of times: what it changes becomes
// unknown. `return` ends a path. Nested functions and classes are not followed.
#include "python_interpreter.hpp"

#include <algorithm>

#include "python_state.hpp"

namespace hcp::lint {
namespace {

constexpr size_t kMaxPaths = 32;
constexpr int kMaxNesting = 64;
constexpr size_t kMaxCallsPerFunction = 8;  // call sites of one function linted each; the rest are not  // blocks inside blocks; deeper ones are reported as not followed

std::string str(const SyntaxNode& n) { return std::string(n.text()); }

std::string condition_text(const SyntaxNode& n) {
  std::string t = str(n);
  for (char& c : t) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (t.size() > 80) t = t.substr(0, 77) + "...";
  return t;
}

bool same(const PyValue& a, const PyValue& b) {
  if (a.kind != b.kind || a.provenance != b.provenance) return false;
  if (a.kind == PyValue::Kind::value) return a.value.kind == b.value.kind && a.value.display() == b.value.display();
  if (a.kind == PyValue::Kind::object) return a.object == b.object;
  return a.kind == PyValue::Kind::unknown;
}

bool same(const Setting& a, const Setting& b) {
  return a.provenance == b.provenance && a.value.kind == b.value.kind && a.value.display() == b.value.display();
}

// One path that stands for both: what differs between them is unknown.
PyPath join(PyPath a, const PyPath& b, const std::string& why) {
  for (const auto& [name, v] : b.names) {
    const auto it = a.names.find(name);
    if (it == a.names.end() || !same(it->second, v)) a.names[name] = PyValue::unknown(why, v.loc);
  }
  for (auto& [name, v] : a.names) {
    if (!b.names.count(name)) v = PyValue::unknown(why, v.loc);
  }
  if (b.objects.size() > a.objects.size()) a.objects = b.objects;
  std::vector<std::string> keys = a.tree.keys_in_order();
  for (const std::string& k : b.tree.keys_in_order()) {
    if (!a.tree.find(k)) keys.push_back(k);
  }
  for (const std::string& k : keys) {
    const Setting* x = a.tree.find(k);
    const Setting* y = b.tree.find(k);
    if (x && y && same(*x, *y)) continue;
    Setting s = x ? *x : *y;
    s.provenance = Provenance::unknown;
    s.why = why;
    a.tree.set(std::move(s));
  }
  size_t common = 0;
  while (common < a.conditions.size() && common < b.conditions.size() &&
         a.conditions[common] == b.conditions[common]) {
    ++common;
  }
  a.conditions.resize(common);
  a.returned = a.returned && b.returned;
  a.builds = a.builds || b.builds;
  return a;
}

class Interpreter {
 public:
  Interpreter(const PyContext& cx, PythonRun& run) : cx_(cx), run_(run) {}

  void block(std::vector<PyPath>& paths, const SyntaxNode& body, int nesting) {
    if (body.null()) return;
    if (nesting > kMaxNesting) {
      run_.unread.emplace_back(py_loc(cx_, body), "blocks nested more than " + std::to_string(kMaxNesting) + " deep");
      return;
    }
    for (uint32_t i = 0; i < body.named_child_count(); ++i) statement(paths, body.named_child(i), nesting);
  }

 private:
  void statement(std::vector<PyPath>& paths, const SyntaxNode& s, int nesting) {
    const std::string_view t = s.type();
    if (t == "if_statement") {
      std::vector<PyPath> out;
      for (PyPath& p : paths) {
        if (p.returned) {
          out.push_back(std::move(p));
          continue;
        }
        for (PyPath& b : if_chain(std::move(p), s, 0, nesting)) out.push_back(std::move(b));
      }
      paths = std::move(out);
      return;
    }
    for (PyPath& p : paths) {
      if (!p.returned) simple(p, s, nesting);
    }
  }

  // The branches of `if` / `elif` clause `from` on: the first known-true test's block, or a fork at an unknown
  // test.
  std::vector<PyPath> if_chain(PyPath p, const SyntaxNode& s, uint32_t from, int nesting) {
    std::vector<SyntaxNode> tests, bodies;
    SyntaxNode otherwise;
    tests.push_back(s.field("condition"));
    bodies.push_back(s.field("consequence"));
    for (uint32_t i = 0; i < s.named_child_count(); ++i) {
      const SyntaxNode c = s.named_child(i);
      if (c.is("elif_clause")) {
        tests.push_back(c.field("condition"));
        bodies.push_back(c.field("consequence"));
      } else if (c.is("else_clause")) {
        otherwise = c.field("body");
      }
    }
    std::vector<PyPath> out;
    for (uint32_t i = from; i < tests.size(); ++i) {
      const PyValue test = py_eval(p, cx_, tests[i]);
      if (test.known() && !py_truthy(test.value)) continue;
      std::vector<PyPath> taken{p};
      if (!test.known()) {
        ++live_;
        taken[0].conditions.push_back(condition_text(tests[i]));
      }
      block(taken, bodies[i], nesting + 1);
      if (test.known()) return taken;
      p.conditions.push_back("not (" + condition_text(tests[i]) + ")");
      if (live_ > kMaxPaths) {
        // No room for another path: the ways through the rest of the `if` are run and joined into one, so that
        // a statement never runs on more than kMaxPaths paths, however deep the `if`s nest.
        std::vector<PyPath> rest = if_chain(std::move(p), s, i + 1, nesting);
        PyPath joined = std::move(taken[0]);
        const std::string why = "set differently on the branches of the `if` at line " + std::to_string(s.line());
        for (size_t k = 1; k < taken.size(); ++k) joined = join(std::move(joined), taken[k], why);
        for (const PyPath& b : rest) joined = join(std::move(joined), b, why);
        live_ -= taken.size() + rest.size() - 1;
        out.push_back(std::move(joined));
        return out;
      }
      for (PyPath& b : taken) out.push_back(std::move(b));
    }
    std::vector<PyPath> rest{std::move(p)};
    if (!otherwise.null()) block(rest, otherwise, nesting + 1);
    for (PyPath& b : rest) out.push_back(std::move(b));
    return out;
  }

  // A block that may run any number of times (a loop's body): run once, then joined with not running.
  void maybe_repeated(PyPath& p, const SyntaxNode& body, const SyntaxNode& loop, int nesting) {
    std::vector<PyPath> once{p};
    ++live_;
    block(once, body, nesting + 1);
    const std::string why = "set in the loop at line " + std::to_string(loop.line());
    for (const PyPath& b : once) {
      const bool returned = p.returned;
      p = join(std::move(p), b, why);
      p.returned = returned;
    }
    live_ -= once.size();
  }

  void simple(PyPath& p, const SyntaxNode& s, int nesting) {
    const std::string_view t = s.type();
    if (t == "expression_statement") {
      for (uint32_t i = 0; i < s.named_child_count(); ++i) {
        const SyntaxNode e = s.named_child(i);
        if (e.is("assignment")) {
          assignment(p, e);
        } else if (e.is("augmented_assignment")) {
          augmented(p, e);
        } else {
          py_eval(p, cx_, e);  // a bare call may still build a config object
        }
      }
    } else if (t == "return_statement") {
      if (s.named_child_count() > 0) py_eval(p, cx_, s.named_child(0));
      p.returned = true;
    } else if (t == "with_statement") {
      std::vector<PyPath> inner{std::move(p)};
      block(inner, s.field("body"), nesting + 1);
      p = std::move(inner[0]);
      for (size_t i = 1; i < inner.size(); ++i) p = join(std::move(p), inner[i], "set inside a `with` block");
      live_ -= inner.size() - 1;
    } else if (t == "try_statement") {
      // The body as written; handlers run only when it fails, and are not followed.
      std::vector<PyPath> inner{std::move(p)};
      block(inner, s.field("body"), nesting + 1);
      for (uint32_t i = 0; i < s.named_child_count(); ++i) {
        const SyntaxNode c = s.named_child(i);
        if (c.is("else_clause") || c.is("finally_clause")) block(inner, c.named_child(c.named_child_count() - 1), nesting + 1);
      }
      p = std::move(inner[0]);
      for (size_t i = 1; i < inner.size(); ++i) p = join(std::move(p), inner[i], "set inside a `try` block");
      live_ -= inner.size() - 1;
    } else if (t == "for_statement" || t == "while_statement") {
      maybe_repeated(p, s.field("body"), s, nesting);
    } else if (t == "ERROR") {
      run_.unread.emplace_back(py_loc(cx_, s), "a syntax error");
    }
    // imports, definitions, pass, assert, raise, global, ...: nothing a config takes from them here
  }

  void assignment(PyPath& p, const SyntaxNode& e) {
    const SyntaxNode right = e.field("right");
    if (right.null()) return;  // an annotation alone
    if (right.is("assignment")) assignment(p, right);  // a = b = value
    const SyntaxNode value_node = right.is("assignment") ? right.field("right") : right;
    const PyValue v = py_eval(p, cx_, value_node);
    assign(p, e.field("left"), v);
  }

  void assign(PyPath& p, const SyntaxNode& left, const PyValue& v) {
    if (left.is("identifier")) {
      p.names[str(left)] = v;
    } else if (left.is("attribute")) {
      std::vector<std::string> attrs;
      SyntaxNode base = left;
      while (base.is("attribute")) {
        attrs.insert(attrs.begin(), str(base.field("attribute")));
        base = base.field("object");
      }
      const int parent = py_object_of(p, cx_, base, attrs);
      if (parent >= 0) py_set_attribute(p, parent, attrs.back(), v, py_loc(cx_, left.field("attribute")), str(left));
    } else if (left.is("pattern_list") || left.is("tuple_pattern") || left.is("list_pattern")) {
      for (uint32_t i = 0; i < left.named_child_count(); ++i) {
        const SyntaxNode part = left.named_child(i);
        PyValue item = PyValue::unknown("unpacked from `" + condition_text(left) + "`", py_loc(cx_, part));
        if (v.known() && v.value.kind == Value::Kind::list && v.value.items.size() == left.named_child_count()) {
          item = PyValue::of(v.value.items[i], v.provenance);
          item.why = v.why;
        }
        assign(p, part, item);
      }
    } else if (left.is("subscript")) {
      const SyntaxNode base = left.field("value");
      if (!base.is("identifier")) return;
      const auto it = p.names.find(str(base));
      if (it == p.names.end() || it->second.kind != PyValue::Kind::dict) return;
      const PyValue k = py_eval(p, cx_, left.field("subscript"));
      if (!k.known() || k.value.kind != Value::Kind::string) {
        it->second = PyValue::unknown("a dict changed at a key known at run time", py_loc(cx_, left));
        return;
      }
      for (PyDictEntry& e : it->second.dict) {
        if (e.key == k.value.text) {
          e.value = v;
          return;
        }
      }
      it->second.dict.push_back(PyDictEntry{k.value.text, v});
    }
  }

  void augmented(PyPath& p, const SyntaxNode& e) {
    const SyntaxNode left = e.field("left");
    if (!left.is("identifier") && !left.is("attribute")) return;
    // x += y is x = x + y for the values the loader evaluates; anything else makes x unknown.
    const PyValue now = py_eval(p, cx_, left);
    const PyValue add = py_eval(p, cx_, e.field("right"));
    const std::string op = str(e.field("operator"));
    PyValue v = PyValue::unknown("changed by `" + condition_text(e) + "`", py_loc(cx_, e));
    if (now.known() && add.known() && now.value.kind == Value::Kind::integer &&
        add.value.kind == Value::Kind::integer) {
      int64_t r = 0;
      bool bad = true;
      if (op == "+=") bad = __builtin_add_overflow(now.value.integer, add.value.integer, &r);
      if (op == "-=") bad = __builtin_sub_overflow(now.value.integer, add.value.integer, &r);
      if (op == "*=") bad = __builtin_mul_overflow(now.value.integer, add.value.integer, &r);
      if (!bad) {
        v = PyValue::of(Value::make_int(r, std::to_string(r), py_loc(cx_, e)),
                        now.provenance == Provenance::defaulted || add.provenance == Provenance::defaulted
                            ? Provenance::defaulted
                            : Provenance::computed);
        v.why = now.provenance == Provenance::defaulted ? now.why : add.why;
      }
    }
    assign(p, left, v);
  }

  const PyContext& cx_;
  PythonRun& run_;
  size_t live_ = 1;  // the unit's paths alive now (each fork adds one, each join takes away what it merged)
};

// 0: the file imports nothing; 1: it imports a config library (Megatron-Bridge, NeMo 2's llm / lightning,
// NeMo-Run); 2: only other modules (NeMo 1's nlp collection reads as that: its OmegaConf trees are not Bridge's).
int imports(const SyntaxNode& root) {
  int found = 0;
  for (uint32_t i = 0; i < root.named_child_count(); ++i) {
    const SyntaxNode s = root.named_child(i);
    if (!s.is("import_statement") && !s.is("import_from_statement") && !s.is("future_import_statement")) continue;
    const std::string_view t = s.text();
    for (const char* lib : {"megatron.bridge", "nemo_run", "nemo.collections.llm", "nemo.lightning",
                            "from nemo import lightning", "from nemo.collections import llm"}) {
      if (t.find(lib) != std::string_view::npos) return 1;
    }
    found = 2;
  }
  return found;
}

SyntaxNode function_of(const SyntaxNode& s) {
  if (s.is("function_definition")) return s;
  if (s.is("decorated_definition")) {
    const SyntaxNode d = s.field("definition");
    if (d.is("function_definition")) return d;
  }
  return {};
}

// A function's parameters as names of its path. Linted on its own, a default is known as a default and the other
// parameters are whatever a caller passes; linted as the file calls it, an argument has the value the call gave,
// and a parameter the call leaves out has its default as the value that runs. A parameter annotated as a
// ConfigContainer is a config either way.
void bind_parameters(PyPath& p, const PyContext& cx, const SyntaxNode& params, const std::string& fn,
                     const PyCall* call) {
  size_t position = 0;
  bool keyword_only = false;
  for (uint32_t i = 0; i < params.named_child_count(); ++i) {
    const SyntaxNode a = params.named_child(i);
    std::string name;
    SyntaxNode type, value;
    if (a.is("identifier")) {
      name = str(a);
    } else if (a.is("typed_parameter")) {
      name = str(a.named_child(0));
      type = a.field("type");
    } else if (a.is("default_parameter") || a.is("typed_default_parameter")) {
      name = str(a.field("name"));
      type = a.field("type");
      value = a.field("value");
    } else {
      // *args or a bare * ends the positional parameters; **kwargs and / name nothing the file sets.
      if (a.is("list_splat_pattern") || a.is("keyword_separator")) keyword_only = true;
      continue;
    }
    const size_t index = keyword_only ? SIZE_MAX : position++;
    if (!type.null() && type.text().find("ConfigContainer") != std::string_view::npos) {
      p.objects.push_back(PyObject{true, "", {}});
      PyValue v;
      v.kind = PyValue::Kind::object;
      v.object = static_cast<int>(p.objects.size()) - 1;
      p.names[name] = v;
      continue;
    }
    PyValue v = PyValue::unknown("parameter `" + name + "` of `" + fn + "()`, given by its caller", py_loc(cx, a));
    const PyValue* given = nullptr;
    if (call) {
      for (const auto& [k, arg] : call->keywords) {
        if (k == name) given = &arg;
      }
      if (!given && index < call->positional.size()) given = &call->positional[index];
    }
    if (given) {
      v = py_carry(*given, call->objects, p.objects);
    } else if (call && !call->open.empty()) {
      v = PyValue::unknown("parameter `" + name + "` " + call->open, py_loc(cx, a));
    } else if (!value.null()) {
      PyValue d = py_eval(p, cx, value);
      if (d.known() && !call) {
        d.provenance = Provenance::defaulted;
        d.why = "the default value of `" + name + "` in `" + fn + "()`";
      }
      if (d.known()) v = d;
    }
    p.names[name] = v;
  }
}

PyValue without_objects(PyValue v) {
  if (v.kind == PyValue::Kind::object) return PyValue::unknown("a config object built at module level", v.loc);
  for (PyDictEntry& e : v.dict) e.value = without_objects(std::move(e.value));
  return v;
}

void add_unit(PythonRun& run, std::string name, int family, std::string context, std::vector<PyPath>& paths) {
  bool builds = false;
  for (const PyPath& p : paths) builds = builds || p.builds;
  if (!builds) return;
  PythonUnit unit;
  unit.name = std::move(name);
  int index = 0;
  for (PyPath& p : paths) {
    ConfigVariant v;
    v.tree = std::move(p.tree);
    v.conditions = std::move(p.conditions);
    v.path_index = index++;
    v.context = context;
    v.family = family;
    unit.variants.push_back(std::move(v));
  }
  run.units.push_back(std::move(unit));
}

}  // namespace

PythonRun run_python(const SourceText& source) {
  PythonRun run;
  const SyntaxTree tree(source.text, Grammar::python);
  const SyntaxNode root = tree.root();
  const int imported = imports(root);
  run.imports_config_library = imported == 1;
  if (root.has_error()) {
    // The first error only: tree-sitter recovers, and the rest of the file is still read.
    std::vector<SyntaxNode> stack{root};
    while (!stack.empty()) {
      const SyntaxNode n = stack.back();
      stack.pop_back();
      if (n.is("ERROR") || n.missing()) {
        run.unread.emplace_back(Location{source.name, n.line(), n.col()}, "a syntax error");
        break;
      }
      if (!n.has_error()) continue;
      for (uint32_t i = n.child_count(); i-- > 0;) stack.push_back(n.child(i));
    }
  }
  std::vector<SyntaxNode> functions;
  std::vector<std::string> function_names;
  for (uint32_t i = 0; i < root.named_child_count(); ++i) {
    const SyntaxNode fn = function_of(root.named_child(i));
    if (fn.null()) continue;
    functions.push_back(fn);
    function_names.push_back(str(fn.field("name")));
  }
  // The module's own statements first; their names are the functions' globals.
  std::vector<PyCall> calls;
  PyContext module_cx;
  module_cx.source = &source;
  module_cx.functions = &function_names;
  module_cx.calls = &calls;
  module_cx.implicit_roots = imported != 2;
  std::vector<PyPath> module_paths(1);
  Interpreter(module_cx, run).block(module_paths, root, 0);
  PyPath globals = module_paths[0];
  for (size_t i = 1; i < module_paths.size(); ++i) {
    globals = join(std::move(globals), module_paths[i], "set differently on the paths through the module");
  }
  // Values only: a config object built at module level is not the functions' to change.
  std::map<std::string, PyValue> names;
  for (auto& [name, v] : globals.names) {
    if (v.kind == PyValue::Kind::value || v.kind == PyValue::Kind::dict) names[name] = without_objects(v);
  }
  add_unit(run, "", -1, "", module_paths);
  // Each function on its own first, recording the calls of the file's functions (the module's calls were
  // recorded above); then a function the file calls is linted as each call gives it its arguments, not alone.
  auto run_function = [&](const SyntaxNode& fn, const PyCall* call, std::vector<PyCall>* record) {
    PyContext cx;
    cx.source = &source;
    cx.globals = &names;
    cx.unit = str(fn.field("name"));
    cx.functions = &function_names;
    cx.calls = record;
    cx.implicit_roots = imported != 2;
    std::vector<PyPath> paths(1);
    bind_parameters(paths[0], cx, fn.field("parameters"), cx.unit, call);
    Interpreter(cx, run).block(paths, fn.field("body"), 0);
    return paths;
  };
  std::vector<std::vector<PyPath>> alone;
  for (const SyntaxNode& fn : functions) alone.push_back(run_function(fn, nullptr, &calls));
  for (size_t f = 0; f < functions.size(); ++f) {
    size_t linted = 0;
    for (const PyCall& c : calls) {
      if (c.function != function_names[f] || linted == kMaxCallsPerFunction) continue;
      ++linted;
      std::vector<PyPath> paths = run_function(functions[f], &c, nullptr);
      add_unit(run, function_names[f], static_cast<int>(f),
               "in `" + function_names[f] + "()` as called at line " + std::to_string(c.at.line), paths);
    }
    if (linted == 0) add_unit(run, function_names[f], -1, "", alone[f]);
  }
  // A function run once alone and once per call reports what it could not follow once.
  std::vector<std::pair<Location, std::string>> unread;
  for (auto& u : run.unread) {
    const bool seen = std::any_of(unread.begin(), unread.end(), [&](const auto& e) {
      return e.first.line == u.first.line && e.first.col == u.first.col && e.second == u.second;
    });
    if (!seen) unread.push_back(std::move(u));
  }
  run.unread = std::move(unread);
  return run;
}

}  // namespace hcp::lint
