// The YAML fast path must read exactly what yaml-cpp reads (keys, values, positions) whenever it accepts a text,
// and decline everything outside its subset.
#include <gtest/gtest.h>

#include <filesystem>

#include "../../lint/src/loaders/yaml_simple.hpp"
#include "hcp/lint/linter.hpp"
#include "hcp/lint/loaders.hpp"

namespace hcp::lint {
namespace {

namespace fs = std::filesystem;

std::string describe(const Value& v) {
  std::string s = std::string(v.kind_name()) + " " + v.display() + " @" + v.loc.text();
  for (const Value& item : v.items) s += " [" + describe(item) + "]";
  return s;
}

std::vector<std::string> dump(const ConfigTree& t) {
  std::vector<std::string> out;
  for (const std::string& key : t.keys_in_order()) {
    const Setting* s = t.find(key);
    out.push_back(key + " key@" + s->key_loc.text() + " = " + describe(s->value));
  }
  return out;
}

void expect_same_as_yaml_cpp(const std::string& name, const std::string& text) {
  SCOPED_TRACE(name);
  const SourceText src{name, text, InputFormat::yaml};
  ConfigTree fast, full;
  ASSERT_TRUE(load_simple_yaml(src, fast)) << "fast path declined:\n" << text;
  load_yaml_full(src, full);
  EXPECT_EQ(dump(fast), dump(full));
}

TEST(YamlFastPath, AgreesWithYamlCppOnEveryFixtureAndExample) {
  int compared = 0;
  for (const char* dir : {"tests/lint/fixtures", "examples/configs"}) {
    for (const auto& e : fs::recursive_directory_iterator(fs::path(HCP_TESTS_DIR).parent_path() / dir)) {
      if (e.path().extension() != ".yaml") continue;
      expect_same_as_yaml_cpp(e.path().string(), read_source(e.path().string()).text);
      ++compared;
    }
  }
  EXPECT_GT(compared, 20);
}

TEST(YamlFastPath, AgreesOnEdgeCases) {
  expect_same_as_yaml_cpp("a.yaml", "model:\n  cp: 4  # comment\n  name: 'it''s'\n  q: \"a \\\"b\\\"\"\n");
  expect_same_as_yaml_cpp("b.yaml", "---\nmodel:\n    deep:\n        deeper: [1, 'two', three]\n  # c\n");
  expect_same_as_yaml_cpp("c.yaml", "a:\n- 1\n- x y\nb:\n  - ~\n  - null\nc: []\nd: a#b\ne: 'x # y'\n");
  expect_same_as_yaml_cpp("d.yaml", "k: v\r\nl: -1\r\nm: 1e3\r\nn: +4\r\no: a2a+p2p\r\n");
  expect_same_as_yaml_cpp("e.yaml", "empty:\nnext: 1\n");
}

TEST(YamlFastPath, DeclinesWhatItDoesNotHandle) {
  const char* outside[] = {
      "a: &x 1\nb: *x\n",             // anchors and aliases
      "a: !!str 4\n",                 // tags
      "a: {b: 1}\n",                  // flow mappings
      "a: |\n  text\n",               // block scalars
      "a: long\n  continued\n",       // multi-line plain scalars
      "a: 1\n---\nb: 2\n",            // several documents
      "a:\n\tb: 1\n",                 // tabs
      "- 1\n- 2\n",                   // a top-level sequence
      "a:\n  - b: 1\n",               // mappings inside sequences
      "a: [1, [2]]\n",                // nested flow sequences
      "'quoted key': 1\n",
      "a: 'unterminated\n",
  };
  for (const char* text : outside) {
    ConfigTree t;
    EXPECT_FALSE(load_simple_yaml(SourceText{"x.yaml", text, InputFormat::yaml}, t)) << text;
    EXPECT_TRUE(t.empty());
  }
}

}  // namespace
}  // namespace hcp::lint
