// The state of one path through a unit of a Python config file, and the expression evaluator that reads it
// (python_eval.cpp). Objects live in the path, so that forked paths own their copies.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../syntax/syntax_tree.hpp"
#include "hcp/lint/config_tree.hpp"
#include "hcp/lint/source.hpp"
#include "python_model.hpp"

namespace hcp::lint {

struct PyPath {
  std::map<std::string, PyValue> names;
  std::vector<PyObject> objects;  // PyValue::object indexes here
  ConfigTree tree;
  // key -> the attribute path it was set through ("@nemo.trainer.devices") and the object that set it
  std::map<std::string, std::pair<std::string, int>> origin;
  std::vector<std::string> conditions;
  bool returned = false;
  std::optional<PyValue> result;  // what `return` gave
  bool builds = false;  // built, received or changed a config object
};

// A call of one of the file's own functions, with the values its arguments had on the calling path.
struct PyCall {
  std::string function;
  Location at;
  std::vector<PyValue> positional;
  std::vector<std::pair<std::string, PyValue>> keywords;
  std::string open;  // why arguments the call does not name may still be given (an unknown *args / **kwargs)
  std::vector<PyObject> objects;  // the config objects the arguments pass, which PyValue::object indexes here
};

// v with the objects it refers to in `from` copied into `to` (and its ids renumbered): a value that leaves its path.
PyValue py_carry(const PyValue& v, const std::vector<PyObject>& from, std::vector<PyObject>& to);

// What a unit's statements need besides the path: the file, the module's names for a function, and how to call
// the file's own functions (run_python reads the called function's body with the call's arguments, so that what
// it builds is part of the caller's config).
struct PyContext {
  const SourceText* source = nullptr;
  const std::map<std::string, PyValue>* globals = nullptr;
  std::string unit;  // function name, "" for the module
  const std::vector<std::string>* functions = nullptr;  // the file's own functions
  const std::function<PyValue(PyPath& caller, PyCall call)>* call_function = nullptr;
  // Whether `cfg` and the like of unknown origin may be taken for a config: in a file that imports a config
  // library, or one that imports nothing (a snippet such as the guide's four lines).
  bool implicit_roots = false;
};

Location py_loc(const PyContext& cx, const SyntaxNode& n);

// The value of an expression on a path. Building a config object (a known constructor, a recipe call) adds it
// to the path, with its keyword arguments as settings.
PyValue py_eval(PyPath& p, const PyContext& cx, const SyntaxNode& n);

// The object an attribute chain's base names, making a name of unknown origin a config root when the chain
// names a ConfigContainer section (cfg.model.x) or a NeMo 2 recipe part (recipe.trainer.strategy.x); -1 when
// the base is not a config object.
int py_object_of(PyPath& p, const PyContext& cx, const SyntaxNode& base, const std::vector<std::string>& rest);

// attr of object `obj` = v: a setting when the object's path maps the attribute to a key; an object assigned
// to a section places it there; a section assigned anything else loses what the path knew of it.
void py_set_attribute(PyPath& p, int obj, const std::string& attr, const PyValue& v, const Location& key_loc,
                      const std::string& spelled);

// Python truthiness of a known value.
bool py_truthy(const Value& v);

}  // namespace hcp::lint
