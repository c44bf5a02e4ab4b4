// Loaders: values, source positions, the shell subset of launch scripts, the override grammar, parse errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hcp/error.hpp"
#include "hcp/lint/loaders.hpp"

namespace hcp::lint {
namespace {

using ::testing::HasSubstr;

ConfigTree load(const std::string& name, const std::string& text, InputFormat format = InputFormat::automatic) {
  ConfigTree tree;
  load_source(SourceText{name, text, format}, tree);
  return tree;
}

std::string parse_error(const std::string& name, const std::string& text) {
  try {
    load(name, text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::parse);
    return e.what();
  }
  ADD_FAILURE() << "parsed without error";
  return "";
}

TEST(TomlLoader, DottedKeysValuesAndPositions) {
  const ConfigTree t = load("a.toml", "[model]\ncontext_parallel_size = 4\n  cp_comm_type = \"a2a+p2p\"\n"
                                      "hierarchical_context_parallel_sizes = [2, 2]\n[dist]\nuse_decentralized_pg = false\n");
  const Setting* cp = t.find("model.context_parallel_size");
  ASSERT_NE(cp, nullptr);
  EXPECT_EQ(cp->value.integer, 4);
  EXPECT_EQ(cp->key_loc.text(), "a.toml:2:1");
  EXPECT_EQ(t.find("model.cp_comm_type")->key_loc.text(), "a.toml:3:3");
  EXPECT_EQ(t.find("model.cp_comm_type")->value.text, "a2a+p2p");
  const Value& sizes = t.find("model.hierarchical_context_parallel_sizes")->value;
  ASSERT_EQ(sizes.kind, Value::Kind::list);
  EXPECT_EQ(sizes.display(), "[2, 2]");
  EXPECT_EQ(t.find("dist.use_decentralized_pg")->value.kind, Value::Kind::boolean);
}

TEST(TomlLoader, ErrorsNameThePosition) {
  EXPECT_THAT(parse_error("b.toml", "[model]\ncontext_parallel_size = = 4\n"), HasSubstr("b.toml:2:"));
  EXPECT_THAT(parse_error("b.toml", "[model]\ncontext_parallel_size = 99999999999999999999\n"), HasSubstr("b.toml:2:"));
  EXPECT_THAT(parse_error("c.toml", std::string("[model]\nx = \"\xff\xfe\"\n")), HasSubstr("c.toml:2:"));
}

TEST(YamlLoader, PlainAndQuotedScalarsAndPositions) {
  const ConfigTree t = load("a.yaml", "model:\n  context_parallel_size: 4\n  cp_comm_type: 'a2a+p2p'\n"
                                      "  seq_length: \"4096\"\n  hierarchical_context_parallel_sizes: ~\n");
  EXPECT_EQ(t.find("model.context_parallel_size")->value.kind, Value::Kind::integer);
  EXPECT_EQ(t.find("model.context_parallel_size")->key_loc.text(), "a.yaml:2:3");
  EXPECT_EQ(t.find("model.seq_length")->value.kind, Value::Kind::string);  // quoted stays a string
  EXPECT_EQ(t.find("model.hierarchical_context_parallel_sizes")->value.kind, Value::Kind::null);
}

TEST(YamlLoader, ErrorsNameThePosition) {
  EXPECT_THAT(parse_error("d.yaml", "model:\n  cp: [1, 2\n"), HasSubstr("d.yaml:"));
  EXPECT_THAT(parse_error("e.yaml", "- just\n- a list\n"), HasSubstr("must be a mapping"));
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += std::string(static_cast<size_t>(i) * 2, ' ') + "k" + std::to_string(i) + ":\n";
  EXPECT_THAT(parse_error("f.yaml", deep), HasSubstr("deeper than"));
}

TEST(OverridesLoader, HydraGrammar) {
  ConfigTree t;
  load_overrides({"model.context_parallel_size=4", "model.cp_comm_type=a2a+p2p",
                  "model.hierarchical_context_parallel_sizes=[2, 2]", "++model.x='quoted, with comma'",
                  "+dist.use_decentralized_pg=false", "model.window_size=[[1,2],[3,4]]", "model.n=null"},
                 {{"<o>", 1, 1}, {"<o>", 2, 1}, {"<o>", 3, 1}, {"<o>", 4, 1}, {"<o>", 5, 1}, {"<o>", 6, 1}, {"<o>", 7, 1}},
                 t);
  EXPECT_EQ(t.find("model.context_parallel_size")->value.integer, 4);
  EXPECT_EQ(t.find("model.cp_comm_type")->value.text, "a2a+p2p");
  EXPECT_EQ(t.find("model.hierarchical_context_parallel_sizes")->value.display(), "[2, 2]");
  EXPECT_EQ(t.find("model.x")->value.text, "quoted, with comma");
  EXPECT_EQ(t.find("model.x")->key_loc.col, 3);
  EXPECT_EQ(t.find("dist.use_decentralized_pg")->value.kind, Value::Kind::boolean);
  EXPECT_EQ(t.find("model.window_size")->value.items.size(), 2u);
  EXPECT_EQ(t.find("model.n")->value.kind, Value::Kind::null);
  load_overrides({"~model.x"}, {{"<o>", 8, 1}}, t);
  EXPECT_EQ(t.find("model.x"), nullptr);
}

TEST(OverridesLoader, Errors) {
  ConfigTree t;
  auto bad = [&](const std::string& o) {
    try {
      load_overrides({o}, {{"<o>", 3, 1}}, t);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(bad("model.cp"), HasSubstr("<o>:3:1: override 'model.cp' has no '=value'"));
  EXPECT_THAT(bad("=4"), HasSubstr("invalid override"));
  EXPECT_THAT(bad("model.x=[1,2"), HasSubstr("missing ']'"));
  EXPECT_THAT(bad("model.x='abc"), HasSubstr("unterminated"));
  EXPECT_THAT(bad("model.x=[1,,2]"), HasSubstr("empty list entry"));
  EXPECT_THAT(bad("model.x=" + std::string(100, '[')), HasSubstr("nested deeper"));
}

TEST(MegatronLoader, FlagsVariablesArraysAndContinuations) {
  const std::string script =
      "#!/bin/bash\n"
      "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"
      "CP=${CP:-8}\n"
      "SIZES=\"2 4\"\n"
      "ARGS=(\n"
      "  --context-parallel-size $CP  # trailing comment\n"
      "  --cp-comm-type 'a2a+p2p'\n"
      ")\n"
      "torchrun --nproc_per_node=8 --nnodes 4 pretrain_gpt.py \\\n"
      "    ${ARGS[@]} --hierarchical-context-parallel-sizes $SIZES \\\n"
      "    --window-size -1 0 --use-tp-pp-dp-mapping --seq-length=$SEQ\n";
  const ConfigTree t = load("run.sh", script);
  ASSERT_NE(t.find("model.context_parallel_size"), nullptr);
  EXPECT_EQ(t.find("model.context_parallel_size")->value.integer, 8);
  EXPECT_EQ(t.find("model.context_parallel_size")->key_loc.text(), "run.sh:6:3");
  EXPECT_EQ(t.find("model.cp_comm_type")->value.text, "a2a+p2p");
  EXPECT_EQ(t.find("model.cp_comm_type")->value.kind, Value::Kind::string);
  const Value& sizes = t.find("model.hierarchical_context_parallel_sizes")->value;
  EXPECT_EQ(sizes.display(), "[2, 4]");
  EXPECT_EQ(sizes.items[0].loc.text(), "run.sh:4:8");  // the words of $SIZES sit in its assignment
  EXPECT_EQ(t.find("model.window_size")->value.display(), "[-1, 0]");
  EXPECT_TRUE(t.find("dist.use_tp_pp_dp_mapping")->value.boolean);
  EXPECT_EQ(t.find("cluster.gpus_per_node")->value.integer, 8);
  EXPECT_EQ(t.find("cluster.nodes")->value.integer, 4);
  EXPECT_EQ(t.find("env.CUDA_DEVICE_MAX_CONNECTIONS")->value.text, "1");
  // $SEQ is not defined in the script: unknown, with the reason.
  ASSERT_NE(t.find("model.seq_length"), nullptr);
  EXPECT_EQ(t.find("model.seq_length")->provenance, Provenance::unknown);
  EXPECT_EQ(t.find("model.seq_length")->value.kind, Value::Kind::null);
  EXPECT_THAT(t.find("model.seq_length")->why, HasSubstr("environment variable SEQ"));
  // ${CP:-8}: 8 unless the environment sets CP.
  EXPECT_EQ(t.find("model.context_parallel_size")->provenance, Provenance::defaulted);
}

TEST(MegatronLoader, MultipleCommTypesAreAPerLayerList) {
  const ConfigTree t = load("x.args", "--num-layers 2 --cp-comm-type p2p a2a+p2p --context-parallel-size 4\n");
  EXPECT_EQ(t.find("model.cp_comm_type")->value.kind, Value::Kind::list);
  EXPECT_EQ(t.find("model.cp_comm_type")->value.items.size(), 2u);
}

// A flag name alone is common in real scripts (a `case` arm `--tensor-model-parallel-size)`, a flag at the end of
// a line whose value follows elsewhere): nothing to lint, never an input error.
TEST(MegatronLoader, AFlagWithoutItsValueIsNotAnInputError) {
  EXPECT_NO_THROW(load("y.sh", "python pretrain_gpt.py --context-parallel-size\n"));
  const ConfigTree t = load("z.sh", "case $1 in\n  --tensor-model-parallel-size) TP=$2;;\nesac\n"
                                    "python pretrain_gpt.py --tensor-model-parallel-size $TP --micro-batch-size 1\n");
  ASSERT_NE(t.find("model.tensor_model_parallel_size"), nullptr);
  EXPECT_EQ(t.find("model.tensor_model_parallel_size")->provenance, Provenance::unknown);
}

TEST(MegatronLoader, BinaryGarbageDoesNotCrash) {
  std::string junk;
  for (int i = 0; i < 4096; ++i) junk += static_cast<char>((i * 7919) % 256);
  ConfigTree t;
  try {
    load_megatron_args(SourceText{"junk.sh", junk, InputFormat::megatron}, t);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::parse);
  }
}

TEST(FormatDetection, ByExtensionThenContent) {
  EXPECT_EQ(detect_format("a.toml", ""), InputFormat::toml);
  EXPECT_EQ(detect_format("a.yml", ""), InputFormat::yaml);
  EXPECT_EQ(detect_format("run.sbatch", ""), InputFormat::megatron);
  EXPECT_EQ(detect_format("cfg", "[model]\ncp = 1\n"), InputFormat::toml);
  EXPECT_EQ(detect_format("cfg", "model:\n  cp: 1\n"), InputFormat::yaml);
  EXPECT_EQ(detect_format("cfg", "#!/bin/bash\nexport X=1\n"), InputFormat::megatron);
  EXPECT_EQ(detect_format("cfg", "# c\nmodel.context_parallel_size=4\n"), InputFormat::overrides);
}

}  // namespace
}  // namespace hcp::lint
