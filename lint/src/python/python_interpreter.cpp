// Statements of a Python config file on paths. An `if` whose test is unknown forks each path (the branch taken
// and the one not, each remembering its condition); past kMaxPaths the branches are joined instead, a name or key
// that differs between them becoming unknown. A loop's body may run any number of times: what it changes becomes
// unknown. `return` ends a path and gives the call its result. Nested functions are not followed.
#include "python_interpreter.hpp"

#include <algorithm>

#include "python_state.hpp"

namespace hcp::lint {
namespace {

constexpr size_t kMaxPaths = 32;
constexpr int kMaxNesting = 64;       // blocks inside blocks; deeper ones are reported as not followed
constexpr size_t kMaxCallDepth = 4;   // calls of the file's functions read inside each other; deeper ones are unknown
// Statements read per file, on all paths, before calls of its own functions stop being followed (their results
// are then unknown): reading a call again for each caller is what costs, and a library module of a thousand
// small functions calling each other must not take seconds. Real config files stay far below it.
constexpr size_t kMaxSteps = 200000;

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
  for (const auto& [key, from] : b.origin) a.origin.emplace(key, from);
  if (b.result && (!a.result || !same(*a.result, *b.result))) {
    a.result = a.result ? PyValue::unknown(why, a.result->loc) : *b.result;
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
    for (uint32_t i = 0; i < body.named_child_count(); ++i) {
      run_.steps += paths.size();
      statement(paths, body.named_child(i), nesting);
    }
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
        for (PyPath& b : if_chain(std::move(p), s, nesting)) out.push_back(std::move(b));
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
  std::vector<PyPath> if_chain(PyPath p, const SyntaxNode& s, int nesting) {
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
    for (uint32_t i = 0; i < tests.size(); ++i) {
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
        // a statement never runs on more than kMaxPaths paths, however deep the `if`s nest (a loop, not a
        // recursion: an `elif` chain may be thousands long).
        std::vector<PyPath> all = std::move(taken);
        bool ended = false;  // a later test is known to be true: the path goes no further
        for (uint32_t j = i + 1; j < tests.size() && !ended; ++j) {
          const PyValue later = py_eval(p, cx_, tests[j]);
          if (later.known() && !py_truthy(later.value)) continue;
          std::vector<PyPath> branch{p};
          ended = later.known();
          if (!ended) ++live_;
          block(branch, bodies[j], nesting + 1);
          for (PyPath& b : branch) all.push_back(std::move(b));
          // (No condition is added: the join keeps only the conditions all the branches share.)
        }
        if (!ended) {
          std::vector<PyPath> rest{std::move(p)};
          if (!otherwise.null()) block(rest, otherwise, nesting + 1);
          for (PyPath& b : rest) all.push_back(std::move(b));
        }
        PyPath joined = std::move(all[0]);
        const std::string why = "set differently on the branches of the `if` at line " + std::to_string(s.line());
        for (size_t k = 1; k < all.size(); ++k) joined = join(std::move(joined), all[k], why);
        live_ -= all.size() - 1;
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
      if (s.named_child_count() > 0) p.result = py_eval(p, cx_, s.named_child(0));
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
// NeMo-Run), at the top or inside a function; 2: only other modules (NeMo 1's nlp collection reads as that: its
// OmegaConf trees are not Bridge's).
int imports(std::string_view text) {
  int found = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t b = line.find_first_not_of(" \t");
    if (b == std::string_view::npos) continue;
    line = line.substr(b);
    if (line.rfind("import ", 0) != 0 && line.rfind("from ", 0) != 0) continue;
    for (const char* lib : {"megatron.bridge", "nemo_run", "nemo.collections.llm", "nemo.lightning",
                            "from nemo import lightning", "from nemo.collections import llm"}) {
      if (line.find(lib) != std::string_view::npos) return 1;
    }
    found = 2;
  }
  return found;
}

// The file's functions that it calls by name somewhere (in the module or in another function).
std::vector<std::string> called_by_name(const SyntaxNode& root, const std::vector<std::string>& functions) {
  std::vector<std::string> out;
  std::vector<SyntaxNode> stack{root};
  while (!stack.empty()) {
    const SyntaxNode n = stack.back();
    stack.pop_back();
    if (n.is("call")) {
      const SyntaxNode f = n.field("function");
      if (f.is("identifier")) {
        const std::string name = str(f);
        if (std::find(functions.begin(), functions.end(), name) != functions.end() &&
            std::find(out.begin(), out.end(), name) == out.end()) {
          out.push_back(name);
        }
      }
    }
    for (uint32_t i = 0; i < n.named_child_count(); ++i) stack.push_back(n.named_child(i));
  }
  return out;
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
      p.objects.push_back(PyObject{true, "", {}, {}, -1, false});
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

std::string value_key(const PyValue& v, const std::vector<PyObject>& objects) {
  switch (v.kind) {
    case PyValue::Kind::unknown: return "?";
    case PyValue::Kind::value:
      return std::to_string(static_cast<int>(v.provenance)) + ":" + v.value.display() + ":" + v.why;
    case PyValue::Kind::object: {
      if (v.object < 0 || static_cast<size_t>(v.object) >= objects.size()) return "o?";
      const PyObject& o = objects[static_cast<size_t>(v.object)];
      // An object with settings of its own waiting to be placed has no short key: such calls are read each time.
      if (!o.pending.empty() || !o.parts.empty()) return "";
      return std::string(o.placed ? "o:" : "u:") + o.path + (o.opaque ? "!" : "");
    }
    case PyValue::Kind::dict: {
      std::string k = "{";
      for (const PyDictEntry& e : v.dict) {
        const std::string part = value_key(e.value, objects);
        if (part.empty()) return "";
        k += e.key + "=" + part + ",";
      }
      return k + "}";
    }
  }
  return "?";
}

// What identifies a call for reading it once: the function and its arguments as the callee sees them ("" when
// an argument has no key).
std::string call_key(const PyCall& c) {
  std::string k = c.function + "(" + c.open + ")";
  for (const PyValue& v : c.positional) {
    const std::string part = value_key(v, c.objects);
    if (part.empty()) return "";
    k += part + "|";
  }
  k += ";";
  for (const auto& [name, v] : c.keywords) {
    const std::string part = value_key(v, c.objects);
    if (part.empty()) return "";
    k += name + "=" + part + "|";
  }
  return k;
}

// What a call of the file's function gives its caller: the returned value, and the settings the function made
// through the object it returns or the config objects it was passed (a helper that sets cfg.model.* on its
// argument changes the caller's cfg) - or, when it returns no config object, all it set.
PyValue returned_to(PyPath& caller, const PyPath& callee, const PyCall& c) {
  caller.builds = caller.builds || callee.builds;
  std::vector<std::string> roots;
  for (const PyObject& o : c.objects) {
    if (o.placed) roots.push_back(o.path);
  }
  const PyValue result = py_carry(
      callee.result ? *callee.result : PyValue::unknown("`" + c.function + "()` returns nothing", c.at),
      callee.objects, caller.objects);
  const int id = result.kind == PyValue::Kind::object ? result.object : -1;
  if (id >= 0) {
    const PyObject& o = caller.objects[static_cast<size_t>(id)];
    if (o.placed) roots.push_back(o.path);
  }
  // A function that returns no config object (a main() that builds one and starts training with it) gives its
  // caller all it built: the caller's run is its run.
  const bool everything = id < 0;
  auto under = [&](const std::string& from) {
    if (everything) return true;
    for (const std::string& r : roots) {
      if (r.empty() ? from.rfind('@', 0) != 0
                    : from.size() > r.size() && from.compare(0, r.size(), r) == 0 && from[r.size()] == '.') {
        return true;
      }
    }
    return false;
  };
  for (const std::string& key : callee.tree.keys_in_order()) {
    const auto from = callee.origin.find(key);
    if (from == callee.origin.end() || !under(from->second.first)) continue;
    caller.tree.set(*callee.tree.find(key));
    caller.origin[key] = {from->second.first, id};
  }
  return result;
}

void add_unit(PythonRun& run, std::string name, std::vector<PyPath>& paths) {
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
    v.base = "the recipe or model provider the code starts from";
    unit.variants.push_back(std::move(v));
  }
  run.units.push_back(std::move(unit));
}

}  // namespace

PythonRun run_python(const SourceText& source) {
  PythonRun run;
  const int imported = imports(source.text);
  run.imports_config_library = imported == 1;
  // A file that imports only other libraries (torch, NeMo 1's collections, ...) builds no config of theirs: not
  // even parsed (most of a repository's Python; parsing was two thirds of linting Megatron-LM's checkout).
  if (imported == 2) return run;
  const SyntaxTree tree(source.text, Grammar::python);
  const SyntaxNode root = tree.root();
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
  // The file's functions, and the methods of its classes (units of their own, never called by name here).
  std::vector<SyntaxNode> functions;
  std::vector<std::string> function_names;
  std::vector<std::pair<std::string, SyntaxNode>> methods;
  for (uint32_t i = 0; i < root.named_child_count(); ++i) {
    const SyntaxNode s = root.named_child(i);
    if (const SyntaxNode fn = function_of(s); !fn.null()) {
      functions.push_back(fn);
      function_names.push_back(str(fn.field("name")));
    }
    const SyntaxNode cls = s.is("decorated_definition") ? s.field("definition") : s;
    if (!cls.is("class_definition")) continue;
    const SyntaxNode body = cls.field("body");
    for (uint32_t j = 0; j < body.named_child_count(); ++j) {
      if (const SyntaxNode m = function_of(body.named_child(j)); !m.null()) {
        methods.emplace_back(str(cls.field("name")) + "." + str(m.field("name")), m);
      }
    }
  }
  const std::vector<std::string> called = called_by_name(root, function_names);

  std::map<std::string, PyValue> names;  // the module's values, the functions' globals
  std::vector<std::string> stack;        // the functions being read for a call, innermost last
  std::map<std::string, PyPath> call_cache;  // by call_key
  bool over_budget = false;
  std::function<PyValue(PyPath&, PyCall)> call_function;
  auto run_function = [&](const SyntaxNode& fn, const std::string& name, const PyCall* call) {
    PyContext cx;
    cx.source = &source;
    cx.globals = &names;
    cx.unit = name;
    cx.functions = &function_names;
    cx.call_function = &call_function;
    cx.implicit_roots = imported != 2;
    std::vector<PyPath> paths(1);
    bind_parameters(paths[0], cx, fn.field("parameters"), name, call);
    Interpreter(cx, run).block(paths, fn.field("body"), 0);
    return paths;
  };
  // A call of the file's own function reads its body with the call's arguments: what it builds and returns is
  // part of the caller's config (a NeMo recipe's trainer(), a Bridge recipe's _common(**kwargs)).
  call_function = [&](PyPath& caller, PyCall c) -> PyValue {
    const size_t f = static_cast<size_t>(
        std::find(function_names.begin(), function_names.end(), c.function) - function_names.begin());
    if (f >= functions.size()) return PyValue::unknown("the result of " + c.function + "()", c.at);
    if (stack.size() >= kMaxCallDepth || std::find(stack.begin(), stack.end(), c.function) != stack.end()) {
      return PyValue::unknown("the result of " + c.function + "() (calls nested too deep to follow)", c.at);
    }
    if (run.steps > kMaxSteps) {
      if (!over_budget) {
        over_budget = true;
        run.unread.emplace_back(c.at, "calls of the file's own functions past the reading budget (" +
                                          std::to_string(kMaxSteps) + " statements); their results are unknown");
      }
      return PyValue::unknown("the result of " + c.function + "() (past the reading budget)", c.at);
    }
    // The same call with the same arguments reads the same: read once.
    const std::string key = call_key(c);
    if (const auto cached = call_cache.find(key); !key.empty() && cached != call_cache.end()) {
      return returned_to(caller, cached->second, c);
    }
    stack.push_back(c.function);
    std::vector<PyPath> paths = run_function(functions[f], c.function, &c);
    stack.pop_back();
    PyPath callee = std::move(paths[0]);
    for (size_t i = 1; i < paths.size(); ++i) {
      callee = join(std::move(callee), paths[i], "set differently on the paths through " + c.function + "()");
    }
    const PyValue out = returned_to(caller, callee, c);
    if (!key.empty()) call_cache.emplace(key, std::move(callee));
    return out;
  };

  // The module's own statements first; their values are the functions' globals.
  PyContext module_cx;
  module_cx.source = &source;
  module_cx.functions = &function_names;
  module_cx.call_function = &call_function;
  module_cx.implicit_roots = imported != 2;
  std::vector<PyPath> module_paths(1);
  Interpreter(module_cx, run).block(module_paths, root, 0);
  PyPath globals = module_paths[0];
  for (size_t i = 1; i < module_paths.size(); ++i) {
    globals = join(std::move(globals), module_paths[i], "set differently on the paths through the module");
  }
  // Values only: a config object built at module level is not the functions' to change.
  for (auto& [name, v] : globals.names) {
    if (v.kind == PyValue::Kind::value || v.kind == PyValue::Kind::dict) names[name] = without_objects(v);
  }
  add_unit(run, "", module_paths);
  // A function the file calls is read where it is called; the others, and methods, are units of their own.
  for (size_t f = 0; f < functions.size(); ++f) {
    if (std::find(called.begin(), called.end(), function_names[f]) != called.end()) continue;
    std::vector<PyPath> paths = run_function(functions[f], function_names[f], nullptr);
    add_unit(run, function_names[f], paths);
  }
  for (const auto& [name, m] : methods) {
    std::vector<PyPath> paths = run_function(m, name, nullptr);
    add_unit(run, name, paths);
  }
  // A function read once per call reports what it could not follow once.
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
