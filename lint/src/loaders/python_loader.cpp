// Megatron-Bridge and NeMo 2 configs written in Python (recipes, performance scripts, users' training scripts),
// read by the Python model (python/python_interpreter.hpp) without running them. Each unit that builds a config
// (the module's own statements, each function the file does not call, each method) is linted on its own; a
// Python file that builds none is skipped with the reason, so a repository's utilities never turn `hcp-lint .`
// red.
#include "../python/python_interpreter.hpp"
#include "hcp/lint/loaders.hpp"

namespace hcp::lint {

LoadedInput load_python(const SourceText& source) {
  PythonRun run = run_python(source);
  LoadedInput out;
  out.unread = std::move(run.unread);
  if (run.units.empty()) {
    out.skipped = run.imports_config_library
                      ? "Python that builds no Megatron-Bridge ConfigContainer, NeMo 2 recipe, or provider or "
                        "strategy hcp-lint knows"
                      : "Python that imports neither Megatron-Bridge nor NeMo 2 (nemo.collections.llm, nemo.lightning, "
                        "NeMo-Run)";
    out.unread.clear();
    return out;
  }
  int unit = 0;
  for (PythonUnit& u : run.units) {
    for (ConfigVariant& v : u.variants) {
      v.unit = unit;
      out.variants.push_back(std::move(v));
    }
    ++unit;
  }
  return out;
}

}  // namespace hcp::lint
