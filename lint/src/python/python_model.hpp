// What a Python config file sets, read without running it (python_interpreter.cpp): the values of its names and
// of the config objects it builds, each with where the value came from. A value is known (a literal, or computed
// from known values), a function parameter's default (known as a default: a finding on it is a warning), or
// unknown (an attribute of a run-time object, the environment, a call's result) - never guessed.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hcp/lint/config_tree.hpp"
#include "hcp/lint/value.hpp"

namespace hcp::lint {

// A config object the file builds or receives: a Bridge ConfigContainer (path ""), one of its sections ("model",
// "dataset", ...), a NeMo 2 recipe ("@nemo") or a part of one ("@nemo.trainer.strategy"). An object built by a
// class the loader cannot place yet (path unset) keeps its settings until it is placed (ConfigContainer(x=obj),
// cfg.x = obj).
struct PyObject {
  bool placed = false;
  std::string path;
  std::vector<Setting> pending;  // keys relative to the object
  std::vector<std::pair<std::string, int>> parts;  // objects given as its attributes, placed when it is
  int owner = -1;  // the object it was placed into as an attribute (a strategy into its trainer)
  // Its attributes are not the config's even where it is placed (a strategy other than Megatron's: FSDP2's
  // context_parallel_size is not Megatron's); placing it still replaces what was there.
  bool opaque = false;
};

struct PyDictEntry;

struct PyValue {
  enum class Kind { unknown, value, object, dict };
  Kind kind = Kind::unknown;
  Value value;                                  // Kind::value
  Provenance provenance = Provenance::unknown;  // literal, computed or defaulted for values
  std::string why;                              // why unknown, or whose default it is
  int object = -1;                              // Kind::object: the id of the object in its path's state
  std::vector<PyDictEntry> dict;                // Kind::dict: string keys only
  Location loc;

  bool known() const { return kind == Kind::value; }
  static PyValue unknown(std::string why, Location loc = {});
  static PyValue of(Value value, Provenance p);
};

// A dict's entries are a struct declared after PyValue (a std::pair of an incomplete type is refused by clang).
struct PyDictEntry {
  std::string key;
  PyValue value;
};

inline PyValue PyValue::unknown(std::string why, Location loc) {
  PyValue v;
  v.why = std::move(why);
  v.loc = std::move(loc);
  return v;
}

inline PyValue PyValue::of(Value value, Provenance p) {
  PyValue v;
  v.kind = Kind::value;
  v.loc = value.loc;
  v.value = std::move(value);
  v.provenance = p;
  return v;
}

// The canonical key of an attribute path under a config object ("model" + "context_parallel_size" ->
// "model.context_parallel_size"; "@nemo.trainer.strategy" + "context_parallel_size" -> the same), or empty when
// the path sets nothing the rules read or know (a NeMo callback, an optimizer's learning rate on a recipe).
std::string python_config_key(const std::string& object_path, const std::string& attribute);

// Where an object built by class `name` (the last part of the callee, "GPTModelProvider", "MegatronStrategy")
// goes: "" (ConfigContainer), "model", "dataset", "dist", "@nemo.trainer.strategy", ...; "none" when the class
// is not one the loader knows.
std::string python_class_section(const std::string& name);

// Whether calling `name` (the callee's last part) returns a whole config: a Bridge recipe function
// ("llama3_8b_pretrain_config") gives "", a NeMo 2 recipe ("pretrain_recipe") "@nemo"; else false.
bool python_recipe_call(const std::string& name, std::string* root);

}  // namespace hcp::lint
